//! The local sandbox's seccomp filter, handed to bubblewrap (`--seccomp FD`), which loads it
//! just before it starts the harness: the system calls a solution has no use for and that
//! reach past the sandbox are refused, as Docker's default profile refuses them.
//!
//! - the kernel keyrings (`keyctl`, `add_key`, `request_key`): the session keyring is
//!   inherited from the caller, and a key in it is readable by whoever possesses it;
//! - new namespaces (`unshare`, `setns`, `clone` with `CLONE_NEWUSER`): a nested user
//!   namespace gives a solution uid 0 and every capability over namespaces of its own;
//! - `clone3`, whose flags are in memory a filter cannot read: `ENOSYS`, so that the C
//!   library falls back to `clone`, which is checked;
//! - mounting (`mount`, `umount2`, `pivot_root` and the new mount API), `bpf`,
//!   `perf_event_open`, `userfaultfd`;
//! - any other system-call convention than the native one (the i386 and x32 ABIs on
//!   x86-64), whose numbers differ and would slip past the list.
//!
//! Refused calls fail with `EPERM` (`clone3`: `ENOSYS`); everything else is allowed.
//!
//! The format is what bubblewrap reads from the descriptor: the classic-BPF program as an
//! array of `struct sock_filter` (`u16 code, u8 jt, u8 jf, u32 k`, native byte order),
//! run on `struct seccomp_data` (`u32 nr` at 0, `u32 arch` at 4, `u64 args[6]` from 16).

use std::io::{Seek, SeekFrom, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

#[cfg(target_arch = "x86_64")]
const ARCH: u32 = 0xC000_003E; // AUDIT_ARCH_X86_64
#[cfg(target_arch = "aarch64")]
const ARCH: u32 = 0xC000_00B7; // AUDIT_ARCH_AARCH64

/// x32 system calls are native-arch numbers with this bit set.
#[cfg(target_arch = "x86_64")]
const X32_BIT: u32 = 0x4000_0000;

const CLONE_NEWUSER: u32 = 0x1000_0000;

/// Refused with `EPERM`.
const DENIED: [libc::c_long; 19] = [
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_unshare,
    libc::SYS_setns,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_open_tree,
    libc::SYS_move_mount,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_mount_setattr,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_userfaultfd,
    libc::SYS_quotactl,
];

// Classic BPF opcodes.
const LD_W_ABS: u16 = 0x20;
const JEQ_K: u16 = 0x15;
const JSET_K: u16 = 0x45;
#[cfg(target_arch = "x86_64")]
const JGE_K: u16 = 0x35;
const RET_K: u16 = 0x06;

const ALLOW: u32 = 0x7fff_0000;
const ERRNO: u32 = 0x0005_0000;

/// One instruction: `(code, jt, jf, k)`.
type Insn = (u16, u8, u8, u32);

fn deny(errno: i32) -> Insn {
    (RET_K, 0, 0, ERRNO | errno as u32)
}

/// The filter (see the module's documentation).
pub(super) fn program() -> Vec<Insn> {
    let eperm = deny(libc::EPERM);
    let mut p = vec![
        (LD_W_ABS, 0, 0, 4),
        (JEQ_K, 1, 0, ARCH),
        eperm,
        (LD_W_ABS, 0, 0, 0),
    ];
    #[cfg(target_arch = "x86_64")]
    p.extend([(JGE_K, 0, 1, X32_BIT), eperm]);
    for nr in DENIED {
        p.extend([(JEQ_K, 0, 1, nr as u32), eperm]);
    }
    p.extend([(JEQ_K, 0, 1, libc::SYS_clone3 as u32), deny(libc::ENOSYS)]);
    // Last, as it overwrites the accumulator: clone with CLONE_NEWUSER in its flags (the
    // low word of its first argument, little-endian).
    p.extend([
        (JEQ_K, 0, 3, libc::SYS_clone as u32),
        (LD_W_ABS, 0, 0, 16),
        (JSET_K, 0, 1, CLONE_NEWUSER),
        eperm,
        (RET_K, 0, 0, ALLOW),
    ]);
    p
}

/// The program as bubblewrap reads it.
fn bytes(program: &[Insn]) -> Vec<u8> {
    let mut out = Vec::with_capacity(program.len() * 8);
    for &(code, jt, jf, k) in program {
        out.extend_from_slice(&code.to_ne_bytes());
        out.extend([jt, jf]);
        out.extend_from_slice(&k.to_ne_bytes());
    }
    out
}

/// An anonymous file (memfd, close-on-exec) holding the filter, read from its start. The
/// caller clears close-on-exec in the child only ([`inherit`]), so that no other process
/// ml2b starts meanwhile inherits it.
pub(super) fn memfd() -> std::io::Result<OwnedFd> {
    // SAFETY: a NUL-terminated name and valid flags; the descriptor is owned right away.
    let fd = unsafe { libc::memfd_create(c"ml2b-seccomp".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `fd` was just opened and nothing else owns it.
    let mut file = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(fd) });
    file.write_all(&bytes(&program()))?;
    file.seek(SeekFrom::Start(0))?;
    Ok(file.into())
}

/// For `CommandExt::pre_exec`: clears close-on-exec on `fd` in the child, so that it is
/// passed down `prlimit`, `setpriv` and `bwrap`.
pub(super) fn inherit(fd: &OwnedFd) -> impl FnMut() -> std::io::Result<()> + Send + Sync + 'static {
    let fd = fd.as_raw_fd();
    move || {
        // SAFETY: fcntl is async-signal-safe; `fd` is open in the child (it was in the parent).
        if unsafe { libc::fcntl(fd, libc::F_SETFD, 0) } == -1 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs the program on one system call, as the kernel would.
    fn verdict(nr: libc::c_long, arch: u32, arg0: u64) -> u32 {
        let mut data = [0u8; 64];
        data[0..4].copy_from_slice(&(nr as u32).to_ne_bytes());
        data[4..8].copy_from_slice(&arch.to_ne_bytes());
        data[16..24].copy_from_slice(&arg0.to_ne_bytes());
        let program = program();
        let (mut pc, mut acc) = (0usize, 0u32);
        loop {
            let (code, jt, jf, k) = program[pc];
            let skip = |taken: bool| usize::from(if taken { jt } else { jf });
            pc += 1 + match code {
                LD_W_ABS => {
                    acc = u32::from_ne_bytes(data[k as usize..k as usize + 4].try_into().unwrap());
                    0
                }
                JEQ_K => skip(acc == k),
                JSET_K => skip(acc & k != 0),
                0x35 => skip(acc >= k),
                RET_K => return k,
                other => panic!("unknown opcode {other:#x}"),
            };
        }
    }

    #[test]
    fn keyrings_namespaces_and_foreign_abis_are_refused_the_rest_allowed() {
        let eperm = ERRNO | libc::EPERM as u32;
        assert_eq!(verdict(libc::SYS_keyctl, ARCH, 0), eperm);
        assert_eq!(verdict(libc::SYS_unshare, ARCH, 0), eperm);
        assert_eq!(
            verdict(libc::SYS_clone, ARCH, u64::from(CLONE_NEWUSER) | 0x11),
            eperm
        );
        assert_eq!(verdict(libc::SYS_clone, ARCH, 0x003d_0f00), ALLOW);
        assert_eq!(verdict(libc::SYS_clone3, ARCH, 0), ERRNO | libc::ENOSYS as u32);
        assert_eq!(verdict(libc::SYS_read, ARCH, 0), ALLOW);
        assert_eq!(verdict(libc::SYS_read, 0x4000_0003, 0), eperm);
        #[cfg(target_arch = "x86_64")]
        assert_eq!(verdict(libc::SYS_read | 0x4000_0000, ARCH, 0), eperm);
    }
}
