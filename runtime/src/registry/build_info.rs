//! The build record `cuprum-build` leaves next to each unit's fat binary, parsed.

use std::fmt;

/// What `cuprum-build` did for one kernel file: the record `OUT_DIR/cuprum/<id>.build` that the
/// macros embed with the unit ([`KernelUnit::build_info`](super::KernelUnit::build_info)).
///
/// The format, one `key value` per line after the line `cuprum-build 1` (unknown keys are skipped):
///
/// ```text
/// cuprum-build 1
/// status compiled
/// targets sm_80 sm_90 compute_90
/// instances 3
/// fatbin_bytes 84016
/// nvcc_seconds 0.812
/// nvcc 13.0.88
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct BuildInfo {
    /// What the build did for the file.
    pub status: BuildStatus,
    /// The fat binary's targets (`sm_90`, `compute_90`); empty without one.
    pub targets: Vec<String>,
    /// The kernel entry points the unit defines.
    pub instances: usize,
    /// The fat binary's size (0 without one).
    pub fatbin_bytes: u64,
    /// How long nvcc ran in the build that embedded this record (0 unless `Compiled`).
    pub nvcc_seconds: f64,
    /// The nvcc version (`13.0.88`), when there was an nvcc.
    pub nvcc: Option<String>,
}

/// How the build got the fat binary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BuildStatus {
    /// nvcc ran.
    Compiled,
    /// Copied from the shared fat binary cache (built by another profile or `cargo check`).
    Cached,
    /// The build directory already had it (an earlier build of the same profile).
    UpToDate,
    /// No nvcc at build time: no fat binary.
    NoNvcc,
    /// A status this runtime does not know, verbatim.
    Other(String),
}

impl BuildStatus {
    fn parse(s: &str) -> BuildStatus {
        match s {
            "compiled" => BuildStatus::Compiled,
            "cached" => BuildStatus::Cached,
            "up-to-date" => BuildStatus::UpToDate,
            "no-nvcc" => BuildStatus::NoNvcc,
            other => BuildStatus::Other(other.to_owned()),
        }
    }
}

impl BuildInfo {
    /// Parses a build record; `None` when it is empty or not format version 1.
    pub fn parse(text: &str) -> Option<BuildInfo> {
        let mut lines = text.lines();
        if lines.next()?.trim() != "cuprum-build 1" {
            return None;
        }
        let mut info = BuildInfo {
            status: BuildStatus::Other(String::new()),
            targets: Vec::new(),
            instances: 0,
            fatbin_bytes: 0,
            nvcc_seconds: 0.0,
            nvcc: None,
        };
        for line in lines {
            let (key, value) = line.split_once(' ').unwrap_or((line, ""));
            let value = value.trim();
            match key {
                "status" => info.status = BuildStatus::parse(value),
                "targets" => info.targets = value.split_whitespace().map(String::from).collect(),
                "instances" => info.instances = value.parse().unwrap_or(0),
                "fatbin_bytes" => info.fatbin_bytes = value.parse().unwrap_or(0),
                "nvcc_seconds" => info.nvcc_seconds = value.parse().unwrap_or(0.0),
                "nvcc" if !value.is_empty() => info.nvcc = Some(value.to_owned()),
                _ => {}
            }
        }
        Some(info)
    }
}

impl fmt::Display for BuildInfo {
    /// `compiled by nvcc 13.0.88 in 0.81 s`, `from the fat binary cache (no nvcc run)`, ...
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.status {
            BuildStatus::Compiled => {
                f.write_str("compiled by nvcc")?;
                if let Some(v) = &self.nvcc {
                    write!(f, " {v}")?;
                }
                write!(f, " in {:.2} s", self.nvcc_seconds)
            }
            BuildStatus::Cached => f.write_str("from the fat binary cache (no nvcc run in this build)"),
            BuildStatus::UpToDate => f.write_str("up to date from an earlier build (no nvcc run in this build)"),
            BuildStatus::NoNvcc => f.write_str("no nvcc at build time: nothing precompiled"),
            BuildStatus::Other(s) => write!(f, "status `{s}`"),
        }?;
        write!(f, "; {} instance{}", self.instances, if self.instances == 1 { "" } else { "s" })
    }
}
