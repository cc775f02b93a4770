use std::process::ExitCode;

use clap::Parser;

/// mimalloc rather than the system allocator: the query engine allocates and frees large
/// buffers all the time, and glibc hands each one back to the kernel, which zeroes fresh
/// pages for the next (a quarter of the `runs` view's time at 1,000,000 runs went to it).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
