//! Devices: one CUDA context (the device's primary context) per device per process, and the
//! current device per thread (default 0, or the CPU with `CUPRUM_DEVICE=cpu`), as in CuPy; and
//! the CPU device ([`Device::cpu`], docs/cpu.md): arrays in host memory, work run by the host.
//!
//! The driver is loaded lazily on first use. cudarc panics when `libcuda` cannot be loaded, so
//! the first use probes for the library and guards the initialisation; a machine without a driver
//! or without a GPU gets [`Error::NoDriver`] / [`Error::NoDevice`], never a panic.

use std::cell::Cell;
use std::fmt;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::sys::{self, CUdevice_attribute};
use cudarc::driver::{CudaContext, CudaStream, DriverError};

pub use crate::driver::CPU_ORDINAL;
use crate::driver::driver_device_count;
use crate::error::{Error, Fault, Result};
use crate::fault::FaultRecord;
use crate::sync;

/// The CUDA driver's version as `1000 * major + 10 * minor` (e.g. 13000 for 13.0).
pub fn driver_version() -> Result<i32> {
    driver_device_count()?;
    let mut v: std::ffi::c_int = 0;
    // SAFETY: the driver is loaded and initialised (checked above); `v` is a valid out pointer.
    unsafe { sys::cuDriverGetVersion(&mut v) }
        .result()
        .map_err(Error::driver_fn("cuDriverGetVersion"))?;
    Ok(v)
}

/// Properties read once when the device is opened (so launches can validate cheaply).
#[derive(Clone, Debug)]
struct Props {
    name: String,
    compute_capability: (u32, u32),
    total_memory: usize,
    max_threads_per_block: u32,
    max_block_dim: [u32; 3],
    max_grid_dim: [u32; 3],
    max_shared_memory_per_block: usize,
    max_shared_memory_per_block_optin: usize,
    multiprocessor_count: u32,
    warp_size: u32,
}

pub(crate) struct DeviceInner {
    ordinal: usize,
    backend: Backend,
    props: Props,
    /// The fault that lost the context, once one has (`fault.rs`), and the last kernel launched.
    pub(crate) faults: FaultRecord,
}

/// What runs a device's work.
pub(crate) enum Backend {
    /// A CUDA device: its primary context, the legacy default stream (handle 0) and the
    /// per-thread default stream (handle 2).
    Cuda {
        ctx: Arc<CudaContext>,
        legacy_stream: Arc<CudaStream>,
        per_thread_stream: Arc<CudaStream>,
    },
    /// The host: arrays in host memory, work done when it is queued.
    Cpu,
}


/// A device: a CUDA device and its context, or the CPU ([`Device::cpu`]). Cheap to clone; equal
/// when the ordinals are equal.
#[derive(Clone)]
pub struct Device {
    inner: Arc<DeviceInner>,
}

thread_local! {
    /// This thread's current device ordinal; `None` until set: the process default then.
    static CURRENT_DEVICE: Cell<Option<usize>> = const { Cell::new(None) };
}

/// The current device of a thread that set none: the CPU with `CUPRUM_DEVICE=cpu`, else device 0
/// (an invalid `CUPRUM_DEVICE` is reported by [`Device::current`]).
fn default_ordinal() -> usize {
    match crate::env::default_device() {
        Ok(crate::env::DefaultDevice::Cpu) => CPU_ORDINAL,
        _ => 0,
    }
}

/// The CPU device's properties: what launch checks compare against (the limits of a CUDA device
/// of compute capability 9.0), its name and the host's memory.
fn cpu_props() -> Props {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    Props {
        name: format!("CPU ({threads} threads)"),
        compute_capability: (0, 0),
        total_memory: host_memory().map_or(0, |(_, total)| total),
        max_threads_per_block: 1024,
        max_block_dim: [1024, 1024, 64],
        max_grid_dim: [i32::MAX as u32, 65535, 65535],
        max_shared_memory_per_block: 48 * 1024,
        max_shared_memory_per_block_optin: 227 * 1024,
        multiprocessor_count: threads as u32,
        warp_size: 32,
    }
}

/// `(available, total)` host memory in bytes (Linux: `/proc/meminfo`).
fn host_memory() -> Option<(usize, usize)> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let field = |name: &str| -> Option<usize> {
        let line = info.lines().find(|l| l.starts_with(name))?;
        let kib: usize = line[name.len()..].trim().trim_end_matches("kB").trim().parse().ok()?;
        kib.checked_mul(1024)
    };
    Some((field("MemAvailable:")?, field("MemTotal:")?))
}

fn devices() -> Result<&'static [OnceLock<Device>]> {
    static SLOTS: OnceLock<Box<[OnceLock<Device>]>> = OnceLock::new();
    let n = driver_device_count()?;
    Ok(SLOTS.get_or_init(|| (0..n).map(|_| OnceLock::new()).collect()))
}

fn attr(ctx: &CudaContext, a: CUdevice_attribute, what: &'static str) -> Result<i32> {
    ctx.attribute(a).map_err(Error::driver_fn(what))
}

/// Work that makes first calls cheaper and needs no device, submitted by modules above this one
/// (`inventory::submit!`): the registry digests the zstd dictionaries of the embedded units
/// (about 0.1 ms each on the H100 machine's host; docs/building.md, "Size and load time").
/// Run once, on a thread of its own, while the first context is created (a hundred milliseconds
/// and more), so that the first calls do not wait for it.
pub(crate) struct WarmUp(pub fn());

inventory::collect!(WarmUp);

/// Starts, on a thread of its own, the work that makes first calls cheaper and needs no device
/// (the `WarmUp` hooks: decompression contexts for the embedded kernel files, the kernel loader), once
/// per process. Opening a device starts it too; a Python extension calls it when it is imported
/// (`cuprum_python::register`), since in a process where another library made the context the
/// first call follows the device's open at once.
///
/// ```
/// // At the start of a program or an extension's import: returns at once, needs no GPU.
/// cuprum_runtime::device::warm_up();
/// ```
pub fn warm_up() {
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        let hooks: Vec<fn()> = inventory::iter::<WarmUp>.into_iter().map(|w| w.0).collect();
        if !hooks.is_empty() {
            // A thread that cannot be started only means the work happens at first use.
            let _ = std::thread::Builder::new()
                .name("cuprum-warm-up".into())
                .spawn(move || hooks.iter().for_each(|h| h()));
        }
    });
}

/// Whether device `ordinal`'s primary context is active already (another library of the process
/// made it, or an earlier open); `false` when the driver cannot tell.
fn primary_context_active(ordinal: usize) -> bool {
    let mut dev: sys::CUdevice = 0;
    let (mut flags, mut active): (std::ffi::c_uint, std::ffi::c_int) = (0, 0);
    // SAFETY: the driver is initialised (the device count was probed); both calls only write
    // through the pointers they are given, which point at the locals above.
    unsafe {
        sys::cuDeviceGet(&mut dev, ordinal as std::ffi::c_int).result().is_ok()
            && sys::cuDevicePrimaryCtxGetState(dev, &mut flags, &mut active).result().is_ok()
            && active != 0
    }
}

fn open(ordinal: usize) -> Result<Device> {
    warm_up();
    let created_here = !primary_context_active(ordinal);
    let ctx = CudaContext::new(ordinal).map_err(Error::driver_fn("cuDevicePrimaryCtxRetain"))?;
    use CUdevice_attribute::*;
    const Q: &str = "cuDeviceGetAttribute";
    let u = |a| attr(&ctx, a, Q).map(|v| v.max(0) as u32);
    let (major, minor) = ctx
        .compute_capability()
        .map_err(Error::driver_fn("cuDeviceGetAttribute"))?;
    let props = Props {
        name: ctx.name().map_err(Error::driver_fn("cuDeviceGetName"))?,
        compute_capability: (major.max(0) as u32, minor.max(0) as u32),
        total_memory: ctx
            .total_mem()
            .map_err(Error::driver_fn("cuDeviceTotalMem"))?,
        max_threads_per_block: u(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
        max_block_dim: [
            u(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X)?,
            u(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y)?,
            u(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)?,
        ],
        max_grid_dim: [
            u(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X)?,
            u(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y)?,
            u(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)?,
        ],
        max_shared_memory_per_block: u(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)? as usize,
        max_shared_memory_per_block_optin: u(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?
            as usize,
        multiprocessor_count: u(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
        warp_size: u(CU_DEVICE_ATTRIBUTE_WARP_SIZE)?,
    };
    let legacy_stream = ctx.default_stream();
    let per_thread_stream = ctx.per_thread_stream();
    let device = Device {
        inner: Arc::new(DeviceInner {
            ordinal,
            backend: Backend::Cuda {
                ctx,
                legacy_stream,
                per_thread_stream,
            },
            props,
            faults: FaultRecord::new(),
        }),
    };
    if created_here {
        crate::bounds::on_context_created(ordinal, || device.bind_to_thread());
    }
    Ok(device)
}

/// The CPU device, made at its first use.
fn cpu_static() -> &'static Device {
    static CPU: OnceLock<Device> = OnceLock::new();
    CPU.get_or_init(|| Device {
        inner: Arc::new(DeviceInner {
            ordinal: CPU_ORDINAL,
            backend: Backend::Cpu,
            props: cpu_props(),
            faults: FaultRecord::new(),
        }),
    })
}

impl Device {
    /// The number of CUDA devices: `Err(NoDriver)` without a usable driver, `Ok(0)` when the
    /// driver sees no device.
    pub fn count() -> Result<usize> {
        driver_device_count()
    }

    /// The device with this ordinal; its context is created on first use and shared by the
    /// whole process.
    pub fn get(ordinal: usize) -> Result<Device> {
        Device::get_static(ordinal).cloned()
    }

    /// [`Device::get`] without the reference count: an open device lives for the rest of the
    /// process (what launches use on every call).
    pub(crate) fn get_static(ordinal: usize) -> Result<&'static Device> {
        if ordinal == CPU_ORDINAL {
            return Ok(cpu_static());
        }
        let slots = devices()?;
        if slots.is_empty() {
            return Err(Error::NoDevice);
        }
        let slot = slots.get(ordinal).ok_or(Error::InvalidDevice {
            ordinal,
            count: slots.len(),
        })?;
        if let Some(d) = slot.get() {
            return Ok(d);
        }
        // Open under a lock so that two threads do not both retain the context.
        static OPENING: Mutex<()> = Mutex::new(());
        let _g = sync::lock(&OPENING);
        if let Some(d) = slot.get() {
            return Ok(d);
        }
        let d = open(ordinal)?;
        let _ = slot.set(d.clone());
        Ok(slot.get().expect("set above"))
    }

    /// The CPU device: arrays in host memory, work run by the host (docs/cpu.md). Always
    /// available; its ordinal is [`CPU_ORDINAL`].
    pub fn cpu() -> Device {
        cpu_static().clone()
    }

    /// Whether this is the CPU device.
    pub fn is_cpu(&self) -> bool {
        matches!(self.inner.backend, Backend::Cpu)
    }

    /// This thread's current device (device 0 unless changed with [`Device::use_device`],
    /// [`Device::set_current`] or [`Device::use_scoped`], or the CPU with `CUPRUM_DEVICE=cpu`).
    pub fn current() -> Result<Device> {
        if CURRENT_DEVICE.with(Cell::get).is_none() {
            // The default: report an invalid `CUPRUM_DEVICE` rather than guess.
            crate::env::default_device()?;
        }
        Device::get(Device::current_ordinal())
    }

    /// This thread's current device ordinal, without touching the driver ([`CPU_ORDINAL`] for
    /// the CPU).
    pub fn current_ordinal() -> usize {
        CURRENT_DEVICE.with(|c| c.get()).unwrap_or_else(default_ordinal)
    }

    /// Makes device `ordinal` current for this thread (CuPy's `Device(i).use()`).
    pub fn use_device(ordinal: usize) -> Result<Device> {
        let d = Device::get(ordinal)?;
        d.set_current()?;
        Ok(d)
    }

    /// Makes this device current for this thread and binds its context to the thread.
    pub fn set_current(&self) -> Result<()> {
        CURRENT_DEVICE.with(|c| c.set(Some(self.inner.ordinal)));
        self.bind_to_thread()
    }

    /// Makes this device current until the guard is dropped, then restores the previous one
    /// (CuPy's `with cupy.cuda.Device(i):`).
    pub fn use_scoped(&self) -> Result<DeviceGuard> {
        let previous = Device::current_ordinal();
        self.set_current()?;
        Ok(DeviceGuard {
            previous,
            _not_send: PhantomData,
        })
    }

    /// Binds this device's context to the calling thread (needed before raw driver calls).
    /// Once the context is lost to a fault this is [`Error::ContextLost`], and nothing is bound.
    #[inline]
    pub fn bind_to_thread(&self) -> Result<()> {
        self.check_alive()?;
        match &self.inner.backend {
            Backend::Cuda { ctx, .. } => ctx.bind_to_thread().map_err(self.driver_fn("cuCtxSetCurrent")),
            Backend::Cpu => Ok(()),
        }
    }

    /// The CUDA context, or the error of a CUDA-only operation (`what`) on the CPU device.
    pub(crate) fn cuda_context(&self, what: &str) -> Result<&Arc<CudaContext>> {
        match &self.inner.backend {
            Backend::Cuda { ctx, .. } => Ok(ctx),
            Backend::Cpu => Err(Error::Unsupported {
                what: format!("{what} on the CPU device, which has no CUDA context; use a CUDA device (`Device::get(0)`)"),
            }),
        }
    }

    /// The device's CUDA context as cudarc's `CudaContext` (the device's primary context), for
    /// cudarc work on memory and streams cuprum shares (docs/interop.md); an error on the CPU
    /// device.
    pub fn cudarc_context(&self) -> Result<Arc<CudaContext>> {
        self.cuda_context("a cudarc context").cloned()
    }

    /// How the device runs its work.
    pub(crate) fn backend(&self) -> &Backend {
        &self.inner.backend
    }

    /// `Err(ContextLost)` once this device's context is lost (one atomic load): what every
    /// fallible entry point checks before calling the driver.
    #[inline]
    pub(crate) fn check_alive(&self) -> Result<()> {
        self.inner.faults.check()
    }

    /// The fault that lost this device's CUDA context, `None` while it is usable. Once it is
    /// lost every call on the device returns [`Error::ContextLost`] naming this fault, until the
    /// process ends.
    pub fn fault(&self) -> Option<&Fault> {
        self.inner.faults.fault()
    }

    /// The error for a failed driver call on this device: a sticky result (a kernel fault) is
    /// recorded and becomes [`Error::KernelFault`], every failure after it [`Error::ContextLost`];
    /// anything else is [`Error::driver`].
    pub(crate) fn driver_error(&self, call: &'static str, e: DriverError) -> Error {
        self.inner.faults.driver_error(self.inner.ordinal, call, e)
    }

    /// [`driver_error`](Self::driver_error) as a closure for `map_err`.
    pub(crate) fn driver_fn(&self, call: &'static str) -> impl FnOnce(DriverError) -> Error + '_ {
        move |e| self.driver_error(call, e)
    }

    /// The device ordinal.
    pub fn ordinal(&self) -> usize {
        self.inner.ordinal
    }

    /// The cudarc context (the device's primary context); an error on the CPU device.
    pub fn context(&self) -> Result<&Arc<CudaContext>> {
        self.cuda_context("a CUDA context")
    }

    /// The device's name, e.g. `NVIDIA H200`.
    pub fn name(&self) -> &str {
        &self.inner.props.name
    }

    /// `(major, minor)`, e.g. `(9, 0)`.
    pub fn compute_capability(&self) -> (u32, u32) {
        self.inner.props.compute_capability
    }

    /// Total device memory in bytes.
    pub fn total_memory(&self) -> usize {
        self.inner.props.total_memory
    }

    /// `(free, total)` device memory in bytes right now, as the driver reports it.
    pub fn memory_info(&self) -> Result<(usize, usize)> {
        self.check_alive()?;
        match &self.inner.backend {
            Backend::Cuda { ctx, .. } => ctx.mem_get_info().map_err(self.driver_fn("cuMemGetInfo")),
            Backend::Cpu => host_memory().ok_or_else(|| Error::Unsupported {
                what: "the host's memory size (read from /proc/meminfo, which this system lacks)".into(),
            }),
        }
    }

    /// The most threads a block may have.
    pub fn max_threads_per_block(&self) -> u32 {
        self.inner.props.max_threads_per_block
    }

    /// The largest block extent along x, y and z.
    pub fn max_block_dim(&self) -> [u32; 3] {
        self.inner.props.max_block_dim
    }

    /// The largest grid extent along x, y and z.
    pub fn max_grid_dim(&self) -> [u32; 3] {
        self.inner.props.max_grid_dim
    }

    /// Static plus dynamic shared memory a block may use without opting in (bytes).
    pub fn max_shared_memory_per_block(&self) -> usize {
        self.inner.props.max_shared_memory_per_block
    }

    /// Shared memory a block may use after opting in through the function attribute
    /// `max_dynamic_shared_size_bytes` (bytes).
    pub fn max_shared_memory_per_block_optin(&self) -> usize {
        self.inner.props.max_shared_memory_per_block_optin
    }

    /// The number of streaming multiprocessors.
    pub fn multiprocessor_count(&self) -> u32 {
        self.inner.props.multiprocessor_count
    }

    /// Threads per warp (32 on every NVIDIA GPU so far).
    pub fn warp_size(&self) -> u32 {
        self.inner.props.warp_size
    }

    /// Any device attribute, read from the driver now.
    pub fn attribute(&self, a: CUdevice_attribute) -> Result<i32> {
        attr(self.cuda_context("a CUDA device attribute")?, a, "cuDeviceGetAttribute")
    }

    /// The CUDA driver's version (see [`driver_version`]).
    pub fn driver_version(&self) -> Result<i32> {
        driver_version()
    }

    /// Waits for all work on this device to finish. Reports the first out-of-range index of a
    /// kernel on this device since the last report ([`Error::IndexOutOfBounds`]).
    pub fn synchronize(&self) -> Result<()> {
        self.check_alive()?;
        if let Backend::Cuda { ctx, .. } = &self.inner.backend {
            ctx.synchronize().map_err(self.driver_fn("cuCtxSynchronize"))?;
        }
        crate::bounds::check(self.ordinal())
    }

    pub(crate) fn inner(&self) -> &DeviceInner {
        &self.inner
    }
}

impl PartialEq for Device {
    fn eq(&self, other: &Self) -> bool {
        self.inner.ordinal == other.inner.ordinal
    }
}

impl Eq for Device {}

impl fmt::Debug for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_cpu() {
            return write!(f, "Device(cpu: {})", self.inner.props.name);
        }
        let (ma, mi) = self.inner.props.compute_capability;
        write!(
            f,
            "Device({}: {}, sm_{ma}{mi})",
            self.inner.ordinal, self.inner.props.name
        )
    }
}

/// Restores the previously current device when dropped (see [`Device::use_scoped`]).
#[must_use = "the previous device is restored when the guard is dropped"]
pub struct DeviceGuard {
    previous: usize,
    _not_send: PhantomData<*const ()>,
}

impl Drop for DeviceGuard {
    fn drop(&mut self) {
        CURRENT_DEVICE.with(|c| c.set(Some(self.previous)));
        if let Some(Some(d)) = devices()
            .ok()
            .map(|s| s.get(self.previous).and_then(|d| d.get()))
        {
            let _ = d.bind_to_thread();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On a machine without a driver or GPU (like CI), everything returns an error, no panic.
    #[test]
    fn no_gpu_gives_errors_not_panics() {
        match Device::count() {
            Ok(n) => {
                // A GPU machine: the ordinal past the end is an error.
                match Device::get(n) {
                    Err(Error::InvalidDevice { ordinal, count }) => {
                        assert_eq!((ordinal, count), (n, n))
                    }
                    Err(Error::NoDevice) => assert_eq!(n, 0),
                    other => panic!("unexpected {:?}", other.map(|_| ())),
                }
            }
            Err(e) => {
                assert!(e.is_no_gpu(), "{e}");
                let e2 = Device::get(0).map(|_| ()).unwrap_err();
                assert!(e2.is_no_gpu(), "{e2}");
                assert!(Device::current().is_err());
                assert!(driver_version().is_err());
                assert!(Device::use_device(0).is_err());
            }
        }
        assert_eq!(Device::current_ordinal(), default_ordinal());
    }

    #[test]
    fn the_cpu_device_is_always_there() {
        let cpu = Device::cpu();
        assert!(cpu.is_cpu());
        assert_eq!(cpu.ordinal(), CPU_ORDINAL);
        assert_eq!(Device::get(CPU_ORDINAL).unwrap(), cpu);
        assert!(cpu.name().starts_with("CPU ("), "{}", cpu.name());
        assert!(cpu.multiprocessor_count() >= 1);
        assert_eq!(cpu.warp_size(), 32);
        cpu.synchronize().unwrap();
        cpu.bind_to_thread().unwrap();
        let e = cpu.context().map(|_| ()).unwrap_err().to_string();
        assert!(e.contains("CPU device") && e.contains("Device::get(0)"), "{e}");
        assert!(format!("{cpu:?}").starts_with("Device(cpu: CPU ("), "{cpu:?}");
        // Made current for a scope, then the previous device again.
        let before = Device::current_ordinal();
        {
            let _g = cpu.use_scoped().unwrap();
            assert_eq!(Device::current_ordinal(), CPU_ORDINAL);
            assert_eq!(Device::current().unwrap(), cpu);
        }
        assert_eq!(Device::current_ordinal(), before);
    }
}
