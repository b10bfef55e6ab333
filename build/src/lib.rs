//! cuprum-build: compiles kernel files ahead of time, from `build.rs`.
//!
//! For each kernel file it runs the compiler crate (the same CUDA C as `cuprum emit`), writes the
//! translation unit under `OUT_DIR/cuprum/`, and runs nvcc into a fat binary
//! `OUT_DIR/cuprum/<id>.fatbin` (see [`cuprum_abi::mangle::fatbin_file`]) that the kernel
//! macros embed with `include_bytes!`. Without nvcc the build still succeeds, with one warning, and
//! every kernel is compiled by NVRTC at first use.
//!
//! ```no_run
//! // build.rs
//! fn main() {
//!     cuprum_build::Kernels::new()
//!         .file("src/kernels.rs")
//!         .dir("kernels") // every `.rs` file under it, recursively
//!         .compile();
//! }
//! ```
//!
//! The knobs are CuPy's build variables (module [`mod@env`]): `CUPY_NVCC_GENERATE_CODE` (the targets,
//! module [`targets`]), `NVCC`, `CUDA_PATH`, `CUPY_NUM_BUILD_JOBS`, `CUPY_NUM_NVCC_THREADS`; and
//! cuprum's own: `CUPRUM_FATBIN_CACHE` (where fat binaries are shared between `OUT_DIR`s, module
//! [`cache`]), `CUPRUM_BUILD_VERBOSE` (one summary line per build), `CUPRUM_NVCC_COMPRESS` and
//! `CUPRUM_LINEINFO` (`1`: `#line` directives and `-lineinfo`, for profilers and debuggers;
//! docs/debugging.md).
//! `docs/building.md` is the user guide.
//!
//! Each unit's outcome is also written to `OUT_DIR/cuprum/<id>.build` (format:
//! [`build_info_format`]), which the macros embed next to the fat binary.

#![warn(missing_docs)]

// The example is a whole build.rs, `fn main` included.
#![allow(clippy::needless_doctest_main)]

pub mod cache;
pub mod compress;
pub mod env;
pub mod fatbin;
pub mod nvcc;
mod outputs;
pub mod targets;

pub use outputs::{build_file, build_info as build_info_format};

use std::borrow::Cow;
use std::ffi::OsString;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use cuprum_abi::{mangle, parts};

use crate::env::Env;
use crate::nvcc::{Lookup, Nvcc};
use crate::targets::{Gencode, Request};

/// The kernel files of a crate and how to build them; see the crate docs.
#[derive(Debug, Clone, Default)]
pub struct Kernels {
    files: Vec<PathBuf>,
    dirs: Vec<PathBuf>,
    out_dir: Option<PathBuf>,
    env: Env,
    machine_code_only: bool,
}

/// What happened to one kernel file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// nvcc ran and wrote the fat binary.
    Compiled,
    /// The fat binary was built by an earlier run from the same source, headers, nvcc and flags.
    UpToDate,
    /// The fat binary came from the shared cache ([`cache`]): built by another `OUT_DIR` (another
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
    /// Its unit id ([`mangle::unit_id`] of the generated CUDA C).
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

/// The outcome of [`Kernels::try_compile`].
#[derive(Debug, Clone)]
pub struct Report {
    /// Every kernel file, in the order given (directories: sorted by path).
    pub files: Vec<FileReport>,
    /// The nvcc command used, if nvcc was found.
    pub nvcc: Option<String>,
    /// The `-gencode` values passed to nvcc.
    pub gencodes: Vec<String>,
    /// The shared fat binary cache used, if any ([`cache`]).
    pub cache: Option<PathBuf>,
    /// The `cargo:` lines [`Kernels::compile`] prints: `rerun-if-changed`, `rerun-if-env-changed`
    /// and `warning`.
    pub directives: Vec<String>,
}

impl Report {
    /// The outcome of the file whose path ends with `path`.
    pub fn file(&self, path: impl AsRef<Path>) -> Option<&FileReport> {
        self.files.iter().find(|f| f.path.ends_with(path.as_ref()))
    }

    /// One line about the whole build: files, instances, what nvcc did and what it cost, the fat
    /// binaries' size. [`Kernels::compile`] prints it (as a `cargo:warning`) when
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

    /// The warnings ([`Kernels::compile`] prints them as `cargo:warning=`).
    pub fn warnings(&self) -> impl Iterator<Item = &str> {
        self.directives
            .iter()
            .filter_map(|d| d.strip_prefix("cargo:warning="))
    }
}

/// Why the build failed. [`Error::rendered`] is the text printed to stderr.
#[derive(Debug)]
pub enum Error {
    /// A kernel file has mistakes: `message` is rendered like rustc (`error: ...`, `--> FILE:LINE:COL`,
    /// the line, a caret), one block per mistake.
    Kernel {
        /// The kernel file.
        file: PathBuf,
        /// Every mistake of the file, rendered.
        message: String,
    },
    /// `CUPY_NVCC_GENERATE_CODE` is malformed or asks for targets this nvcc does not support.
    Targets {
        /// What is wrong with the value.
        message: String,
    },
    /// `CUPY_NVCC_GENERATE_CODE` is set (precompiling was asked for) but there is no nvcc.
    NvccMissing {
        /// Where nvcc was looked for and how to get one.
        message: String,
    },
    /// An nvcc was found but does not work.
    Nvcc {
        /// Which nvcc and how it failed.
        message: String,
    },
    /// nvcc rejected generated code (a bug in cuprum: the message says so).
    NvccFailed {
        /// The kernel file.
        file: PathBuf,
        /// The generated translation unit nvcc rejected.
        cu: PathBuf,
        /// The nvcc command line, as a shell would run it.
        command: String,
        /// nvcc's output.
        output: String,
    },
    /// `CUPY_NVCC_GENERATE_CODE=current` on a machine without a usable GPU.
    NoGpu {
        /// Why the GPUs could not be asked, and what to do instead.
        message: String,
    },
    /// A bad setting: `OUT_DIR` unset, a count that is not a number.
    Config {
        /// Which setting and what is wrong with it.
        message: String,
    },
    /// A file operation failed.
    Io {
        /// The file or folder.
        path: PathBuf,
        /// What was being done, as a verb (`cannot {action} {path}`).
        action: &'static str,
        /// The operating system's error.
        error: io::Error,
    },
    /// Several of the above (every kernel file with mistakes, every failed nvcc run).
    Several(Vec<Error>),
}

impl Error {
    pub(crate) fn io(path: &Path, action: &'static str, error: io::Error) -> Self {
        Error::Io {
            path: path.to_path_buf(),
            action,
            error,
        }
    }

    /// The text for stderr: every message starting with `error:`.
    pub fn rendered(&self) -> String {
        match self {
            Error::Kernel { message, .. } => message.trim_end().to_owned(),
            Error::Several(all) => all
                .iter()
                .map(Error::rendered)
                .collect::<Vec<_>>()
                .join("\n\n"),
            other => format!("error: {other}"),
        }
    }

    /// Every single error (a `Several` flattened).
    pub fn all(&self) -> Vec<&Error> {
        match self {
            Error::Several(all) => all.iter().flat_map(Error::all).collect(),
            one => vec![one],
        }
    }

    fn from_list(mut errors: Vec<Error>) -> Option<Error> {
        match errors.len() {
            0 => None,
            1 => errors.pop(),
            _ => Some(Error::Several(errors)),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Kernel { message, .. } => f.write_str(message.trim_end()),
            Error::Targets { message }
            | Error::NvccMissing { message }
            | Error::Nvcc { message }
            | Error::NoGpu { message }
            | Error::Config { message } => f.write_str(message),
            Error::NvccFailed {
                file,
                cu,
                command,
                output,
            } => write!(
                f,
                "nvcc failed on the CUDA C generated from {} (this is a bug in cuprum; please report it with the kernel file)\n  \
                 generated source: {}\n  command: {command}\n{}",
                file.display(),
                cu.display(),
                output.trim_end()
            ),
            Error::Io {
                path,
                action,
                error,
            } => write!(f, "cannot {action} {}: {error}", path.display()),
            Error::Several(all) => {
                let shown: Vec<String> = all.iter().map(Error::to_string).collect();
                f.write_str(&shown.join("\n\n"))
            }
        }
    }
}

impl std::error::Error for Error {}

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

    /// Leaves PTX (`compute_XX`) out of the fat binaries and keeps only the machine code
    /// (`sm_XX`) of the requested targets: about half the bytes. A GPU the machine code does not
    /// serve then compiles the kernels through NVRTC at their first use (kept in the disk
    /// cache), as CuPy does for all of its kernels. When a kernel's targets have no machine code at
    /// all (PTX only), its PTX is kept. What the runtime's built-ins use (docs/building.md).
    pub fn machine_code_only(&mut self) -> &mut Self {
        self.machine_code_only = true;
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
    /// errors to stderr (kernel mistakes like rustc's) and exits the build script with status 1.
    pub fn compile(&self) {
        let mut directives = Vec::new();
        let result = self.run(&mut directives);
        for d in &directives {
            println!("{d}");
        }
        if let Err(e) = result {
            eprintln!("{}", e.rendered());
            std::process::exit(1);
        }
    }

    /// Builds everything and reports what happened; prints nothing (the directives are in the
    /// report).
    pub fn try_compile(&self) -> Result<Report, Error> {
        let mut directives = Vec::new();
        let mut report = self.run(&mut directives)?;
        report.directives = directives;
        Ok(report)
    }

    fn run(&self, directives: &mut Vec<String>) -> Result<Report, Error> {
        // Directives first: a failed build must still re-run when an input changes.
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

        // Translate every file; report every file's mistakes together.
        let mut units = Vec::new();
        let mut errors = Vec::new();
        for path in &files {
            let start = Instant::now();
            match cuprum_compiler::compile_file(path, line_info) {
                Ok(compiled) => units.push((path.clone(), compiled.unit, start.elapsed())),
                Err(message) => errors.push(Error::Kernel {
                    file: path.clone(),
                    message,
                }),
            }
        }
        if let Some(e) = Error::from_list(errors) {
            return Err(e);
        }

        let aot_dir = out_dir.join(mangle::AOT_DIR);
        let include = aot_dir.join("include");
        outputs::write_headers(&include)?;
        for (_, unit, _) in &units {
            let id = mangle::unit_id(&unit.source);
            outputs::write_if_changed(&out_dir.join(mangle::source_file(&id)), unit.source.as_bytes())?;
            outputs::write_lines_index(&out_dir, &unit.source)?;
        }

        let mut files_report: Vec<FileReport> = units
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
            .collect();
        let any_kernels = files_report.iter().any(|f| f.status != Status::NoKernels);

        let nvcc = match nvcc::find(&self.env)? {
            Lookup::Found(nvcc) => nvcc,
            Lookup::Missing(looked) => {
                if let Some(value) = &request_text {
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
                if any_kernels {
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
                    let record = out_dir.join(build_file(&f.id));
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
                };
                self.summarize(&report, directives);
                return Ok(report);
            }
        };

        let gencodes = resolve_targets(&request, request_text.as_deref(), &nvcc, &self.env)?;
        let cache_dir = cache::dir(&self.env, &out_dir);
        let headers_hash = outputs::headers_hash();
        let plan = Plan {
            nvcc: &nvcc,
            include: &include,
            out_dir: &out_dir,
            threads,
            cache: cache_dir.as_deref(),
            headers_hash: &headers_hash,
            compress,
        };

        // One nvcc run per kernel of each distinct unit (a part of the unit's fat binary, loaded
        // alone at run time: cuprum_abi::parts), `jobs` at a time.
        let mut todo: Vec<usize> = Vec::new();
        for (i, f) in files_report.iter().enumerate() {
            if f.status != Status::NoKernels && !todo.iter().any(|&j| files_report[j].id == f.id) {
                todo.push(i);
            }
        }
        // Each kernel's own targets (targets::for_kernel): a kernel that needs a newer
        // architecture than a requested target (tensor cores, cp.async) is an error when the
        // targets were asked for, else built for the targets that have what it needs; one that
        // needs an arch-specific target (sm_90a) is built for that alone (docs/building.md,
        // "Architecture-specific kernels", "Architecture-specific targets (sm_90a)").
        // Indexed like `units[i].1.kernels`.
        let mut kernel_gencodes: Vec<Vec<Vec<Gencode>>> = vec![Vec::new(); units.len()];
        let mut errors = Vec::new();
        for &i in &todo {
            let (path, unit, _) = &units[i];
            let mut problems = Vec::new();
            for kernel in &unit.kernels {
                let needs = targets::Needs {
                    min_arch: kernel.min_arch,
                    arch_specific: kernel.arch_specific,
                };
                match targets::for_kernel(&kernel.name, needs, request.asked(), &gencodes, &nvcc.supported()) {
                    Ok(list) if self.machine_code_only => {
                        kernel_gencodes[i].push(targets::machine_code_only(list))
                    }
                    Ok(list) => kernel_gencodes[i].push(list),
                    Err(problem) => problems.push(problem),
                }
            }
            if !problems.is_empty() {
                errors.push(Error::Kernel {
                    file: path.clone(),
                    message: problems.join("\n"),
                });
            }
        }
        if let Some(e) = Error::from_list(errors) {
            return Err(e);
        }
        // What the report lists: the build's targets, then any a kernel has of its own (sm_90a
        // with the default targets).
        let mut shown = if self.machine_code_only {
            targets::machine_code_only(gencodes.clone())
        } else {
            gencodes.clone()
        };
        for g in kernel_gencodes.iter().flatten().flatten() {
            if !shown.contains(g) {
                shown.push(g.clone());
            }
        }
        // (unit, part name, symbols, the kernel's targets): the entry points of each kernel
        // grouped as cuprum_abi::parts::part_of decides (per kernel, per instance, per instance
        // and variant).
        let mut jobs_list: Vec<(usize, String, Vec<String>, &[Gencode])> = Vec::new();
        for &i in &todo {
            for (kernel, own) in units[i].1.kernels.iter().zip(&kernel_gencodes[i]) {
                let mut distinct: Vec<&[cuprum_abi::DType]> = Vec::new();
                for (inst, _, _) in &kernel.instances {
                    if !distinct.contains(&inst.as_slice()) {
                        distinct.push(inst);
                    }
                }
                for (inst, variant, symbol) in &kernel.instances {
                    let name = parts::part_of(&kernel.name, kernel.kind, inst, *variant, distinct.len());
                    match jobs_list.iter_mut().find(|j| j.0 == i && j.1 == name) {
                        Some(j) => j.2.push(symbol.clone()),
                        None => jobs_list.push((i, name, vec![symbol.clone()], own)),
                    }
                }
            }
        }
        let results: Vec<Mutex<Option<Result<Built, Error>>>> =
            jobs_list.iter().map(|_| Mutex::new(None)).collect();
        let next = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..jobs.min(jobs_list.len()) {
                s.spawn(|| {
                    loop {
                        let j = next.fetch_add(1, Ordering::Relaxed);
                        let Some((i, name, symbols, own)) = jobs_list.get(j) else {
                            break;
                        };
                        let (path, unit, _) = &units[*i];
                        let built = plan.build_part(path, unit, name, symbols, own);
                        *results[j].lock().unwrap_or_else(|e| e.into_inner()) = Some(built);
                    }
                });
            }
        });

        let mut errors = Vec::new();
        let mut parts: Vec<Vec<(String, Built)>> = (0..units.len()).map(|_| Vec::new()).collect();
        for (j, slot) in results.into_iter().enumerate() {
            let (i, name, _, _) = &jobs_list[j];
            match slot.into_inner().unwrap_or_else(|e| e.into_inner()) {
                Some(Ok(built)) => parts[*i].push((name.clone(), built)),
                Some(Err(e)) => errors.push(e),
                None => unreachable!("every job is run by a worker"),
            }
        }
        if let Some(e) = Error::from_list(errors) {
            return Err(e);
        }
        for &i in &todo {
            let built = plan.assemble(&units[i].1, std::mem::take(&mut parts[i]))?;
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
            gencodes: shown.iter().map(Gencode::to_string).collect(),
            cache: cache_dir,
            directives: Vec::new(),
        };
        self.summarize(&report, directives);
        Ok(report)
    }

    /// With `CUPRUM_BUILD_VERBOSE=1`: the report's summary line as a warning (cargo shows build
    /// scripts' output only through warnings).
    fn summarize(&self, report: &Report, directives: &mut Vec<String>) {
        if self
            .env
            .var(env::BUILD_VERBOSE)
            .is_some_and(|v| !matches!(v.trim(), "0" | "false" | "no" | "off"))
        {
            directives.push(format!("cargo:warning={}", report.summary()));
        }
    }
}

/// The kernel entry points a unit defines.
fn instances(unit: &cuprum_compiler::back::cuda::Unit) -> usize {
    unit.kernels.iter().map(|k| k.instances.len()).sum()
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
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

/// `CUPY_NVCC_GENERATE_CODE` resolved against this nvcc (and, for `current`, the GPUs).
fn resolve_targets(
    request: &Request,
    text: Option<&str>,
    nvcc: &Nvcc,
    env: &Env,
) -> Result<Vec<Gencode>, Error> {
    let targets_error = |message| Error::Targets { message };
    match request {
        Request::Default => {
            targets::default_list(&nvcc.sass, &nvcc.virtual_archs).map_err(targets_error)
        }
        Request::Current => {
            let list = targets::current_list(&nvcc::gpu_capabilities(env)?);
            targets::check_supported(
                &list,
                &nvcc.supported(),
                "CUPY_NVCC_GENERATE_CODE=current (the GPUs of this machine)",
            )
            .map_err(targets_error)?;
            Ok(list)
        }
        Request::List(list) => {
            let source = format!("CUPY_NVCC_GENERATE_CODE={:?}", text.unwrap_or_default());
            targets::check_supported(list, &nvcc.supported(), &source).map_err(targets_error)?;
            Ok(list.clone())
        }
    }
}

/// What every nvcc run of one build shares.
struct Plan<'a> {
    nvcc: &'a Nvcc,
    include: &'a Path,
    out_dir: &'a Path,
    threads: usize,
    /// The shared fat binary cache, if any.
    cache: Option<&'a Path>,
    /// [`outputs::headers_hash`], computed once.
    headers_hash: &'a str,
    /// nvcc's `-compress-mode` (`CUPRUM_NVCC_COMPRESS`).
    compress: &'static str,
}

/// A fat binary that is there after [`Plan::build_part`] or [`Plan::assemble`].
struct Built {
    status: Status,
    targets: Vec<String>,
    fatbin: PathBuf,
    /// The fat binary's bytes, as read back (a part's, for [`Plan::assemble`]).
    bytes: Vec<u8>,
    fatbin_bytes: u64,
    /// `OUT_DIR/cuprum/<id>.build`.
    record: PathBuf,
    nvcc_time: Duration,
    time: Duration,
    /// A problem that does not fail the build (the shared cache could not be written).
    warning: Option<String>,
}

impl Plan<'_> {
    /// Makes `OUT_DIR`'s fat binary of part `name` of `unit` (`cuprum/<id>.<name>.fatbin`: a kernel,
    /// or one instance of it, `cuprum_abi::parts`), from the unit's definitions and the
    /// instantiation lines of `symbols`: kept when its stamp says it is
    /// current, else copied from the shared cache on a hit, else built by nvcc (and stored in the
    /// cache).
    fn build_part(
        &self,
        kernel_file: &Path,
        unit: &cuprum_compiler::back::cuda::Unit,
        name: &str,
        symbols: &[String],
        gencodes: &[Gencode],
    ) -> Result<Built, Error> {
        let start = Instant::now();
        let source = parts::part_source(&unit.source, symbols);
        // `sum[f32]` is the part's name; its files are `<unit id>.sum_f32_...`.
        let file_name: String = name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        let id = format!("{}.{file_name}", mangle::unit_id(&unit.source));
        let aot_dir = self.out_dir.join(mangle::AOT_DIR);
        let cu = aot_dir.join(format!("{id}.cu"));
        outputs::write_if_changed(&cu, source.as_bytes())?;
        let part = aot_dir.join(format!("{id}.fatbin.part"));
        let stamp_path = aot_dir.join(format!("{id}.stamp"));
        let fatbin = self.out_dir.join(mangle::fatbin_file(&id));
        let job = nvcc::Job {
            cu: &cu,
            output: &part,
            include: self.include,
            gencodes,
            threads: self.threads,
            fast_math: unit.fast_math,
            line_info: cuprum_abi::unit::has_line_directives(&unit.source),
            compress: self.compress,
        };
        // `zstd` runs nvcc as `none` does, then compresses: the mode is part of what was built.
        let tagged = format!("{id} (compress {})", self.compress);
        let stamp = outputs::stamp(
            &tagged,
            &self.nvcc.version,
            &nvcc::show(&self.nvcc.command_line(&job)),
        );
        // The cache key: the same command line with this build's paths replaced by placeholders.
        let key_text = cache::key_text(
            &tagged,
            self.headers_hash,
            &gencodes.iter().map(Gencode::to_string).collect::<Vec<_>>(),
            &self.nvcc.version,
            &nvcc::show(&self.nvcc.command_line(&nvcc::Job {
                cu: Path::new("unit.cu"),
                output: Path::new("unit.fatbin"),
                include: Path::new("include"),
                ..job
            })),
        );
        let key = cache::key(&key_text);
        let mut nvcc_time = Duration::ZERO;
        let mut warning = None;
        let status = if outputs::up_to_date(&fatbin, &stamp_path, &stamp) {
            Status::UpToDate
        } else if let Some(bytes) = self
            .cache
            .and_then(|dir| cache::lookup(dir, &key, &key_text))
        {
            outputs::remove(&stamp_path)?;
            cache::install(&bytes, &fatbin)?;
            outputs::write_if_changed(&stamp_path, stamp.as_bytes())?;
            Status::Cached
        } else {
            outputs::remove(&stamp_path)?;
            let nvcc_start = Instant::now();
            self.nvcc.run(&job, kernel_file)?;
            nvcc_time = nvcc_start.elapsed();
            let bytes =
                std::fs::read(&part).map_err(|e| Error::io(&part, "read nvcc's output", e))?;
            outputs::write_if_changed(&fatbin, &bytes)?;
            outputs::remove(&part)?;
            outputs::write_if_changed(&stamp_path, stamp.as_bytes())?;
            if let Some(dir) = self.cache {
                if let Err(e) = cache::store(dir, &key, &key_text, &bytes) {
                    warning = Some(format!(
                        "cuprum-build: the fat binary cache cannot be written ({e}); other profiles will run nvcc again. \
                         Set CUPRUM_FATBIN_CACHE to a writable folder, or to `off`"
                    ));
                }
            }
            Status::Compiled
        };
        let bytes = std::fs::read(&fatbin).map_err(|e| Error::io(&fatbin, "read", e))?;
        // A fat binary built before the cache existed (or with it off) joins it, so that the other
        // profiles find it.
        if status == Status::UpToDate {
            if let Some(dir) = self.cache {
                if !dir.join(format!("{key}.stamp")).is_file() {
                    let _ = cache::store(dir, &key, &key_text, &bytes);
                }
            }
        }
        let targets = compress::targets(&bytes).map_err(|e| Error::Nvcc {
            message: format!(
                "nvcc wrote {}, which cuprum-build cannot read: {e}",
                fatbin.display()
            ),
        })?;
        Ok(Built {
            status,
            targets,
            fatbin_bytes: bytes.len() as u64,
            bytes,
            fatbin,
            record: PathBuf::new(),
            nvcc_time,
            time: start.elapsed(),
            warning,
        })
    }

    /// The unit's fat binary: its kernels' parts back to back (`cuprum/<id>.fatbin`), their
    /// listing (`<id>.parts`), its targets (`<id>.targets`) and its build record (`<id>.build`).
    fn assemble(
        &self,
        unit: &cuprum_compiler::back::cuda::Unit,
        parts: Vec<(String, Built)>,
    ) -> Result<Built, Error> {
        let id = mangle::unit_id(&unit.source);
        let mut bytes = Vec::new();
        let mut listing = Vec::new();
        let mut targets: Vec<String> = Vec::new();
        let (mut nvcc_time, mut time) = (Duration::ZERO, Duration::ZERO);
        let mut warning = None;
        // `zstd`: each part becomes a zstd frame, with a dictionary of the unit first when one
        // helps (crate::compress).
        // The parts of an earlier build are taken again when they were made from the same bytes
        // (`<id>.zstd` records from what), so an unchanged unit is not compressed again.
        let fatbin = self.out_dir.join(mangle::fatbin_file(&id));
        let listing_path = self.out_dir.join(parts::parts_file(&id));
        let zstd_stamp_path = self.out_dir.join(mangle::AOT_DIR).join(format!("{id}.zstd"));
        let mut zstd_stamp = None;
        // `zstd`: a part with several targets is listed as one piece per family of targets
        // (`add@sm_80+sm_86+sm_89`, `add@sm_90`, `add@compute_90`), so that a program decompresses
        // and loads only its GPU's (cuprum_abi::parts, "Targets"); nvcc's own compression keeps
        // parts whole.
        let pieces: Vec<(String, Cow<'_, [u8]>)> = if self.compress == env::ZSTD {
            let mut pieces = Vec::new();
            for (kernel, built) in &parts {
                match cuprum_abi::fatbin::split_by_family(&built.bytes) {
                    Ok(Some(split)) => pieces.extend(
                        split.into_iter().map(|(t, b)| (parts::piece_name(kernel, &t), Cow::Owned(b))),
                    ),
                    _ => pieces.push((kernel.clone(), Cow::Borrowed(built.bytes.as_slice()))),
                }
            }
            pieces
        } else {
            parts.iter().map(|(k, b)| (k.clone(), Cow::Borrowed(b.bytes.as_slice()))).collect()
        };
        let compressed = if self.compress == env::ZSTD {
            let named: Vec<(&str, &[u8])> = pieces.iter().map(|(n, b)| (n.as_str(), b.as_ref())).collect();
            let stamp = compress::stamp(&named);
            let names: Vec<&str> = named.iter().map(|p| p.0).collect();
            let earlier = (std::fs::read_to_string(&zstd_stamp_path).ok().as_deref() == Some(stamp.as_str()))
                .then(|| {
                    let listing = parts::read_parts(&std::fs::read_to_string(&listing_path).ok()?)?;
                    compress::Compressed::reuse(&std::fs::read(&fatbin).ok()?, &listing, &names)
                })
                .flatten();
            zstd_stamp = Some(stamp);
            Some(match earlier {
                Some(c) => c,
                None => {
                    outputs::remove(&zstd_stamp_path)?;
                    let raw: Vec<&[u8]> = named.iter().map(|p| p.1).collect();
                    compress::compress_unit(&raw).map_err(|e| Error::io(&fatbin, "compress (zstd)", e))?
                }
            })
        } else {
            None
        };
        if let Some(compress::Compressed {
            dictionary: Some(dict),
            ..
        }) = &compressed
        {
            listing.push(parts::Part {
                kernel: parts::DICTIONARY.to_string(),
                offset: 0,
                len: dict.len(),
            });
            bytes.extend_from_slice(dict);
        }
        for (k, (name, piece)) in pieces.iter().enumerate() {
            let piece = compressed.as_ref().map_or(piece.as_ref(), |c| &c.frames[k]);
            listing.push(parts::Part {
                kernel: name.clone(),
                offset: bytes.len(),
                len: piece.len(),
            });
            bytes.extend_from_slice(piece);
        }
        for (_, built) in &parts {
            for t in &built.targets {
                if !targets.contains(t) {
                    targets.push(t.clone());
                }
            }
            nvcc_time += built.nvcc_time;
            time += built.time;
            warning = warning.or_else(|| built.warning.clone());
        }
        // The unit's status: compiled if nvcc ran for any part, else cached if any part came from
        // the shared cache, else up to date.
        let status = [Status::Compiled, Status::Cached]
            .into_iter()
            .find(|s| parts.iter().any(|(_, b)| b.status == *s))
            .unwrap_or(Status::UpToDate);
        outputs::write_if_changed(&fatbin, &bytes)?;
        outputs::write_if_changed(&listing_path, parts::write_parts(&listing).as_bytes())?;
        // Last: a stamp never names outputs that are not written yet.
        if let Some(stamp) = zstd_stamp {
            outputs::write_if_changed(&zstd_stamp_path, stamp.as_bytes())?;
        }
        let mut text = targets.join("\n");
        text.push('\n');
        outputs::write_if_changed(
            &self.out_dir.join(mangle::targets_file(&id)),
            text.as_bytes(),
        )?;
        let record = self.out_dir.join(build_file(&id));
        let info = outputs::build_info(
            status,
            &targets,
            instances(unit),
            bytes.len() as u64,
            nvcc_time.as_secs_f64(),
            Some(&self.nvcc.version),
        );
        outputs::write_if_changed(&record, info.as_bytes())?;
        Ok(Built {
            status,
            targets,
            fatbin,
            fatbin_bytes: bytes.len() as u64,
            bytes: Vec::new(),
            record,
            nvcc_time,
            time,
            warning,
        })
    }
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
