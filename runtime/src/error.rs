//! The one error type of the runtime.
//!
//! Every failure a user can hit (no driver, no GPU, a bad environment variable, a shape or dtype
//! mismatch, out of memory, and the JIT's compile and cache errors) is a variant of [`Error`], and
//! its message says what went wrong and what to do about it. Nothing in the runtime panics for
//! these conditions.
//!
//! Driver results become errors here: [`Error::driver`] for a call with no device at hand, and
//! `Device::driver_error` (which goes through [`Error::driver`] after recording a device's fault,
//! `fault.rs`) for everything that runs on a device. A *sticky* result ([`sticky_fault`]: an
//! illegal address, a trap, ...) loses the device's CUDA context: the first is
//! [`Error::KernelFault`], every later call on the device [`Error::ContextLost`].

use cudarc::driver::DriverError;
use cudarc::driver::sys::CUresult;

use crate::elem_type::ElemType;

/// The runtime's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in the runtime.
///
/// `Debug` prints the message, as `Display` does (and as `anyhow::Error` does): a `main` that
/// returns `Result<(), Error>` and an `unwrap()` show what went wrong and what to do, not the
/// variant's fields. The fields stay reachable by matching on the variant.
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The CUDA driver library (`libcuda.so` / `nvcuda.dll`) could not be loaded or initialised.
    #[error(
        "the CUDA driver is not available: {detail}. Install the NVIDIA driver, make sure \
         `libcuda.so` (Windows: `nvcuda.dll`) is on the loader path (e.g. LD_LIBRARY_PATH), and \
         run on a machine with an NVIDIA GPU; or use the CPU device (`Device::cpu()`, or \
         CUPRUM_DEVICE=cpu for the whole program; docs/cpu.md says what runs there)"
    )]
    NoDriver {
        /// Why loading or initialising the driver failed.
        detail: String,
    },

    /// The driver works but reports no device (or `CUDA_VISIBLE_DEVICES` hides them all).
    #[error(
        "no CUDA device is available: the driver reports 0 devices. Check `nvidia-smi` and \
         `CUDA_VISIBLE_DEVICES`; or use the CPU device (`Device::cpu()`, or CUPRUM_DEVICE=cpu \
         for the whole program; docs/cpu.md says what runs there)"
    )]
    NoDevice,

    /// A device ordinal past the number of devices.
    #[error(
        "device {ordinal} does not exist: this machine has {count} CUDA device(s), ordinals 0..{count}"
    )]
    InvalidDevice {
        /// The ordinal asked for.
        ordinal: usize,
        /// How many CUDA devices there are.
        count: usize,
    },

    /// A CUDA driver call failed.
    #[error("CUDA driver call `{call}` failed: {source}")]
    Driver {
        /// The driver function (`cuMemAlloc_v2`, ...).
        call: &'static str,
        /// The driver's error.
        #[source]
        source: DriverError,
    },

    /// A kernel faulted (an illegal address, a trap, a failed device-side assert, ...): the first
    /// report of a fault that lost the device's CUDA context. Every later call on the device
    /// returns [`Error::ContextLost`]; only a new process can use the device again.
    #[error("{}", kernel_fault_text(.fault))]
    KernelFault {
        /// What the driver reported and the kernel launched last.
        fault: Fault,
    },

    /// The device's CUDA context was lost to an earlier fault (`original`, first reported as
    /// [`Error::KernelFault`]): nothing can run on the device until the process restarts.
    #[error("{}", context_lost_text(.original))]
    ContextLost {
        /// The fault that lost the context.
        original: Fault,
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
        /// The device's ordinal.
        device: usize,
        /// The allocation's size in bytes.
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
        /// The operation that compared them.
        context: String,
        /// The shape it needs.
        expected: Vec<usize>,
        /// The shape it got.
        found: Vec<usize>,
    },

    /// Shapes that cannot be broadcast together (NumPy rules: trailing axes must be equal or 1).
    #[error(
        "shapes {} cannot be broadcast together: aligned from the last axis, each extent must be \
         equal or 1",
        shapes_text(.shapes)
    )]
    Broadcast {
        /// The operands' shapes.
        shapes: Vec<Vec<usize>>,
    },

    /// A shape argument that is invalid in itself (wrong element count, two `-1`, overflow, ...).
    #[error("invalid shape for {op}: {detail}")]
    InvalidShape {
        /// The operation (`reshape`, ...).
        op: &'static str,
        /// What is wrong with the shape.
        detail: String,
    },

    /// An axis out of range for the array's dimensions.
    #[error("axis {axis} is out of range for an array with {ndim} dimension(s)")]
    InvalidAxis {
        /// The axis asked for (negative counts from the end).
        axis: isize,
        /// The array's number of dimensions.
        ndim: usize,
    },

    /// A slice or an index out of range, or a zero step.
    #[error("invalid slice or index: {detail}")]
    InvalidSlice {
        /// Which index or slice, and the bounds it must fit.
        detail: String,
    },

    /// A view operation that the array's memory layout does not allow without copying.
    #[error("{op} needs a copy: {detail}. Call `.copy()` first to get a C-contiguous array")]
    NeedsCopy {
        /// The view operation (`reshape`, `view`, ...).
        op: &'static str,
        /// Why the layout does not allow it.
        detail: String,
    },

    /// An element type (a dtype or a `#[device]` struct) that does not match the expected one;
    /// both print as their Rust names.
    #[error("dtype mismatch in {context}: expected {expected}, found {found}")]
    DtypeMismatch {
        /// The operation that compared them.
        context: String,
        /// The element type it needs.
        expected: ElemType,
        /// The element type it got.
        found: ElemType,
    },

    /// Arrays (or an array and a stream) that live on different devices.
    #[error(
        "device mismatch in {context}: expected device {expected}, found device {found}. Move \
         the data to one device first"
    )]
    DeviceMismatch {
        /// The operation that compared them.
        context: String,
        /// The device it runs on.
        expected: usize,
        /// The device of the offending operand.
        found: usize,
    },

    /// An environment variable with a value cuprum cannot parse.
    #[error("environment variable {var}={value:?} is invalid: expected {expected}")]
    InvalidEnv {
        /// The variable's name.
        var: &'static str,
        /// Its value.
        value: String,
        /// What a valid value looks like.
        expected: &'static str,
    },

    /// A reduction that cannot run as asked (an empty reduction without an identity, a bad
    /// argument list): what is wrong and what to write instead.
    #[error("reduction `{kernel}`: {detail}")]
    Reduction {
        /// The reduction's name.
        kernel: String,
        /// What is wrong and what to write instead.
        detail: String,
    },

    /// An argument whose values an operation cannot take (a negative value to `bincount`, an
    /// empty or non-finite range to `histogram`): what is wrong and what to do.
    #[error("invalid argument to {op}: {detail}")]
    InvalidValue {
        /// The operation (`bincount`, ...).
        op: &'static str,
        /// What is wrong and what to do.
        detail: String,
    },

    /// Something cuprum does not support (yet).
    #[error("unsupported: {what}")]
    Unsupported {
        /// What was asked for.
        what: String,
    },
    // JIT variants below (NoNvrtc, Compile, Launch, Cache, ...): added by the JIT modules.
    /// libnvrtc (the runtime compiler) could not be loaded.
    #[error(
        "NVRTC (libnvrtc) is not available: {detail}. Install the CUDA toolkit or the \
         `nvidia-cuda-nvrtc` wheel (`pip install nvidia-cuda-nvrtc`), then put the folder holding \
         libnvrtc.so on LD_LIBRARY_PATH or set CUDA_PATH to the CUDA root (cuprum looks in \
         $CUDA_PATH/lib64 and $CUDA_PATH/lib)"
    )]
    NoNvrtc {
        /// Why loading libnvrtc failed.
        detail: String,
    },

    /// libcublas (for matrix products on a GPU) could not be loaded.
    #[error(
        "cuBLAS (libcublas, with libcublasLt) is not available: {detail}. Matrix products on a GPU \
         call cuBLAS: install the CUDA toolkit's cuBLAS or the `nvidia-cublas-cu13` wheel (`pip \
         install nvidia-cublas-cu13`), then put the folder holding libcublas.so.13 on \
         LD_LIBRARY_PATH or set CUDA_PATH to the CUDA root (cuprum looks in $CUDA_PATH/lib64 and \
         $CUDA_PATH/lib); or compute on the CPU device"
    )]
    NoCublas {
        /// Why loading libcublas failed.
        detail: String,
    },

    /// libnccl (the collectives between GPUs, `nccl`) could not be loaded.
    #[error(
        "NCCL (libnccl.so.2) is not available: {detail}. The collectives between GPUs call NCCL: \
         install it (`pip install nvidia-nccl-cu13`, or the `libnccl2` package of NVIDIA's apt/dnf \
         repository), then put the folder holding libnccl.so.2 on LD_LIBRARY_PATH, or set \
         CUPRUM_NCCL_PATH to the library file or its folder (docs/multi-gpu.md)"
    )]
    NoNccl {
        /// Why loading libnccl failed: the places tried.
        detail: String,
    },

    /// An NCCL call failed.
    #[error("NCCL call `{call}` failed: {detail}")]
    Nccl {
        /// The NCCL function.
        call: &'static str,
        /// Its result code and NCCL's text for it (and its last error message, when it has one).
        detail: String,
    },

    /// A cuBLAS call failed.
    #[error("cuBLAS call `{call}` failed: {status}")]
    Cublas {
        /// The cuBLAS function.
        call: &'static str,
        /// Its status (`CUBLAS_STATUS_...`).
        status: String,
    },

    /// An NVRTC call other than the compilation itself failed.
    #[error("NVRTC call `{call}` failed: {detail}")]
    Nvrtc {
        /// The NVRTC function.
        call: &'static str,
        /// Its error.
        detail: String,
    },

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
        /// The device's architecture (`sm_90`, ...).
        arch: String,
        /// The NVRTC version.
        nvrtc_version: String,
        /// The architectures this NVRTC supports.
        supported: String,
    },

    /// A cubin, PTX or fatbin file that cannot be read.
    #[error("cannot read the CUDA module file {}: {source}", .path.display())]
    ModuleFile {
        /// The file.
        path: std::path::PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },

    /// An array file (`.npy`, `.npz`, `tofile`) that cannot be read or written: the I/O error, or
    /// a file whose contents are not what the format says (`source` then says what is wrong).
    #[error("array file {}: {what}: {source}", .path.display())]
    ArrayFile {
        /// The file.
        path: std::path::PathBuf,
        /// What was being done, or what is wrong with the contents.
        what: String,
        /// The I/O error (`InvalidData` for malformed contents).
        #[source]
        source: std::io::Error,
    },

    /// A tuning file (`tuning/sm_XY.toml`, docs/tuning.md) that the tuner cannot read back or
    /// write: the file, what is wrong and what to do.
    #[error("tuning file {}: {what}", .path.display())]
    TuningFile {
        /// The file.
        path: std::path::PathBuf,
        /// What went wrong and what to do.
        what: String,
    },

    /// A module image that is malformed or that the driver refused (not a cubin/PTX/fatbin, or
    /// built for another GPU).
    #[error(
        "cannot load {what}: {detail}. A cubin must match this GPU's architecture and PTX must not \
         be newer than the driver: compile for this GPU, or ship PTX or a fatbin"
    )]
    ModuleLoad {
        /// The module (a file, a kernel unit, ...).
        what: String,
        /// What is wrong with it or what the driver said.
        detail: String,
    },

    /// A module of relocatable device code (`-rdc=true`, for dynamic parallelism) could not be
    /// linked with the CUDA device runtime (`libcudadevrt.a`).
    #[error(
        "cannot link with the CUDA device runtime (libcudadevrt.a), which a module compiled with -rdc=true needs \
         (dynamic parallelism): {detail}. Set CUDA_PATH (or CUDA_HOME) to a CUDA toolkit root whose lib64/ (or lib/) \
         holds libcudadevrt.a, of a CUDA version the driver supports"
    )]
    DeviceRuntime {
        /// What is missing or what the driver's linker said.
        detail: String,
    },

    /// No kernel of that name in a module.
    #[error("no kernel named `{name}` in the module: {hint}")]
    FunctionNotFound {
        /// The name looked for.
        name: String,
        /// The kernels the module has, or how to name one.
        hint: String,
    },

    /// No `__device__`/`__constant__` symbol of that name in a module, or one of another size.
    #[error("module global `{name}`: {detail}")]
    Global {
        /// The symbol's name.
        name: String,
        /// What is wrong (absent, or its size).
        detail: String,
    },

    /// A launch configuration the device or the kernel cannot run (nothing was launched).
    #[error("cannot launch kernel `{kernel}`: {detail}")]
    InvalidLaunch {
        /// The kernel's name.
        kernel: String,
        /// Which limit the configuration exceeds.
        detail: String,
    },

    /// A kernel definition from text (`ElementwiseKernel::new`) that is malformed: a parameter
    /// list, a name or an option.
    #[error("invalid definition of kernel `{kernel}`: {detail}")]
    KernelDefinition {
        /// The kernel's name.
        kernel: String,
        /// What is malformed.
        detail: String,
    },

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
        /// `block_idx()` of the thread that made the access.
        block: [u32; 3],
        /// `thread_idx()` of that thread.
        thread: [u32; 3],
    },

    /// A kernel gave an index that is not a multiple of the alignment its access needs (a row of
    /// `ldmatrix_*` or an operand of `cp_async`: 16 bytes). As for [`Error::IndexOutOfBounds`],
    /// the access was skipped (an `ldmatrix` lane read row 0 of the array instead) and only the
    /// first violation is reported.
    #[error(
        "misaligned index in `{kernel}`: the index is {index} but the access needs a multiple of \
         {align} elements (16 bytes) (block ({}, {}, {}), thread ({}, {}, {})). The access was \
         skipped, so results since the last synchronisation may be wrong; align the index (and, \
         for `cp_async`, the slice's start) in `{kernel}`",
        .block[0], .block[1], .block[2], .thread[0], .thread[1], .thread[2]
    )]
    IndexMisaligned {
        /// The Rust function (kernel or `#[device]` function) whose code holds the access.
        kernel: String,
        /// The index (negative for a signed index type).
        index: i128,
        /// The alignment the access needs, in elements.
        align: u64,
        /// `block_idx()` of the thread that made the access.
        block: [u32; 3],
        /// `thread_idx()` of that thread.
        thread: [u32; 3],
    },

    /// A cooperative launch with more blocks than the device keeps resident at once (nothing was
    /// launched): a `#[rawkernel]` that calls `grid_sync()`, or a `RawKernel` whose module has
    /// `enable_cooperative_groups`. Every block must be on a multiprocessor at the same time, or
    /// the blocks at a grid barrier would wait forever for blocks that cannot start.
    #[error("{}", cooperative_grid_text(.kernel, *.blocks, *.limit, *.per_multiprocessor, *.multiprocessors, *.block_threads, *.shared_bytes, *.cooperative_groups))]
    CooperativeGrid {
        /// The kernel's name.
        kernel: String,
        /// The blocks the launch asked for.
        blocks: u64,
        /// The most blocks of this size the device keeps resident: `per_multiprocessor *
        /// multiprocessors` (what `NAME::max_cooperative_blocks(&config)` returns).
        limit: u64,
        /// Blocks of this configuration one multiprocessor holds at once (the driver's
        /// occupancy calculator; on the CPU device, its model: docs/cpu.md).
        per_multiprocessor: u32,
        /// The device's multiprocessors.
        multiprocessors: u32,
        /// Threads per block.
        block_threads: u32,
        /// Dynamic shared memory per block, in bytes.
        shared_bytes: u32,
        /// True for a `RawKernel` launched cooperatively (`enable_cooperative_groups`: CUDA C
        /// that syncs through `cooperative_groups`), false for a `#[rawkernel]` that calls
        /// `grid_sync()`; the message names the function that returns the limit for each.
        cooperative_groups: bool,
    },

    /// More dynamic shared memory than the kernel currently allows (nothing was launched). A
    /// `RawKernel`'s limit is raised with `set_max_dynamic_shared_size_bytes`; a `#[rawkernel]`'s
    /// is raised by its launch, so for it this is a request above what the device allows.
    #[error("{}", shared_memory_text(.kernel, *.requested, *.limit, *.optin, *.static_bytes))]
    SharedMemory {
        /// The kernel's name.
        kernel: String,
        /// The dynamic shared memory asked for, in bytes.
        requested: u32,
        /// The kernel's `max_dynamic_shared_size_bytes` now.
        limit: u32,
        /// The device's opt-in limit of shared memory per block, in bytes.
        optin: u32,
        /// The kernel's static shared memory, in bytes.
        static_bytes: u32,
    },
}

fn shared_memory_text(kernel: &str, requested: u32, limit: u32, optin: u32, static_bytes: u32) -> String {
    let head = format!("cannot launch kernel `{kernel}`: it asks for {requested} bytes of dynamic shared memory but may use at most {limit}");
    if limit >= optin.saturating_sub(static_bytes) {
        // Already the most the attribute can be raised to (a `#[rawkernel]` is raised to it).
        return format!(
            "{head}, the most this device allows (attribute max_dynamic_shared_size_bytes at its maximum: {optin} \
             bytes of shared memory per block in total, of which the kernel's static shared memory takes \
             {static_bytes}). Use less shared memory per block (smaller tiles, fewer pipeline stages)"
        );
    }
    format!(
        "{head} (attribute max_dynamic_shared_size_bytes). Raise it with `set_max_dynamic_shared_size_bytes` (this \
         device allows {optin} bytes of shared memory per block in total, of which the kernel's static shared \
         memory takes {static_bytes})"
    )
}

#[allow(clippy::too_many_arguments)]
fn cooperative_grid_text(
    kernel: &str,
    blocks: u64,
    limit: u64,
    per_sm: u32,
    sms: u32,
    threads: u32,
    shared: u32,
    cooperative_groups: bool,
) -> String {
    let (why, limit_fn) = if cooperative_groups {
        (
            "its module has `enable_cooperative_groups`, so it is launched cooperatively".to_string(),
            "`RawKernel::max_cooperative_blocks(&config)`".to_string(),
        )
    } else {
        ("it calls `grid_sync()`".to_string(), format!("`{kernel}::max_cooperative_blocks(&config)`"))
    };
    let head = format!(
        "cannot launch kernel `{kernel}` with {blocks} blocks: {why}, so every block must be resident on the \
         device at once (a cooperative launch)"
    );
    if limit == 0 {
        return format!(
            "{head}, and no block of {threads} threads with {shared} bytes of dynamic shared memory fits on a multiprocessor of \
             this device: use smaller blocks or less shared memory"
        );
    }
    format!(
        "{head}, and this device holds at most {limit} blocks of {threads} threads with {shared} bytes of dynamic shared \
         memory ({per_sm} per multiprocessor x {sms} multiprocessors). Launch at most {limit} blocks \
         ({limit_fn} returns the limit for the config's block and shared memory) and let \
         each thread loop over several elements (a grid-stride loop)"
    )
}

/// A fault that lost a device's CUDA context: what the driver reported, by which call, and the
/// kernel that was launched last on the device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    /// The device whose context is lost.
    pub device: usize,
    /// The sticky result the driver returned (one of the codes that lose the context;
    /// `sticky_fault` in `error.rs` lists them).
    pub code: CUresult,
    /// The driver call that reported it (`cuStreamSynchronize`, `cuMemcpyDtoHAsync`, ...):
    /// launches run asynchronously, so this is often not the launch that faulted.
    pub call: &'static str,
    /// The kernel launched last on the device (through cuprum) before the fault was reported.
    pub kernel: Option<String>,
    /// True when `kernel` is known to be the kernel that faulted: its own launch reported the
    /// fault while launches were synchronous (`CUDA_LAUNCH_BLOCKING=1`).
    pub at_launch: bool,
}

impl Fault {
    /// What the code means, in words (`sticky_fault`'s text).
    pub fn description(&self) -> &'static str {
        sticky_fault(self.code).unwrap_or("the device failed")
    }
}

impl std::fmt::Display for Fault {
    /// One sentence: which kernel, on which device, what happened, and who reported it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (device, what, code, call) = (self.device, self.description(), self.code, self.call);
        match (&self.kernel, self.at_launch) {
            (Some(k), true) => write!(f, "kernel `{k}` faulted on device {device}: {what} ({code:?})"),
            (Some(k), false) => write!(
                f,
                "a kernel faulted on device {device}: {what} ({code:?}, reported by `{call}`); the \
                 last kernel launched there was `{k}`"
            ),
            (None, _) => write!(
                f,
                "device {device} failed: {what} ({code:?}, reported by `{call}`), with no kernel \
                 launched there through cuprum"
            ),
        }
    }
}

/// Whether a driver result is *sticky*, losing the CUDA context for the rest of the process (the
/// CUDA documentation: "the process must be terminated and relaunched"), and what it means.
pub fn sticky_fault(code: CUresult) -> Option<&'static str> {
    use CUresult::*;
    Some(match code {
        CUDA_ERROR_ILLEGAL_ADDRESS => "a kernel accessed an illegal memory address",
        CUDA_ERROR_LAUNCH_FAILED => {
            "a kernel stopped with an exception (`__trap()`, or an invalid pointer or memory access)"
        }
        CUDA_ERROR_ILLEGAL_INSTRUCTION => "a kernel executed an illegal instruction",
        CUDA_ERROR_MISALIGNED_ADDRESS => "a kernel accessed a misaligned memory address",
        CUDA_ERROR_INVALID_ADDRESS_SPACE => {
            "a kernel used an address in the wrong memory space (e.g. a shared-memory address as a \
             global one)"
        }
        CUDA_ERROR_INVALID_PC => "a kernel's program counter became invalid",
        CUDA_ERROR_HARDWARE_STACK_ERROR => {
            "a kernel's call stack overflowed or was corrupted (deep recursion, or a stack too small)"
        }
        CUDA_ERROR_ASSERT => "a device-side `assert` failed",
        CUDA_ERROR_LAUNCH_TIMEOUT => "a kernel ran longer than the display watchdog allows",
        CUDA_ERROR_TENSOR_MEMORY_LEAK => "a kernel exited without releasing its tensor memory",
        CUDA_ERROR_ECC_UNCORRECTABLE => "an uncorrectable ECC error was detected in device memory",
        CUDA_ERROR_NVLINK_UNCORRECTABLE => "an uncorrectable NVLink error was detected",
        CUDA_ERROR_CONTAINED => "the device reported a contained error",
        CUDA_ERROR_EXTERNAL_DEVICE => "an external device reported an error",
        _ => return None,
    })
}

fn kernel_fault_text(fault: &Fault) -> String {
    let mut t = fault.to_string();
    if fault.kernel.is_some() && !fault.at_launch {
        t.push_str(
            ". Launches run asynchronously, so an earlier launch may be the one that faulted: set \
             CUDA_LAUNCH_BLOCKING=1 to have each launch report its own fault",
        );
    }
    t.push_str(&format!(
        ". The CUDA context of device {0} is lost: every later call on device {0} fails \
         (Error::ContextLost); restart the process to use it again",
        fault.device
    ));
    t
}

fn context_lost_text(original: &Fault) -> String {
    format!(
        "device {0} cannot be used: its CUDA context was lost earlier, when {original}. Every call \
         on device {0} fails from now on; restart the process to use it again",
        original.device
    )
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

impl std::fmt::Debug for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
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

    /// A kernel asked to run on the CPU device, which does not run kernels yet (docs/cpu.md):
    /// `what` names it (`kernel \`add\``, `the CUDA C text of RawKernel \`k\``).
    pub(crate) fn kernel_on_cpu(what: &str) -> Error {
        Error::Unsupported {
            what: format!(
                "{what} on the CPU device: this version runs kernels on CUDA devices only (the CPU \
                 device holds arrays and copies them; docs/cpu.md). Copy the arrays to a CUDA device \
                 (`x.to_device(&Device::get(0)?)`) and launch there"
            ),
        }
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

    /// True when the error means the device's CUDA context is lost ([`Error::KernelFault`], the
    /// first report, or [`Error::ContextLost`], every later one): nothing more can run on that
    /// device in this process.
    pub fn is_context_lost(&self) -> bool {
        matches!(self, Error::KernelFault { .. } | Error::ContextLost { .. })
    }

    /// The fault that lost the context, for [`Error::KernelFault`] and [`Error::ContextLost`].
    pub fn fault(&self) -> Option<&Fault> {
        match self {
            Error::KernelFault { fault } | Error::ContextLost { original: fault } => Some(fault),
            _ => None,
        }
    }
}

/// The text of a caught panic's payload (`fallback` when it is not a string).
pub(crate) fn panic_text(p: &(dyn std::any::Any + Send), fallback: &str) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        fallback.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 34, item 3: what `fn main() -> Result<()>` prints is `Error: {:?}`, so `Debug` is
    /// the message, not the variant's fields.
    #[test]
    fn debug_prints_the_message() {
        let e = Error::Broadcast { shapes: vec![vec![2, 3], vec![4]] };
        assert_eq!(format!("{e:?}"), e.to_string());
        assert_eq!(
            format!("{e:?}"),
            "shapes [2, 3], [4] cannot be broadcast together: aligned from the last axis, each extent must be equal or 1"
        );
        let e = Error::NoDriver { detail: "libcuda.so not found".into() };
        let shown = format!("{e:?}");
        assert!(shown.contains("CUPRUM_DEVICE=cpu") && !shown.contains("NoDriver {"), "{shown}");
    }

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

    #[test]
    fn sticky_results_are_classified() {
        use CUresult::*;
        for code in [
            CUDA_ERROR_ILLEGAL_ADDRESS,
            CUDA_ERROR_LAUNCH_FAILED,
            CUDA_ERROR_ILLEGAL_INSTRUCTION,
            CUDA_ERROR_MISALIGNED_ADDRESS,
            CUDA_ERROR_INVALID_ADDRESS_SPACE,
            CUDA_ERROR_INVALID_PC,
            CUDA_ERROR_HARDWARE_STACK_ERROR,
            CUDA_ERROR_ASSERT,
            CUDA_ERROR_LAUNCH_TIMEOUT,
            CUDA_ERROR_ECC_UNCORRECTABLE,
        ] {
            assert!(sticky_fault(code).is_some(), "{code:?}");
        }
        for code in [
            CUDA_SUCCESS,
            CUDA_ERROR_OUT_OF_MEMORY,
            CUDA_ERROR_INVALID_VALUE,
            CUDA_ERROR_INVALID_IMAGE,
            CUDA_ERROR_NOT_READY,
            CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
            CUDA_ERROR_NO_BINARY_FOR_GPU,
        ] {
            assert!(sticky_fault(code).is_none(), "{code:?}");
        }
    }

    #[test]
    fn faults_name_the_kernel_the_fault_and_the_way_out() {
        let fault = Fault {
            device: 1,
            code: CUresult::CUDA_ERROR_ILLEGAL_ADDRESS,
            call: "cuStreamSynchronize",
            kernel: Some("scatter".into()),
            at_launch: false,
        };
        let first = Error::KernelFault { fault: fault.clone() };
        let m = first.to_string();
        for part in [
            "a kernel faulted on device 1",
            "illegal memory address",
            "CUDA_ERROR_ILLEGAL_ADDRESS",
            "reported by `cuStreamSynchronize`",
            "the last kernel launched there was `scatter`",
            "CUDA_LAUNCH_BLOCKING=1",
            "context of device 1 is lost",
            "restart the process",
        ] {
            assert!(m.contains(part), "missing {part:?} in: {m}");
        }
        assert!(first.is_context_lost() && !first.is_no_gpu());
        assert_eq!(first.fault(), Some(&fault));

        let later = Error::ContextLost { original: fault.clone() };
        let m = later.to_string();
        for part in ["device 1 cannot be used", "lost earlier", "`scatter`", "CUDA_ERROR_ILLEGAL_ADDRESS", "restart the process"] {
            assert!(m.contains(part), "missing {part:?} in: {m}");
        }
        assert!(later.is_context_lost());
        assert_eq!(later.fault(), Some(&fault));

        // Known exactly (a blocking launch reported it), and unknown (no kernel launched).
        let exact = Fault { call: "cuLaunchKernel", at_launch: true, code: CUresult::CUDA_ERROR_LAUNCH_FAILED, ..fault.clone() };
        let m = Error::KernelFault { fault: exact }.to_string();
        assert!(m.starts_with("kernel `scatter` faulted on device 1: a kernel stopped"), "{m}");
        assert!(!m.contains("CUDA_LAUNCH_BLOCKING"), "{m}");
        let nobody = Fault { kernel: None, ..fault };
        let m = Error::KernelFault { fault: nobody }.to_string();
        assert!(m.contains("device 1 failed") && m.contains("no kernel launched"), "{m}");

        let other = Error::driver("cuMemAlloc", DriverError(CUresult::CUDA_ERROR_INVALID_VALUE));
        assert!(!other.is_context_lost() && other.fault().is_none());
    }
}
