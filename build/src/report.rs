//! What a build did: each kernel file's outcome ([`FileReport`], [`Status`]) and the build's
//! ([`Report`]).

use std::path::{Path, PathBuf};
use std::time::Duration;

/// What happened to one kernel file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// nvcc ran and wrote the fat binary.
    Compiled,
    /// The fat binary was built by an earlier run from the same source, headers, nvcc and flags.
    UpToDate,
    /// The fat binary came from the shared cache ([`crate::cache`]): built by another `OUT_DIR` (another
    /// profile, `cargo check`, clippy, ...) from the same source, headers, targets, nvcc and flags.
    Cached,
    /// No nvcc: no fat binary; the kernels go to NVRTC at first use.
    NoNvcc,
    /// The file has no kernels: nothing to compile.
    NoKernels,
}

impl Status {
    /// Its name in `<id>.build` files: `compiled`, `up-to-date`, `cached`, `no-nvcc`, `no-kernels`.
    pub fn name(self) -> &'static str {
        match self {
            Status::Compiled => "compiled",
            Status::UpToDate => "up-to-date",
            Status::Cached => "cached",
            Status::NoNvcc => "no-nvcc",
            Status::NoKernels => "no-kernels",
        }
    }
}

/// One kernel file's outcome.
#[derive(Debug, Clone)]
pub struct FileReport {
    /// The file as given (or as found in a directory).
    pub path: PathBuf,
    /// Its unit id ([`cuprum_abi::mangle::unit_id`] of the generated CUDA C).
    pub id: String,
    /// How many kernels it defines.
    pub kernels: usize,
    /// How many kernel entry points (instances) it defines: what the fat binary holds per target.
    pub instances: usize,
    /// The targets in its fat binary, as read back from the file (`sm_80`, `compute_90`).
    pub targets: Vec<String>,
    /// The fat binary, when there is one.
    pub fatbin: Option<PathBuf>,
    /// Its size in bytes (0 without one).
    pub fatbin_bytes: u64,
    /// How the fat binary came about (compiled, up to date, from the cache, or none).
    pub status: Status,
    /// Time nvcc ran for this file in this build (zero unless [`Status::Compiled`]; a file whose
    /// unit another file of the build shares counts it once, on the first).
    pub nvcc_time: Duration,
    /// `OUT_DIR/cuprum/<id>.build`, the record of this outcome (none for a file without kernels).
    pub build_info: Option<PathBuf>,
    /// Time spent on this file: translation plus nvcc.
    pub time: Duration,
}

/// The outcome of [`Kernels::try_compile`](crate::Kernels::try_compile).
#[derive(Debug, Clone)]
pub struct Report {
    /// Every kernel file, in the order given (directories: sorted by path).
    pub files: Vec<FileReport>,
    /// The nvcc command used, if nvcc was found.
    pub nvcc: Option<String>,
    /// The `-gencode` values passed to nvcc.
    pub gencodes: Vec<String>,
    /// The shared fat binary cache used, if any ([`crate::cache`]).
    pub cache: Option<PathBuf>,
    /// The `cargo:` lines [`Kernels::compile`](crate::Kernels::compile) prints: `rerun-if-changed`, `rerun-if-env-changed`
    /// and `warning`.
    pub directives: Vec<String>,
    /// How long the build waited for nvcc: the wall time of the phase that compiled the parts,
    /// zero when nvcc compiled nothing (everything up to date or from the cache).
    pub nvcc_wall: Duration,
}

/// From how long a wait for nvcc [`Kernels::compile`](crate::Kernels::compile) reports what it
/// compiled and what it cost (as a `cargo:warning`, the only output of a build script that cargo
/// shows): [`Report::long_nvcc`].
pub const LONG_NVCC: Duration = Duration::from_secs(10);

impl Report {
    /// The outcome of the file whose path ends with `path`.
    pub fn file(&self, path: impl AsRef<Path>) -> Option<&FileReport> {
        self.files.iter().find(|f| f.path.ends_with(path.as_ref()))
    }

    /// One line about the whole build: files, instances, what nvcc did and what it cost, the fat
    /// binaries' size. [`Kernels::compile`](crate::Kernels::compile) prints it (as a `cargo:warning`) when
    /// `CUPRUM_BUILD_VERBOSE=1`.
    pub fn summary(&self) -> String {
        let with_kernels: Vec<&FileReport> = self
            .files
            .iter()
            .filter(|f| f.status != Status::NoKernels)
            .collect();
        let instances: usize = with_kernels.iter().map(|f| f.instances).sum();
        let mut line = format!(
            "cuprum-build: {} kernel file{} ({instances} instance{})",
            with_kernels.len(),
            plural(with_kernels.len()),
            plural(instances)
        );
        if self.nvcc.is_none() {
            if !with_kernels.is_empty() {
                line.push_str(
                    ": no nvcc, nothing precompiled (NVRTC compiles each instance at first use)",
                );
            }
            return line;
        }
        let count = |s: Status| with_kernels.iter().filter(|f| f.status == s).count();
        let nvcc_secs: f64 = with_kernels.iter().map(|f| f.nvcc_time.as_secs_f64()).sum();
        let mut parts = vec![format!(
            "{} compiled by nvcc in {nvcc_secs:.1} s",
            count(Status::Compiled)
        )];
        let cached = count(Status::Cached);
        if cached > 0 {
            parts.push(format!("{cached} from the fat binary cache"));
        }
        let current = count(Status::UpToDate);
        if current > 0 {
            parts.push(format!("{current} up to date"));
        }
        let mut seen = std::collections::HashSet::new();
        let bytes: u64 = with_kernels
            .iter()
            .filter(|f| seen.insert(f.id.as_str()))
            .map(|f| f.fatbin_bytes)
            .sum();
        line.push_str(&format!(
            ": {}; {:.1} KiB of fat binaries for {}",
            parts.join(", "),
            bytes as f64 / 1024.0,
            self.gencodes.join(" ")
        ));
        if let Some(dir) = &self.cache {
            line.push_str(&format!("; cache {}", dir.display()));
        }
        line
    }

    /// One line about a long nvcc phase (the build waited [`LONG_NVCC`] or more): what was
    /// compiled for which targets, how long it took, and how to build for fewer targets. `None`
    /// for a shorter one.
    pub fn long_nvcc(&self) -> Option<String> {
        if self.nvcc_wall < LONG_NVCC {
            return None;
        }
        let compiled: Vec<&FileReport> = self
            .files
            .iter()
            .filter(|f| f.status == Status::Compiled)
            .collect();
        let mut targets: Vec<&str> = Vec::new();
        for t in compiled.iter().flat_map(|f| &f.targets) {
            if !targets.contains(&t.as_str()) {
                targets.push(t);
            }
        }
        let summed: f64 = compiled.iter().map(|f| f.nvcc_time.as_secs_f64()).sum();
        let wall = self.nvcc_wall.as_secs();
        let names: Vec<String> = compiled
            .iter()
            .map(|f| f.path.display().to_string())
            .collect();
        Some(format!(
            "cuprum-build: nvcc compiled {} for {} target{} ({}) in {} ({summed:.0} s of nvcc summed over its runs); \
             later builds reuse the result{}. To build for fewer GPUs, set CUPY_NVCC_GENERATE_CODE (`current`, or \
             \"arch=compute_90,code=sm_90\" for H100/H200: docs/building.md)",
            names.join(", "),
            targets.len(),
            plural(targets.len()),
            targets.join(" "),
            if wall >= 60 {
                format!("{} min {} s", wall / 60, wall % 60)
            } else {
                format!("{wall} s")
            },
            if self.cache.is_some() {
                " (the fat binary cache)"
            } else {
                ""
            },
        ))
    }

    /// The warnings ([`Kernels::compile`](crate::Kernels::compile) prints them as `cargo:warning=`).
    pub fn warnings(&self) -> impl Iterator<Item = &str> {
        self.directives
            .iter()
            .filter_map(|d| d.strip_prefix("cargo:warning="))
    }
}

/// The kernel entry points a unit defines.
pub(crate) fn instances(unit: &cuprum_compiler::back::cuda::Unit) -> usize {
    unit.kernels.iter().map(|k| k.instances.len()).sum()
}

pub(crate) fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compiled(path: &str, targets: &[&str], nvcc_secs: u64) -> FileReport {
        FileReport {
            path: path.into(),
            id: path.into(),
            kernels: 1,
            instances: 2,
            targets: targets.iter().map(|t| t.to_string()).collect(),
            fatbin: None,
            fatbin_bytes: 1024,
            status: Status::Compiled,
            nvcc_time: Duration::from_secs(nvcc_secs),
            build_info: None,
            time: Duration::from_secs(nvcc_secs),
        }
    }

    #[test]
    fn a_long_nvcc_phase_says_what_it_compiled_and_what_it_cost() {
        let mut report = Report {
            files: vec![
                compiled("kernels/elementwise.rs", &["sm_80", "sm_90", "sm_100"], 150),
                compiled(
                    "kernels/reductions.rs",
                    &["sm_80", "sm_90", "sm_100", "compute_75"],
                    90,
                ),
                FileReport {
                    status: Status::Cached,
                    ..compiled("src/kernels.rs", &["sm_90"], 0)
                },
            ],
            nvcc: Some("nvcc".into()),
            gencodes: Vec::new(),
            cache: Some("/t/cuprum-fatbin".into()),
            directives: Vec::new(),
            nvcc_wall: Duration::from_secs(125),
        };
        assert_eq!(
            report.long_nvcc().unwrap(),
            "cuprum-build: nvcc compiled kernels/elementwise.rs, kernels/reductions.rs for 4 targets (sm_80 sm_90 sm_100 \
             compute_75) in 2 min 5 s (240 s of nvcc summed over its runs); later builds reuse the result (the fat binary \
             cache). To build for fewer GPUs, set CUPY_NVCC_GENERATE_CODE (`current`, or \"arch=compute_90,code=sm_90\" for \
             H100/H200: docs/building.md)"
        );
        report.nvcc_wall = LONG_NVCC - Duration::from_millis(1);
        assert_eq!(report.long_nvcc(), None, "a short phase is quiet");
    }
}
