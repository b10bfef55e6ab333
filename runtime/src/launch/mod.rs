//! Kernel launches (docs/architecture.md, The crates): the configuration ([`config`]), typed
//! arguments ([`args`]), the one parameter buffer ([`ArgList`]), the type-erased operands and
//! signatures that `#[elementwise]`, `#[reduction]`, `ElementwiseKernel` and `ReductionKernel`
//! launch with ([`operand`], [`signature`]), and [`launch`] (and [`launch_cooperative`]), the one
//! place that calls `cuLaunchKernel` (and `cuLaunchCooperativeKernel`).
//!
//! Nothing here checks that arguments match a kernel's parameters: that is why [`launch`] (and
//! `RawKernel::launch`) are `unsafe`. The erased launches (`elementwise::launch`,
//! `reduction::launch`) are safe because they check their operands against the signature the
//! kernel was generated with ([`signature::Signature`]).

pub mod arg_list;
pub mod args;
pub mod config;
pub(crate) mod nvtx;
pub mod operand;
pub mod signature;

use cudarc::driver::sys;

pub use crate::repr::{DevicePtr, DeviceRepr, SliceArg, ViewArg};
pub use arg_list::ArgList;
pub use args::{KernelArg, KernelArgs};
pub use config::{check_config, check_cooperative, LaunchConfig};
use crate::error::{Error, Result};
use crate::function::KernelFunction;
use crate::stream::Stream;

/// Launches `func` with `cfg` and `args`, after checking the configuration against the device's
/// and the kernel's limits (a bad configuration is an error and nothing is launched). Without a
/// stream in `cfg`, the current stream of `func`'s device is used.
///
/// This is the launch of generated kernels (`#[rawkernel]`, the erased elementwise and reduction
/// launches): dynamic shared memory above the kernel's current limit (48 KiB by default) raises
/// its `max_dynamic_shared_size_bytes` to the most the device allows, once
/// ([`KernelFunction::max_dynamic_shared_optin`]); only a request above that is an error.
/// `RawKernel` launches keep CuPy's explicit limit (`set_max_dynamic_shared_size_bytes`).
///
/// # Safety
///
/// `args` must match the kernel's parameter list in number, order and type (an array for a
/// pointer parameter of its element type, a scalar of the parameter's exact C type, a
/// [`DeviceRepr`] struct of the parameter's layout), and the kernel must only access memory that
/// stays valid until it finishes (arrays it indexes must be large enough and outlive the work
/// queued on the stream). Nothing here can check either: the kernel is arbitrary device code.
#[inline]
pub unsafe fn launch<A: KernelArgs>(
    func: &KernelFunction,
    cfg: &LaunchConfig<'_>,
    args: A,
) -> Result<()> {
    // SAFETY: this function's contract, passed on.
    unsafe { launch_as(func, cfg, args, Mode::Plain, true) }
}

/// [`launch`] for a `RawKernel`: the same checks, but dynamic shared memory above the kernel's
/// `max_dynamic_shared_size_bytes` is an error, as in CuPy (the user raises it explicitly).
///
/// # Safety
///
/// As for [`launch`].
#[inline]
pub(crate) unsafe fn launch_raw_kernel<A: KernelArgs>(
    func: &KernelFunction,
    cfg: &LaunchConfig<'_>,
    args: A,
) -> Result<()> {
    // SAFETY: this function's contract, passed on.
    unsafe { launch_as(func, cfg, args, Mode::Plain, false) }
}

/// Launches `func` cooperatively (`cuLaunchCooperativeKernel`): every block is resident at once,
/// which `grid_sync()` needs (a `#[rawkernel]` that reaches it is launched so). Checks as
/// [`launch`] does, and also the grid against the device's co-residency limit
/// ([`KernelFunction::co_residency`]): a larger grid is [`Error::CooperativeGrid`] and nothing
/// is launched (it would hang at its first `grid_sync()`). Dynamic shared memory is raised as by
/// [`launch`].
///
/// # Safety
///
/// As for [`launch`].
#[inline]
pub unsafe fn launch_cooperative<A: KernelArgs>(
    func: &KernelFunction,
    cfg: &LaunchConfig<'_>,
    args: A,
) -> Result<()> {
    // SAFETY: this function's contract, passed on.
    unsafe { launch_as(func, cfg, args, Mode::GridSync, true) }
}

/// [`launch_cooperative`] for a `RawKernel` whose module has `enable_cooperative_groups` (CUDA C
/// that syncs the grid through `cooperative_groups`): the same checks, with messages that name
/// that switch and `RawKernel::max_cooperative_blocks`.
///
/// # Safety
///
/// As for [`launch`].
#[inline]
pub unsafe fn launch_cooperative_groups<A: KernelArgs>(
    func: &KernelFunction,
    cfg: &LaunchConfig<'_>,
    args: A,
) -> Result<()> {
    // SAFETY: this function's contract, passed on.
    unsafe { launch_as(func, cfg, args, Mode::CooperativeGroups, false) }
}

/// How a kernel is launched.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// `cuLaunchKernel`.
    Plain,
    /// `cuLaunchCooperativeKernel` for a `#[rawkernel]` that calls `grid_sync()`.
    GridSync,
    /// `cuLaunchCooperativeKernel` for a `RawKernel` with `enable_cooperative_groups`.
    CooperativeGroups,
}

impl Mode {
    /// Why a launch in this mode is cooperative, for the driver's refusals (only then computed:
    /// not on the launch path).
    fn why(self) -> &'static str {
        match self {
            Mode::CooperativeGroups => "its module has `enable_cooperative_groups`, so it is launched cooperatively",
            _ => "it calls `grid_sync()`, which needs a cooperative launch",
        }
    }

    /// The call that gives the co-residency limit of kernel `name` launched in this mode.
    fn limit_fn(self, name: &str) -> String {
        match self {
            Mode::CooperativeGroups => "`RawKernel::max_cooperative_blocks(&config)`".to_string(),
            _ => format!("`{name}::max_cooperative_blocks(&config)`"),
        }
    }
}

/// [`launch`], [`launch_cooperative`] or [`launch_cooperative_groups`], as `mode` says;
/// `raise_shared`: a generated kernel's launch, which raises its dynamic shared memory limit
/// ([`launch`]).
///
/// # Safety
///
/// As for [`launch`].
unsafe fn launch_as<A: KernelArgs>(
    func: &KernelFunction,
    cfg: &LaunchConfig<'_>,
    args: A,
    mode: Mode,
    raise_shared: bool,
) -> Result<()> {
    let cooperative = mode != Mode::Plain;
    let current;
    let stream = match cfg.stream {
        Some(s) => s,
        None => {
            current = Stream::current_for(func.device())?;
            &current
        }
    };
    crate::capture::refuse_foreign("a launch", || stream.is_recorded())?;
    func.keep_for_capture();
    if stream.device() != func.device() {
        return Err(Error::DeviceMismatch {
            context: format!("launching kernel `{}`", func.name()),
            expected: func.device().ordinal(),
            found: stream.device().ordinal(),
        });
    }
    let mut limits = func.limits();
    if raise_shared && cfg.shared_mem_bytes > limits.max_dynamic_shared_bytes {
        // Off the hot path: at most one driver call in the kernel's life.
        limits.max_dynamic_shared_bytes = func.raise_dynamic_shared(cfg.shared_mem_bytes)?;
    }
    check_config(
        func.name(),
        cfg.grid,
        cfg.block,
        cfg.shared_mem_bytes,
        &limits,
    ).map_err(by_rust_name)?;
    if cooperative {
        let limit = func.co_residency(cfg.block, cfg.shared_mem_bytes)?;
        let groups = mode == Mode::CooperativeGroups;
        // The error names a `#[rawkernel]` by its Rust name, as on the CPU device; a `RawKernel`
        // by the name it was given.
        let name = if groups { func.name() } else { cuprum_abi::mangle::kernel_name(func.name()) };
        check_cooperative(name, cfg.grid, cfg.block, cfg.shared_mem_bytes, limit, groups)?;
    }
    let device = func.device();
    device.bind_to_thread()?;
    device.inner().faults.note_launch(func.interned_name());
    let raw = func.raw();
    let handle = stream.handle();
    let _range = nvtx::LaunchRange::push(func);
    let result = args.with_params(|params| {
        // SAFETY: `raw` is a function of a module that `func` keeps loaded, in the context of
        // `func`'s device, which is bound to this thread (above); `handle` is a live stream of
        // that device (checked above); the geometry was checked against the device's and the
        // kernel's limits (and, for a cooperative launch, its co-residency limit); `params`
        // holds one pointer per argument to a value that lives until `with_params` returns (the
        // driver copies the values during the call). That the arguments match the kernel's
        // parameters, and that the kernel stays in bounds, is the caller's contract (this
        // function's `# Safety`).
        unsafe {
            if cooperative {
                sys::cuLaunchCooperativeKernel(
                    raw,
                    cfg.grid.x,
                    cfg.grid.y,
                    cfg.grid.z,
                    cfg.block.x,
                    cfg.block.y,
                    cfg.block.z,
                    cfg.shared_mem_bytes,
                    handle,
                    params.as_mut_ptr(),
                )
            } else {
                sys::cuLaunchKernel(
                    raw,
                    cfg.grid.x,
                    cfg.grid.y,
                    cfg.grid.z,
                    cfg.block.x,
                    cfg.block.y,
                    cfg.block.z,
                    cfg.shared_mem_bytes,
                    handle,
                    params.as_mut_ptr(),
                    std::ptr::null_mut(),
                )
            }
        }
    });
    match result {
        sys::CUresult::CUDA_ERROR_NOT_SUPPORTED if cooperative => Err(Error::InvalidLaunch {
            kernel: func.name().to_string(),
            detail: format!(
                "{}, and this device (or its driver configuration, or the stream being captured into a graph) does \
                 not support one",
                mode.why()
            ),
        }),
        // The co-residency check above makes this unreachable, unless the driver counts
        // differently (another context or MPS client sharing the device).
        sys::CUresult::CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE if cooperative => Err(Error::InvalidLaunch {
            kernel: func.name().to_string(),
            detail: format!(
                "{}, and the driver refused its cooperative launch of {} blocks as more than the device keeps \
                 resident (another context may share the device); launch fewer blocks than {} returns",
                mode.why(),
                u64::from(cfg.grid.x) * u64::from(cfg.grid.y) * u64::from(cfg.grid.z),
                mode.limit_fn(func.name()),
            ),
        }),
        r => r.result().map_err(|e| device.driver_error(crate::fault::LAUNCH_CALL, e)),
    }
}

/// A launch error of a generated kernel naming its Rust function, as the CPU device's checks
/// name it (`squared_diff`, not `cuprum_elementwise_squared_diff_contig__f32`), so that both
/// devices report the same error. Only on the error path: the name is not parsed per launch.
#[cold]
fn by_rust_name(e: Error) -> Error {
    let rust = |k: String| cuprum_abi::mangle::kernel_name(&k).to_string();
    match e {
        Error::InvalidLaunch { kernel, detail } => Error::InvalidLaunch { kernel: rust(kernel), detail },
        Error::SharedMemory { kernel, requested, limit, optin, static_bytes } => {
            Error::SharedMemory { kernel: rust(kernel), requested, limit, optin, static_bytes }
        }
        other => other,
    }
}
