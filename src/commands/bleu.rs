//! `ml2b bleu`: corpus or sentence BLEU (and chrF) of one hypothesis file.

use super::{ExitStatus, InputError, parse_flag, print_report};
use crate::cli::BleuArgs;
use crate::metrics::bleu::BleuOptions;
use crate::metrics::text_report::bleu_files;
use crate::settings::GlobalSettings;

/// Runs `ml2b bleu`.
pub fn bleu(settings: &GlobalSettings, args: &BleuArgs) -> anyhow::Result<ExitStatus> {
    let opts = options(args)?;
    let report = bleu_files(&args.hyp, &args.refs, &opts, args.sentence, args.chrf)?;
    print_report(settings, &report)?;
    Ok(ExitStatus::Success)
}

fn options(args: &BleuArgs) -> Result<BleuOptions, InputError> {
    let mut opts = if args.sentence {
        BleuOptions::sentence()
    } else {
        BleuOptions::default()
    };
    opts.tokenizer = parse_flag("--tokenize", &args.tokenize)?;
    opts.lowercase = args.lowercase;
    if let Some(smooth) = &args.smooth {
        opts.smooth = parse_flag("--smooth", smooth)?;
    }
    opts.smooth_value = args.smooth_value;
    opts.effective_order |= args.effective_order;
    Ok(opts)
}
