//! The CUDA tools the build runs: finding nvcc (`NVCC`, `$CUDA_PATH/bin/nvcc`, `nvcc` on `PATH`, in
//! that order), asking it which architectures it supports, running it, and asking `nvidia-smi`
//! which GPUs the build machine has (for `CUPY_NVCC_GENERATE_CODE=current`).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::Error;
use crate::env::{self, Env};
use crate::targets::Gencode;

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
}

/// The result of looking for nvcc.
#[derive(Debug)]
pub enum Lookup {
    Found(Nvcc),
    /// None found; the places looked at, for the message.
    Missing(Vec<String>),
}

/// Finds nvcc. `NVCC` set to something that does not run is an error (the user asked for it);
/// nothing found at all is `Lookup::Missing`.
pub fn find(env: &Env) -> Result<Lookup, Error> {
    if let Some(line) = env.var(env::NVCC) {
        let command = line.split_whitespace().map(OsString::from).collect();
        return probe(command, "NVCC").map(Lookup::Found);
    }
    let exe = format!("nvcc{}", std::env::consts::EXE_SUFFIX);
    let mut looked = Vec::new();
    if let Some(root) = env.path(env::CUDA_PATH) {
        let path = root.join("bin").join(&exe);
        if path.is_file() {
            return probe(vec![path.into()], "CUDA_PATH").map(Lookup::Found);
        }
        looked.push(format!("{} (CUDA_PATH)", path.display()));
    } else {
        looked.push("CUDA_PATH (unset)".into());
    }
    match env.find_program(&exe) {
        Some(path) => probe(vec![path.into()], "PATH").map(Lookup::Found),
        None => {
            looked.push(format!("{exe} on PATH"));
            Ok(Lookup::Missing(looked))
        }
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
    let sass = numbers(&run("--list-gpu-code")?, "sm_");
    let virtual_archs = numbers(&run("--list-gpu-arch")?, "compute_");
    if sass.is_empty() || virtual_archs.is_empty() {
        return Err(fail(
            "`--list-gpu-code` / `--list-gpu-arch` listed no architecture".into(),
        ));
    }
    Ok(Nvcc {
        command,
        source,
        version,
        sass,
        virtual_archs,
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

/// One nvcc run: a unit's `.cu` into a fat binary.
#[derive(Debug)]
pub struct Job<'a> {
    pub cu: &'a Path,
    pub output: &'a Path,
    pub include: &'a Path,
    pub gencodes: &'a [Gencode],
    pub threads: usize,
    pub fast_math: bool,
    /// `-compress-mode` (one of `env::COMPRESS_MODES`; `default` passes none, `zstd` passes `none`).
    pub compress: &'a str,
}

impl Nvcc {
    /// The CUDA release of this nvcc (`release 13.0` in `--version`), `(0, 0)` if not found.
    pub fn release(&self) -> (u32, u32) {
        release_of(&self.version)
    }

    /// The full command line of `job`: program first.
    pub fn command_line(&self, job: &Job<'_>) -> Vec<OsString> {
        let mut args = self.command.clone();
        args.extend(["-fatbin", "-std=c++17", "--threads"].map(OsString::from));
        args.push(job.threads.to_string().into());
        // A generated unit keeps Rust's float semantics (no FMA contraction) unless fast-math.
        args.extend(
            cuprum_abi::unit_options(cuprum_abi::UNIT_HEADER, job.fast_math)
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
        let out = Command::new(&line[0])
            .args(&line[1..])
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
}
