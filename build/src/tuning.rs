//! Embeds a package's tuning files (`tuning/sm_XY.toml`, docs/tuning.md) into the program.
//!
//! [`Tuning::embed`] (from `build.rs`) reads every `.toml` file of the folder, checks it with
//! [`cuprum_abi::tuning::parse_named`] (a malformed or misnamed file fails the build, naming the
//! file and line), and writes `OUT_DIR/cuprum_tuning.rs`: a Rust expression, the list of
//! `(arch, text)` pairs, that the runtime's `tuning_table!()` includes. Without the folder the
//! list is empty and every tuned site launches its documented default.

use std::fs;
use std::path::{Path, PathBuf};

use cuprum_abi::tuning;

use crate::env::{self, Env};
use crate::error::Error;

/// The name of the generated file under `OUT_DIR` (what `tuning_table!()` includes).
pub const GENERATED: &str = "cuprum_tuning.rs";

/// Embeds the tuning files of one folder (default `tuning/`, relative to the package).
///
/// ```no_run
/// // build.rs
/// fn main() {
///     cuprum_build::Tuning::new().embed(); // tuning/*.toml, if the folder exists
/// }
/// ```
#[derive(Clone, Debug)]
pub struct Tuning {
    dir: PathBuf,
    out_dir: Option<PathBuf>,
    env: Env,
}

/// What [`Tuning::try_embed`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TuningReport {
    /// The architectures embedded (`sm_90`), in file name order.
    pub archs: Vec<String>,
    /// The generated file.
    pub generated: PathBuf,
    /// The `cargo:` lines for cargo (which paths re-run the build script).
    pub directives: Vec<String>,
}

impl Default for Tuning {
    fn default() -> Self {
        Tuning::new()
    }
}

impl Tuning {
    /// The folder `tuning/` of the package.
    pub fn new() -> Tuning {
        Tuning { dir: PathBuf::from("tuning"), out_dir: None, env: Env::default() }
    }

    /// Reads the tuning files from `dir` instead (relative to the package, as build scripts run
    /// there): a program that includes another package's kernels embeds that package's folder
    /// (the benchmark embeds `../examples/tuning`).
    pub fn dir(&mut self, dir: impl AsRef<Path>) -> &mut Self {
        self.dir = dir.as_ref().to_path_buf();
        self
    }

    /// Writes the generated file under `dir` instead of `$OUT_DIR` (for tests and tools).
    pub fn out_dir(&mut self, dir: impl AsRef<Path>) -> &mut Self {
        self.out_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// Embeds the files (from `build.rs`): prints the `cargo:` lines, and on a bad file prints the
    /// error and exits, failing the build.
    pub fn embed(&self) {
        match self.try_embed() {
            Ok(report) => {
                for d in &report.directives {
                    println!("{d}");
                }
            }
            Err(e) => {
                // The folder stays watched, so that fixing the file re-runs the build script.
                println!("cargo:rerun-if-changed={}", self.dir.display());
                eprintln!("{}", e.rendered());
                std::process::exit(1);
            }
        }
    }

    /// Embeds the files and reports what it did; prints nothing.
    pub fn try_embed(&self) -> Result<TuningReport, Error> {
        let out = match &self.out_dir {
            Some(d) => d.clone(),
            None => self.env.path(env::OUT_DIR).ok_or_else(|| Error::Config {
                message: "OUT_DIR is not set: cuprum_build::Tuning runs from a build script (build.rs)".into(),
            })?,
        };
        let mut directives = Vec::new();
        let mut files = Vec::new();
        if self.dir.is_dir() {
            // Cargo re-runs the script when a file of the folder is added, changed or removed.
            directives.push(format!("cargo:rerun-if-changed={}", self.dir.display()));
            let entries = fs::read_dir(&self.dir).map_err(|e| Error::io(&self.dir, "read the folder", e))?;
            for entry in entries {
                let path = entry.map_err(|e| Error::io(&self.dir, "read the folder", e))?.path();
                if path.extension().is_some_and(|x| x == "toml") {
                    files.push(path);
                }
            }
        } else {
            // No folder yet: watch the folder above it, so that the tuner's first file is noticed
            // (a missing path would re-run the script at every build).
            let parent = self.dir.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
            directives.push(format!("cargo:rerun-if-changed={}", parent.display()));
        }
        files.sort();
        let mut archs = Vec::new();
        let mut list = String::from("&[\n");
        let mut errors = Vec::new();
        for path in &files {
            let text = fs::read_to_string(path).map_err(|e| Error::io(path, "read", e))?;
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            match tuning::parse_named(name, &text) {
                Ok(f) => {
                    list.push_str(&format!("    ({:?}, {:?}),\n", f.arch, text));
                    archs.push(f.arch);
                }
                Err(e) => errors.push(Error::Tuning { file: path.clone(), message: e.to_string() }),
            }
        }
        if let Some(e) = Error::from_list(errors) {
            return Err(e);
        }
        list.push_str("]\n");
        fs::create_dir_all(&out).map_err(|e| Error::io(&out, "create", e))?;
        let generated = out.join(GENERATED);
        // Unchanged contents are not rewritten, so that the program is not rebuilt for nothing.
        if fs::read_to_string(&generated).ok().as_deref() != Some(list.as_str()) {
            fs::write(&generated, &list).map_err(|e| Error::io(&generated, "write", e))?;
        }
        Ok(TuningReport { archs, generated, directives })
    }
}
