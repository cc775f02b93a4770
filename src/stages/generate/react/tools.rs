//! The react agent's tools, as ml2b runs them: the calls a model may make, the checks of
//! their arguments and paths, the file tools, and the observations the model is shown.
//!
//! ```text
//! tool         arguments                            does
//! list_files   path = "."                           lists a folder of /data or the workspace
//! read_file    path, start_line = 1, end_line       lines start..=end of a file (1-based)
//! write_file   path, content                        writes a workspace file
//! run_python   path | code, timeout                 runs a script in the sandbox (`python`)
//! validate     path                                 static checks + a validation-split run
//! submit       path                                 ends the search with that file
//! ```
//! Paths: `/data/<rel>` is the competition's public folder (read-only), any other path
//! without a leading `/` the workspace. A `..` component, another absolute path, or a path
//! of `/data` that passes through a symbolic link or resolves outside the public folder is
//! refused, so the private answers are never reachable by path.
//!
//! The workspace is a map (path → text) held in memory, not a folder: it is a pure
//! function of the search's earlier calls, so a search replayed from the caches rebuilds
//! it exactly. Every call answers an [`Observation`] — a value, or an error for bad
//! arguments, an unknown tool, a refused path — never a failure of the stage. What the
//! model is shown is the observation's text cut at [`SHOWN_CHARS`] characters, with a
//! notice.

use std::collections::BTreeMap;
use std::io::BufRead;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

/// The most characters of an observation the model is shown (the original's limit).
pub const SHOWN_CHARS: usize = 10_000;

/// The largest workspace file `write_file` accepts (bytes).
const MAX_FILE_BYTES: usize = 1 << 20;

/// The tools' names, in the order the model is told them.
pub const TOOLS: [&str; 6] = [
    "list_files",
    "read_file",
    "write_file",
    "run_python",
    "validate",
    "submit",
];

/// One call, its arguments checked.
#[derive(Clone, Debug, PartialEq)]
pub enum Call {
    ListFiles {
        path: String,
    },
    ReadFile {
        path: String,
        start: usize,
        end: Option<usize>,
    },
    WriteFile {
        path: String,
        content: String,
    },
    RunPython {
        script: Script,
        timeout: Option<u64>,
    },
    Validate {
        path: String,
    },
    Submit {
        path: String,
    },
}

/// What `run_python` runs.
#[derive(Clone, Debug, PartialEq)]
pub enum Script {
    /// A workspace file.
    Path(String),
    /// Code given in the call.
    Code(String),
}

/// What a tool returned: a value, or an error; both are shown to the model.
#[derive(Clone, Debug, PartialEq)]
pub struct Observation {
    pub is_error: bool,
    pub value: Value,
}

impl Observation {
    pub fn ok(value: Value) -> Self {
        Self {
            is_error: false,
            value,
        }
    }

    pub fn error(message: impl Into<String>) -> Self {
        Self {
            is_error: true,
            value: Value::String(message.into()),
        }
    }

    /// The text the model is shown: a string as it is, an object one `key: value` line a
    /// field (a multi-line text under its key), anything else as JSON; an error begins with
    /// `Error: `; cut at [`SHOWN_CHARS`] with a notice.
    pub fn shown(&self) -> String {
        let text = match &self.value {
            Value::Object(fields) => fields
                .iter()
                .map(|(k, v)| match v {
                    Value::String(s) if s.contains('\n') => format!("{k}:\n{}", s.trim_end()),
                    Value::String(s) => format!("{k}: {s}"),
                    v => format!("{k}: {v}"),
                })
                .collect::<Vec<_>>()
                .join("\n"),
            Value::String(s) => s.clone(),
            v => v.to_string(),
        };
        let text = if self.is_error {
            format!("Error: {text}")
        } else {
            text
        };
        truncate(&text, SHOWN_CHARS)
    }

    /// The observation as recorded: `{"ok": value}` or `{"error": value}`, and what the
    /// model was shown.
    pub fn record(&self) -> Value {
        let key = if self.is_error { "error" } else { "ok" };
        let mut map = serde_json::Map::new();
        map.insert(key.into(), self.value.clone());
        map.insert("shown".into(), Value::String(self.shown()));
        Value::Object(map)
    }
}

/// `text` cut to its first `max` characters, with a notice of how many were cut.
pub fn truncate(text: &str, max: usize) -> String {
    let total = text.chars().count();
    if total <= max {
        return text.to_string();
    }
    let kept: String = text.chars().take(max).collect();
    format!("{kept}\n[truncated: {} more characters not shown]", total - max)
}

/// Why a call cannot be made (shown to the model as an error observation).
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    #[error("unknown tool `{0}`; the tools are {tools}", tools = TOOLS.join(", "))]
    UnknownTool(String),
    #[error("{tool}: the arguments are not a JSON object ({reason})")]
    NotAnObject { tool: String, reason: String },
    #[error("{tool}: {reason}")]
    BadArguments { tool: String, reason: String },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PathArgs {
    #[serde(default)]
    path: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadArgs {
    path: String,
    #[serde(default)]
    start_line: Option<usize>,
    #[serde(default)]
    end_line: Option<usize>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WriteArgs {
    path: String,
    content: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RunArgs {
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    code: Option<String>,
    #[serde(default)]
    timeout: Option<u64>,
}

impl Call {
    /// The call of tool `name` with `arguments` (JSON text; empty reads as `{}`).
    pub fn parse(name: &str, arguments: &str) -> Result<Self, CallError> {
        let name = name.trim();
        if !TOOLS.contains(&name) {
            return Err(CallError::UnknownTool(name.to_string()));
        }
        let text = if arguments.trim().is_empty() {
            "{}"
        } else {
            arguments
        };
        let value: Value = serde_json::from_str(text).map_err(|e| CallError::NotAnObject {
            tool: name.into(),
            reason: e.to_string(),
        })?;
        if !value.is_object() {
            return Err(CallError::NotAnObject {
                tool: name.into(),
                reason: format!("got {value}"),
            });
        }
        let bad = |reason: String| CallError::BadArguments {
            tool: name.into(),
            reason,
        };
        match name {
            "list_files" => {
                let a: PathArgs = from(value).map_err(bad)?;
                Ok(Self::ListFiles {
                    path: a.path.unwrap_or_else(|| ".".into()),
                })
            }
            "read_file" => {
                let a: ReadArgs = from(value).map_err(bad)?;
                let start = a.start_line.unwrap_or(1).max(1);
                if a.end_line.is_some_and(|e| e < start) {
                    return Err(bad(format!(
                        "end_line {} is before start_line {start}",
                        a.end_line.unwrap_or_default()
                    )));
                }
                Ok(Self::ReadFile {
                    path: a.path,
                    start,
                    end: a.end_line,
                })
            }
            "write_file" => {
                let a: WriteArgs = from(value).map_err(bad)?;
                Ok(Self::WriteFile {
                    path: a.path,
                    content: a.content,
                })
            }
            "run_python" => {
                let a: RunArgs = from(value).map_err(bad)?;
                let script = match (a.path, a.code) {
                    (Some(p), None) => Script::Path(p),
                    (None, Some(c)) => Script::Code(c),
                    _ => return Err(bad("give exactly one of `path` and `code`".into())),
                };
                Ok(Self::RunPython {
                    script,
                    timeout: a.timeout,
                })
            }
            "validate" | "submit" => {
                let a: PathArgs = from(value).map_err(bad)?;
                let path = a.path.ok_or_else(|| bad("missing field `path`".into()))?;
                Ok(if name == "validate" {
                    Self::Validate { path }
                } else {
                    Self::Submit { path }
                })
            }
            _ => Err(CallError::UnknownTool(name.to_string())),
        }
    }
}

fn from<T: serde::de::DeserializeOwned>(value: Value) -> Result<T, String> {
    serde_json::from_value(value).map_err(|e| e.to_string())
}

/// Where a path points.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Place {
    /// A path relative to the public folder (`""` for the folder itself).
    Public(String),
    /// A workspace path (`""` for the workspace itself).
    Workspace(String),
}

/// Where `path` points, or why it is refused. `..` is refused anywhere, and so is any
/// absolute path but `/data`'s.
pub fn place(path: &str) -> Result<Place, String> {
    let refused = |why: &str| format!("`{path}` is refused: {why}");
    let mut parts: Vec<&str> = Vec::new();
    for part in path.trim().split('/') {
        match part {
            "" | "." => {}
            ".." => return Err(refused("`..` is not allowed")),
            p => parts.push(p),
        }
    }
    if path.trim().starts_with('/') {
        if parts.first() != Some(&"data") {
            return Err(refused(
                "only /data (the public files) and workspace paths can be used",
            ));
        }
        return Ok(Place::Public(parts[1..].join("/")));
    }
    Ok(Place::Workspace(parts.join("/")))
}

/// The host path of `rel` in the public folder `root`, refused when any component is a
/// symbolic link or the path resolves outside `root`.
pub fn public_path(root: &Path, rel: &str) -> Result<PathBuf, String> {
    let shown = format!("/data/{rel}");
    let mut path = root.to_path_buf();
    for part in rel.split('/').filter(|p| !p.is_empty()) {
        path.push(part);
        match std::fs::symlink_metadata(&path) {
            Ok(m) if m.file_type().is_symlink() => {
                return Err(format!("`{shown}` is refused: it goes through a symbolic link"));
            }
            Ok(_) => {}
            Err(_) => return Err(format!("`{shown}` does not exist")),
        }
    }
    let inside = match (path.canonicalize(), root.canonicalize()) {
        (Ok(p), Ok(r)) => p.starts_with(r),
        _ => false,
    };
    if inside {
        Ok(path)
    } else {
        Err(format!("`{shown}` is refused: it is outside /data"))
    }
}

/// The agent's files: path → text.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Workspace {
    pub files: BTreeMap<String, String>,
}

impl Workspace {
    /// `write_file`.
    pub fn write(&mut self, path: &str, content: String) -> Observation {
        let rel = match place(path) {
            Ok(Place::Workspace(rel)) if !rel.is_empty() => rel,
            Ok(Place::Workspace(_)) => return Observation::error("write_file: the path names no file"),
            Ok(Place::Public(_)) => {
                return Observation::error(format!("`{path}` is refused: /data is read-only"));
            }
            Err(e) => return Observation::error(e),
        };
        if self.files.keys().any(|k| k.starts_with(&format!("{rel}/"))) {
            return Observation::error(format!("`{rel}` is a folder"));
        }
        if content.len() > MAX_FILE_BYTES {
            return Observation::error(format!(
                "write_file: {} bytes is over the {MAX_FILE_BYTES}-byte limit of a file",
                content.len()
            ));
        }
        let bytes = content.len();
        self.files.insert(rel.clone(), content);
        Observation::ok(Value::String(format!("Wrote {bytes} bytes to {rel}.")))
    }

    /// The text of workspace file `rel`.
    pub fn get(&self, rel: &str) -> Option<&str> {
        self.files.get(rel).map(String::as_str)
    }

    /// A workspace file's text for `validate`, `submit` and `run_python`.
    pub fn file(&self, path: &str) -> Result<(String, &str), String> {
        match place(path)? {
            Place::Workspace(rel) => match self.get(&rel) {
                Some(text) => Ok((rel.clone(), text)),
                None => Err(format!("`{path}` is not a file of the workspace")),
            },
            Place::Public(_) => Err(format!(
                "`{path}` is a public file: only workspace files can be run, validated or submitted"
            )),
        }
    }

    /// `list_files` of the workspace folder `rel`.
    fn list(&self, rel: &str) -> Observation {
        let prefix = if rel.is_empty() {
            String::new()
        } else {
            format!("{rel}/")
        };
        let mut entries: Vec<String> = Vec::new();
        for (name, text) in self.files.range(prefix.clone()..) {
            let Some(rest) = name.strip_prefix(&prefix) else {
                break;
            };
            let entry = match rest.split_once('/') {
                Some((dir, _)) => format!("{dir}/"),
                None => format!("{rest} ({} bytes)", text.len()),
            };
            if entries.last() != Some(&entry) {
                entries.push(entry);
            }
        }
        if entries.is_empty() && !rel.is_empty() {
            return Observation::error(format!("`{rel}` is not a folder of the workspace"));
        }
        if entries.is_empty() {
            return Observation::ok(Value::String("The workspace is empty.".into()));
        }
        Observation::ok(Value::String(entries.join("\n")))
    }
}

/// `list_files`: a folder of /data or of the workspace, one entry a line (folders end in `/`).
pub fn list_files(public: &Path, workspace: &Workspace, path: &str) -> Observation {
    match place(path) {
        Err(e) => Observation::error(e),
        Ok(Place::Workspace(rel)) => workspace.list(&rel),
        Ok(Place::Public(rel)) => match public_path(public, &rel) {
            Err(e) => Observation::error(e),
            Ok(dir) => list_dir(&dir, path),
        },
    }
}

fn list_dir(dir: &Path, shown: &str) -> Observation {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(_) => return Observation::error(format!("`{shown}` is not a folder")),
    };
    let mut lines: Vec<String> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let meta = std::fs::symlink_metadata(e.path()).ok()?;
            Some(if meta.is_dir() {
                format!("{name}/")
            } else {
                format!("{name} ({} bytes)", meta.len())
            })
        })
        .collect();
    lines.sort();
    Observation::ok(Value::String(lines.join("\n")))
}

/// `read_file`: lines `start..=end` (1-based) of a file of /data or of the workspace.
pub fn read_file(
    public: &Path,
    workspace: &Workspace,
    path: &str,
    start: usize,
    end: Option<usize>,
) -> Observation {
    match place(path) {
        Err(e) => Observation::error(e),
        Ok(Place::Workspace(rel)) => match workspace.get(&rel) {
            Some(text) => Observation::ok(Value::String(lines(text.as_bytes(), start, end))),
            None => Observation::error(format!("`{path}` is not a file of the workspace")),
        },
        Ok(Place::Public(rel)) => match public_path(public, &rel) {
            Err(e) => Observation::error(e),
            Ok(file) if file.is_file() => match std::fs::File::open(&file) {
                Ok(f) => Observation::ok(Value::String(lines(std::io::BufReader::new(f), start, end))),
                Err(e) => Observation::error(format!("`{path}` cannot be read: {e}")),
            },
            Ok(_) => Observation::error(format!("`{path}` is a folder: use list_files")),
        },
    }
}

/// Lines `start..=end` of `reader`, reading no further than the end or what can be shown.
fn lines(reader: impl BufRead, start: usize, end: Option<usize>) -> String {
    let mut out = String::new();
    for (i, line) in reader.split(b'\n').enumerate() {
        let n = i + 1;
        if end.is_some_and(|e| n > e) || out.len() > SHOWN_CHARS * 4 {
            break;
        }
        let Ok(line) = line else { break };
        if n >= start {
            out.push_str(&String::from_utf8_lossy(&line));
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_parse_and_bad_ones_say_why() {
        assert_eq!(
            Call::parse("read_file", r#"{"path": "/data/train.csv", "end_line": 3}"#),
            Ok(Call::ReadFile {
                path: "/data/train.csv".into(),
                start: 1,
                end: Some(3)
            })
        );
        assert_eq!(
            Call::parse("list_files", ""),
            Ok(Call::ListFiles { path: ".".into() })
        );
        assert!(matches!(
            Call::parse("rm", "{}"),
            Err(CallError::UnknownTool(t)) if t == "rm"
        ));
        let e = Call::parse("write_file", r#"{"path": "a.py"}"#).unwrap_err();
        assert!(e.to_string().contains("missing field `content`"), "{e}");
        let e = Call::parse("run_python", r#"{"path": "a.py", "code": "1"}"#).unwrap_err();
        assert!(e.to_string().contains("exactly one"), "{e}");
        let e = Call::parse("validate", "[1]").unwrap_err();
        assert!(matches!(e, CallError::NotAnObject { .. }), "{e}");
        let e = Call::parse("read_file", r#"{"path": "a", "start_line": 5, "end_line": 2}"#).unwrap_err();
        assert!(e.to_string().contains("before start_line"), "{e}");
    }

    #[test]
    fn paths_outside_the_roots_are_refused() {
        assert_eq!(place("/data/train.csv"), Ok(Place::Public("train.csv".into())));
        assert_eq!(place("/data"), Ok(Place::Public(String::new())));
        assert_eq!(place("./src/a.py"), Ok(Place::Workspace("src/a.py".into())));
        for bad in [
            "../private/answers.csv",
            "/data/../private/answers.csv",
            "/etc/passwd",
            "a/../../b",
        ] {
            assert!(place(bad).is_err(), "{bad}");
        }
        let dir = tempfile::tempdir().unwrap();
        let public = dir.path().join("public");
        std::fs::create_dir_all(&public).unwrap();
        std::fs::write(dir.path().join("secret.csv"), "y\n1\n").unwrap();
        std::os::unix::fs::symlink("../secret.csv", public.join("link.csv")).unwrap();
        std::fs::write(public.join("train.csv"), "x,y\n1,2\n3,4\n").unwrap();
        let e = public_path(&public, "link.csv").unwrap_err();
        assert!(e.contains("symbolic link"), "{e}");
        let ws = Workspace::default();
        let o = read_file(&public, &ws, "/data/link.csv", 1, None);
        assert!(o.is_error && !o.shown().contains("y\n1"), "{o:?}");
        let o = read_file(&public, &ws, "/data/train.csv", 2, Some(2));
        assert_eq!(o, Observation::ok(Value::String("1,2\n".into())));
    }

    #[test]
    fn the_workspace_lists_reads_and_refuses_writes_to_data() {
        let mut ws = Workspace::default();
        assert!(!ws.write("src/a.py", "print(1)\nprint(2)\n".into()).is_error);
        assert!(!ws.write("b.txt", "x".into()).is_error);
        assert!(ws.write("/data/x.csv", "x".into()).is_error);
        assert!(ws.write("src", "x".into()).is_error, "a folder");
        let listed = ws.list("");
        assert_eq!(listed.value, Value::String("b.txt (1 bytes)\nsrc/".into()));
        let read = read_file(Path::new("/nonexistent"), &ws, "src/a.py", 2, None);
        assert_eq!(read.value, Value::String("print(2)\n".into()));
        assert!(ws.list("nope").is_error);
    }

    #[test]
    fn long_observations_are_cut_with_a_notice() {
        let o = Observation::ok(Value::String("é".repeat(SHOWN_CHARS + 5)));
        let shown = o.shown();
        assert!(
            shown.ends_with("[truncated: 5 more characters not shown]"),
            "{}",
            &shown[shown.len() - 60..]
        );
        assert_eq!(shown.chars().filter(|&c| c == 'é').count(), SHOWN_CHARS);
        assert_eq!(Observation::error("no").shown(), "Error: no");
        let run = serde_json::json!({"exit_status": 1, "stdout": "a\nb\n"});
        assert_eq!(
            Observation {
                is_error: true,
                value: run
            }
            .shown(),
            "Error: exit_status: 1\nstdout:\na\nb"
        );
    }
}
