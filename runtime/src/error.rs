//! The one error type of the runtime.
//!
//! Every failure a user can hit (no driver, no GPU, a bad environment variable, a shape or dtype
//! mismatch, out of memory, and the JIT's compile and cache errors) is a variant of [`Error`], and
//! its message says what went wrong and what to do about it. Nothing in the runtime panics for
//! these conditions.

use cudarc::driver::DriverError;
use cudarc::driver::sys::CUresult;

use crate::element::ElemType;

/// The runtime's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in the runtime.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The CUDA driver library (`libcuda.so` / `nvcuda.dll`) could not be loaded or initialised.
    #[error(
        "the CUDA driver is not available: {detail}. Install the NVIDIA driver, make sure \
         `libcuda.so` (Windows: `nvcuda.dll`) is on the loader path (e.g. LD_LIBRARY_PATH), and \
         run on a machine with an NVIDIA GPU"
    )]
    NoDriver { detail: String },

    /// The driver works but reports no device (or `CUDA_VISIBLE_DEVICES` hides them all).
    #[error(
        "no CUDA device is available: the driver reports 0 devices. Check `nvidia-smi` and \
         `CUDA_VISIBLE_DEVICES`"
    )]
    NoDevice,

    /// A device ordinal past the number of devices.
    #[error(
        "device {ordinal} does not exist: this machine has {count} CUDA device(s), ordinals 0..{count}"
    )]
    InvalidDevice { ordinal: usize, count: usize },

    /// A CUDA driver call failed.
    #[error("CUDA driver call `{call}` failed: {source}")]
    Driver {
        call: &'static str,
        #[source]
        source: DriverError,
    },

    /// An allocation would exceed the pool's limit, or the device itself is out of memory even
    /// after the pool released its cached blocks.
    #[error(
        "out of memory on device {device}: requested {requested} bytes with {used} bytes in use \
         and {held} bytes held by the pool ({}). Drop arrays you no longer need, call \
         `MemoryPool::free_all_blocks()`, or raise the limit (`CUPY_GPU_MEMORY_LIMIT` or \
         `MemoryPool::set_limit`)",
        limit_text(*.limit)
    )]
    OutOfMemory {
        device: usize,
        requested: usize,
        /// The pool's limit in bytes; `None` when unlimited (then the device itself is full).
        limit: Option<usize>,
        /// Bytes in arrays that are alive.
        used: usize,
        /// Bytes held by the pool (in use plus cached free blocks).
        held: usize,
    },

    /// Two shapes that must be equal are not.
    #[error("shape mismatch in {context}: expected {expected:?}, found {found:?}")]
    ShapeMismatch {
        context: String,
        expected: Vec<usize>,
        found: Vec<usize>,
    },

    /// Shapes that cannot be broadcast together (NumPy rules: trailing axes must be equal or 1).
    #[error(
        "shapes {} cannot be broadcast together: aligned from the last axis, each extent must be \
         equal or 1",
        shapes_text(.shapes)
    )]
    Broadcast { shapes: Vec<Vec<usize>> },

    /// A shape argument that is invalid in itself (wrong element count, two `-1`, overflow, ...).
    #[error("invalid shape for {op}: {detail}")]
    InvalidShape { op: &'static str, detail: String },

    /// An axis out of range for the array's dimensions.
    #[error("axis {axis} is out of range for an array with {ndim} dimension(s)")]
    InvalidAxis { axis: isize, ndim: usize },

    /// A slice or an index out of range, or a zero step.
    #[error("invalid slice or index: {detail}")]
    InvalidSlice { detail: String },

    /// A view operation that the array's memory layout does not allow without copying.
    #[error("{op} needs a copy: {detail}. Call `.copy()` first to get a C-contiguous array")]
    NeedsCopy { op: &'static str, detail: String },

    /// An element type (a dtype or a `#[device]` struct) that does not match the expected one;
    /// both print as their Rust names.
    #[error("dtype mismatch in {context}: expected {expected}, found {found}")]
    DtypeMismatch {
        context: String,
        expected: ElemType,
        found: ElemType,
    },

    /// Arrays (or an array and a stream) that live on different devices.
    #[error(
        "device mismatch in {context}: expected device {expected}, found device {found}. Move \
         the data to one device first"
    )]
    DeviceMismatch {
        context: String,
        expected: usize,
        found: usize,
    },

    /// An environment variable with a value cuprum cannot parse.
    #[error("environment variable {var}={value:?} is invalid: expected {expected}")]
    InvalidEnv {
        var: &'static str,
        value: String,
        expected: &'static str,
    },

    /// A reduction that cannot run as asked (an empty reduction without an identity, a bad
    /// argument list): what is wrong and what to write instead.
    #[error("reduction `{kernel}`: {detail}")]
    Reduction { kernel: String, detail: String },

    /// Something cuprum does not support (yet).
    #[error("unsupported: {what}")]
    Unsupported { what: String },
    // JIT variants below (NoNvrtc, Compile, Launch, Cache, ...): added by the JIT modules.
    /// libnvrtc (the runtime compiler) could not be loaded.
    #[error(
        "NVRTC (libnvrtc) is not available: {detail}. Install the CUDA toolkit or the \
         `nvidia-cuda-nvrtc` wheel (`pip install nvidia-cuda-nvrtc`), then put the folder holding \
         libnvrtc.so on LD_LIBRARY_PATH or set CUDA_PATH to the CUDA root (cuprum looks in \
         $CUDA_PATH/lib64 and $CUDA_PATH/lib)"
    )]
    NoNvrtc { detail: String },

    /// An NVRTC call other than the compilation itself failed.
    #[error("NVRTC call `{call}` failed: {detail}")]
    Nvrtc { call: &'static str, detail: String },

    /// NVRTC rejected the source: the log, and the numbered source when
    /// `CUPY_DUMP_CUDA_SOURCE_ON_ERROR=1`.
    #[error("{}", compile_text(.name, .options, .log, .numbered_source.as_deref()))]
    Compile {
        /// The program's name (a kernel name or `RawModule`).
        name: String,
        /// The options NVRTC was given.
        options: Vec<String>,
        /// NVRTC's log.
        log: String,
        /// The source with line numbers, when `CUPY_DUMP_CUDA_SOURCE_ON_ERROR=1`.
        numbered_source: Option<String>,
    },

    /// This NVRTC cannot generate code for the device.
    #[error(
        "NVRTC {nvrtc_version} cannot compile for {arch}: it supports {supported}. Install a CUDA \
         toolkit (or nvidia-cuda-nvrtc wheel) that supports this GPU"
    )]
    UnsupportedArch {
        arch: String,
        nvrtc_version: String,
        supported: String,
    },

    /// A cubin, PTX or fatbin file that cannot be read.
    #[error("cannot read the CUDA module file {}: {source}", .path.display())]
    ModuleFile {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// A module image that is malformed or that the driver refused (not a cubin/PTX/fatbin, or
    /// built for another GPU).
    #[error(
        "cannot load {what}: {detail}. A cubin must match this GPU's architecture and PTX must not \
         be newer than the driver: compile for this GPU, or ship PTX or a fatbin"
    )]
    ModuleLoad { what: String, detail: String },

    /// No kernel of that name in a module.
    #[error("no kernel named `{name}` in the module: {hint}")]
    FunctionNotFound { name: String, hint: String },

    /// No `__device__`/`__constant__` symbol of that name in a module, or one of another size.
    #[error("module global `{name}`: {detail}")]
    Global { name: String, detail: String },

    /// A launch configuration the device or the kernel cannot run (nothing was launched).
    #[error("cannot launch kernel `{kernel}`: {detail}")]
    InvalidLaunch { kernel: String, detail: String },

    /// A kernel definition from text (`ElementwiseKernel::new`) that is malformed: a parameter
    /// list, a name or an option.
    #[error("invalid definition of kernel `{kernel}`: {detail}")]
    KernelDefinition { kernel: String, detail: String },

    /// A kernel indexed out of range (docs/semantics.md, row 18). The access was skipped (a read
    /// gave `T::default()`, a write or atomic did nothing), so outputs of the work since the
    /// previous synchronisation may be wrong; the device stays usable. Reported by the first
    /// synchronising call on the device after the kernel ran; only the first violation is kept.
    #[error(
        "index out of bounds in `{kernel}`: the len is {len} but the index is {index} (block \
         ({}, {}, {}), thread ({}, {}, {})). The access was skipped, so results since the last \
         synchronisation may be wrong; fix the index or its bound in `{kernel}` (`#[device]` \
         functions report their own name). Only the first out-of-range index is reported",
        .block[0], .block[1], .block[2], .thread[0], .thread[1], .thread[2]
    )]
    IndexOutOfBounds {
        /// The Rust function (kernel or `#[device]` function) whose code holds the access.
        kernel: String,
        /// The index (negative for a signed index type).
        index: i128,
        /// The length indexed; for a view's multi-index, the extent of the axis out of range.
        len: u64,
        /// `block_idx()` and `thread_idx()` of the thread that made the access.
        block: [u32; 3],
        thread: [u32; 3],
    },

    /// More dynamic shared memory than the kernel currently allows (nothing was launched).
    #[error(
        "cannot launch kernel `{kernel}`: it asks for {requested} bytes of dynamic shared memory \
         but may use at most {limit} (attribute max_dynamic_shared_size_bytes). Raise it with \
         `set_max_dynamic_shared_size_bytes` (this device allows {optin} bytes of shared memory \
         per block in total, of which the kernel's static shared memory takes {static_bytes})"
    )]
    SharedMemory {
        kernel: String,
        requested: u32,
        limit: u32,
        optin: u32,
        static_bytes: u32,
    },
}

fn compile_text(name: &str, options: &[String], log: &str, numbered: Option<&str>) -> String {
    let mut t = format!(
        "CUDA compilation of `{name}` failed (NVRTC options: {}):\n{}",
        options.join(" "),
        log.trim_end()
    );
    match numbered {
        Some(src) => {
            t.push_str("\n--- CUDA source ---\n");
            t.push_str(src.trim_end());
        }
        None => t.push_str(
            "\n(set CUPY_DUMP_CUDA_SOURCE_ON_ERROR=1 to see the numbered source in this error)",
        ),
    }
    t
}

fn limit_text(limit: Option<usize>) -> String {
    match limit {
        Some(l) => format!("limit {l} bytes"),
        None => "no pool limit; the device itself is full".to_string(),
    }
}

fn shapes_text(shapes: &[Vec<usize>]) -> String {
    let parts: Vec<String> = shapes.iter().map(|s| format!("{s:?}")).collect();
    parts.join(", ")
}

impl Error {
    /// Wraps a failed driver call, mapping the conditions that have their own variant
    /// (no device) to it.
    pub fn driver(call: &'static str, source: DriverError) -> Error {
        match source.0 {
            CUresult::CUDA_ERROR_NO_DEVICE => Error::NoDevice,
            _ => Error::Driver { call, source },
        }
    }

    /// A closure for `map_err`: `.map_err(Error::driver_fn("cuMemAlloc"))`.
    pub fn driver_fn(call: &'static str) -> impl FnOnce(DriverError) -> Error {
        move |e| Error::driver(call, e)
    }

    /// True when the error means "no usable GPU here" (no driver or no device): tests and tools
    /// use it to skip GPU work cleanly.
    pub fn is_no_gpu(&self) -> bool {
        matches!(self, Error::NoDriver { .. } | Error::NoDevice)
    }

    /// True for an out-of-memory error.
    pub fn is_out_of_memory(&self) -> bool {
        matches!(self, Error::OutOfMemory { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_say_what_to_do() {
        let e = Error::NoDriver {
            detail: "libcuda.so not found".into(),
        };
        let m = e.to_string();
        assert!(
            m.contains("libcuda.so not found") && m.contains("LD_LIBRARY_PATH"),
            "{m}"
        );
        assert!(e.is_no_gpu());

        let e = Error::OutOfMemory {
            device: 0,
            requested: 1024,
            limit: Some(512),
            used: 0,
            held: 0,
        };
        let m = e.to_string();
        assert!(
            m.contains("limit 512 bytes") && m.contains("free_all_blocks"),
            "{m}"
        );
        assert!(e.is_out_of_memory());

        let e = Error::Broadcast {
            shapes: vec![vec![2, 3], vec![4]],
        };
        assert!(e.to_string().contains("[2, 3], [4]"), "{e}");

        let e = Error::NeedsCopy {
            op: "reshape",
            detail: "x".into(),
        };
        assert!(e.to_string().contains(".copy()"));
    }
}
