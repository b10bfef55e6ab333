//! The environment variables cuprum-build reads (CuPy's build variables, seed 000), read through
//! [`Env`] so that a builder can override them: tests run in parallel in one process, where
//! `std::env::set_var` would race.
//!
//! An unset, empty or whitespace-only variable means its default.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::PathBuf;

/// Which architectures to compile for (`;`-separated `arch=compute_XX,code=sm_XX` items, or
/// `current`); unset: [`crate::targets::default_list`] (SASS for sm_80, sm_90 and sm_100 where
/// nvcc has them, PTX for the oldest virtual architecture).
pub const GENERATE_CODE: &str = "CUPY_NVCC_GENERATE_CODE";
/// The nvcc command line, split as a POSIX shell would (`ccache nvcc`, `"/opt/my cuda/bin/nvcc"`).
pub const NVCC: &str = "NVCC";
/// The CUDA toolkit root: `$CUDA_PATH/bin/nvcc`.
pub const CUDA_PATH: &str = "CUDA_PATH";
/// How many nvcc processes run at once at most (default 4); under cargo, also no more than its
/// jobserver lends tokens for (`-j`).
pub const NUM_BUILD_JOBS: &str = "CUPY_NUM_BUILD_JOBS";
/// `nvcc --threads N` (default 2).
pub const NUM_NVCC_THREADS: &str = "CUPY_NUM_NVCC_THREADS";
/// Where `nvcc` and `nvidia-smi` are looked for last.
pub const PATH: &str = "PATH";
/// Set by cargo for build scripts: where the outputs go.
pub const OUT_DIR: &str = "OUT_DIR";
/// Where fat binaries are cached by content, shared by every profile and `OUT_DIR` (module
/// [`crate::cache`]); `off` turns the shared cache off. Default: `<target dir>/cuprum-fatbin`.
pub const FATBIN_CACHE: &str = "CUPRUM_FATBIN_CACHE";
/// The target directory when cargo's is moved (`--target-dir`); only used when `OUT_DIR` does not
/// show where the target directory is.
pub const CARGO_TARGET_DIR: &str = "CARGO_TARGET_DIR";
/// `1`: [`crate::Kernels::compile`] prints one summary line per build (as a `cargo:warning`).
/// Not a trigger of the build script ([`TRACKED`]): it changes what a run prints, never what it
/// builds, so setting it costs no rebuild; a run without it prints the same line to stdout
/// (the build script's `output` file), and the built program's records carry the facts
/// (`cuprum audit`).
pub const BUILD_VERBOSE: &str = "CUPRUM_BUILD_VERBOSE";
/// How fat binaries are compressed: `zstd` (the default: nvcc writes them uncompressed and
/// cuprum-build compresses each kernel's part into a zstd frame, which the runtime decompresses;
/// as small as `size` and faster to load), or nvcc's own `-compress-mode`: `size`, `balance` or
/// `speed` (larger, faster to load), `none`, or `default` (nvcc's own choice). nvcc's modes need
/// nvcc 12.8+; older ones get no flag.
pub const NVCC_COMPRESS: &str = "CUPRUM_NVCC_COMPRESS";
/// [`NVCC_COMPRESS`]'s value for parts compressed by cuprum-build.
pub const ZSTD: &str = "zstd";
/// Whether the units say which Rust line each statement's code comes from (`#line` directives)
/// and nvcc compiles them with `-lineinfo`, so that Nsight Compute, compute-sanitizer and
/// cuda-gdb show Rust lines (docs/debugging.md): `1` (also `on`, `true`, `yes`) or `0` (the
/// default; also `off`, `false`, `no`). NVRTC follows the unit: it compiles an instance with `-lineinfo`
/// when the embedded unit has directives.
pub const LINE_INFO: &str = "CUPRUM_LINEINFO";
/// The values [`NVCC_COMPRESS`] accepts; the first is the default.
pub const COMPRESS_MODES: &[&str] = &[ZSTD, "size", "balance", "speed", "none", "default"];

/// Every variable whose change must re-run the build script (`cargo:rerun-if-env-changed`).
/// `PATH` is one: installing nvcc onto it turns a JIT-only build into an ahead-of-time one.
/// `CUPRUM_BUILD_VERBOSE` is not (it changes what a run prints, not what it builds: setting it
/// must not rebuild the runtime), nor is `CUPRUM_FATBIN_CACHE` (it changes where fat binaries
/// are shared, never what they hold).
pub const TRACKED: &[&str] = &[
    GENERATE_CODE,
    NVCC,
    CUDA_PATH,
    NUM_BUILD_JOBS,
    NUM_NVCC_THREADS,
    PATH,
    NVCC_COMPRESS,
    LINE_INFO,
];

/// [`NUM_BUILD_JOBS`] when unset.
pub const DEFAULT_BUILD_JOBS: usize = 4;
/// [`NUM_NVCC_THREADS`] when unset.
pub const DEFAULT_NVCC_THREADS: usize = 2;
/// [`LINE_INFO`] when unset: off. Line info about doubles the fat binaries (nvcc puts the line
/// tables and the PTX text into each cubin: 629 KB against 1160 KB for the testsuite's
/// `elementwise_kernels.rs` at `arch=compute_90,code=[sm_90,compute_90]`; docs/debugging.md).
pub const DEFAULT_LINE_INFO: bool = false;

/// The process environment, with per-builder overrides on top.
#[derive(Debug, Clone, Default)]
pub struct Env {
    overrides: BTreeMap<String, Option<OsString>>,
}

impl Env {
    /// Sets `key` to `value` for this builder only.
    pub fn set(&mut self, key: &str, value: impl Into<OsString>) {
        self.overrides.insert(key.to_owned(), Some(value.into()));
    }

    /// Makes `key` unset for this builder only.
    pub fn remove(&mut self, key: &str) {
        self.overrides.insert(key.to_owned(), None);
    }

    /// The raw value; `None` when unset, empty or only whitespace.
    pub fn var_os(&self, key: &str) -> Option<OsString> {
        let value = match self.overrides.get(key) {
            Some(v) => v.clone(),
            None => std::env::var_os(key),
        }?;
        (!value.to_string_lossy().trim().is_empty()).then_some(value)
    }

    /// The value as text (lossy for non-UTF-8); `None` when unset, empty or only whitespace.
    pub fn var(&self, key: &str) -> Option<String> {
        self.var_os(key).map(|v| v.to_string_lossy().into_owned())
    }

    /// A count such as `CUPY_NUM_BUILD_JOBS`: a non-negative integer, `default` when unset.
    /// `0` means 1 (no parallelism), as in CuPy.
    pub fn count(&self, key: &str, default: usize) -> Result<usize, String> {
        match self.var(key) {
            None => Ok(default),
            Some(v) => v.trim().parse::<usize>().map(|n| n.max(1)).map_err(|_| {
                format!("{key}={v:?} is not a number: set it to a count such as {default}, or unset it for the default ({default})")
            }),
        }
    }

    /// The first `name` on `PATH` that is a file.
    pub fn find_program(&self, name: &str) -> Option<PathBuf> {
        let path = self.var_os(PATH)?;
        std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|p| p.is_file())
    }

    /// The value of `key` as a path, when set.
    pub fn path(&self, key: &str) -> Option<PathBuf> {
        self.var_os(key).map(PathBuf::from)
    }

    /// A switch such as `CUPRUM_LINEINFO`: `1`, `on`, `true`, `yes` or `0`, `off`, `false`, `no`
    /// (any case); `default` when unset.
    pub fn switch(&self, key: &str, default: bool) -> Result<bool, String> {
        let Some(v) = self.var(key) else { return Ok(default) };
        match v.trim().to_ascii_lowercase().as_str() {
            "1" | "on" | "true" | "yes" => Ok(true),
            "0" | "off" | "false" | "no" => Ok(false),
            _ => Err(format!(
                "{key}={v:?} is neither on nor off: set it to 1 (on) or 0 (off), or unset it for the default ({})",
                if default { 1 } else { 0 }
            )),
        }
    }

    /// Whether `key` has a (non-blank) value.
    pub fn is_set(&self, key: &str) -> bool {
        self.var_os(key).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_win_and_blank_means_unset() {
        let mut env = Env::default();
        env.set("CUPRUM_BUILD_TEST_X", "  ");
        assert_eq!(env.var("CUPRUM_BUILD_TEST_X"), None);
        env.set("CUPRUM_BUILD_TEST_X", "7");
        assert_eq!(env.count("CUPRUM_BUILD_TEST_X", 4), Ok(7));
        env.set("CUPRUM_BUILD_TEST_X", "0");
        assert_eq!(env.count("CUPRUM_BUILD_TEST_X", 4), Ok(1));
        env.remove("CUPRUM_BUILD_TEST_X");
        assert_eq!(env.count("CUPRUM_BUILD_TEST_X", 4), Ok(4));
        env.set("CUPRUM_BUILD_TEST_X", "many");
        let e = env.count("CUPRUM_BUILD_TEST_X", 4).unwrap_err();
        assert!(
            e.contains("CUPRUM_BUILD_TEST_X=\"many\" is not a number"),
            "{e}"
        );
        assert_eq!(env.switch("CUPRUM_BUILD_TEST_Y", true), Ok(true));
        env.set("CUPRUM_BUILD_TEST_Y", " Off ");
        assert_eq!(env.switch("CUPRUM_BUILD_TEST_Y", true), Ok(false));
        env.set("CUPRUM_BUILD_TEST_Y", "1");
        assert_eq!(env.switch("CUPRUM_BUILD_TEST_Y", false), Ok(true));
        env.set("CUPRUM_BUILD_TEST_Y", "maybe");
        let e = env.switch("CUPRUM_BUILD_TEST_Y", true).unwrap_err();
        assert!(e.contains("CUPRUM_BUILD_TEST_Y=\"maybe\" is neither on nor off"), "{e}");
    }
}
