//! The one place that reads cuprum's environment variables (CuPy's names and meanings, seed 000;
//! cuprum's own start with `CUPRUM_`).
//!
//! | variable | default | meaning |
//! | --- | --- | --- |
//! | `CUPY_GPU_MEMORY_LIMIT` | `0` (unlimited) | bytes the memory pool of each device may hold: an integer number of bytes (`1073741824`) or a percentage of the device's total memory (`90%`, `12.5%`); read when a device's pool is first used |
//! | `CUPY_CUDA_PER_THREAD_DEFAULT_STREAM` | `0` | `1`: the null stream of every device is the CUDA per-thread default stream instead of the legacy default stream; read once per process |
//! | `CUPY_CACHE_DIR` | `${HOME}/.cupy/kernel_cache` | directory of the on-disk kernel cache; read when the kernel cache is first used |
//! | `CUPY_CACHE_IN_MEMORY` | `0` | `1`: keep compiled kernels in memory only, write nothing to disk |
//! | `CUPY_CACHE_SAVE_CUDA_SOURCE` | `0` | `1`: save the CUDA source next to each new cache entry |
//! | `CUPRUM_CACHE_QUIET` | `0` | `1`: the kernel cache's warnings are not printed to stderr when no logger takes them (they still go to `log`, target `cuprum::cache`) |
//! | `CUPY_COMPILE_WITH_PTX` | `0` | `1`: NVRTC emits PTX (the driver finishes it) instead of CUBIN |
//! | `CUPY_CUDA_COMPILE_WITH_DEBUG` | `0` | `1`: compile with `--device-debug` and `--generate-line-info` |
//! | `CUPY_DUMP_CUDA_SOURCE_ON_ERROR` | `0` | `1`: a compile error carries the numbered CUDA source |
//! | `CUPY_TF32` | `0` | `1`: f32 (and complex64) matrix products on a GPU may use TF32 tensor cores (cuBLAS's `CUBLAS_COMPUTE_32F_FAST_TF32`: 10-bit mantissas in the products, f32 accumulation); `0`: full f32 precision; read once per process |
//! | `CUPRUM_DEVICE` | `cuda` | `cpu`: the current device of every thread is the CPU device (`Device::cpu()`, docs/cpu.md) until changed; `cuda`: CUDA device 0; read once per process |
//! | `CUDA_PATH` | unset | CUDA installation root: libnvrtc is looked for in its `lib64`, `lib` and `targets/*/lib` first; the toolkit's headers (given to NVRTC) and `libcudadevrt.a` are taken from it |
//! | `CUDA_HOME` | unset | CUDA installation root when `CUDA_PATH` is unset or holds no toolkit (the toolkit search, `nvrtc::toolkit`) |
//! | `CUPRUM_NCCL_PATH` | unset | libnccl for the collectives between GPUs (`nccl`): the library file or the folder holding `libnccl.so.2`, tried before `CUDA_PATH`'s folders and the loader's search; read at the first communicator |
//! | `NCCL_NVLS_ENABLE` | NCCL's (`1` where NVLink SHARP exists) | NCCL's own: `0` keeps NCCL off NVLink multicast; cuprum's tests and examples set it to `0` before their first communicator (docs/multi-gpu.md) |
//! | `CUDA_LAUNCH_BLOCKING` | `0` | the driver's own: `1` makes every launch wait for its kernel, so a fault is reported by the launch that caused it; cuprum then names that kernel as the one that faulted (`Error::KernelFault`); read once per process |
//!
//! Values are parsed strictly: anything else is an [`Error::InvalidEnv`] naming the variable, the
//! value and what is expected. An unset or empty variable means the default.

use std::sync::OnceLock;

use crate::error::{Error, Result};

/// `CUPY_GPU_MEMORY_LIMIT`: the memory pool's limit per device.
pub const GPU_MEMORY_LIMIT: &str = "CUPY_GPU_MEMORY_LIMIT";
/// `CUPY_CUDA_PER_THREAD_DEFAULT_STREAM`: use the per-thread default stream as the null stream.
pub const PER_THREAD_DEFAULT_STREAM: &str = "CUPY_CUDA_PER_THREAD_DEFAULT_STREAM";
/// `CUPY_CACHE_DIR`: the on-disk kernel cache's directory.
pub const CACHE_DIR: &str = "CUPY_CACHE_DIR";
/// `CUPY_CACHE_IN_MEMORY`: keep the kernel cache in memory only.
pub const CACHE_IN_MEMORY: &str = "CUPY_CACHE_IN_MEMORY";
/// `CUPY_CACHE_SAVE_CUDA_SOURCE`: save the `.cu` source next to new cache entries.
pub const CACHE_SAVE_CUDA_SOURCE: &str = "CUPY_CACHE_SAVE_CUDA_SOURCE";
/// `CUPRUM_CACHE_QUIET`: keep the kernel cache's warnings off stderr.
pub const CACHE_QUIET: &str = "CUPRUM_CACHE_QUIET";
/// `CUPY_COMPILE_WITH_PTX`: JIT to PTX instead of CUBIN.
pub const COMPILE_WITH_PTX: &str = "CUPY_COMPILE_WITH_PTX";
/// `CUPY_CUDA_COMPILE_WITH_DEBUG`: JIT with device debug information and line info.
pub const CUDA_COMPILE_WITH_DEBUG: &str = "CUPY_CUDA_COMPILE_WITH_DEBUG";
/// `CUPY_DUMP_CUDA_SOURCE_ON_ERROR`: put the numbered source into compile errors.
pub const DUMP_CUDA_SOURCE_ON_ERROR: &str = "CUPY_DUMP_CUDA_SOURCE_ON_ERROR";
/// `CUDA_PATH`: the CUDA installation root (where libnvrtc is looked for first).
pub const CUDA_PATH: &str = "CUDA_PATH";
/// `CUDA_HOME`: the CUDA installation root when `CUDA_PATH` is unset (for the toolkit's headers
/// and `libcudadevrt.a`).
pub const CUDA_HOME: &str = "CUDA_HOME";

/// `CUPY_TF32`: f32 matrix products may use TF32 tensor cores.
pub const TF32: &str = "CUPY_TF32";

/// `CUPY_TF32`, read once per process (the first matrix product decides).
pub fn tf32() -> Result<bool> {
    static CACHE: OnceLock<Result<bool, String>> = OnceLock::new();
    let cached = CACHE.get_or_init(|| flag(TF32).map_err(|_| var(TF32).unwrap_or_default()));
    match cached {
        Ok(b) => Ok(*b),
        Err(v) => Err(Error::InvalidEnv { var: TF32, value: v.clone(), expected: "0 or 1" }),
    }
}

/// `CUDA_LAUNCH_BLOCKING`: the driver's; `1` makes launches synchronous.
pub const CUDA_LAUNCH_BLOCKING: &str = "CUDA_LAUNCH_BLOCKING";

/// `CUPRUM_NCCL_PATH`: the libnccl file, or the folder holding `libnccl.so.2` (`nccl`).
pub const NCCL_PATH: &str = "CUPRUM_NCCL_PATH";

/// `NCCL_NVLS_ENABLE`: NCCL's switch for NVLink multicast (NVLS); cuprum's tests and examples
/// set it to `0`.
pub const NCCL_NVLS_ENABLE: &str = "NCCL_NVLS_ENABLE";

/// `CUPRUM_DEVICE`: the process's default device (`cpu` or `cuda`).
pub const DEVICE: &str = "CUPRUM_DEVICE";

/// The device a thread uses until it picks one (`CUPRUM_DEVICE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DefaultDevice {
    /// CUDA device 0 (the default).
    Cuda,
    /// The CPU device.
    Cpu,
}

/// `CUPRUM_DEVICE`, read once per process: `cpu`, `cuda` (also `gpu`; any case), unset or empty
/// meaning `cuda`.
pub fn default_device() -> Result<DefaultDevice> {
    static CACHE: OnceLock<Result<DefaultDevice, String>> = OnceLock::new();
    let cached = CACHE.get_or_init(|| match var(DEVICE) {
        None => Ok(DefaultDevice::Cuda),
        Some(v) => parse_device(&v).ok_or(v),
    });
    match cached {
        Ok(d) => Ok(*d),
        Err(v) => Err(Error::InvalidEnv {
            var: DEVICE,
            value: v.clone(),
            expected: "cpu or cuda",
        }),
    }
}

/// A `CUPRUM_DEVICE` value.
pub fn parse_device(value: &str) -> Option<DefaultDevice> {
    match value.trim().to_ascii_lowercase().as_str() {
        "cpu" => Some(DefaultDevice::Cpu),
        "cuda" | "gpu" => Some(DefaultDevice::Cuda),
        _ => None,
    }
}

/// The value of a variable, `None` when unset, empty or only whitespace (= its default).
pub fn var(name: &str) -> Option<String> {
    match std::env::var(name) {
        Ok(v) if !v.trim().is_empty() => Some(v),
        _ => None,
    }
}

/// Parses a `0`/`1` flag value (surrounding whitespace allowed).
pub fn parse_flag(name: &'static str, value: &str) -> Result<bool> {
    match value.trim() {
        "0" => Ok(false),
        "1" => Ok(true),
        _ => Err(Error::InvalidEnv {
            var: name,
            value: value.to_string(),
            expected: "0 or 1",
        }),
    }
}

/// Reads a `0`/`1` flag now; unset or empty means `false`.
pub fn flag(name: &'static str) -> Result<bool> {
    match var(name) {
        None => Ok(false),
        Some(v) => parse_flag(name, &v),
    }
}

/// A memory limit as written in `CUPY_GPU_MEMORY_LIMIT`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum MemoryLimit {
    /// No limit (`0` or unset).
    Unlimited,
    /// An absolute number of bytes.
    Bytes(usize),
    /// A fraction (0 < f <= 1) of the device's total memory, written as a percentage.
    Fraction(f64),
}

impl MemoryLimit {
    /// The limit in bytes for a device with `total_memory` bytes; `None` when unlimited.
    pub fn resolve(self, total_memory: usize) -> Option<usize> {
        match self {
            MemoryLimit::Unlimited => None,
            MemoryLimit::Bytes(b) => Some(b),
            // Truncates like CuPy's `int(fraction * total)`.
            MemoryLimit::Fraction(f) => Some((f * total_memory as f64) as usize),
        }
    }
}

const LIMIT_EXPECTED: &str = "a number of bytes such as `1073741824`, or a percentage of the \
                              device's memory such as `90%` (0 means unlimited)";

/// Parses a `CUPY_GPU_MEMORY_LIMIT` value: decimal digits (bytes; `0` = unlimited) or a decimal
/// number followed by `%` (greater than 0, at most 100). Whitespace around the value is allowed;
/// signs, units, exponents and anything else are errors.
pub fn parse_memory_limit(value: &str) -> Result<MemoryLimit> {
    let bad = || Error::InvalidEnv {
        var: GPU_MEMORY_LIMIT,
        value: value.to_string(),
        expected: LIMIT_EXPECTED,
    };
    let v = value.trim();
    if v.is_empty() {
        return Ok(MemoryLimit::Unlimited);
    }
    if let Some(p) = v.strip_suffix('%') {
        let p = p.trim_end();
        // digits with at most one '.', at least one digit
        let digits = p.chars().filter(|c| c.is_ascii_digit()).count();
        let dots = p.chars().filter(|&c| c == '.').count();
        if digits == 0 || dots > 1 || digits + dots != p.len() {
            return Err(bad());
        }
        let pct: f64 = p.parse().map_err(|_| bad())?;
        if !(pct > 0.0 && pct <= 100.0) {
            return Err(bad());
        }
        return Ok(MemoryLimit::Fraction(pct / 100.0));
    }
    if !v.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let bytes: usize = v.parse().map_err(|_| bad())?;
    Ok(if bytes == 0 {
        MemoryLimit::Unlimited
    } else {
        MemoryLimit::Bytes(bytes)
    })
}

/// Reads `CUPY_GPU_MEMORY_LIMIT` now.
pub fn gpu_memory_limit() -> Result<MemoryLimit> {
    match var(GPU_MEMORY_LIMIT) {
        None => Ok(MemoryLimit::Unlimited),
        Some(v) => parse_memory_limit(&v),
    }
}

/// `CUPY_CUDA_PER_THREAD_DEFAULT_STREAM`, read once per process (the first call decides).
pub fn per_thread_default_stream() -> Result<bool> {
    static CACHE: OnceLock<Result<bool, String>> = OnceLock::new();
    let cached = CACHE.get_or_init(|| match var(PER_THREAD_DEFAULT_STREAM) {
        None => Ok(false),
        Some(v) => parse_flag(PER_THREAD_DEFAULT_STREAM, &v).map_err(|_| v),
    });
    match cached {
        Ok(b) => Ok(*b),
        Err(v) => Err(Error::InvalidEnv {
            var: PER_THREAD_DEFAULT_STREAM,
            value: v.clone(),
            expected: "0 or 1",
        }),
    }
}

/// Whether `CUDA_LAUNCH_BLOCKING=1`, read once per process. The driver reads the variable, not
/// cuprum: any other value is the driver's business, so nothing here is an error.
pub fn launch_blocking() -> bool {
    static CACHE: OnceLock<bool> = OnceLock::new();
    *CACHE.get_or_init(|| var(CUDA_LAUNCH_BLOCKING).is_some_and(|v| v.trim() == "1"))
}

/// `CUPY_CACHE_DIR`, else `${HOME}/.cupy/kernel_cache`; `None` when neither is set (then the
/// kernel cache stays in memory). Read now.
pub fn cache_dir() -> Option<std::path::PathBuf> {
    if let Some(dir) = var(CACHE_DIR) {
        return Some(std::path::PathBuf::from(dir));
    }
    let home = var("HOME").or_else(|| var("USERPROFILE"))?;
    Some(std::path::Path::new(&home).join(".cupy").join("kernel_cache"))
}

/// `CUDA_PATH` as a path, `None` when unset. Read now.
pub fn cuda_path() -> Option<std::path::PathBuf> {
    var(CUDA_PATH).map(std::path::PathBuf::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_limit_bytes() {
        assert_eq!(
            parse_memory_limit("1073741824").unwrap(),
            MemoryLimit::Bytes(1 << 30)
        );
        assert_eq!(
            parse_memory_limit(" 4096 ").unwrap(),
            MemoryLimit::Bytes(4096)
        );
        assert_eq!(parse_memory_limit("0").unwrap(), MemoryLimit::Unlimited);
        assert_eq!(parse_memory_limit("").unwrap(), MemoryLimit::Unlimited);
    }

    #[test]
    fn memory_limit_percent() {
        assert_eq!(
            parse_memory_limit("90%").unwrap(),
            MemoryLimit::Fraction(0.9)
        );
        assert_eq!(
            parse_memory_limit("12.5%").unwrap(),
            MemoryLimit::Fraction(0.125)
        );
        assert_eq!(
            parse_memory_limit("100%").unwrap(),
            MemoryLimit::Fraction(1.0)
        );
        assert_eq!(
            parse_memory_limit("50%").unwrap().resolve(2 << 30),
            Some(1 << 30)
        );
        assert_eq!(MemoryLimit::Unlimited.resolve(100), None);
        assert_eq!(MemoryLimit::Bytes(7).resolve(100), Some(7));
    }

    #[test]
    fn memory_limit_rejects_garbage() {
        let bad_values = "-1 +5 1e9 1GB 0x100 abc % 0% 101% -5% 5%% 1.2.3% .% 1.5 nan% inf% \
                          99999999999999999999999999";
        for bad in bad_values.split_whitespace().chain(["1 GiB", "5 %x"]) {
            let e = parse_memory_limit(bad).expect_err(bad);
            let m = e.to_string();
            assert!(
                m.contains(GPU_MEMORY_LIMIT) && m.contains("90%"),
                "{bad}: {m}"
            );
        }
    }

    #[test]
    fn flags_are_strict() {
        assert!(!parse_flag("X", "0").unwrap());
        assert!(parse_flag("X", " 1 ").unwrap());
        for bad in ["2", "true", "yes", "-1", "01x"] {
            assert!(parse_flag("X", bad).is_err(), "{bad}");
        }
    }
}
