//! The CUDA tools the build runs: finding nvcc (`NVCC`, `$CUDA_PATH/bin/nvcc`, `nvcc` on `PATH`, in
//! that order: [`locate`], which the workspace's tests use too), asking it which architectures it
//! supports, running it, and asking `nvidia-smi` which GPUs the build machine has (for
//! `CUPY_NVCC_GENERATE_CODE=current`).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::Error;
use crate::env::{self, Env};
use crate::targets::{Gencode, Supported};

/// How to get nvcc, for messages.
pub const HOW_TO_INSTALL: &str = "install a CUDA toolkit (https://developer.nvidia.com/cuda-downloads) or the CUDA 13.0 \
     compiler wheels (`pip install nvidia-cuda-nvcc==13.0.88 nvidia-cuda-crt==13.0.88 nvidia-nvvm==13.0.88 \
     nvidia-cuda-runtime==13.0.96 nvidia-cuda-cccl==13.0.85`, whose toolkit root is \
     <site-packages>/nvidia/cu13), then put its bin/ on PATH, set CUDA_PATH to its root, or set NVCC to \
     the nvcc command line (e.g. `ccache /usr/local/cuda/bin/nvcc`)";

/// A working nvcc and what it supports.
#[derive(Debug, Clone)]
pub struct Nvcc {
    /// The program and the arguments that come before ours (`ccache nvcc` -> `["ccache", "nvcc"]`).
    pub command: Vec<OsString>,
    /// Where it came from, for messages: `NVCC`, `CUDA_PATH` or `PATH`.
    pub source: &'static str,
    /// `nvcc --version`, part of every stamp so that another nvcc recompiles.
    pub version: String,
    /// The SASS architectures it can build (`nvcc --list-gpu-code`): 75, 80, ...
    pub sass: Vec<u32>,
    /// The virtual architectures it knows (`nvcc --list-gpu-arch`).
    pub virtual_archs: Vec<u32>,
    /// The arch-specific SASS architectures it can build (`sm_90a` -> 90): the suffixed lines of
    /// `--list-gpu-code`, else the `sm_XXa` values `--help` lists for `--gpu-code` (nvcc 13.0's
    /// `--list-gpu-code` omits them).
    pub sass_specific: Vec<u32>,
    /// The arch-specific virtual architectures it knows (`compute_90a` -> 90), likewise.
    pub virtual_specific: Vec<u32>,
}

/// The result of looking for nvcc.
#[derive(Debug)]
pub enum Lookup {
    /// This nvcc, which answered `--version`.
    Found(Nvcc),
    /// None found; the places looked at, for the message.
    Missing(Vec<String>),
}

/// Where nvcc is, before anything runs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// The command line (program first, then the arguments that come before ours) and where it
    /// came from: `NVCC`, `CUDA_PATH` or `PATH`.
    Found {
        /// The program and its leading arguments.
        command: Vec<OsString>,
        /// Which setting gave it: `NVCC`, `CUDA_PATH` or `PATH`.
        source: &'static str,
    },
    /// None found; the places looked at, for the message.
    Missing(Vec<String>),
}

/// Looks for nvcc without running it: `NVCC` (a command line split as a POSIX shell would, so a
/// quoted path may hold spaces), then `$CUDA_PATH/bin/nvcc`, then `nvcc` on `PATH`
/// (docs/building.md). `NVCC` that is not a command line (an unclosed quote) is an error.
pub fn locate(env: &Env) -> Result<Location, Error> {
    if let Some(line) = env.var(env::NVCC) {
        let words = shlex::split(&line).ok_or_else(|| Error::Nvcc {
            message: format!(
                "NVCC (`{line}`) is not a command line: a quote is not closed. Quote a path with \
                 spaces as a shell would (NVCC='\"/opt/my cuda/bin/nvcc\" -ccbin g++-12'), or \
                 unset NVCC to look elsewhere"
            ),
        })?;
        return Ok(Location::Found {
            command: words.into_iter().map(OsString::from).collect(),
            source: "NVCC",
        });
    }
    let exe = format!("nvcc{}", std::env::consts::EXE_SUFFIX);
    let mut looked = Vec::new();
    if let Some(root) = env.path(env::CUDA_PATH) {
        let path = root.join("bin").join(&exe);
        if path.is_file() {
            return Ok(Location::Found {
                command: vec![path.into()],
                source: "CUDA_PATH",
            });
        }
        looked.push(format!("{} (CUDA_PATH)", path.display()));
    } else {
        looked.push("CUDA_PATH (unset)".into());
    }
    match env.find_program(&exe) {
        Some(path) => Ok(Location::Found {
            command: vec![path.into()],
            source: "PATH",
        }),
        None => {
            looked.push(format!("{exe} on PATH"));
            Ok(Location::Missing(looked))
        }
    }
}

/// Finds nvcc ([`locate`]) and asks it what it supports. `NVCC` set to something that does not
/// run is an error (the user asked for it); nothing found at all is `Lookup::Missing`.
pub fn find(env: &Env) -> Result<Lookup, Error> {
    match locate(env)? {
        Location::Found { command, source } => probe(command, source).map(Lookup::Found),
        Location::Missing(looked) => Ok(Lookup::Missing(looked)),
    }
}

/// Runs `--version`, `--list-gpu-code` and `--list-gpu-arch`.
fn probe(command: Vec<OsString>, source: &'static str) -> Result<Nvcc, Error> {
    let shown = show(&command);
    let fail = |why: String| Error::Nvcc {
        message: format!(
            "nvcc from {source} (`{shown}`) does not work: {why}. Fix it, or unset {source} to look elsewhere; to get nvcc, {HOW_TO_INSTALL}"
        ),
    };
    if command.is_empty() {
        return Err(fail("the command is empty".into()));
    }
    let run = |arg: &str| -> Result<String, Error> {
        let out = Command::new(&command[0])
            .args(&command[1..])
            .arg(arg)
            .output()
            .map_err(|e| fail(format!("`{shown} {arg}` cannot be started: {e}")))?;
        if !out.status.success() {
            return Err(fail(format!(
                "`{shown} {arg}` exited with {}: {}",
                out.status,
                output_text(&out).trim()
            )));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let version = run("--version")?;
    let code_list = run("--list-gpu-code")?;
    let arch_list = run("--list-gpu-arch")?;
    let sass = numbers(&code_list, "sm_");
    let virtual_archs = numbers(&arch_list, "compute_");
    if sass.is_empty() || virtual_archs.is_empty() {
        return Err(fail(
            "`--list-gpu-code` / `--list-gpu-arch` listed no architecture".into(),
        ));
    }
    let mut sass_specific = specific_numbers(&code_list, "sm_");
    let mut virtual_specific = specific_numbers(&arch_list, "compute_");
    if sass_specific.is_empty() && virtual_specific.is_empty() {
        // Only the listings lack them: `--help` names every value `--gpu-code` accepts. An nvcc
        // whose `--help` fails just has no arch-specific target.
        let help = run("--help").unwrap_or_default();
        sass_specific = specific_numbers(&help, "sm_");
        virtual_specific = specific_numbers(&help, "compute_");
    }
    Ok(Nvcc {
        command,
        source,
        version,
        sass,
        virtual_archs,
        sass_specific,
        virtual_specific,
    })
}

/// `(major, minor)` of the `release X.Y` in `nvcc --version`'s text.
fn release_of(version: &str) -> (u32, u32) {
    let Some(rest) = version.split("release ").nth(1) else {
        return (0, 0);
    };
    let number: String = rest
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    let mut parts = number.split('.').map(|p| p.parse().unwrap_or(0));
    (parts.next().unwrap_or(0), parts.next().unwrap_or(0))
}

/// `sm_90`-style lines (no suffix such as `sm_90a`) -> their numbers, sorted.
fn numbers(listing: &str, prefix: &str) -> Vec<u32> {
    let mut out: Vec<u32> = listing
        .split_whitespace()
        .filter_map(|w| w.strip_prefix(prefix)?.parse().ok())
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// The arch-specific targets named in `text` (`sm_90a` with prefix `sm_` -> 90), sorted: words of
/// a listing, or quoted values in `--help` (`'sm_90a',`). Family targets (`sm_100f`) are not
/// arch-specific and are left out.
fn specific_numbers(text: &str, prefix: &str) -> Vec<u32> {
    let mut out: Vec<u32> = text
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter_map(|w| w.strip_prefix(prefix)?.strip_suffix('a')?.parse().ok())
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// One nvcc run: a unit's `.cu` into a fat binary.
#[derive(Debug)]
pub struct Job<'a> {
    /// The translation unit to compile.
    pub cu: &'a Path,
    /// The fat binary to write.
    pub output: &'a Path,
    /// The folder holding `cuprum/*.h` (`-I`).
    pub include: &'a Path,
    /// The targets (`-gencode` each).
    pub gencodes: &'a [Gencode],
    /// `nvcc --threads`.
    pub threads: usize,
    /// `-use_fast_math` instead of `-fmad=false` (the unit's `fast_math`).
    pub fast_math: bool,
    /// `-lineinfo`: the unit has `#line` directives (`cuprum_abi::unit::has_line_directives`).
    pub line_info: bool,
    /// `-compress-mode` (one of `env::COMPRESS_MODES`; `default` passes none, `zstd` passes `none`).
    pub compress: &'a str,
}

impl Nvcc {
    /// The architectures it supports, for [`crate::targets`].
    pub fn supported(&self) -> Supported<'_> {
        Supported {
            sass: &self.sass,
            virtual_archs: &self.virtual_archs,
            sass_specific: &self.sass_specific,
            virtual_specific: &self.virtual_specific,
        }
    }

    /// The CUDA release of this nvcc (`release 13.0` in `--version`), `(0, 0)` if not found.
    pub fn release(&self) -> (u32, u32) {
        release_of(&self.version)
    }

    /// The full command line of `job`: program first.
    pub fn command_line(&self, job: &Job<'_>) -> Vec<OsString> {
        let mut args = self.command.clone();
        args.extend(["-fatbin", "-std=c++17", "--threads"].map(OsString::from));
        args.push(job.threads.to_string().into());
        // A generated unit keeps Rust's float semantics (no FMA contraction) unless fast-math;
        // with `#line` directives, a line table of the Rust lines.
        args.extend(
            cuprum_abi::unit::options(true, job.fast_math, job.line_info)
                .iter()
                .map(OsString::from),
        );
        // Machine code compresses 10-25x with `size` (a fat binary is mostly unrolled loops), at
        // about 0.3-0.6 ms more to load a kernel's part; nvcc's default mode leaves large cubins
        // uncompressed. Needs nvcc 12.8+ to build and a driver of that release to load, which CUDA
        // 13 code needs anyway (docs/building.md, "Size and load time").
        // `zstd`: nvcc writes the part uncompressed, cuprum-build compresses it (crate::compress).
        if self.release() >= (12, 8) && job.compress != "default" {
            let mode = if job.compress == crate::env::ZSTD {
                "none"
            } else {
                job.compress
            };
            args.push(format!("-compress-mode={mode}").into());
        }
        for g in job.gencodes {
            args.push(format!("-gencode={g}").into());
        }
        args.push("-I".into());
        args.push(job.include.into());
        args.push("-o".into());
        args.push(job.output.into());
        args.push(job.cu.into());
        args
    }

    /// Runs `job`; `Err` carries nvcc's output. `kernel_file` is the Rust file, for the message.
    pub fn run(&self, job: &Job<'_>, kernel_file: &Path) -> Result<(), Error> {
        let line = self.command_line(job);
        let failed = |output: String| Error::NvccFailed {
            file: kernel_file.to_path_buf(),
            cu: job.cu.to_path_buf(),
            command: show(&line),
            output,
        };
        let mut command = Command::new(absolute_program(&line[0]));
        command.args(&line[1..]);
        // nvcc writes a relative `#line` name into the line table prefixed with its current
        // folder: run in the root, so that the table names `/src/kernels.rs` and no folder of the
        // build machine (docs/debugging.md); the paths of the command line are absolute.
        if let Some(root) = neutral_dir().filter(|_| job.line_info) {
            command.current_dir(root);
        }
        let out = command
            .output()
            .map_err(|e| failed(format!("cannot start nvcc: {e}")))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(failed(format!(
                "exited with {}\n{}",
                out.status,
                output_text(&out)
            )))
        }
    }
}

/// The folder nvcc runs in for a unit with line directives: the file system's root (Unix only;
/// elsewhere nvcc runs where the build script does).
fn neutral_dir() -> Option<&'static Path> {
    cfg!(unix).then(|| Path::new("/"))
}

/// `program` as a path that works from any folder: a relative path with a folder in it
/// (`tools/nvcc`) made absolute; a bare name (`nvcc`, looked up on `PATH`) kept.
fn absolute_program(program: &OsString) -> OsString {
    let path = Path::new(program);
    match std::path::absolute(path) {
        Ok(abs) if path.is_relative() && path.components().count() > 1 => abs.into_os_string(),
        _ => program.clone(),
    }
}

/// The compute capabilities of the build machine's GPUs (`nvidia-smi`), e.g. `[90]`.
pub fn gpu_capabilities(env: &Env) -> Result<Vec<u32>, Error> {
    let fail = |why: String| Error::NoGpu {
        message: format!(
            "CUPY_NVCC_GENERATE_CODE=current builds for the GPUs of this machine, but {why}. \
             Build on a machine with a GPU and its driver, or list the architectures instead, \
             e.g. CUPY_NVCC_GENERATE_CODE=\"arch=compute_90,code=sm_90\""
        ),
    };
    let exe = format!("nvidia-smi{}", std::env::consts::EXE_SUFFIX);
    let smi: PathBuf = env.find_program(&exe).ok_or_else(|| {
        fail(format!(
            "{exe} (which comes with the NVIDIA driver) is not on PATH"
        ))
    })?;
    let out = Command::new(&smi)
        .args(["--query-gpu=compute_cap", "--format=csv,noheader"])
        .output()
        .map_err(|e| fail(format!("{} cannot be started: {e}", smi.display())))?;
    if !out.status.success() {
        return Err(fail(format!(
            "`{} --query-gpu=compute_cap` failed ({}): {}",
            smi.display(),
            out.status,
            output_text(&out).trim()
        )));
    }
    let caps = crate::targets::parse_compute_caps(&String::from_utf8_lossy(&out.stdout))
        .map_err(|e| fail(format!("nvidia-smi answered oddly: {e}")))?;
    if caps.is_empty() {
        return Err(fail("nvidia-smi lists no GPU".into()));
    }
    Ok(caps)
}

fn output_text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A command line for messages and stamps.
pub fn show(words: &[OsString]) -> String {
    words
        .iter()
        .map(|w| w.to_string_lossy())
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_architecture_listings() {
        assert_eq!(
            numbers("sm_75\nsm_90\nsm_90a\nsm_100\nsm_80\n", "sm_"),
            [75, 80, 90, 100]
        );
        assert_eq!(numbers("compute_75\ncompute_121", "compute_"), [75, 121]);
        // The suffixed lines are a set of their own; family targets (`f`) are not among them.
        assert_eq!(
            specific_numbers("sm_75\nsm_90\nsm_90a\nsm_100a\nsm_100f\n", "sm_"),
            [90, 100]
        );
        assert_eq!(specific_numbers("compute_90\ncompute_90a", "compute_"), [90]);
        assert_eq!(specific_numbers("sm_75\nsm_90\n", "sm_"), [] as [u32; 0]);
        // nvcc 13.0's `--help`, which names them where `--list-gpu-code` does not.
        let help = "        Allowed values for this option:  'compute_100','compute_100a','compute_100f',\n\
                    'compute_90','compute_90a','lto_100','lto_100a','sm_100','sm_100a','sm_90','sm_90a'.";
        assert_eq!(specific_numbers(help, "sm_"), [90, 100]);
        assert_eq!(specific_numbers(help, "compute_"), [90, 100]);
    }

    #[test]
    fn reads_the_release() {
        let text = "nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 13.0, V13.0.88\nBuild cuda_13.0.r13.0/compiler.36424714_0";
        assert_eq!(release_of(text), (13, 0));
        assert_eq!(
            release_of("Cuda compilation tools, release 12.8, V12.8.93"),
            (12, 8)
        );
        assert_eq!(release_of("no version here"), (0, 0));
    }

    fn found(env: &Env) -> (Vec<String>, &'static str) {
        match locate(env).unwrap() {
            Location::Found { command, source } => (
                command
                    .iter()
                    .map(|w| w.to_string_lossy().into_owned())
                    .collect(),
                source,
            ),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn nvcc_is_split_as_a_shell_would() {
        let mut env = Env::default();
        env.set(
            env::NVCC,
            r#"ccache "/opt/my cuda/bin/nvcc" -ccbin 'g++ 12'"#,
        );
        assert_eq!(
            found(&env),
            (
                vec![
                    "ccache".into(),
                    "/opt/my cuda/bin/nvcc".into(),
                    "-ccbin".into(),
                    "g++ 12".into()
                ],
                "NVCC"
            )
        );
        env.set(env::NVCC, "  nvcc   -O3 ");
        assert_eq!(found(&env).0, ["nvcc", "-O3"]);
        env.set(env::NVCC, r#""/opt/my cuda/bin/nvcc"#);
        let Err(Error::Nvcc { message }) = locate(&env) else {
            panic!("an unclosed quote is an error")
        };
        assert!(message.contains("a quote is not closed"), "{message}");
    }

    #[test]
    fn nvcc_then_cuda_path_then_path() {
        let tmp = tempfile::Builder::new()
            .prefix("cuprum-build-locate-")
            .tempdir()
            .unwrap();
        let exe = format!("nvcc{}", std::env::consts::EXE_SUFFIX);
        let (root, on_path) = (tmp.path().join("cuda root"), tmp.path().join("on path"));
        for dir in [root.join("bin"), on_path.clone()] {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join(&exe), "").unwrap();
        }
        let mut env = Env::default();
        env.set(env::NVCC, "my-nvcc");
        env.set(env::CUDA_PATH, &root);
        env.set(env::PATH, &on_path);
        assert_eq!(found(&env), (vec!["my-nvcc".into()], "NVCC"));
        env.remove(env::NVCC);
        let in_root = root.join("bin").join(&exe).display().to_string();
        assert_eq!(found(&env), (vec![in_root], "CUDA_PATH"));
        env.set(env::CUDA_PATH, tmp.path().join("elsewhere"));
        let in_path = on_path.join(&exe).display().to_string();
        assert_eq!(found(&env), (vec![in_path], "PATH"));
        env.remove(env::CUDA_PATH);
        env.set(env::PATH, tmp.path().join("elsewhere"));
        assert!(matches!(locate(&env), Ok(Location::Missing(_))));
    }
}
