//! `run_python`: a script of the agent's workspace (or code given in the call) run in the
//! sandbox execute uses, with the competition's public files at `/data` and the workspace
//! as the current folder.
//!
//! The sandbox runs solutions through the harness, which keeps only the top level's
//! imports, definitions, `if` blocks and constant-like assignments of `code.py`. So the run
//! is a wrapper solution: one constant (the workspace and the script, as JSON) and one
//! `if True:` block that writes the workspace into `/tmp/workspace`, runs the script there
//! as `__main__` (`runpy`), writes `{"exit_status": N}` as the run's record and leaves the
//! process with that status before the harness goes on. Same backend, limits and
//! environment as execute, no network; the wall limit is the call's timeout (at most
//! `--tool-timeout`). Files the script writes stay in the sandbox.
//!
//! A run is recorded once and reused, like a validation run: the [`PythonRun`] is stored
//! as an object and `store/cache/runs/<key>` names it; the key covers the wrapper (so the
//! workspace and the script), the public files' blake3s (the manifest's) and the sandbox's
//! identity with the limit.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::super::cache;
use super::tools::{Script, Workspace};
use crate::competition::{Competition, Side};
use crate::events::{Format, Outcome};
use crate::log::LogError;
use crate::stages::StageError;
use crate::stages::solution::Runner;
use crate::store::{Hash, KeyHasher, Store};

/// The cache folder of `run_python` runs.
const RUNS: &str = "runs";

/// The characters of stdout and of stderr shown (the end of each).
const TAIL_CHARS: usize = 4000;

/// What one run gave.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PythonRun {
    /// The script's exit status; none when the run was killed (a timeout, the memory limit).
    pub exit_status: Option<i64>,
    /// How the sandbox saw the run; only `timeout`, `out_of_memory`, `sandbox_error` and
    /// `constraint_violation` say something the exit status does not.
    pub outcome: Outcome,
    /// The backend's explanation, when it has one.
    pub detail: Option<String>,
    pub stdout: String,
    pub stderr: String,
    pub wall_seconds: f64,
}

impl PythonRun {
    /// The observation's value.
    pub fn shown(&self) -> serde_json::Value {
        let mut v = serde_json::json!({
            "exit_status": self.exit_status, "stdout": self.stdout, "stderr": self.stderr,
        });
        if self.exit_status.is_none() {
            v["outcome"] = serde_json::Value::String(self.outcome.to_string());
            v["detail"] = self.detail.clone().into();
        }
        v
    }

    /// Whether the script failed (a non-zero status, or none).
    pub fn failed(&self) -> bool {
        self.exit_status != Some(0)
    }
}

/// The wrapper solution that runs `script` with `workspace`.
pub fn wrapper(workspace: &Workspace, script: &Script) -> String {
    let (path, code) = match script {
        Script::Path(p) => (Some(p.as_str()), None),
        Script::Code(c) => (None, Some(c.as_str())),
    };
    let spec = serde_json::json!({"files": workspace.files, "script": path, "code": code});
    // A JSON string is a Python string literal too (serde_json escapes only `"`, `\` and
    // control characters, all of which Python reads alike).
    let literal = serde_json::to_string(&spec.to_string()).expect("a string serializes");
    format!("{WRAPPER_HEAD}_SPEC_TEXT = {literal}\n\n{WRAPPER_BODY}")
}

const WRAPPER_HEAD: &str =
    "# ml2b react: run_python\nimport json\nimport os\nimport runpy\nimport sys\nimport traceback\n\n";

const WRAPPER_BODY: &str = r#"if True:
    _SPEC = json.loads(_SPEC_TEXT)
    _WS = "/tmp/workspace"
    os.makedirs(_WS, exist_ok=True)
    for _name, _text in _SPEC["files"].items():
        _file = os.path.join(_WS, _name)
        os.makedirs(os.path.dirname(_file), exist_ok=True)
        with open(_file, "w", encoding="utf-8") as _f:
            _f.write(_text)
    os.chdir(_WS)
    sys.path.insert(0, _WS)
    sys.argv = [_SPEC["script"] or "<code>"]
    _status = 0
    try:
        if _SPEC["code"] is None:
            runpy.run_path(_SPEC["script"], run_name="__main__")
        else:
            exec(compile(_SPEC["code"], "<code>", "exec"), {"__name__": "__main__"})
    except SystemExit as _e:
        if _e.code is None:
            _status = 0
        elif isinstance(_e.code, int):
            _status = _e.code
        else:
            print(_e.code, file=sys.stderr)
            _status = 1
    except BaseException:
        traceback.print_exc()
        _status = 1
    sys.stdout.flush()
    sys.stderr.flush()
    with open("/out/result.json", "w", encoding="utf-8") as _f:
        json.dump({"exit_status": _status}, _f)
    os._exit(_status & 0xFF)
"#;

/// Runs scripts with the execute stage's runner, the wall limit per call.
pub struct Python {
    pub runner: Runner,
}

impl Python {
    /// The run of `script` with `workspace`, limited to `timeout`: recorded, or made now
    /// (then recorded).
    pub async fn run(
        &self,
        store: &Store,
        c: &Competition,
        format: Format,
        workspace: &Workspace,
        script: &Script,
        timeout: Duration,
    ) -> Result<PythonRun, StageError> {
        let mut runner = self.runner.clone();
        runner.limits.wall = timeout;
        let code = wrapper(workspace, script);
        let code = store.objects().put(code.as_bytes()).map_err(LogError::from)?;
        let mut k = KeyHasher::new("ml2b react run v1");
        k.str(&code.to_hex());
        k.json(&c.manifest.files.public).map_err(LogError::Json)?;
        k.json(&runner.identity()).map_err(LogError::Json)?;
        let key = k.finish();
        if let Some(run) = recorded(store, &key)? {
            return Ok(run);
        }
        let public = c.dir.join(Side::Public.dir());
        let ran = runner
            .run(store, c, format, &code, public)
            .await
            .map_err(|m| StageError::Unit {
                label: format!("run_python for {}", c.id()),
                message: m,
            })?;
        let run = &ran.run;
        let recorded_status = run.result["exit_status"].as_i64();
        let python = PythonRun {
            exit_status: recorded_status.filter(|_| ran.outcome != Outcome::Timeout),
            outcome: ran.outcome,
            detail: run.detail.clone(),
            stdout: tail(&run.stdout_tail),
            stderr: tail(&run.stderr_tail),
            wall_seconds: run.wall_seconds,
        };
        let json = serde_json::to_vec(&python).map_err(LogError::Json)?;
        let object = store.objects().put(&json).map_err(LogError::from)?;
        cache::record_object(store, RUNS, &key, &object)?;
        Ok(python)
    }
}

fn recorded(store: &Store, key: &Hash) -> Result<Option<PythonRun>, StageError> {
    let Some((object, bytes)) = cache::lookup_object(store, RUNS, key) else {
        return Ok(None);
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|source| StageError::Decode {
            what: format!("recorded run_python run {object}"),
            source,
        })
}

/// The last [`TAIL_CHARS`] characters of `text`.
fn tail(text: &str) -> String {
    let n = text.chars().count();
    text.chars().skip(n.saturating_sub(TAIL_CHARS)).collect()
}
