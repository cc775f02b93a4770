//! The hostile-submission suite against the local (bubblewrap) backend: each solution tries
//! one escape through `ml2b grade-file`; each must be contained, classified, leave no
//! process or file behind, and leak nothing.

use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::common::Workspace;
use crate::common::assert_no_process_with;

const SECRET: &str = "sk-fake-ml2b-secret-0123456789";

fn repo() -> &'static str {
    env!("CARGO_MANIFEST_DIR")
}

/// A MONO_PREDICT solution: `body` runs first, then valid constant predictions return.
fn solution(body: &str) -> String {
    let body: String = body.lines().map(|l| format!("    {l}\n")).collect();
    format!(
        "import os, sys, time, socket\nimport numpy as np\n\ndef train_and_predict(data, X_val):\n{body}    return np.full(len(X_val), 0.7)\n"
    )
}

/// The `ml2b grade-file` command that runs one solution on credit-risk.
fn command(ws: &Workspace, body: &str, extra: &[&str]) -> Command {
    let file = ws.dir.path().join("hostile.py");
    std::fs::write(&file, solution(body)).unwrap();
    let mut cmd = ws.ml2b();
    cmd.env("ML2B_FAKE_API_KEY", SECRET)
        .args([
            "--json",
            "grade-file",
            "--root",
            repo(),
            "--competition",
            "credit-risk",
            "--format",
            "mono",
        ])
        .args(extra)
        .arg(&file);
    cmd
}

/// Runs one solution on credit-risk; returns the JSON report and everything it printed.
fn grade(ws: &Workspace, body: &str, extra: &[&str]) -> (Value, String) {
    report(command(ws, body, extra).output().unwrap())
}

/// The JSON report of a finished `grade-file` and everything it printed; checks that the
/// secret was not among it.
fn report(out: Output) -> (Value, String) {
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert!(!text.contains(SECRET), "the secret leaked: {text}");
    (report, text)
}

fn outcome(r: &Value) -> &str {
    r["outcome"].as_str().unwrap()
}

#[test]
fn a_clean_solution_runs_and_is_graded() {
    let ws = Workspace::new();
    let (r, _) = grade(&ws, "pass", &[]);
    assert_eq!(outcome(&r), "ok", "{r}");
    assert!(
        r["score"].as_f64().unwrap() > 0.0 && r["r_p"]["reference"].as_f64().unwrap() > 0.0,
        "{r}"
    );
}

#[test]
fn no_tcp_connection_reaches_a_server_on_the_host() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let ws = Workspace::new();
    let body = format!("s = socket.create_connection(('127.0.0.1', {port}), timeout=2)\ns.sendall(b'leak')");
    let (r, _) = grade(&ws, &body, &[]);
    assert_eq!(outcome(&r), "runtime_error", "{r}");
    // No socket of the family is made at all (the seccomp filter: `AF_UNIX` only).
    assert!(
        r["detail"]
            .as_str()
            .unwrap()
            .contains("Address family not supported"),
        "{r}"
    );
    assert!(listener.accept().is_err(), "the server saw a connection");
}

#[test]
fn hostnames_do_not_resolve() {
    let ws = Workspace::new();
    let (r, _) = grade(&ws, "socket.gethostbyname('pypi.org')", &[]);
    assert_eq!(outcome(&r), "runtime_error", "{r}");
    assert!(r["detail"].as_str().unwrap().contains("gaierror"), "{r}");
}

#[test]
fn the_private_answers_cannot_be_read_by_path_or_by_search() {
    let ws = Workspace::new();
    let answers = Path::new(repo()).join("data/credit-risk/private/answers.csv");
    let (r, _) = grade(
        &ws,
        &format!("open({:?}).read()", answers.display().to_string()),
        &[],
    );
    assert_eq!(outcome(&r), "runtime_error", "{r}");
    assert!(r["detail"].as_str().unwrap().contains("FileNotFoundError"), "{r}");
    let search = "found = [os.path.join(d, f) for d, _, fs in os.walk('/') for f in fs if 'answers' in f or f == 'train.csv' and not d.startswith('/data')]\nif found:\n    raise RuntimeError(f'found {found}')";
    let (r, _) = grade(&ws, search, &[]);
    assert_eq!(outcome(&r), "ok", "the search found something: {r}");
}

#[test]
fn the_callers_environment_is_invisible() {
    let ws = Workspace::new();
    let body = "print(dict(os.environ))\nfor p in os.listdir('/proc'):\n    try:\n        print(open(f'/proc/{p}/environ').read())\n    except Exception:\n        pass\nif any('sk-fake' in v for v in os.environ.values()):\n    raise RuntimeError('saw the key')";
    let (r, text) = grade(&ws, body, &[]);
    assert_eq!(outcome(&r), "ok", "{r}");
    assert!(
        text.contains("PYTHONHASHSEED"),
        "the environment was printed: {text}"
    );
}

#[test]
fn writes_outside_the_output_folder_fail_and_leave_nothing() {
    let ws = Workspace::new();
    let host = ws.dir.path().join("escaped.txt");
    let body = format!(
        "ok = []\nfor p in ['/data/x', '/usr/x', '/sandbox/x', '/x', {:?}, {:?}]:\n    try:\n        open(p, 'w').write('x')\n        ok.append(p)\n    except OSError:\n        pass\nopen('/tmp/scratch', 'w').write('fine')\nif ok:\n    raise RuntimeError(f'wrote {{ok}}')",
        host.display().to_string(),
        Path::new(repo())
            .join("data/credit-risk/public/escaped")
            .display()
            .to_string()
    );
    let (r, _) = grade(&ws, &body, &[]);
    assert_eq!(outcome(&r), "ok", "{r}");
    assert!(!host.exists());
    assert!(!Path::new(repo()).join("data/credit-risk/public/escaped").exists());
}

#[test]
fn a_fork_bomb_is_contained() {
    let ws = Workspace::new();
    let body = "marker = 'ml2b-fork-bomb-marker'\nwhile True:\n    try:\n        if os.fork() == 0:\n            os.execv(sys.executable, [sys.executable, '-c', 'import time; time.sleep(60)', marker])\n    except OSError:\n        raise MemoryError('fork refused')";
    let (r, _) = grade(&ws, body, &["--timeout", "20"]);
    assert!(
        ["out_of_memory", "runtime_error", "timeout"].contains(&outcome(&r)),
        "{r}"
    );
    assert!(r["wall_seconds"].as_f64().unwrap() < 25.0);
    assert_no_process_with("ml2b-fork-bomb-marker");
}

#[test]
fn allocating_64_gib_is_out_of_memory() {
    let ws = Workspace::new();
    let (r, _) = grade(
        &ws,
        "x = np.ones((64 << 30) // 8)",
        &["--memory", &(4u64 << 30).to_string()],
    );
    assert_eq!(outcome(&r), "out_of_memory", "{r}");
}

#[test]
fn filling_the_disk_is_stopped() {
    let ws = Workspace::new();
    // /tmp is a tmpfs as large as the output limit: writing past it fails.
    let tmp = "i = 0\nwhile True:\n    with open(f'/tmp/fill{i}', 'wb') as f:\n        f.write(b'0' * (100 << 20))\n    i += 1";
    let (r, _) = grade(&ws, tmp, &[]);
    assert_eq!(outcome(&r), "constraint_violation", "{r}");
    assert!(r["detail"].as_str().unwrap().contains("No space left"), "{r}");
    // One file past the output limit in /out: refused by the file-size limit.
    let out = "with open('/out/fill', 'wb') as f:\n    while True:\n        f.write(b'0' * (1 << 20))";
    let (r, _) = grade(&ws, out, &[]);
    assert_eq!(outcome(&r), "constraint_violation", "{r}");
}

#[test]
fn sleeping_past_the_limit_is_a_timeout() {
    let ws = Workspace::new();
    let (r, _) = grade(&ws, "time.sleep(120)", &["--timeout", "2"]);
    assert_eq!(outcome(&r), "timeout", "{r}");
    let wall = r["wall_seconds"].as_f64().unwrap();
    assert!((2.0..10.0).contains(&wall), "{wall}");
}

#[test]
fn a_daemon_does_not_outlive_the_run() {
    let ws = Workspace::new();
    let body = "if os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n        os.execv(sys.executable, [sys.executable, '-c', 'import time; time.sleep(600)', 'ml2b-daemon-marker'])\n    os._exit(0)\ntime.sleep(0.5)";
    let (r, _) = grade(&ws, body, &[]);
    assert_eq!(outcome(&r), "ok", "{r}");
    assert_no_process_with("ml2b-daemon-marker");
}

#[test]
fn killing_its_parent_everything_or_itself_is_contained() {
    let ws = Workspace::new();
    let (r, _) = grade(&ws, "os.kill(os.getppid(), 9)\ntime.sleep(0.2)", &[]);
    assert_eq!(outcome(&r), "ok", "the sandbox's init ignores the signal: {r}");
    // kill(-1) reaches only the sandbox's own processes, and here there are none to reach.
    let (r, _) = grade(
        &ws,
        "try:\n    os.kill(-1, 9)\nexcept ProcessLookupError:\n    pass",
        &[],
    );
    assert_eq!(outcome(&r), "ok", "{r}");
    let (r, _) = grade(&ws, "os.kill(os.getpid(), 9)", &[]);
    assert_eq!(outcome(&r), "runtime_error", "{r}");
    assert!(r["detail"].as_str().unwrap().contains("without a result"), "{r}");
}

#[test]
fn outputs_left_as_links_are_not_followed_on_the_host() {
    // A host file shaped like a result record: followed, it would make the run `ok`.
    let ws = Workspace::new();
    let forged = ws.dir.path().join("forged.json");
    std::fs::write(&forged, "{\"success\": true, \"outcome\": \"ok\"}").unwrap();
    let body = format!(
        "os.symlink({:?}, '/out/result.json')",
        forged.display().to_string()
    );
    let (r, text) = grade(&ws, &body, &[]);
    assert_ne!(outcome(&r), "ok", "{text}");
}

#[test]
fn outputs_left_as_fifos_or_folders_do_not_hang_ml2b() {
    let ws = Workspace::new();
    // Opening a FIFO for reading blocks until a writer comes: ml2b would wait forever.
    let (r, text) = grade(&ws, "os.mkfifo('/out/result.json')\nos._exit(0)", &[]);
    assert_eq!(outcome(&r), "constraint_violation", "{text}");
    assert!(
        r["detail"].as_str().unwrap().contains("result.json is a FIFO"),
        "{r}"
    );
    let (r, text) = grade(&ws, "os.mkdir('/out/result.json')", &[]);
    assert_eq!(outcome(&r), "constraint_violation", "{text}");
    assert!(
        r["detail"]
            .as_str()
            .unwrap()
            .contains("result.json is a directory"),
        "{r}"
    );
    let forged = format!("open('/out/result.json', 'w').write({FORGED:?})");
    let (r, text) = grade(
        &ws,
        &format!("os.mkfifo('/out/predictions.parquet')\n{forged}\nos._exit(0)"),
        &[],
    );
    assert_eq!(outcome(&r), "bad_predictions", "{text}");
    assert!(r["detail"].as_str().unwrap().contains("is a FIFO"), "{r}");
}

/// A result record claiming success, as a solution can write it itself.
const FORGED: &str = "{\"success\": true, \"outcome\": \"ok\", \"rows\": 100}";

#[test]
fn a_forged_ok_record_is_checked_against_the_predictions() {
    let ws = Workspace::new();
    let forged = format!("open('/out/result.json', 'w').write({FORGED:?})");
    let (r, text) = grade(&ws, &format!("{forged}\nos._exit(0)"), &[]);
    assert_eq!(outcome(&r), "bad_predictions", "{text}");
    assert!(
        r["detail"]
            .as_str()
            .unwrap()
            .contains("predictions.parquet is missing"),
        "{r}"
    );
    let csv = "open('/out/predictions.parquet', 'w').write('id,Status\\n1,0.5\\n')";
    let (r, text) = grade(&ws, &format!("{forged}\n{csv}\nos._exit(0)"), &[]);
    assert_eq!(outcome(&r), "bad_predictions", "{text}");
    assert!(
        r["detail"].as_str().unwrap().contains("not a Parquet file"),
        "{r}"
    );
}

#[test]
fn a_huge_result_record_is_refused_and_not_stored() {
    let ws = Workspace::new();
    let out = ws.dir.path().join("delivered");
    let body = "open('/out/result.json', 'w').write('{\"success\": true, \"outcome\": \"ok\", \"pad\": \"' + 'x' * (8 << 20) + '\"}')\nos._exit(0)";
    let (r, text) = grade(&ws, body, &["--out", out.to_str().unwrap()]);
    assert_eq!(
        outcome(&r),
        "constraint_violation",
        "{}",
        &text[..text.len().min(2000)]
    );
    assert!(
        r["detail"]
            .as_str()
            .unwrap()
            .contains("over the 65536-byte limit"),
        "{r}"
    );
    assert!(text.len() < 64 << 10, "{} bytes reported", text.len());
    assert!(!out.join("result.json").exists());
}

fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").unwrap().uid() == 0
}

/// Every path under `dir` that the user `nobody` (65534) can list or read.
fn readable_by_another_user(dir: &Path) -> Vec<String> {
    // ml2b's own harness, materialized there, is public.
    let paths: Vec<PathBuf> = walkdir::WalkDir::new(dir)
        .min_depth(1)
        .into_iter()
        .filter_map(Result::ok)
        .map(|e| e.into_path())
        .filter(|p| !p.to_string_lossy().ends_with("-harness.py") || p.parent() != Some(dir))
        .collect();
    let probe = "for p; do if [ -d \"$p\" ]; then ls \"$p\" >/dev/null 2>&1 && echo \"$p\"; else head -c1 \"$p\" >/dev/null 2>&1 && echo \"$p\"; fi; done; true";
    let out = Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--",
            "sh",
            "-c",
            probe,
            "sh",
        ])
        .args(&paths)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(String::from)
        .collect()
}

/// The run folders under `tmp`: those holding a staged `code.py`.
fn run_folders(tmp: &Path) -> Vec<PathBuf> {
    walkdir::WalkDir::new(tmp)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_name() == "code.py" && e.path().parent().is_some_and(|p| p.ends_with("sandbox")))
        .filter_map(|e| e.path().parent()?.parent().map(Path::to_path_buf))
        .collect()
}

#[test]
fn a_killed_run_leaves_nothing_readable_and_is_swept_next_time() {
    let ws = Workspace::new();
    // A temporary folder anyone may enter, like /tmp.
    let tmp = ws.dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    for dir in [ws.dir.path(), &tmp] {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o1777)).unwrap();
    }
    let mut child = command(&ws, "time.sleep(120)", &[])
        .env("TMPDIR", &tmp)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Until the run is staged (the solution then sleeps for two minutes).
    while run_folders(&tmp).is_empty() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "ml2b ended before its run was staged"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let left = run_folders(&tmp);
    assert!(!left.is_empty());
    if is_root() {
        assert_eq!(readable_by_another_user(&tmp), Vec::<String>::new());
    }
    for dir in &left {
        let mode = std::fs::metadata(dir).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "{} has mode {mode:o}", dir.display());
    }
    let (r, text) = {
        let mut cmd = command(&ws, "pass", &[]);
        report(cmd.env("TMPDIR", &tmp).output().unwrap())
    };
    assert_eq!(outcome(&r), "ok", "{text}");
    for dir in left {
        assert!(!dir.exists(), "{} was not swept", dir.display());
    }
}

/// Python that calls a system call through ctypes and prints `<label>: <result> <errno>`.
const SYSCALL: &str = "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\ndef call(label, *args):\n    r = libc.syscall(*args)\n    print(f'{label}: {r} errno {ctypes.get_errno()}')\n    return r";

#[test]
fn the_callers_session_keyring_is_out_of_reach() {
    // A key in a new session keyring of this thread, which the ml2b it starts inherits.
    let description = c"ml2b-test-key";
    // SAFETY: valid arguments; the key's payload is copied by the kernel.
    let key = unsafe {
        libc::syscall(
            libc::SYS_keyctl,
            1, /* JOIN_SESSION_KEYRING */
            std::ptr::null::<u8>(),
        );
        libc::syscall(
            libc::SYS_add_key,
            c"user".as_ptr(),
            description.as_ptr(),
            SECRET.as_ptr(),
            SECRET.len(),
            -3, /* KEY_SPEC_SESSION_KEYRING */
        )
    };
    assert!(
        key > 0,
        "the host refuses keyrings: {}",
        std::io::Error::last_os_error()
    );
    let body = format!(
        "{SYSCALL}\nkey = call('request_key', {}, b'user', b'ml2b-test-key', None, 0)\nbuf = ctypes.create_string_buffer(256)\ncall('keyctl_read', {}, 11, key, buf, 256)\nprint(buf.raw)\ncall('keyctl_session', {}, 0, -3, 0)",
        libc::SYS_request_key,
        libc::SYS_keyctl,
        libc::SYS_keyctl,
    );
    let (r, text) = grade(&Workspace::new(), &body, &[]);
    assert_eq!(outcome(&r), "ok", "{text}");
    for call in ["request_key", "keyctl_read", "keyctl_session"] {
        assert!(text.contains(&format!("{call}: -1 errno 1")), "{call}: {text}");
    }
}

#[test]
fn nested_user_namespaces_are_refused() {
    // unshare(CLONE_NEWUSER), clone(CLONE_NEWUSER | SIGCHLD) and util-linux's `unshare -r`.
    let body = format!(
        "{SYSCALL}\ncall('unshare', {}, 0x10000000)\npid = call('clone', {}, 0x10000000 | 17, 0, 0, 0, 0)\nif pid == 0:\n    os._exit(0)\nimport subprocess\nr = subprocess.run(['unshare', '-r', 'id'], capture_output=True, text=True)\nprint('unshare -r:', r.returncode, r.stdout, r.stderr)\nif pid > 0 or r.returncode == 0:\n    raise RuntimeError('a user namespace was made')",
        libc::SYS_unshare,
        libc::SYS_clone,
    );
    let (r, text) = grade(&Workspace::new(), &body, &[]);
    assert_eq!(outcome(&r), "ok", "{text}");
    for call in ["unshare", "clone"] {
        assert!(text.contains(&format!("{call}: -1 errno 1")), "{call}: {text}");
    }
}

#[test]
fn flooding_the_output_folder_with_folders_or_empty_files_is_stopped() {
    // Past the default limit of 10,000 files and folders, with no byte to speak of.
    let ws = Workspace::new();
    for make in ["os.mkdir(f'/out/d{i}')", "open(f'/out/f{i}', 'w').close()"] {
        let body = format!("for i in range(30_000):\n    {make}");
        let (r, text) = grade(&ws, &body, &[]);
        assert_eq!(outcome(&r), "constraint_violation", "{make}: {text}");
        let detail = r["detail"].as_str().unwrap();
        assert!(
            detail.contains("No space left") || detail.contains("files and folders"),
            "{detail}"
        );
    }
}

#[test]
fn memory_is_limited_for_the_run_as_a_whole() {
    // Four processes each holding 1 GiB cannot all hold it under a 3 GiB limit. Each child
    // says when it holds its memory, then waits for its stdin to close.
    let child =
        "import sys\\nb = b'x' * (1 << 30)\\nsys.stdout.write('1')\\nsys.stdout.flush()\\nsys.stdin.read()";
    let body = format!(
        "import subprocess\nkids = [subprocess.Popen([sys.executable, '-c', \"{child}\"], stdin=subprocess.PIPE, stdout=subprocess.PIPE) for _ in range(4)]\nheld = sum(len(k.stdout.read(1)) for k in kids)\nfor k in kids:\n    k.stdin.close()\n    k.wait()\nprint(f'held: {{held}} of 4')\nif held == 4:\n    raise RuntimeError('all four children held 1 GiB each')"
    );
    let (r, text) = grade(&Workspace::new(), &body, &["--memory", &(3u64 << 30).to_string()]);
    assert!(["ok", "out_of_memory"].contains(&outcome(&r)), "{text}");
    assert!(!text.contains("held: 4 of 4"), "{text}");
}

#[test]
fn sockets_of_every_family_but_unix_are_refused() {
    // AF_VSOCK reaches the hypervisor of a VM host whatever the network namespace says.
    let body = "for name, family, kind in [('vsock', socket.AF_VSOCK, socket.SOCK_STREAM), ('inet', socket.AF_INET, socket.SOCK_STREAM), ('inet6', socket.AF_INET6, socket.SOCK_DGRAM), ('netlink', socket.AF_NETLINK, socket.SOCK_DGRAM), ('packet', socket.AF_PACKET, socket.SOCK_DGRAM)]:\n    try:\n        s = socket.socket(family, kind)\n        print(f'{name}: made')\n        if family == socket.AF_VSOCK:\n            s.bind((socket.VMADDR_CID_ANY, 5000))\n            print('vsock: bound')\n    except OSError as e:\n        print(f'{name}: errno {e.errno}')\na, b = socket.socketpair()\na.sendall(b'x')\nprint('unix:', b.recv(1))";
    let (r, text) = grade(&Workspace::new(), body, &[]);
    assert_eq!(outcome(&r), "ok", "{text}");
    for family in ["vsock", "inet", "inet6", "netlink", "packet"] {
        let refused = format!("{family}: errno {}", libc::EAFNOSUPPORT);
        assert!(text.contains(&refused), "{refused}: {text}");
    }
    assert!(text.contains("unix: b'x'"), "{text}");
}

#[test]
fn io_uring_and_foreign_personalities_are_refused() {
    // io_uring executes its requests (socket, connect, open) past the seccomp filter.
    let body = format!(
        "{SYSCALL}\nring = call('io_uring_setup', {}, 8, ctypes.create_string_buffer(120))\ncall('personality', {}, 0x0040000)\ncall('personality_query', {}, 0xffffffff)",
        libc::SYS_io_uring_setup,
        libc::SYS_personality,
        libc::SYS_personality,
    );
    let (r, text) = grade(&Workspace::new(), &body, &[]);
    assert_eq!(outcome(&r), "ok", "{text}");
    assert!(text.contains("io_uring_setup: -1 errno 1"), "{text}");
    assert!(
        text.contains("personality: -1 errno 1"),
        "ADDR_NO_RANDOMIZE: {text}"
    );
    assert!(
        text.contains("personality_query: 0 errno"),
        "the query is allowed: {text}"
    );
}

/// `cmd` run as the user `nobody`, its environment and folder kept.
fn as_nobody(cmd: &Command) -> Command {
    let mut wrapped = Command::new("setpriv");
    wrapped
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(cmd.get_program())
        .args(cmd.get_args());
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => wrapped.env(k, v),
            None => wrapped.env_remove(k),
        };
    }
    if let Some(dir) = cmd.get_current_dir() {
        wrapped.current_dir(dir);
    }
    wrapped
}

#[test]
fn dev_and_dev_shm_hold_no_more_than_their_size() {
    // 1.2 GiB in files of memory, past the run's 1 GiB: /dev/shm is a 64 MiB tmpfs, /dev is
    // read-only. Run too as a user without a control group of its own, where no memory
    // limit counts what a tmpfs holds (the report that found this: 6 GiB came back `ok`).
    let body = "def fill(folder):\n    total = 0\n    try:\n        for i in range(6):\n            with open(f'{folder}/fill{i}', 'wb') as f:\n                for _ in range(200):\n                    f.write(b'0' * (1 << 20))\n                    total += 1\n    except OSError as e:\n        print(f'{folder}: {total} MiB, then errno {e.errno}')\n        return\n    print(f'{folder}: {total} MiB, all written')\nfill('/dev/shm')\nfill('/dev')";
    let ws = Workspace::new();
    std::fs::set_permissions(ws.dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let memory = (1u64 << 30).to_string();
    let mine = command(&ws, body, &["--memory", &memory]);
    let mut runs = vec![("this user", command(&ws, body, &["--memory", &memory]))];
    if is_root() {
        runs.push(("nobody", as_nobody(&mine)));
    }
    for (who, mut cmd) in runs {
        let (r, text) = report(cmd.output().unwrap());
        assert_eq!(outcome(&r), "ok", "{who}: {text}");
        let shm = format!("/dev/shm: 64 MiB, then errno {}", libc::ENOSPC);
        assert!(text.contains(&shm), "{who}: {shm}: {text}");
        let dev = format!("/dev: 0 MiB, then errno {}", libc::EROFS);
        assert!(text.contains(&dev), "{who}: {dev}: {text}");
        if who == "nobody" {
            assert!(
                text.contains("cannot limit a run's memory and processes as a whole"),
                "the run had a control group: {text}"
            );
        }
    }
}

/// The suite's escapes, again with `--network proxy`, on both backends: a run that may
/// open IPv4 sockets (its relay to the proxy listens on its loopback) still reaches no
/// server of the host, reads no answers and no environment, writes nowhere but its output
/// folder, and opens no socket of another family.
#[test]
fn the_hostile_suite_holds_in_proxy_mode() {
    for backend in ["local", "docker"] {
        hostile_through_the_proxy(&["--network", "proxy", "--backend", backend]);
    }
}

fn hostile_through_the_proxy(proxy: &[&str]) {
    let ws = Workspace::new();
    let proxy = proxy.to_vec();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let (r, _) = grade(
        &ws,
        &format!("s = socket.create_connection(('127.0.0.1', {port}), timeout=2)\ns.sendall(b'leak')"),
        &proxy,
    );
    assert_eq!(outcome(&r), "runtime_error", "{r}");
    assert!(
        r["detail"].as_str().unwrap().contains("Connection refused"),
        "{r}"
    );
    assert!(listener.accept().is_err(), "the server saw a connection");
    let answers = Path::new(repo()).join("data/credit-risk/private/answers.csv");
    let (r, _) = grade(
        &ws,
        &format!("open({:?}).read()", answers.display().to_string()),
        &proxy,
    );
    assert!(r["detail"].as_str().unwrap().contains("FileNotFoundError"), "{r}");
    let search = "found = [os.path.join(d, f) for d, _, fs in os.walk('/') for f in fs if 'answers' in f or f == 'train.csv' and not d.startswith('/data')]\nif found:\n    raise RuntimeError(f'found {found}')";
    let (r, _) = grade(&ws, search, &proxy);
    assert_eq!(outcome(&r), "ok", "the search found something: {r}");
    let environment = "for p in os.listdir('/proc'):\n    try:\n        if b'sk-fake' in open(f'/proc/{p}/environ', 'rb').read():\n            raise RuntimeError('saw the key in ' + p)\n    except OSError:\n        pass\nif any('sk-fake' in v for v in os.environ.values()):\n    raise RuntimeError('saw the key')\nassert os.environ['HTTPS_PROXY'] == 'http://127.0.0.1:3128'";
    let (r, _) = grade(&ws, environment, &proxy);
    assert_eq!(outcome(&r), "ok", "{r}");
    let host = ws.dir.path().join("escaped.txt");
    let writes = format!(
        "ok = []\nfor p in ['/data/x', '/usr/x', '/sandbox/x', '/sandbox/proxy.sock', '/x', {:?}]:\n    try:\n        open(p, 'w').write('x')\n        ok.append(p)\n    except OSError:\n        pass\nif ok:\n    raise RuntimeError(f'wrote {{ok}}')",
        host.display().to_string()
    );
    let (r, _) = grade(&ws, &writes, &proxy);
    assert_eq!(outcome(&r), "ok", "{r}");
    assert!(!host.exists());
    let families = "for name, family in [('vsock', socket.AF_VSOCK), ('netlink', socket.AF_NETLINK), ('packet', socket.AF_PACKET)]:\n    try:\n        socket.socket(family, socket.SOCK_DGRAM)\n        print(f'{name}: made')\n    except OSError as e:\n        print(f'{name}: errno {e.errno}')";
    let (r, text) = grade(&ws, families, &proxy);
    assert_eq!(outcome(&r), "ok", "{text}");
    for family in ["vsock", "netlink", "packet"] {
        let refused = format!("{family}: errno {}", libc::EAFNOSUPPORT);
        assert!(text.contains(&refused), "{refused}: {text}");
    }
}
