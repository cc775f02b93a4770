//! The hostile-submission suite against the docker backend: each solution tries one
//! escape; each must be contained, classified, leave no container, process or file
//! behind, and leak nothing. A clean solution's predictions must be byte-identical to the
//! local backend's.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use ml2b::competition::spec::{Kind, Spec};
use ml2b::events::{Format, Outcome};
use ml2b::sandbox::docker::{CODE_LABEL, Docker};
use ml2b::sandbox::image::{ImageRef, RuntimeImage};
use ml2b::sandbox::local::Local;
use ml2b::sandbox::{Backend, Job, Limits, Run, assets, pyenv};

use crate::common::assert_no_process_with;

/// The bundled credit-risk competition: public files, private answers, reference solution.
fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data/credit-risk")
}

fn image() -> &'static ImageRef {
    static IMAGE: OnceLock<ImageRef> = OnceLock::new();
    IMAGE.get_or_init(|| RuntimeImage::ensure(|_| ()).expect("the runtime image"))
}

fn docker() -> &'static Docker {
    static DOCKER: OnceLock<Docker> = OnceLock::new();
    DOCKER.get_or_init(|| Docker::new(image().clone()).expect("the docker backend"))
}

fn python() -> PathBuf {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON
        .get_or_init(|| pyenv::ensure(|| ()).expect("the managed Python environment"))
        .clone()
}

/// A job running the code in `code` (a file) on credit-risk, with the default limits.
fn job(code: &Path) -> Job {
    Job {
        python: python(),
        harness: assets::materialize("harness.py", assets::HARNESS).unwrap(),
        code: code.to_path_buf(),
        format: Format::Mono,
        public_dir: data().join("public"),
        spec: Spec {
            id: "id".into(),
            targets: vec!["Status".into()],
            kind: Kind::Probabilities,
            k: None,
        },
        limits: Limits::default(),
        proxy: None,
        model_cache: None,
        gpus: None,
    }
}

const SECRET: &str = "sk-fake-ml2b-secret-0123456789";

/// A MONO_PREDICT solution: `body` runs first, then valid constant predictions return.
/// Each is unique (a comment), so that its container can be told apart by its code label.
fn solution(body: &str) -> String {
    static RUNS: AtomicU32 = AtomicU32::new(0);
    let body: String = body.lines().map(|l| format!("    {l}\n")).collect();
    let run = RUNS.fetch_add(1, Ordering::Relaxed);
    format!(
        "# run {run}\nimport os, sys, time, socket\nimport numpy as np\n\ndef train_and_predict(data, X_val):\n{body}    return np.full(len(X_val), 0.7)\n"
    )
}

/// One finished run: what the backend returned and the folder it delivered to.
struct Ran {
    execution: Run,
    out: tempfile::TempDir,
}

impl Ran {
    fn outcome(&self) -> Outcome {
        self.execution.outcome
    }

    fn detail(&self) -> &str {
        self.execution.detail.as_deref().unwrap_or_default()
    }

    /// Everything the run said: its record, its detail and its output tails.
    fn text(&self) -> String {
        let e = &self.execution;
        format!(
            "{} {} {} {}",
            e.result,
            self.detail(),
            e.stdout_tail,
            e.stderr_tail
        )
    }
}

/// Runs `code` under `backend` with `limits`; checks that nothing of it is left behind and
/// that nothing it said contains the secret.
fn run_code(backend: &dyn Backend, code: &str, limits: Limits) -> Ran {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("solution.py");
    std::fs::write(&file, code).unwrap();
    let job = Job { limits, ..job(&file) };
    let out = tempfile::tempdir().unwrap();
    let execution = backend.run(&job, out.path()).unwrap();
    let ran = Ran { execution, out };
    assert!(!ran.text().contains(SECRET), "the secret leaked: {}", ran.text());
    assert_no_container_runs(code);
    ran
}

fn run(body: &str) -> Ran {
    run_with(body, Limits::default())
}

fn run_with(body: &str, limits: Limits) -> Ran {
    run_code(docker(), &solution(body), limits)
}

/// No container of any state is labelled with this code.
fn assert_no_container_runs(code: &str) {
    let hash = blake3::hash(code.as_bytes()).to_hex();
    let out = Command::new("docker")
        .args(["ps", "--all", "--quiet", "--filter"])
        .arg(format!("label={CODE_LABEL}={hash}"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        out.stdout.is_empty(),
        "a container outlived the run: {}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// From a container on Docker's default bridge network: connects to `port` on the bridge's
/// gateway (the host), and returns the gateway's address.
fn connect_from_the_bridge(port: u16) -> String {
    let script = format!(
        "import socket, struct\ngw = next(l.split()[2] for l in open('/proc/net/route') if l.split()[1] == '00000000')\ngw = socket.inet_ntoa(struct.pack('<L', int(gw, 16)))\nsocket.create_connection((gw, {port}), timeout=3).sendall(b'x')\nprint(gw)"
    );
    let out = Command::new("docker")
        .args([
            "run",
            "--rm",
            "--network",
            "bridge",
            "--entrypoint",
            "python3",
            &image().id,
            "-c",
        ])
        .arg(script)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

fn predictions(ran: &Ran) -> Vec<u8> {
    let path = ran.execution.predictions.as_ref().expect("predictions");
    assert!(path.starts_with(ran.out.path()));
    std::fs::read(path).unwrap()
}

#[test]
fn a_clean_solution_runs_and_predicts_what_the_local_backend_predicts() {
    let local = Local::new().expect("the local backend (apt-get install bubblewrap)");
    let reference = std::fs::read_to_string(data().join("solution/mono.py")).unwrap();
    for code in [solution("print('hello from the sandbox')"), reference] {
        let ran = run_code(docker(), &code, Limits::default());
        assert_eq!(ran.outcome(), Outcome::Ok, "{}", ran.text());
        assert!(ran.out.path().join("result.json").is_file());
        let there = run_code(&local, &code, Limits::default());
        assert_eq!(there.outcome(), Outcome::Ok, "{}", there.text());
        assert!(
            predictions(&ran) == predictions(&there),
            "the backends' predictions differ"
        );
    }
    let ran = run("print('hello from the sandbox')");
    assert!(
        ran.execution.stdout_tail.contains("hello from the sandbox"),
        "{}",
        ran.text()
    );
}

#[test]
fn no_tcp_connection_reaches_the_host_or_the_bridge() {
    let listener = TcpListener::bind("0.0.0.0:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    // The control: from a container on the bridge, the server is reachable.
    let gateway = connect_from_the_bridge(port);
    listener.set_nonblocking(false).unwrap();
    drop(listener.accept().unwrap());
    listener.set_nonblocking(true).unwrap();
    let body = format!(
        "errors = []\nfor host in ['127.0.0.1', {gateway:?}]:\n    try:\n        socket.create_connection((host, {port}), timeout=3).sendall(b'leak')\n        raise RuntimeError(f'reached {{host}}')\n    except OSError as e:\n        errors.append(f'{{host}}: {{type(e).__name__}}: {{e}}')\nprint(errors)"
    );
    let ran = run(&body);
    assert_eq!(ran.outcome(), Outcome::Ok, "{}", ran.text());
    let said = &ran.execution.stdout_tail;
    // No socket of the family is made at all (ml2b's filter, stacked on the daemon's).
    for host in ["127.0.0.1", &gateway] {
        let refused = format!("{host}: OSError: [Errno 97] Address family not supported by protocol");
        assert!(said.contains(&refused), "{said}");
    }
    assert!(listener.accept().is_err(), "the server saw a connection");
}

#[test]
fn hostnames_do_not_resolve() {
    let ran = run("socket.gethostbyname('pypi.org')");
    assert_eq!(ran.outcome(), Outcome::RuntimeError, "{}", ran.text());
    assert!(ran.text().contains("gaierror"), "{}", ran.text());
}

#[test]
fn the_private_answers_cannot_be_read_by_path_or_by_search() {
    let answers = data().join("private/answers.csv");
    let ran = run(&format!("open({:?}).read()", answers.display().to_string()));
    assert_eq!(ran.outcome(), Outcome::RuntimeError, "{}", ran.text());
    assert!(ran.text().contains("FileNotFoundError"), "{}", ran.text());
    let search = "found = [os.path.join(d, f) for d, _, fs in os.walk('/') for f in fs if 'answers' in f or f == 'train.csv' and not d.startswith('/data')]\nif found:\n    raise RuntimeError(f'found {found}')\nif sorted(os.listdir('/data')) != ['sample_submission.csv', 'test.csv', 'train.csv']:\n    raise RuntimeError(f'/data holds {os.listdir(\"/data\")}')";
    let ran = run(search);
    assert_eq!(
        ran.outcome(),
        Outcome::Ok,
        "the search found something: {}",
        ran.text()
    );
}

#[test]
fn the_environment_is_only_the_runs_own() {
    let body = "print(sorted(os.environ))\nextra = set(os.environ) - {'PATH', 'HOME', 'HOSTNAME', 'PYTHONDONTWRITEBYTECODE', 'PYTHONHASHSEED', 'MPLCONFIGDIR', 'OMP_NUM_THREADS', 'OMP_WAIT_POLICY', 'OPENBLAS_NUM_THREADS', 'MKL_NUM_THREADS', 'LANG'}\nif extra:\n    raise RuntimeError(f'unexpected variables {extra}')";
    let ran = run(body);
    assert_eq!(ran.outcome(), Outcome::Ok, "{}", ran.text());
    assert!(
        ran.execution.stdout_tail.contains("PYTHONHASHSEED"),
        "{}",
        ran.text()
    );
}

#[test]
fn writes_outside_the_output_folder_fail_and_leave_nothing() {
    let host = tempfile::tempdir().unwrap();
    let escaped = host.path().join("escaped.txt");
    let public = data().join("public/escaped");
    let venv = python().parent().unwrap().parent().unwrap().join("escaped");
    let targets: Vec<String> = [
        Path::new("/data/x"),
        Path::new("/usr/x"),
        Path::new("/sandbox/x"),
        Path::new("/sandbox/code.py"),
        Path::new("/x"),
        Path::new("/etc/x"),
        Path::new("/var/tmp/x"),
        &escaped,
        &public,
        &venv,
    ]
    .iter()
    .map(|p| format!("{:?}", p.display().to_string()))
    .collect();
    let body = format!(
        "ok = []\nfor p in [{}]:\n    try:\n        open(p, 'a').write('x')\n        ok.append(p)\n    except OSError:\n        pass\nopen('/tmp/scratch', 'w').write('fine')\nopen('/out/scratch', 'w').write('fine')\nif ok:\n    raise RuntimeError(f'wrote {{ok}}')",
        targets.join(", ")
    );
    let ran = run(&body);
    assert_eq!(ran.outcome(), Outcome::Ok, "{}", ran.text());
    for path in [&escaped, &public, &venv] {
        assert!(!path.exists(), "{}", path.display());
    }
}

#[test]
fn the_run_is_not_root_and_has_no_capabilities() {
    let body = "status = dict(l.split(':\\t', 1) for l in open('/proc/self/status').read().splitlines() if ':\\t' in l)\nprint({k: status[k] for k in ['Uid', 'Gid', 'CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb', 'NoNewPrivs']})\nif os.getuid() == 0 or os.geteuid() == 0:\n    raise RuntimeError('root')\nfor cap in ['CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb']:\n    if int(status[cap], 16):\n        raise RuntimeError(f'{cap} is {status[cap]}')\nif status['NoNewPrivs'].strip() != '1':\n    raise RuntimeError('new privileges allowed')\ntry:\n    os.setuid(0)\n    raise RuntimeError('setuid(0) worked')\nexcept PermissionError:\n    pass";
    let ran = run(body);
    assert_eq!(ran.outcome(), Outcome::Ok, "{}", ran.text());
    assert!(
        ran.execution.stdout_tail.contains("'CapEff': '0000000000000000'"),
        "{}",
        ran.text()
    );
}

#[test]
fn a_fork_bomb_is_contained() {
    let body = "marker = 'ml2b-docker-fork-bomb-marker'\nwhile True:\n    try:\n        if os.fork() == 0:\n            os.execv(sys.executable, [sys.executable, '-c', 'import time; time.sleep(60)', marker])\n    except OSError:\n        raise MemoryError('fork refused')";
    let ran = run_with(
        body,
        Limits {
            wall: Duration::from_secs(20),
            ..Limits::default()
        },
    );
    assert!(
        [Outcome::OutOfMemory, Outcome::RuntimeError, Outcome::Timeout].contains(&ran.outcome()),
        "{}",
        ran.text()
    );
    assert!(ran.execution.wall_seconds < 25.0);
    assert_no_process_with("ml2b-docker-fork-bomb-marker");
}

#[test]
fn using_more_memory_than_the_limit_is_out_of_memory() {
    let limits = || Limits {
        memory_bytes: 512 << 20,
        ..Limits::default()
    };
    // Page by page: the kernel kills the run at the cgroup's limit.
    let ran = run_with(
        "chunks = []\nwhile True:\n    chunks.append(np.ones(16 << 20))",
        limits(),
    );
    assert_eq!(ran.outcome(), Outcome::OutOfMemory, "{}", ran.text());
    assert!(ran.detail().contains("killed by the kernel"), "{}", ran.text());
    // One allocation larger than the machine: refused outright, the harness reports it.
    let ran = run_with("x = np.ones((64 << 30) // 8)", limits());
    assert_eq!(ran.outcome(), Outcome::OutOfMemory, "{}", ran.text());
}

#[test]
fn filling_the_disk_is_stopped() {
    // /tmp is a tmpfs as large as the output limit: writing past it fails.
    let tmp = "i = 0\nwhile True:\n    with open(f'/tmp/fill{i}', 'wb') as f:\n        f.write(b'0' * (100 << 20))\n    i += 1";
    let ran = run(tmp);
    assert_eq!(ran.outcome(), Outcome::ConstraintViolation, "{}", ran.text());
    assert!(ran.text().contains("No space left"), "{}", ran.text());
    // One file past the output limit in /out: refused by the file-size limit.
    let out = "with open('/out/fill', 'wb') as f:\n    while True:\n        f.write(b'0' * (1 << 20))";
    let ran = run(out);
    assert_eq!(ran.outcome(), Outcome::ConstraintViolation, "{}", ran.text());
    assert!(ran.text().contains("File too large"), "{}", ran.text());
}

#[test]
fn sleeping_past_the_limit_is_a_timeout_and_leaves_no_container() {
    let ran = run_with(
        "time.sleep(120)",
        Limits {
            wall: Duration::from_secs(2),
            ..Limits::default()
        },
    );
    assert_eq!(ran.outcome(), Outcome::Timeout, "{}", ran.text());
    let wall = ran.execution.wall_seconds;
    assert!((2.0..10.0).contains(&wall), "{wall}");
}

#[test]
fn a_daemon_does_not_outlive_the_run() {
    let body = "if os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n        os.execv(sys.executable, [sys.executable, '-c', 'import time; time.sleep(600)', 'ml2b-docker-daemon-marker'])\n    os._exit(0)\ntime.sleep(0.5)";
    let ran = run(body);
    assert_eq!(ran.outcome(), Outcome::Ok, "{}", ran.text());
    assert_no_process_with("ml2b-docker-daemon-marker");
}

#[test]
fn killing_its_parent_everything_or_itself_is_contained() {
    let ran = run("os.kill(os.getppid(), 9)\ntime.sleep(0.2)");
    assert_eq!(
        ran.outcome(),
        Outcome::Ok,
        "the container's init ignores the signal: {}",
        ran.text()
    );
    let ran = run("try:\n    os.kill(-1, 9)\nexcept ProcessLookupError:\n    pass");
    assert_eq!(ran.outcome(), Outcome::Ok, "{}", ran.text());
    let ran = run("os.kill(os.getpid(), 9)");
    assert_eq!(ran.outcome(), Outcome::RuntimeError, "{}", ran.text());
    assert!(
        ran.detail().contains("without a result (signal 9)"),
        "{}",
        ran.text()
    );
}

#[test]
fn outputs_left_as_links_are_not_followed_on_the_host() {
    // A host file shaped like a result record: followed, it would make the run `ok`.
    let host = tempfile::tempdir().unwrap();
    let forged = host.path().join("forged.json");
    std::fs::write(
        &forged,
        format!("{{\"success\": true, \"outcome\": \"ok\", \"secret\": {SECRET:?}}}"),
    )
    .unwrap();
    let body = format!(
        "os.symlink({:?}, '/out/result.json')",
        forged.display().to_string()
    );
    let ran = run(&body);
    assert_ne!(ran.outcome(), Outcome::Ok, "{}", ran.text());
    assert!(ran.execution.result.is_null(), "{}", ran.text());
    assert!(!ran.out.path().join("result.json").exists());
}

#[test]
fn a_missing_venv_is_refused_before_any_container() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("solution.py");
    std::fs::write(&file, solution("pass")).unwrap();
    let job = Job {
        python: PathBuf::from("/usr/bin/python3"),
        ..job(&file)
    };
    let e = docker().run(&job, dir.path()).unwrap_err().to_string();
    assert!(e.contains("virtual environment"), "{e}");
}

#[test]
fn a_container_left_by_a_killed_ml2b_is_removed_next_time() {
    let mut gone = Command::new("true").spawn().unwrap();
    gone.wait().unwrap();
    let namespace = std::fs::read_link("/proc/self/ns/pid").unwrap();
    let owner = format!(
        "{}={}/{}",
        ml2b::sandbox::docker::OWNER,
        namespace.display(),
        gone.id()
    );
    let alive = format!(
        "{}={}/{}",
        ml2b::sandbox::docker::OWNER,
        namespace.display(),
        std::process::id()
    );
    let create = |label: &str| {
        let out = Command::new("docker")
            .args([
                "create",
                "--network",
                "none",
                "--label",
                label,
                &image().id,
                "true",
            ])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    };
    let (left, ours) = (create(&owner), create(&alive));
    ml2b::sandbox::docker::Docker::new(image().clone()).unwrap();
    let exists = |id: &str| {
        Command::new("docker")
            .args(["inspect", id])
            .output()
            .unwrap()
            .status
            .success()
    };
    assert!(!exists(&left), "the orphan is still there");
    assert!(exists(&ours), "a live process's container was removed");
    Command::new("docker").args(["rm", "-f", &ours]).output().unwrap();
}

#[test]
fn the_runtime_image_is_reused_while_the_recipe_holds() {
    let again = ml2b::sandbox::image::RuntimeImage::ensure(|route| panic!("rebuilt by {route:?}")).unwrap();
    assert_eq!(&again, image());
    assert!(
        again.id.starts_with("sha256:") && again.id.len() == 71,
        "{}",
        again.id
    );
    assert_eq!(again.tag, ml2b::sandbox::image::RuntimeImage::tag());
}

#[test]
fn the_execute_stage_runs_in_docker_and_records_the_image() {
    let ws = crate::competitions::toy();
    let ml2b = |args: &[&str]| ws.ml2b().args(args).output().unwrap();
    ml2b(&["stage", "translate-validate"]);
    assert!(ml2b(&["stage", "generate"]).status.success());
    let out = ml2b(&["stage", "execute", "--backend", "docker"]);
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let rows = ml2b(&["--json", "query", "SELECT backend, image, outcome FROM execute"]);
    let rows: serde_json::Value = serde_json::from_slice(&rows.stdout).unwrap();
    assert_eq!(rows.as_array().unwrap().len(), 2, "{rows}");
    for r in rows.as_array().unwrap() {
        assert_eq!(r["backend"], "docker");
        assert_eq!(r["image"], image().id.as_str());
        assert_eq!(r["outcome"], "ok", "{rows}");
    }
}

/// A result record claiming success, as a solution can write it itself.
const FORGED: &str = "{\"success\": true, \"outcome\": \"ok\", \"rows\": 100}";

#[test]
fn outputs_left_as_fifos_or_folders_do_not_hang_ml2b() {
    let ran = run("os.mkfifo('/out/result.json')\nos._exit(0)");
    assert_eq!(ran.outcome(), Outcome::ConstraintViolation, "{}", ran.text());
    assert!(ran.detail().contains("result.json is a FIFO"), "{}", ran.text());
    let forged = format!("open('/out/result.json', 'w').write({FORGED:?})");
    let ran = run(&format!(
        "os.mkfifo('/out/predictions.parquet')\n{forged}\nos._exit(0)"
    ));
    assert_eq!(ran.outcome(), Outcome::BadPredictions, "{}", ran.text());
    assert!(ran.detail().contains("is a FIFO"), "{}", ran.text());
}

#[test]
fn a_forged_ok_record_is_checked_and_a_huge_one_not_stored() {
    let forged = format!("open('/out/result.json', 'w').write({FORGED:?})");
    let ran = run(&format!("{forged}\nos._exit(0)"));
    assert_eq!(ran.outcome(), Outcome::BadPredictions, "{}", ran.text());
    assert!(
        ran.detail().contains("predictions.parquet is missing"),
        "{}",
        ran.text()
    );
    let huge = "open('/out/result.json', 'w').write('{\"outcome\": \"ok\", \"pad\": \"' + 'x' * (8 << 20) + '\"}')\nos._exit(0)";
    let ran = run(huge);
    assert_eq!(ran.outcome(), Outcome::ConstraintViolation, "{}", ran.detail());
    assert!(ran.execution.result.is_null(), "the record was kept");
    assert!(!ran.out.path().join("result.json").exists());
}

#[test]
fn nested_user_namespaces_and_keyrings_are_refused() {
    let body = format!(
        "import ctypes, subprocess\nlibc = ctypes.CDLL(None, use_errno=True)\ndef call(label, *args):\n    r = libc.syscall(*args)\n    print(f'{{label}}: {{r}} errno {{ctypes.get_errno()}}')\n    return r\ncall('unshare', {}, 0x10000000)\npid = call('clone', {}, 0x10000000 | 17, 0, 0, 0, 0)\nif pid == 0:\n    os._exit(0)\ncall('keyctl', {}, 0, -3, 0)\nr = subprocess.run(['unshare', '-r', 'id'], capture_output=True, text=True)\nprint('unshare -r:', r.returncode, r.stdout, r.stderr)\nif pid > 0 or r.returncode == 0:\n    raise RuntimeError('a user namespace was made')",
        libc::SYS_unshare,
        libc::SYS_clone,
        libc::SYS_keyctl,
    );
    let ran = run(&body);
    assert_eq!(ran.outcome(), Outcome::Ok, "{}", ran.text());
    for call in ["unshare", "clone", "keyctl"] {
        assert!(
            ran.execution.stdout_tail.contains(&format!("{call}: -1 errno 1")),
            "{call}: {}",
            ran.text()
        );
    }
}

#[test]
fn vsock_and_io_uring_are_refused_and_dev_shm_is_64_mib_whatever_the_daemon() {
    // Docker's default profile refuses AF_VSOCK from Docker 23 and io_uring from 25 only;
    // ml2b's own filter refuses both on any daemon.
    let body = format!(
        "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\ntry:\n    socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM)\n    print('vsock: made')\nexcept OSError as e:\n    print(f'vsock: errno {{e.errno}}')\nr = libc.syscall({}, 8, ctypes.create_string_buffer(120))\nprint(f'io_uring_setup: {{r}} errno {{ctypes.get_errno()}}')\nst = os.statvfs('/dev/shm')\nprint(f'shm: {{st.f_blocks * st.f_frsize}}')",
        libc::SYS_io_uring_setup
    );
    let ran = run(&body);
    assert_eq!(ran.outcome(), Outcome::Ok, "{}", ran.text());
    let said = &ran.execution.stdout_tail;
    assert!(said.contains("vsock: errno 97"), "{said}");
    assert!(said.contains("io_uring_setup: -1 errno 1"), "{said}");
    assert!(said.contains(&format!("shm: {}", 64u64 << 20)), "{said}");
}

#[test]
fn flooding_the_output_folder_with_folders_or_empty_files_is_stopped() {
    for make in ["os.mkdir(f'/out/d{i}')", "open(f'/out/f{i}', 'w').close()"] {
        let ran = run(&format!("for i in range(30_000):\n    {make}"));
        assert_eq!(
            ran.outcome(),
            Outcome::ConstraintViolation,
            "{make}: {}",
            ran.text()
        );
        assert!(ran.detail().contains("files and folders"), "{}", ran.text());
        assert_eq!(std::fs::read_dir(ran.out.path()).unwrap().count(), 0);
    }
}
