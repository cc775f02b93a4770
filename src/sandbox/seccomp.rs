//! The sandbox's seccomp filter: the system calls a solution has no use for and that reach
//! past the sandbox are refused. The local backend hands it to bubblewrap (`--seccomp FD`),
//! which loads it just before it starts the harness; the docker backend stacks it on the
//! daemon's own profile ([`LOADER`]), so that both backends refuse the same calls with the
//! same errors whatever the daemon's version (Docker's default profile refuses `AF_VSOCK`
//! from Docker 23 and io_uring from Docker 25 only; Debian bookworm ships 20.10).
//!
//! Refused, compared with Docker's default profile (moby `profiles/seccomp/default.json`)
//! for a container without capabilities, which refuses all of these too:
//!
//! - sockets of any address family but `AF_UNIX` (`socket`, `socketpair`), with
//!   `EAFNOSUPPORT`: the sandbox has no network, and a family the kernel offers reaches
//!   past its network namespace (`AF_VSOCK` talks to the hypervisor of a VM host; netlink,
//!   packet, Bluetooth, `AF_ALG` are kernel interfaces). `EAFNOSUPPORT` is what a kernel
//!   without the family answers, so code that probes for one (IPv6, glibc's netlink query
//!   of the configured addresses) falls back as it would there, where `EPERM` reads as a
//!   fault. Docker refuses only `AF_VSOCK` and `AF_ALG`, with `EPERM`; here loopback TCP is
//!   refused too (it leads nowhere: the network namespace holds only the loopback). A
//!   `--network proxy` run ([`Sockets::Inet`]) may open `AF_INET` and `AF_INET6` sockets
//!   too: its namespace still holds only the loopback, where the relay to the proxy
//!   listens, so they reach nothing else;
//! - io_uring (`io_uring_setup`, `io_uring_enter`, `io_uring_register`): its requests
//!   (open, connect, socket, …) are executed by the kernel without passing this filter.
//!   `EPERM`, what a kernel with io_uring disabled answers;
//! - the kernel keyrings (`keyctl`, `add_key`, `request_key`): the session keyring is
//!   inherited from the caller, and a key in it is readable by whoever possesses it;
//! - new namespaces (`unshare`, `setns`, `clone` with any `CLONE_NEW*` flag): a nested user
//!   namespace gives a solution uid 0 and every capability over namespaces of its own;
//! - `clone3`, whose flags are in memory a filter cannot read: `ENOSYS`, so that the C
//!   library falls back to `clone`, which is checked;
//! - mounting (`mount`, `umount2`, `pivot_root`, `chroot` and the new mount API, up to
//!   `open_tree_attr`), `quotactl` and `quotactl_fd`;
//! - kernel facilities that have been a way into the kernel: `bpf`, `perf_event_open`,
//!   `userfaultfd`, `fanotify_init`, `lookup_dcookie`; file handles (`open_by_handle_at`,
//!   which opens any file of a mount by number, past the mount namespace);
//! - the machine's administration, which needs capabilities the sandbox never has:
//!   `kexec_load`, `kexec_file_load`, `reboot`, the kernel modules (`init_module`,
//!   `finit_module`, `delete_module`), `swapon`, `swapoff`, `acct`, setting the clock
//!   (`settimeofday`, `clock_settime`), `sethostname`, `setdomainname`, `vhangup`, port I/O
//!   (`iopl`, `ioperm`) and `uselib` on x86-64; and `syslog`, which reads the host's kernel
//!   log wherever `dmesg_restrict` is 0;
//! - reaching into another process beyond `ptrace` (`kcmp`, `pidfd_getfd`,
//!   `process_madvise`) and NUMA memory placement (`mbind`, `get_mempolicy`,
//!   `set_mempolicy`, `set_mempolicy_home_node`, `migrate_pages`, `move_pages`): Docker
//!   allows them with `CAP_SYS_PTRACE` and `CAP_SYS_NICE` only, and the libraries that call
//!   them fall back;
//! - `personality` with any flag but `PER_LINUX32` and `UNAME26` (Docker's rule: 0, 8,
//!   0x20000, 0x20008, and the query 0xffffffff are allowed), so no `ADDR_NO_RANDOMIZE`,
//!   `READ_IMPLIES_EXEC`, `MMAP_PAGE_ZERO`;
//! - any other system-call convention than the native one (the i386 and x32 ABIs on
//!   x86-64), whose numbers differ and would slip past the list.
//!
//! Allowed as Docker allows them: `ptrace`, `process_vm_readv` and `process_vm_writev`
//! (only the run's own processes are in its pid namespace), `memfd_create`, SysV IPC (a
//! namespace of the run's own). Refused calls fail with `EPERM` (`clone3`: `ENOSYS`;
//! sockets: `EAFNOSUPPORT`); everything else is allowed.
//!
//! The format is what bubblewrap and `PR_SET_SECCOMP` read: the classic-BPF program as an
//! array of `struct sock_filter` (`u16 code, u8 jt, u8 jf, u32 k`, native byte order),
//! run on `struct seccomp_data` (`u32 nr` at 0, `u32 arch` at 4, `u64 args[6]` from 16; the
//! arguments read are `int` or `unsigned int`, their low word, at 16 on little-endian).

use std::io::{Seek, SeekFrom, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

#[cfg(target_arch = "x86_64")]
const ARCH: u32 = 0xC000_003E; // AUDIT_ARCH_X86_64
#[cfg(target_arch = "aarch64")]
const ARCH: u32 = 0xC000_00B7; // AUDIT_ARCH_AARCH64

/// x32 system calls are native-arch numbers with this bit set.
#[cfg(target_arch = "x86_64")]
const X32_BIT: u32 = 0x4000_0000;

/// The namespace flags of `clone` (`CLONE_NEWNS`, `CLONE_NEWCGROUP`, `CLONE_NEWUTS`,
/// `CLONE_NEWIPC`, `CLONE_NEWUSER`, `CLONE_NEWPID`, `CLONE_NEWNET`): Docker's mask.
const CLONE_NAMESPACES: u32 = 0x7E02_0000;

/// The `personality` arguments allowed: `PER_LINUX`, `PER_LINUX32`, `UNAME26`, both, and
/// the query.
const PERSONALITIES: [u32; 5] = [0, 0x0008, 0x0002_0000, 0x0002_0008, 0xffff_ffff];

/// `open_tree_attr` (Linux 6.15), which the libc crate does not name yet: from 424 on,
/// system calls have the same number on every architecture.
const SYS_OPEN_TREE_ATTR: libc::c_long = 467;

/// Refused with `EPERM` whatever their arguments (see the module's documentation).
const DENIED: &[libc::c_long] = &[
    // The kernel keyrings.
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    // Namespaces.
    libc::SYS_unshare,
    libc::SYS_setns,
    // Mounting.
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_chroot,
    libc::SYS_open_tree,
    SYS_OPEN_TREE_ATTR,
    libc::SYS_move_mount,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_mount_setattr,
    libc::SYS_quotactl,
    libc::SYS_quotactl_fd,
    // io_uring: its requests bypass this filter.
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    // Ways into the kernel.
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_userfaultfd,
    libc::SYS_fanotify_init,
    libc::SYS_lookup_dcookie,
    libc::SYS_open_by_handle_at,
    // The machine's administration.
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_reboot,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_acct,
    libc::SYS_settimeofday,
    libc::SYS_clock_settime,
    libc::SYS_sethostname,
    libc::SYS_setdomainname,
    libc::SYS_syslog,
    libc::SYS_vhangup,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_iopl,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_ioperm,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_uselib,
    // Other processes, beyond ptrace.
    libc::SYS_kcmp,
    libc::SYS_pidfd_getfd,
    libc::SYS_process_madvise,
    // NUMA memory placement.
    libc::SYS_mbind,
    libc::SYS_get_mempolicy,
    libc::SYS_set_mempolicy,
    libc::SYS_set_mempolicy_home_node,
    libc::SYS_migrate_pages,
    libc::SYS_move_pages,
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

/// `seccomp_data.args[0]`'s low word (little-endian).
const ARG0: u32 = 16;

/// One instruction: `(code, jt, jf, k)`.
type Insn = (u16, u8, u8, u32);

fn deny(errno: i32) -> Insn {
    (RET_K, 0, 0, ERRNO | errno as u32)
}

const RET_ALLOW: Insn = (RET_K, 0, 0, ALLOW);

/// Which socket families a run may open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Sockets {
    /// `AF_UNIX` only: the run has no network.
    Unix,
    /// `AF_UNIX`, `AF_INET` and `AF_INET6`: a `--network proxy` run, whose network
    /// namespace still holds only its loopback (where the relay to the proxy listens).
    Inet,
}

/// The filter (see the module's documentation).
pub(super) fn program(sockets: Sockets) -> Vec<Insn> {
    let eperm = deny(libc::EPERM);
    let mut p = vec![
        (LD_W_ABS, 0, 0, 4),
        (JEQ_K, 1, 0, ARCH),
        eperm,
        (LD_W_ABS, 0, 0, 0),
    ];
    #[cfg(target_arch = "x86_64")]
    p.extend([(JGE_K, 0, 1, X32_BIT), eperm]);
    for &nr in DENIED {
        p.extend([(JEQ_K, 0, 1, nr as u32), eperm]);
    }
    p.extend([(JEQ_K, 0, 1, libc::SYS_clone3 as u32), deny(libc::ENOSYS)]);
    // The calls judged by their first argument, last: each block loads it, overwriting the
    // system call's number, and returns.
    let unix_only = [
        (LD_W_ABS, 0, 0, ARG0),
        (JEQ_K, 0, 1, libc::AF_UNIX as u32),
        RET_ALLOW,
        deny(libc::EAFNOSUPPORT),
    ];
    let inet = [
        (LD_W_ABS, 0, 0, ARG0),
        (JEQ_K, 2, 0, libc::AF_UNIX as u32),
        (JEQ_K, 1, 0, libc::AF_INET as u32),
        (JEQ_K, 0, 1, libc::AF_INET6 as u32),
        RET_ALLOW,
        deny(libc::EAFNOSUPPORT),
    ];
    let families: &[Insn] = match sockets {
        Sockets::Unix => &unix_only,
        Sockets::Inet => &inet,
    };
    p.extend(when(libc::SYS_socket, families));
    p.extend(when(libc::SYS_socketpair, &unix_only));
    p.extend(when(libc::SYS_personality, &personality()));
    p.extend(when(
        libc::SYS_clone,
        &[
            (LD_W_ABS, 0, 0, ARG0),
            (JSET_K, 0, 1, CLONE_NAMESPACES),
            eperm,
            RET_ALLOW,
        ],
    ));
    p.push(RET_ALLOW);
    p
}

/// `block` (which ends in returns) for the system call `nr`; other calls skip it.
fn when(nr: libc::c_long, block: &[Insn]) -> Vec<Insn> {
    let len = u8::try_from(block.len()).expect("a short block");
    let mut out = vec![(JEQ_K, 0, len, nr as u32)];
    out.extend_from_slice(block);
    out
}

/// Allows the [`PERSONALITIES`], refuses the rest.
fn personality() -> Vec<Insn> {
    let n = PERSONALITIES.len();
    let mut block = vec![(LD_W_ABS, 0, 0, ARG0)];
    for (i, &value) in PERSONALITIES.iter().enumerate() {
        // Past the comparisons left and the refusal, to the allow.
        let to_allow = u8::try_from(n - i).expect("a short list");
        block.push((JEQ_K, to_allow, 0, value));
    }
    block.extend([deny(libc::EPERM), RET_ALLOW]);
    block
}

/// The program as bubblewrap and `PR_SET_SECCOMP` read it.
fn bytes(program: &[Insn]) -> Vec<u8> {
    let mut out = Vec::with_capacity(program.len() * 8);
    for &(code, jt, jf, k) in program {
        out.extend_from_slice(&code.to_ne_bytes());
        out.extend([jt, jf]);
        out.extend_from_slice(&k.to_ne_bytes());
    }
    out
}

/// The filter as a file holds it (the docker backend stages it as `/sandbox/seccomp.bpf`).
pub(super) fn filter(sockets: Sockets) -> Vec<u8> {
    bytes(&program(sockets))
}

/// Python that loads the filter in `sys.argv[1]` on top of the container's own
/// (`PR_SET_NO_NEW_PRIVS`, then `seccomp(SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC)`)
/// and then executes `sys.argv[2:]`, for the docker backend: `python -c LOADER
/// /sandbox/seccomp.bpf python /sandbox/harness.py …`. A filter that cannot be loaded ends
/// the run before the harness starts (exit status 125, the reason on stderr).
pub(super) fn loader() -> String {
    format!(
        r#"import ctypes, os, sys
program = open(sys.argv[1], "rb").read()
class Prog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]
prog = Prog(len(program) // 8, program)
libc = ctypes.CDLL(None, use_errno=True)
if libc.prctl({no_new_privs}, 1, 0, 0, 0) != 0 or libc.syscall({seccomp}, 1, 1, ctypes.byref(prog)) != 0:
    sys.stderr.write("ml2b: cannot load the sandbox's seccomp filter: " + os.strerror(ctypes.get_errno()) + "\n")
    os._exit(125)
os.execv(sys.argv[2], sys.argv[2:])
"#,
        no_new_privs = libc::PR_SET_NO_NEW_PRIVS,
        seccomp = libc::SYS_seccomp,
    )
}

/// An anonymous file (memfd, close-on-exec) holding the filter, read from its start. The
/// caller clears close-on-exec in the child only ([`inherit`]), so that no other process
/// ml2b starts meanwhile inherits it.
pub(super) fn memfd(sockets: Sockets) -> std::io::Result<OwnedFd> {
    // SAFETY: a NUL-terminated name and valid flags; the descriptor is owned right away.
    let fd = unsafe { libc::memfd_create(c"ml2b-seccomp".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `fd` was just opened and nothing else owns it.
    let mut file = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(fd) });
    file.write_all(&bytes(&program(sockets)))?;
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
        verdict_of(Sockets::Unix, nr, arch, arg0)
    }

    fn verdict_of(sockets: Sockets, nr: libc::c_long, arch: u32, arg0: u64) -> u32 {
        let mut data = [0u8; 64];
        data[0..4].copy_from_slice(&(nr as u32).to_ne_bytes());
        data[4..8].copy_from_slice(&arch.to_ne_bytes());
        data[16..24].copy_from_slice(&arg0.to_ne_bytes());
        let program = program(sockets);
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

    const EPERM: u32 = ERRNO | libc::EPERM as u32;
    const EAFNOSUPPORT: u32 = ERRNO | libc::EAFNOSUPPORT as u32;

    #[test]
    fn keyrings_namespaces_and_foreign_abis_are_refused_the_rest_allowed() {
        assert_eq!(verdict(libc::SYS_keyctl, ARCH, 0), EPERM);
        assert_eq!(verdict(libc::SYS_unshare, ARCH, 0), EPERM);
        assert_eq!(verdict(libc::SYS_clone, ARCH, 0x1000_0000 | 0x11), EPERM);
        assert_eq!(verdict(libc::SYS_clone, ARCH, 0x003d_0f00), ALLOW);
        assert_eq!(verdict(libc::SYS_clone3, ARCH, 0), ERRNO | libc::ENOSYS as u32);
        assert_eq!(verdict(libc::SYS_read, ARCH, 0), ALLOW);
        assert_eq!(verdict(libc::SYS_read, 0x4000_0003, 0), EPERM);
        #[cfg(target_arch = "x86_64")]
        assert_eq!(verdict(libc::SYS_read | 0x4000_0000, ARCH, 0), EPERM);
    }

    #[test]
    fn every_namespace_flag_of_clone_is_refused() {
        let flags = [
            libc::CLONE_NEWNS,
            libc::CLONE_NEWCGROUP,
            libc::CLONE_NEWUTS,
            libc::CLONE_NEWIPC,
            libc::CLONE_NEWUSER,
            libc::CLONE_NEWPID,
            libc::CLONE_NEWNET,
        ];
        for flag in flags {
            let thread = (libc::CLONE_VM | libc::CLONE_THREAD | libc::SIGCHLD) as u64;
            assert_eq!(
                verdict(libc::SYS_clone, ARCH, thread | flag as u64),
                EPERM,
                "{flag:#x}"
            );
        }
    }

    /// A `--network proxy` run may open IPv4 and IPv6 sockets (its namespace holds only its
    /// loopback), and still no other family.
    #[test]
    fn a_proxy_run_opens_inet_sockets_and_no_other_family() {
        let inet = |family: i32| verdict_of(Sockets::Inet, libc::SYS_socket, ARCH, family as u64);
        for family in [libc::AF_UNIX, libc::AF_INET, libc::AF_INET6] {
            assert_eq!(inet(family), ALLOW, "{family}");
        }
        for family in [libc::AF_VSOCK, libc::AF_NETLINK, libc::AF_PACKET, libc::AF_ALG] {
            assert_eq!(inet(family), EAFNOSUPPORT, "{family}");
        }
        let pair = verdict_of(Sockets::Inet, libc::SYS_socketpair, ARCH, libc::AF_INET as u64);
        assert_eq!(pair, EAFNOSUPPORT);
        assert_eq!(
            verdict_of(Sockets::Inet, libc::SYS_io_uring_setup, ARCH, 0),
            verdict(libc::SYS_io_uring_setup, ARCH, 0),
            "the rest of the filter is the same"
        );
    }

    #[test]
    fn sockets_of_every_family_but_unix_are_refused() {
        for call in [libc::SYS_socket, libc::SYS_socketpair] {
            assert_eq!(verdict(call, ARCH, libc::AF_UNIX as u64), ALLOW);
            for family in [
                libc::AF_VSOCK,
                libc::AF_INET,
                libc::AF_INET6,
                libc::AF_NETLINK,
                libc::AF_PACKET,
                libc::AF_ALG,
                libc::AF_BLUETOOTH,
            ] {
                assert_eq!(
                    verdict(call, ARCH, family as u64),
                    EAFNOSUPPORT,
                    "{call} {family}"
                );
            }
            // Only the low word is the `int` the kernel reads.
            assert_eq!(verdict(call, ARCH, (1 << 32) | libc::AF_UNIX as u64), ALLOW);
        }
    }

    #[test]
    fn io_uring_and_the_rest_of_the_list_are_refused() {
        for &nr in DENIED {
            assert_eq!(verdict(nr, ARCH, 0), EPERM, "system call {nr}");
        }
        for nr in [
            libc::SYS_io_uring_setup,
            libc::SYS_io_uring_enter,
            libc::SYS_io_uring_register,
            libc::SYS_open_by_handle_at,
            libc::SYS_kexec_load,
            libc::SYS_syslog,
        ] {
            assert!(DENIED.contains(&nr), "{nr}");
        }
        // What a solution does use stays allowed.
        for nr in [
            libc::SYS_ptrace,
            libc::SYS_memfd_create,
            libc::SYS_name_to_handle_at,
            libc::SYS_sched_setaffinity,
            libc::SYS_seccomp,
        ] {
            assert_eq!(verdict(nr, ARCH, 0), ALLOW, "system call {nr}");
        }
    }

    #[test]
    fn personality_takes_dockers_values_only() {
        for value in PERSONALITIES {
            assert_eq!(
                verdict(libc::SYS_personality, ARCH, u64::from(value)),
                ALLOW,
                "{value:#x}"
            );
        }
        // ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC, MMAP_PAGE_ZERO, and PER_BSD.
        for value in [0x0004_0000, 0x0040_0000, 0x0010_0000, 0x0006] {
            assert_eq!(verdict(libc::SYS_personality, ARCH, value), EPERM, "{value:#x}");
        }
    }

    /// The docker backend's path, outside Docker: a Python whose filter the loader set
    /// cannot make a vsock socket or an io_uring, and still runs.
    #[test]
    fn the_loader_stacks_the_filter_and_runs_the_command() {
        let python = std::env::var("ML2B_PYTHON").unwrap_or_else(|_| "python3".into());
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("seccomp.bpf");
        std::fs::write(&path, filter(Sockets::Unix)).unwrap();
        let probe = format!(
            "import ctypes, socket\nlibc = ctypes.CDLL(None, use_errno=True)\ntry:\n    socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM)\nexcept OSError as e:\n    print('vsock', e.errno)\nr = libc.syscall({}, 8, ctypes.create_string_buffer(120))\nprint('io_uring_setup', r, ctypes.get_errno())\nprint('unix', socket.socketpair()[0].family == socket.AF_UNIX)",
            libc::SYS_io_uring_setup
        );
        let out = std::process::Command::new(&python)
            .arg("-c")
            .arg(loader())
            .arg(&path)
            .arg(&python)
            .args(["-c", &probe])
            .output()
            .unwrap_or_else(|e| panic!("{python}: {e}"));
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(text.contains(&format!("vsock {}", libc::EAFNOSUPPORT)), "{text}");
        assert!(
            text.contains(&format!("io_uring_setup -1 {}", libc::EPERM)),
            "{text}"
        );
        assert!(text.contains("unix True"), "{text}");
    }
}
