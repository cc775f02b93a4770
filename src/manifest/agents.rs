//! `manifests/agents.toml` (optional): the external agents, run per unit as `--agent
//! external:NAME` (`stages::generate::external`).
//!
//! ```toml
//! [agents.aideml]
//! dir = "assets/agents/aideml"       # the agent's folder, read-only at /home/agent
//! command = ["bash", "/home/agent/start.sh"]
//! requirements = "assets/agents/aideml/requirements.txt"  # optional: a complete lock,
//!                                     # installed with --no-deps in a venv of its own
//! submission = "python"              # python: submission/submission.py; csv: submission.csv
//! time_limit_s = 1800                # the agent's wall clock (default 3600)
//! [agents.aideml.env]                # variables the agent gets (besides ml2b's)
//! AIDE_STEPS = "4"
//! [agents.aideml.budget]             # per unit, enforced by the gateway (each optional)
//! requests = 100
//! tokens = 2000000                   # input and output
//! usd = 5.0
//! ```
//! Paths are relative to the benchmark root. An agent without `requirements` runs with the
//! managed Python environment of the solutions (`scripts/python-env`). A name is lower-case
//! letters, digits, `-` and `_`, and not one of ml2b's own agents (`one-shot`, `aide`,
//! `react`): it names the entrant `<model>+<name>` in every table.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::ManifestError;

/// The file, under the benchmark root.
pub const FILE: &str = "manifests/agents.toml";

/// The whole file.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentsManifest {
    #[serde(default)]
    pub agents: BTreeMap<String, ExternalAgent>,
}

/// What an external agent leaves as its submission.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SubmissionKind {
    /// `/home/submission/submission.py`: code in the unit's format (MODULAR or MONO), as
    /// ML2B's agents leave it; it is executed and graded like generated code.
    Python,
    /// `/home/submission/submission.csv`: predictions, as MLE-bench's agents leave them.
    Csv,
}

impl SubmissionKind {
    /// The file the agent leaves, below `/home/submission`.
    pub fn file(self) -> &'static str {
        match self {
            Self::Python => "submission.py",
            Self::Csv => "submission.csv",
        }
    }
}

/// A unit's budget at the gateway; a limit left out is no limit.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentBudget {
    pub requests: Option<u32>,
    pub tokens: Option<u64>,
    pub usd: Option<f64>,
}

/// One external agent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExternalAgent {
    pub dir: PathBuf,
    pub command: Vec<String>,
    #[serde(default)]
    pub requirements: Option<PathBuf>,
    pub submission: SubmissionKind,
    #[serde(default = "default_time_limit")]
    pub time_limit_s: u64,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    #[serde(default)]
    pub budget: AgentBudget,
}

fn default_time_limit() -> u64 {
    3600
}

/// The names ml2b's own agents have.
const RESERVED: [&str; 5] = ["one-shot", "aide", "react", "reference", "template"];

impl AgentsManifest {
    /// The agents manifest of the benchmark at `root`; the empty one when it has none.
    pub fn load(root: &Path) -> Result<Self, ManifestError> {
        let path = root.join(FILE);
        let manifest: Self = super::load_optional(&path)?;
        manifest.check(&path)?;
        Ok(manifest)
    }

    fn check(&self, path: &Path) -> Result<(), ManifestError> {
        let invalid = |name: &str, key: &str, message: String| ManifestError::Invalid {
            path: path.to_path_buf(),
            field: format!("agents.{name}{key}"),
            message,
        };
        for (name, agent) in &self.agents {
            let well_formed = !name.is_empty()
                && name
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
            if !well_formed || RESERVED.contains(&name.as_str()) {
                return Err(invalid(
                    name,
                    "",
                    format!("a name is lower-case letters, digits, `-` and `_`, and not one of {RESERVED:?}"),
                ));
            }
            if agent.command.is_empty() {
                return Err(invalid(name, ".command", "is empty".into()));
            }
            if agent.time_limit_s == 0 {
                return Err(invalid(name, ".time_limit_s", "must be at least 1".into()));
            }
            if agent.budget.usd.is_some_and(|u| !u.is_finite() || u < 0.0) {
                return Err(invalid(
                    name,
                    ".budget.usd",
                    "must be a non-negative number".into(),
                ));
            }
        }
        Ok(())
    }

    /// The agent named `name`, or an error listing the ones there are.
    pub fn agent(&self, name: &str, root: &Path) -> Result<&ExternalAgent, ManifestError> {
        self.agents.get(name).ok_or_else(|| ManifestError::Invalid {
            path: root.join(FILE),
            field: "agents".into(),
            message: format!(
                "no external agent `{name}`; the file declares: {}",
                if self.agents.is_empty() {
                    "none".to_string()
                } else {
                    self.agents.keys().cloned().collect::<Vec<_>>().join(", ")
                }
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<AgentsManifest, ManifestError> {
        let path = Path::new(FILE);
        let m: AgentsManifest = super::super::parse(path, text)?;
        m.check(path)?;
        Ok(m)
    }

    #[test]
    fn an_agent_needs_a_command_and_a_name_of_its_own() {
        let ok = parse(
            "[agents.mine]\ndir = \"a\"\ncommand = [\"python\", \"/home/agent/run.py\"]\nsubmission = \"csv\"\n[agents.mine.budget]\nrequests = 3\n",
        )
        .unwrap();
        let mine = &ok.agents["mine"];
        assert_eq!(
            (mine.submission, mine.time_limit_s, mine.budget.requests),
            (SubmissionKind::Csv, 3600, Some(3))
        );
        for bad in [
            "[agents.aide]\ndir = \"a\"\ncommand = [\"x\"]\nsubmission = \"python\"\n",
            "[agents.Mine]\ndir = \"a\"\ncommand = [\"x\"]\nsubmission = \"python\"\n",
            "[agents.mine]\ndir = \"a\"\ncommand = []\nsubmission = \"python\"\n",
            "[agents.mine]\ndir = \"a\"\ncommand = [\"x\"]\nsubmission = \"zip\"\n",
            "[agents.mine]\ndir = \"a\"\ncommand = [\"x\"]\nsubmission = \"csv\"\nbudget = { usd = -1.0 }\n",
        ] {
            let e = parse(bad).unwrap_err().to_string();
            assert!(e.contains("manifests/agents.toml"), "{e}");
        }
        let missing = ok.agent("theirs", Path::new(".")).unwrap_err().to_string();
        assert!(
            missing.contains("no external agent `theirs`") && missing.contains("mine"),
            "{missing}"
        );
    }
}
