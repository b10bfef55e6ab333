//! The builder, [`Kernels`]: the kernel files and the build's settings, and the build itself
//! (translate, plan, compile, write the report).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use cuprum_abi::mangle;
use cuprum_abi::parts::Split;

use crate::compile::PartCompiler;
use crate::env::{self, Env};
use crate::nvcc::{self, Lookup};
use crate::plan::{resolve_targets, PartPlan, Translated};
use crate::report::{instances, FileReport, Report, Status};
use crate::targets::{self, Gencode, Request};
use crate::{cache, outputs, unlisted, Error};

/// The kernel files of a crate and how to build them; see the crate docs.
#[derive(Debug, Clone, Default)]
pub struct Kernels {
    files: Vec<PathBuf>,
    dirs: Vec<PathBuf>,
    out_dir: Option<PathBuf>,
    env: Env,
    machine_code_only: bool,
    split: Split,
    scan: Vec<PathBuf>,
    not_precompiled: Vec<PathBuf>,
}

impl Kernels {
    /// No kernel files yet: add them with [`Kernels::file`] and [`Kernels::dir`].
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one kernel file (relative paths: to the package root, where build scripts run).
    pub fn file(&mut self, path: impl AsRef<Path>) -> &mut Self {
        self.files.push(path.as_ref().to_path_buf());
        self
    }

    /// Adds every `.rs` file under `dir`, recursively, sorted by path (after the files given with
    /// [`Kernels::file`]). A file listed twice is compiled once.
    pub fn dir(&mut self, dir: impl AsRef<Path>) -> &mut Self {
        self.dirs.push(dir.as_ref().to_path_buf());
        self
    }

    /// Also searches `dir` (relative to the package root) for kernel files that no builder lists,
    /// as `src/` always is: each one found gets a `cargo:warning` naming the `.file(..)` line to
    /// add (its kernels would be compiled by NVRTC at their first use on a GPU). The search is
    /// textual: a file has kernels when a line starts with `#[elementwise`, `#[reduction`,
    /// `#[rawkernel`, `#[fuse` or `#[device` (docs/building.md).
    pub fn scan(&mut self, dir: impl AsRef<Path>) -> &mut Self {
        self.scan.push(dir.as_ref().to_path_buf());
        self
    }

    /// Says that the kernels of `path` (relative to the package root) are compiled by NVRTC at
    /// their first use on purpose: the search for unlisted kernel files ([`Kernels::scan`]) does
    /// not warn about it.
    pub fn not_precompiled(&mut self, path: impl AsRef<Path>) -> &mut Self {
        self.not_precompiled.push(path.as_ref().to_path_buf());
        self
    }

    /// Leaves PTX (`compute_XX`) out of the fat binaries and keeps only the machine code
    /// (`sm_XX`) of the requested targets: about half the bytes. A GPU the machine code does not
    /// serve then compiles the kernels through NVRTC at their first use (kept in the disk
    /// cache), as CuPy does for all of its kernels. When a kernel's targets have no machine code at
    /// all (PTX only), its PTX is kept. What the runtime's built-ins use (docs/building.md).
    pub fn machine_code_only(&mut self) -> &mut Self {
        self.machine_code_only = true;
        self
    }

    /// How finely the kernels are cut into parts, each an nvcc run and loaded alone at run time
    /// (docs/building.md, "Parts"). [`Split::PerVariant`] gives every instance and launch
    /// variant its own part: the first call of a kernel in a fresh process decompresses and loads
    /// only the machine code it runs (for the Python example's three-instance elementwise kernel a
    /// ninth of it), for up to three times the nvcc runs of the elementwise kernels. The default,
    /// [`Split::Default`], cuts per kernel (per instance above three instances; reductions per
    /// variant).
    pub fn split(&mut self, split: Split) -> &mut Self {
        self.split = split;
        self
    }

    /// Writes the outputs under `dir` instead of `$OUT_DIR` (for tests and tools).
    pub fn out_dir(&mut self, dir: impl AsRef<Path>) -> &mut Self {
        self.out_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// Sets an environment variable for this build only, as seen by cuprum-build's own lookups
    /// (`CUPY_*`, `NVCC`, `CUDA_PATH`, `PATH`, `OUT_DIR`); child processes keep the real environment.
    /// For tests, which share one process environment.
    pub fn env(&mut self, key: &str, value: impl Into<OsString>) -> &mut Self {
        self.env.set(key, value);
        self
    }

    /// Makes an environment variable unset for this build only (see [`Kernels::env`]).
    pub fn env_remove(&mut self, key: &str) -> &mut Self {
        self.env.remove(key);
        self
    }

    /// Builds everything from a build script: prints the `cargo:` directives; on failure prints the
    /// errors to stderr and exits the build script with status 1. A kernel file with mistakes is
    /// not a failure: it is skipped with a warning, and rustc reports the mistakes.
    ///
    /// When nvcc starts, it says on stderr what is compiled for which targets (cargo shows it
    /// with `-vv`); a wait for nvcc of [`LONG_NVCC`](crate::LONG_NVCC) or more ends with one
    /// `cargo:warning` saying what it cost ([`Report::long_nvcc`]); every build ends with the
    /// summary line ([`Report::summary`]) on stdout, kept in the build script's `output` file.
    pub fn compile(&self) {
        let mut directives = Vec::new();
        let result = self.run(&mut directives, true);
        for d in &directives {
            println!("{d}");
        }
        match result {
            Ok(report) => println!("{}", report.summary()),
            Err(e) => {
                eprintln!("{}", e.rendered());
                std::process::exit(1);
            }
        }
    }

    /// Builds everything and reports what happened; prints nothing (the directives are in the
    /// report).
    pub fn try_compile(&self) -> Result<Report, Error> {
        let mut directives = Vec::new();
        let mut report = self.run(&mut directives, false)?;
        report.directives = directives;
        Ok(report)
    }

    /// The build: its inputs and settings, the translation of every file, then, with nvcc, the
    /// plan of the parts and their compilation, and the report. `progress`: say on stderr when
    /// nvcc starts.
    fn run(&self, directives: &mut Vec<String>, progress: bool) -> Result<Report, Error> {
        let files = self.inputs(directives)?;
        self.unlisted(&files, directives)?;
        let settings = self.settings()?;
        let units = translate(&files, settings.line_info, directives)?;
        let include = write_units(&settings.out_dir, &units)?;
        let mut files_report = file_reports(&units);
        let nvcc = match nvcc::find(&self.env)? {
            Lookup::Found(nvcc) => nvcc,
            Lookup::Missing(looked) => return self.without_nvcc(&looked, &settings, files_report, directives),
        };

        let gencodes = resolve_targets(&settings.request, settings.request_text.as_deref(), &nvcc, &self.env)?;
        let plan = PartPlan::new(&units, &files_report, settings.request.asked(), &gencodes, &nvcc, self.machine_code_only, self.split)?;
        let cache_dir = cache::dir(&self.env, &settings.out_dir);
        let headers_hash = outputs::headers_hash();
        let announce = progress.then(|| announcement(&plan, &files_report, settings.jobs));
        let compiler = PartCompiler {
            nvcc: &nvcc,
            include: &include,
            out_dir: &settings.out_dir,
            threads: settings.threads,
            cache: cache_dir.as_deref(),
            headers_hash: &headers_hash,
            compress: settings.compress,
            announce: announce.as_deref(),
            announced: AtomicBool::new(false),
        };
        let nvcc_start = Instant::now();
        let mut parts = compiler.build_parts(&plan.parts, &units, settings.jobs)?;
        // `announced`: nvcc ran for a part.
        let nvcc_wall = if compiler.announced.load(Ordering::Relaxed) { nvcc_start.elapsed() } else { Duration::ZERO };
        for &i in &plan.units {
            let built = compiler.assemble(&units[i].1, std::mem::take(&mut parts[i]))?;
            let id = files_report[i].id.clone();
            for f in files_report.iter_mut().filter(|f| f.id == id) {
                f.status = built.status;
                f.targets = built.targets.clone();
                f.fatbin = Some(built.fatbin.clone());
                f.fatbin_bytes = built.fatbin_bytes;
                f.build_info = Some(built.record.clone());
            }
            files_report[i].time += built.time;
            files_report[i].nvcc_time = built.nvcc_time;
            if let Some(w) = built.warning {
                directives.push(format!("cargo:warning={w}"));
            }
        }
        let report = Report {
            files: files_report,
            nvcc: Some(nvcc::show(&nvcc.command)),
            gencodes: plan.shown.iter().map(Gencode::to_string).collect(),
            cache: cache_dir,
            directives: Vec::new(),
            nvcc_wall,
        };
        self.summarize(&report, directives);
        Ok(report)
    }

    /// The kernel files, each once, after the `cargo:rerun-if-*` directives (first: a failed build
    /// must still re-run when an input changes).
    fn inputs(&self, directives: &mut Vec<String>) -> Result<Vec<PathBuf>, Error> {
        for var in env::TRACKED {
            directives.push(format!("cargo:rerun-if-env-changed={var}"));
        }
        let mut files = self.files.clone();
        for dir in &self.dirs {
            directives.push(format!("cargo:rerun-if-changed={}", dir.display()));
            files.extend(outputs::rust_files(dir)?);
        }
        dedup_keep_order(&mut files);
        for f in &files {
            directives.push(format!("cargo:rerun-if-changed={}", f.display()));
        }
        Ok(files)
    }

    /// Records this builder's files as listed and warns about the package's kernel files that
    /// no builder of this build script lists (module `unlisted`). Without `CARGO_MANIFEST_DIR`
    /// (not run by cargo) there is no package to search.
    fn unlisted(&self, files: &[PathBuf], directives: &mut Vec<String>) -> Result<(), Error> {
        let root = self.env.path("CARGO_MANIFEST_DIR");
        let meant: Vec<PathBuf> = self
            .not_precompiled
            .iter()
            .map(|f| root.as_ref().map_or_else(|| f.clone(), |r| r.join(f)))
            .collect();
        unlisted::record_listed(files.iter().chain(&meant));
        let Some(root) = root else { return Ok(()) };
        let mut dirs = vec![PathBuf::from("src")];
        dirs.extend(self.scan.iter().cloned());
        directives.extend(unlisted::warnings(&root, &dirs)?);
        Ok(())
    }

    /// The build's settings from the environment, checked.
    fn settings(&self) -> Result<Settings, Error> {
        let out_dir = match &self.out_dir {
            Some(d) => d.clone(),
            None => self.env.path(env::OUT_DIR).ok_or_else(|| Error::Config {
                message: "OUT_DIR is not set: cuprum_build::Kernels runs from a build script (build.rs), \
                          where cargo sets it, or needs Kernels::out_dir"
                    .into(),
            })?,
        };
        // Absolute: nvcc may run in another folder (`nvcc::Nvcc::run`).
        let out_dir = std::path::absolute(&out_dir).map_err(|e| Error::io(&out_dir, "find the absolute path of", e))?;
        let jobs = self
            .env
            .count(env::NUM_BUILD_JOBS, env::DEFAULT_BUILD_JOBS)
            .map_err(|message| Error::Config { message })?;
        let threads = self
            .env
            .count(env::NUM_NVCC_THREADS, env::DEFAULT_NVCC_THREADS)
            .map_err(|message| Error::Config { message })?;
        let compress = compress_mode(self.env.var(env::NVCC_COMPRESS).as_deref())?;
        let line_info = self
            .env
            .switch(env::LINE_INFO, env::DEFAULT_LINE_INFO)
            .map_err(|message| Error::Config { message })?;
        let request_text = self.env.var(env::GENERATE_CODE);
        let request = targets::parse(request_text.as_deref())
            .map_err(|message| Error::Targets { message })?;
        Ok(Settings { out_dir, jobs, threads, compress, line_info, request_text, request })
    }

    /// Without nvcc: an error when targets were asked for, else a warning (when there are
    /// kernels) and each unit's build record saying so.
    fn without_nvcc(
        &self,
        looked: &[String],
        settings: &Settings,
        mut files_report: Vec<FileReport>,
        directives: &mut Vec<String>,
    ) -> Result<Report, Error> {
        if let Some(value) = &settings.request_text {
            return Err(Error::NvccMissing {
                message: format!(
                    "CUPY_NVCC_GENERATE_CODE={value:?} asks for precompiled kernels, but nvcc was not found \
                     (looked at: {}). To get nvcc, {}. Or unset CUPY_NVCC_GENERATE_CODE to build without nvcc \
                     (the kernels are then compiled by NVRTC at first use)",
                    looked.join(", "),
                    nvcc::HOW_TO_INSTALL
                ),
            });
        }
        if files_report.iter().any(|f| f.status != Status::NoKernels) {
            directives.push(format!(
                "cargo:warning=cuprum-build: nvcc not found (looked at: {}), so the kernels are not precompiled: \
                 NVRTC will compile them at first use. To precompile them, {}",
                looked.join(", "),
                nvcc::HOW_TO_INSTALL
            ));
        }
        for f in files_report
            .iter_mut()
            .filter(|f| f.status == Status::NoNvcc)
        {
            let record = settings.out_dir.join(mangle::build_file(&f.id));
            let text = outputs::build_info(Status::NoNvcc, &[], f.instances, 0, 0.0, None);
            outputs::write_if_changed(&record, text.as_bytes())?;
            f.build_info = Some(record);
        }
        let report = Report {
            files: files_report,
            nvcc: None,
            gencodes: Vec::new(),
            cache: None,
            directives: Vec::new(),
            nvcc_wall: Duration::ZERO,
        };
        self.summarize(&report, directives);
        Ok(report)
    }

    /// With `CUPRUM_BUILD_VERBOSE=1`: the report's summary line as a warning (cargo shows build
    /// scripts' output only through warnings); else, after a long wait for nvcc, what it cost.
    fn summarize(&self, report: &Report, directives: &mut Vec<String>) {
        if self
            .env
            .var(env::BUILD_VERBOSE)
            .is_some_and(|v| !matches!(v.trim(), "0" | "false" | "no" | "off"))
        {
            directives.push(format!("cargo:warning={}", report.summary()));
        } else if let Some(line) = report.long_nvcc() {
            directives.push(format!("cargo:warning={line}"));
        }
    }
}

/// The build's settings, from `Kernels` and the environment.
struct Settings {
    /// Where the outputs go (absolute).
    out_dir: PathBuf,
    /// nvcc runs at a time (`CUPY_NUM_BUILD_JOBS`).
    jobs: usize,
    /// Threads per nvcc run (`CUPY_NUM_NVCC_THREADS`).
    threads: usize,
    /// nvcc's `-compress-mode` (`CUPRUM_NVCC_COMPRESS`).
    compress: &'static str,
    /// `#line` directives and `-lineinfo` (`CUPRUM_LINEINFO`).
    line_info: bool,
    /// `CUPY_NVCC_GENERATE_CODE` as set, and parsed.
    request_text: Option<String>,
    request: Request,
}

/// What the build says on stderr when nvcc starts: the files, the parts, the targets, how many
/// nvcc processes at a time at most.
fn announcement(plan: &PartPlan, files: &[FileReport], jobs: usize) -> String {
    let names: Vec<String> = plan.units.iter().map(|&i| files[i].path.display().to_string()).collect();
    let targets = targets::names(&plan.shown);
    format!(
        "cuprum-build: nvcc is compiling {} ({} part{}) for {} target{} ({}), at most {jobs} at a time and no more than \
         cargo's -j allows; it can take minutes (CUPY_NVCC_GENERATE_CODE picks the targets: docs/building.md)",
        names.join(", "),
        plan.parts.len(),
        crate::report::plural(plan.parts.len()),
        targets.len(),
        crate::report::plural(targets.len()),
        targets.join(" ")
    )
}

/// Every file that translates, translated. A file with mistakes in its kernels is skipped, with
/// one warning: the kernels' attributes report each mistake at its token as a rustc error when the
/// crate compiles, so the build script does not fail on them (cargo would print its failure frame
/// around the messages, and rustc would not run to report them at their spans). A file that
/// cannot be read is an error.
fn translate(files: &[PathBuf], line_info: bool, directives: &mut Vec<String>) -> Result<Vec<Translated>, Error> {
    let mut units = Vec::new();
    for path in files {
        let start = Instant::now();
        if let Err(e) = std::fs::metadata(path) {
            return Err(Error::io(path, "read the kernel file", e));
        }
        match cuprum_compiler::compile_file(path, line_info) {
            Ok(compiled) => units.push((path.clone(), compiled.unit, start.elapsed())),
            Err(_) => directives.push(skipped_warning(path)),
        }
    }
    Ok(units)
}

/// The warning for a kernel file that does not translate (its mistakes are rustc's to show).
fn skipped_warning(path: &Path) -> String {
    format!(
        "cargo:warning=cuprum-build: {} is not precompiled: its kernels have mistakes, which rustc reports",
        path.display()
    )
}

/// The headers, and each unit's CUDA C and `#line` index, under `out_dir`; returns the include
/// folder.
fn write_units(out_dir: &Path, units: &[Translated]) -> Result<PathBuf, Error> {
    let aot_dir = out_dir.join(mangle::AOT_DIR);
    let include = aot_dir.join("include");
    outputs::write_headers(&include)?;
    for (_, unit, _) in units {
        let id = mangle::unit_id(&unit.source);
        outputs::write_if_changed(&out_dir.join(mangle::source_file(&id)), unit.source.as_bytes())?;
        outputs::write_lines_index(out_dir, &unit.source)?;
    }
    Ok(include)
}

/// Each file's report before nvcc: no fat binary yet.
fn file_reports(units: &[Translated]) -> Vec<FileReport> {
    units
        .iter()
        .map(|(path, unit, time)| FileReport {
            path: path.clone(),
            id: mangle::unit_id(&unit.source),
            kernels: unit.kernels.len(),
            instances: instances(unit),
            targets: Vec::new(),
            fatbin: None,
            fatbin_bytes: 0,
            status: if unit.kernels.is_empty() {
                Status::NoKernels
            } else {
                Status::NoNvcc
            },
            nvcc_time: Duration::ZERO,
            build_info: None,
            time: *time,
        })
        .collect()
}

/// `CUPRUM_NVCC_COMPRESS` checked: one of [`env::COMPRESS_MODES`], the first when unset.
fn compress_mode(value: Option<&str>) -> Result<&'static str, Error> {
    let Some(v) = value.map(str::trim).filter(|v| !v.is_empty()) else {
        return Ok(env::COMPRESS_MODES[0]);
    };
    env::COMPRESS_MODES.iter().copied().find(|m| *m == v).ok_or_else(|| Error::Config {
        message: format!(
            "CUPRUM_NVCC_COMPRESS={v:?} is not a compression mode: use one of {} (docs/building.md, \"Size and load time\")",
            env::COMPRESS_MODES.join(", ")
        ),
    })
}

fn dedup_keep_order(paths: &mut Vec<PathBuf>) {
    let mut seen = std::collections::HashSet::new();
    paths.retain(|p| seen.insert(p.clone()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compress_modes_are_checked() {
        assert_eq!(compress_mode(None).unwrap(), "zstd");
        assert_eq!(compress_mode(Some(" ")).unwrap(), "zstd");
        assert_eq!(compress_mode(Some("size")).unwrap(), "size");
        assert_eq!(compress_mode(Some("balance")).unwrap(), "balance");
        assert_eq!(compress_mode(Some("default")).unwrap(), "default");
        let e = compress_mode(Some("lz4")).unwrap_err().to_string();
        assert!(
            e.contains("CUPRUM_NVCC_COMPRESS=\"lz4\"")
                && e.contains("zstd, size, balance, speed, none, default"),
            "{e}"
        );
    }
}
