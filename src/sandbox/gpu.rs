//! `--gpus N|all`: NVIDIA GPUs handed to a run, as ML2B's runs had one (an RTX 2080 Ti).
//!
//! The GPUs are found with `nvidia-smi` (index, name, driver, memory, uuid); under Slurm,
//! only those of the job's allocation (`CUDA_VISIBLE_DEVICES`, which Slurm sets from
//! `--gres=gpu:N`). Asking for more than the machine has, or for any where it has none, is
//! an error before anything runs: never a silent CPU run. The run gets its GPUs' device
//! nodes (`/dev/nvidiaN`, `/dev/nvidiactl`, `/dev/nvidia-uvm*`) bound in by bubblewrap —
//! the driver's libraries are under `/usr`, which every run sees — or a device request
//! under Docker (the NVIDIA container toolkit), and `CUDA_VISIBLE_DEVICES` naming them.
//! The execute event records each device (name, driver, memory), and the unit key covers
//! what was asked for.

use std::process::Command;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::error::SandboxError;

/// GPUs asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Gpus {
    Count(u32),
    All,
}

impl FromStr for Gpus {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "all" => Ok(Self::All),
            n => match n.parse::<u32>() {
                Ok(0) | Err(_) => Err(format!("`{s}` is neither a number of GPUs (1 or more) nor `all`")),
                Ok(n) => Ok(Self::Count(n)),
            },
        }
    }
}

impl std::fmt::Display for Gpus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Count(n) => write!(f, "{n}"),
            Self::All => f.write_str("all"),
        }
    }
}

/// One GPU, as `nvidia-smi` names it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Device {
    pub index: u32,
    pub name: String,
    pub driver: String,
    pub memory_mib: u64,
    pub uuid: String,
}

/// The GPUs a run gets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GpuSet {
    pub devices: Vec<Device>,
}

impl GpuSet {
    /// The GPUs `asked` names on this machine (within a Slurm allocation, if any).
    pub fn select(asked: Gpus) -> Result<Self, SandboxError> {
        let found = devices()?;
        let allowed = std::env::var("CUDA_VISIBLE_DEVICES").ok();
        let found = within(found, allowed.as_deref());
        let n = match asked {
            Gpus::All => found.len(),
            Gpus::Count(n) => n as usize,
        };
        if found.is_empty() || found.len() < n {
            return Err(SandboxError::Unavailable(format!(
                "--gpus {asked}: this machine has {} NVIDIA GPU(s){}; runs are never moved to the CPU silently (ask for fewer, or leave --gpus out)",
                found.len(),
                allowed.map_or(String::new(), |a| format!(" in CUDA_VISIBLE_DEVICES={a}"))
            )));
        }
        Ok(Self {
            devices: found.into_iter().take(n).collect(),
        })
    }

    /// `CUDA_VISIBLE_DEVICES` for the run: the devices' indices.
    pub fn visible(&self) -> String {
        let ids: Vec<String> = self.devices.iter().map(|d| d.index.to_string()).collect();
        ids.join(",")
    }

    /// The device nodes a run needs: each GPU's, and the driver's shared ones present here.
    pub fn nodes(&self) -> Vec<String> {
        let shared = [
            "/dev/nvidiactl",
            "/dev/nvidia-uvm",
            "/dev/nvidia-uvm-tools",
            "/dev/nvidia-modeset",
        ];
        self.devices
            .iter()
            .map(|d| format!("/dev/nvidia{}", d.index))
            .chain(shared.iter().map(|s| s.to_string()))
            .filter(|p| std::path::Path::new(p).exists())
            .collect()
    }
}

/// The GPUs `nvidia-smi` lists; none where there is no `nvidia-smi` or it fails.
fn devices() -> Result<Vec<Device>, SandboxError> {
    let out = Command::new("nvidia-smi")
        .args([
            "--query-gpu=index,name,driver_version,memory.total,uuid",
            "--format=csv,noheader,nounits",
        ])
        .output();
    match out {
        Ok(o) if o.status.success() => Ok(parse(&String::from_utf8_lossy(&o.stdout))),
        _ => Ok(Vec::new()),
    }
}

/// `nvidia-smi`'s CSV lines.
fn parse(csv: &str) -> Vec<Device> {
    csv.lines()
        .filter_map(|line| {
            let f: Vec<&str> = line.split(',').map(str::trim).collect();
            let [index, name, driver, memory, uuid] = f[..] else {
                return None;
            };
            Some(Device {
                index: index.parse().ok()?,
                name: name.to_string(),
                driver: driver.to_string(),
                memory_mib: memory.parse().unwrap_or(0),
                uuid: uuid.to_string(),
            })
        })
        .collect()
}

/// `found`, restricted to a `CUDA_VISIBLE_DEVICES` list (indices or UUIDs) when one is set.
fn within(found: Vec<Device>, visible: Option<&str>) -> Vec<Device> {
    let Some(visible) = visible else { return found };
    let wanted: Vec<&str> = visible
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    found
        .into_iter()
        .filter(|d| wanted.iter().any(|w| *w == d.index.to_string() || *w == d.uuid))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMI: &str =
        "0, NVIDIA H200, 570.86.15, 143771, GPU-aaa\n1, NVIDIA H200, 570.86.15, 143771, GPU-bbb\n";

    #[test]
    fn nvidia_smis_lines_are_devices() {
        let d = parse(SMI);
        assert_eq!(d.len(), 2);
        assert_eq!(
            (d[1].index, d[1].name.as_str(), d[1].memory_mib),
            (1, "NVIDIA H200", 143_771)
        );
        assert_eq!(within(d.clone(), Some("GPU-bbb")).len(), 1);
        assert_eq!(within(d.clone(), Some("0")).first().map(|d| d.index), Some(0));
        assert_eq!(within(d, None).len(), 2);
    }

    #[test]
    fn a_request_is_a_positive_count_or_all() {
        assert_eq!("2".parse::<Gpus>(), Ok(Gpus::Count(2)));
        assert_eq!("all".parse::<Gpus>(), Ok(Gpus::All));
        assert!("0".parse::<Gpus>().is_err());
        assert!("two".parse::<Gpus>().is_err());
        assert_eq!(serde_json::to_string(&Gpus::Count(1)).unwrap(), r#"{"count":1}"#);
    }
}
