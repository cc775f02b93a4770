use std::process::ExitCode;

use clap::Parser;

/// mimalloc rather than glibc's allocator: the query engine allocates and frees buffers of
/// many megabytes all the time, and glibc unmaps each freed one, so the kernel faults in and
/// zeroes fresh pages for the next (kernel page clearing was 23% of the analyze benchmark's
/// profile with glibc; mimalloc reuses its pages).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = ml2b::cli::Cli::parse();
    ml2b::terminal::init_tracing(cli.global.verbose);
    match ml2b::commands::run(cli) {
        Ok(status) => status.into(),
        Err(err) => {
            ml2b::error::print(&err);
            ml2b::commands::status_of(&err).into()
        }
    }
}
