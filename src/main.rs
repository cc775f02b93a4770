use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = ml2b::cli::Cli::parse();
    ml2b::init_tracing(cli.global.verbose);
    match ml2b::commands::run(cli) {
        Ok(status) => status.into(),
        Err(err) => {
            ml2b::print_error(&err);
            ml2b::commands::status_of(&err).into()
        }
    }
}
