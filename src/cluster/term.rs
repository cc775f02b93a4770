//! SIGTERM for a worker: Slurm's preemption, `scancel --signal=TERM` and the warning before
//! the time limit (`--signal=B:TERM@300`) all arrive as SIGTERM. The handler only sets a
//! flag (async-signal-safe); the stage runner sees it, starts no unit, abandons those in
//! flight and commits what finished ([`crate::stages::RunOptions::stop`]).

use std::sync::atomic::{AtomicBool, Ordering};

static TERMINATE: AtomicBool = AtomicBool::new(false);

extern "C" fn on_term(_: libc::c_int) {
    TERMINATE.store(true, Ordering::SeqCst);
}

/// Installs the handler; the flag it sets.
pub fn catch_sigterm() -> &'static AtomicBool {
    let handler: extern "C" fn(libc::c_int) = on_term;
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
    unsafe { libc::signal(libc::SIGTERM, handler as libc::sighandler_t) };
    &TERMINATE
}
