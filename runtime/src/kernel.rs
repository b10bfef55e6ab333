//! `RawKernel` (CuPy's `cupy.RawKernel`): one kernel of a [`RawModule`], compiled lazily on first
//! use per device; its attributes; and [`KernelFunction`], a kernel loaded on one device, which is
//! what a launch uses.

use std::fmt;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::result;
use cudarc::driver::sys::{self, CUfunction_attribute};

use crate::device::Device;
use crate::error::{Error, Result};
use crate::launch::{self, KernelArgs, LaunchConfig, LaunchLimits};
use crate::module::{ModuleHandle, RawModule, resolve_symbol};

/// The ten attributes CuPy's `RawKernel.attributes` reports, read from the driver.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KernelAttributes {
    /// The most threads a block of this kernel may have.
    pub max_threads_per_block: i32,
    /// Static shared memory per block, in bytes.
    pub shared_size_bytes: i32,
    /// User `__constant__` memory, in bytes.
    pub const_size_bytes: i32,
    /// Local memory per thread, in bytes.
    pub local_size_bytes: i32,
    /// Registers per thread.
    pub num_regs: i32,
    /// The PTX virtual architecture it was compiled for (e.g. 90).
    pub ptx_version: i32,
    /// The binary architecture (e.g. 90).
    pub binary_version: i32,
    /// Whether it was compiled with `-Xptxas --dlcm=ca` (1) or not (0).
    pub cache_mode_ca: i32,
    /// The most dynamic shared memory a launch may ask for, in bytes (settable).
    pub max_dynamic_shared_size_bytes: i32,
    /// The preferred shared memory carveout in percent, -1 for no preference (settable).
    pub preferred_shared_memory_carveout: i32,
}

/// A kernel loaded on one device: its `CUfunction`, the module that holds it, and the limits a
/// launch is checked against.
pub struct KernelFunction {
    raw: sys::CUfunction,
    module: Arc<ModuleHandle>,
    name: String,
    max_threads_per_block: u32,
    static_shared_bytes: u32,
    max_dynamic_shared_bytes: AtomicU32,
    max_block_dim: [u32; 3],
    max_grid_dim: [u32; 3],
    max_shared_optin: u32,
    /// `(block size << 32) | resident blocks per SM` of the last occupancy query (0: none).
    occupancy: AtomicU64,
}

// SAFETY: a CUfunction is a driver handle usable from any thread with its context bound (every
// use binds it); the module it belongs to is kept loaded by `module`.
unsafe impl Send for KernelFunction {}
// SAFETY: as above; shared access reads the handle, or goes through the driver (attribute
// setters) and an atomic.
unsafe impl Sync for KernelFunction {}

impl fmt::Debug for KernelFunction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "KernelFunction({} on device {})",
            self.name,
            self.device().ordinal()
        )
    }
}

fn attr_name(a: CUfunction_attribute) -> &'static str {
    use CUfunction_attribute::*;
    match a {
        CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK => "max_threads_per_block",
        CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES => "shared_size_bytes",
        CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES => "const_size_bytes",
        CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES => "local_size_bytes",
        CU_FUNC_ATTRIBUTE_NUM_REGS => "num_regs",
        CU_FUNC_ATTRIBUTE_PTX_VERSION => "ptx_version",
        CU_FUNC_ATTRIBUTE_BINARY_VERSION => "binary_version",
        CU_FUNC_ATTRIBUTE_CACHE_MODE_CA => "cache_mode_ca",
        CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES => "max_dynamic_shared_size_bytes",
        CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT => "preferred_shared_memory_carveout",
        _ => "attribute",
    }
}

impl KernelFunction {
    /// Loads kernel `symbol` of a loaded module; `Ok(None)` when the module has no such kernel.
    pub(crate) fn load(
        module: &Arc<ModuleHandle>,
        symbol: &str,
        name: &str,
    ) -> Result<Option<KernelFunction>> {
        let Some(raw) = module.function(symbol)? else {
            return Ok(None);
        };
        let device = module.device();
        let mut f = KernelFunction {
            raw,
            module: module.clone(),
            name: name.to_string(),
            max_threads_per_block: 0,
            static_shared_bytes: 0,
            max_dynamic_shared_bytes: AtomicU32::new(0),
            occupancy: AtomicU64::new(0),
            max_block_dim: device.max_block_dim(),
            max_grid_dim: device.max_grid_dim(),
            max_shared_optin: u32::try_from(device.max_shared_memory_per_block_optin())
                .unwrap_or(u32::MAX),
        };
        use CUfunction_attribute::*;
        f.max_threads_per_block =
            f.attribute(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?.max(0) as u32;
        f.static_shared_bytes = f.attribute(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)?.max(0) as u32;
        let dynamic = f
            .attribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)?
            .max(0) as u32;
        f.max_dynamic_shared_bytes = AtomicU32::new(dynamic);
        Ok(Some(f))
    }

    /// How many blocks of `block` threads (no dynamic shared memory) can be resident on one SM
    /// at once (`cuOccupancyMaxActiveBlocksPerMultiprocessor`), remembered for the last block
    /// size asked: launch planners size grids to whole waves with it.
    pub fn resident_blocks_per_sm(&self, block: u32) -> Result<u32> {
        let cached = self.occupancy.load(Ordering::Relaxed);
        if cached != 0 && (cached >> 32) as u32 == block {
            return Ok(cached as u32);
        }
        self.device().bind_to_thread()?;
        let mut n: std::ffi::c_int = 0;
        // SAFETY: `self.raw` is a function of a module this kernel keeps loaded, in the context
        // bound to this thread just above; `n` is a valid out pointer.
        unsafe { sys::cuOccupancyMaxActiveBlocksPerMultiprocessor(&mut n, self.raw, block as std::ffi::c_int, 0) }
            .result()
            .map_err(|e| Error::driver("cuOccupancyMaxActiveBlocksPerMultiprocessor", e))?;
        let n = n.max(1) as u32;
        self.occupancy.store((u64::from(block) << 32) | u64::from(n), Ordering::Relaxed);
        Ok(n)
    }

    /// The kernel's name as the user gave it (a symbol or a name expression).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The device it is loaded on.
    pub fn device(&self) -> &Device {
        self.module.device()
    }

    /// The raw `CUfunction` (valid while this value is alive).
    pub fn raw(&self) -> sys::CUfunction {
        self.raw
    }

    /// What launches of this kernel are checked against.
    #[inline]
    pub fn limits(&self) -> LaunchLimits {
        LaunchLimits {
            max_threads_per_block: self.max_threads_per_block,
            max_block_dim: self.max_block_dim,
            max_grid_dim: self.max_grid_dim,
            max_dynamic_shared_bytes: self.max_dynamic_shared_bytes.load(Ordering::Relaxed),
            max_shared_optin: self.max_shared_optin,
            static_shared_bytes: self.static_shared_bytes,
        }
    }

    /// One attribute, read from the driver now.
    pub fn attribute(&self, a: CUfunction_attribute) -> Result<i32> {
        self.device().bind_to_thread()?;
        // SAFETY: `self.raw` is a function of a module `self.module` keeps loaded, in the
        // context bound above.
        unsafe { result::function::get_function_attribute(self.raw, a) }
            .map_err(Error::driver_fn("cuFuncGetAttribute"))
    }

    /// Sets one attribute (the driver accepts `max_dynamic_shared_size_bytes`,
    /// `preferred_shared_memory_carveout` and a few others).
    pub fn set_attribute(&self, a: CUfunction_attribute, value: i32) -> Result<()> {
        self.device().bind_to_thread()?;
        // SAFETY: as in `attribute`.
        unsafe { result::function::set_function_attribute(self.raw, a, value) }.map_err(|e| {
            if e.0 == sys::CUresult::CUDA_ERROR_INVALID_VALUE {
                Error::InvalidLaunch {
                    kernel: self.name.clone(),
                    detail: format!(
                        "the driver refused {} = {value}: for max_dynamic_shared_size_bytes the \
                         most is this device's {} bytes of shared memory per block minus the \
                         kernel's {} static bytes; a carveout is -1 or 0..=100",
                        attr_name(a),
                        self.max_shared_optin,
                        self.static_shared_bytes
                    ),
                }
            } else {
                Error::driver("cuFuncSetAttribute", e)
            }
        })?;
        if a == CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES {
            self.max_dynamic_shared_bytes
                .store(value.max(0) as u32, Ordering::Relaxed);
        }
        Ok(())
    }

    /// All ten attributes.
    pub fn attributes(&self) -> Result<KernelAttributes> {
        use CUfunction_attribute::*;
        Ok(KernelAttributes {
            max_threads_per_block: self.attribute(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
            shared_size_bytes: self.attribute(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)?,
            const_size_bytes: self.attribute(CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES)?,
            local_size_bytes: self.attribute(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)?,
            num_regs: self.attribute(CU_FUNC_ATTRIBUTE_NUM_REGS)?,
            ptx_version: self.attribute(CU_FUNC_ATTRIBUTE_PTX_VERSION)?,
            binary_version: self.attribute(CU_FUNC_ATTRIBUTE_BINARY_VERSION)?,
            cache_mode_ca: self.attribute(CU_FUNC_ATTRIBUTE_CACHE_MODE_CA)?,
            max_dynamic_shared_size_bytes: self
                .attribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)?,
            preferred_shared_memory_carveout: self
                .attribute(CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT)?,
        })
    }
}

/// Attribute values set through a `RawKernel`, applied to every device it is (or gets) loaded on.
#[derive(Default)]
struct Settings {
    max_dynamic_shared_size_bytes: Option<i32>,
    preferred_shared_memory_carveout: Option<i32>,
}

struct KernelInner {
    module: RawModule,
    name: String,
    /// Per device ordinal, sized by the device count on first use.
    functions: OnceLock<Box<[OnceLock<Arc<KernelFunction>>]>>,
    settings: Mutex<Settings>,
}

/// A kernel from CUDA C source (CuPy's `RawKernel`), compiled on its first launch on each device
/// (through the kernel cache), or taken from a [`RawModule`]. Cheap to clone.
///
/// ```no_run
/// # use cuprum_runtime::{Array, kernel::RawKernel, launch::LaunchConfig};
/// let add = RawKernel::new(r#"
///     extern "C" __global__ void my_add(const float* x1, const float* x2, float* y) {
///         int tid = blockDim.x * blockIdx.x + threadIdx.x;
///         y[tid] = x1[tid] + x2[tid];
///     }"#, "my_add");
/// let x1 = Array::<f32>::arange(25)?;
/// let x2 = Array::<f32>::arange(25)?;
/// let mut y = Array::<f32>::zeros(25)?;
/// // SAFETY: my_add takes (const float*, const float*, float*) and touches 25 elements.
/// unsafe { add.launch(&LaunchConfig::new(5, 5), (&x1, &x2, &mut y))? };
/// # Ok::<(), cuprum_runtime::Error>(())
/// ```
#[derive(Clone)]
pub struct RawKernel {
    inner: Arc<KernelInner>,
}

impl fmt::Debug for RawKernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RawKernel")
            .field("name", &self.inner.name)
            .field("module", &self.inner.module)
            .finish()
    }
}

impl RawKernel {
    /// The kernel `name` (an `extern "C"` symbol) of the CUDA source `code`. Nothing is compiled
    /// until the first launch (or [`RawKernel::compile`]).
    pub fn new(code: impl Into<String>, name: impl Into<String>) -> RawKernel {
        RawKernel::from_module(&RawModule::new(code), name)
    }

    /// The same kernel compiled with these NVRTC options (e.g. `["-DN=4"]`).
    pub fn options<I, S>(self, options: I) -> RawKernel
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let module = self.inner.module.clone().options(options);
        RawKernel::from_module(&module, self.inner.name.clone())
    }

    /// Kernel `name` of `module`: a symbol, or one of the module's name expressions. Loaded on
    /// first use (see [`RawModule::get_function`] for a checked lookup).
    pub fn from_module(module: &RawModule, name: impl Into<String>) -> RawKernel {
        RawKernel {
            inner: Arc::new(KernelInner {
                module: module.clone(),
                name: name.into(),
                functions: OnceLock::new(),
                settings: Mutex::new(Settings::default()),
            }),
        }
    }

    /// The kernel's name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The module it belongs to.
    pub fn module(&self) -> &RawModule {
        &self.inner.module
    }

    /// Compiles (or finds in the cache) and loads the kernel on the current device now.
    pub fn compile(&self) -> Result<()> {
        self.function().map(|_| ())
    }

    /// The kernel loaded on the current device (compiling and loading it when needed).
    pub fn function(&self) -> Result<&KernelFunction> {
        self.function_at(Device::current_ordinal())
    }

    /// The kernel loaded on `device`.
    pub fn function_for(&self, device: &Device) -> Result<&KernelFunction> {
        self.function_at(device.ordinal())
    }

    /// The kernel loaded on device `ordinal`.
    #[inline]
    pub fn function_at(&self, ordinal: usize) -> Result<&KernelFunction> {
        if let Some(f) = self
            .inner
            .functions
            .get()
            .and_then(|s| s.get(ordinal))
            .and_then(|s| s.get())
        {
            return Ok(f);
        }
        self.load_at(ordinal)
    }

    #[cold]
    fn load_at(&self, ordinal: usize) -> Result<&KernelFunction> {
        let device = Device::get(ordinal)?;
        let slots = self.inner.functions.get_or_init(|| {
            let n = Device::count().unwrap_or(0).max(ordinal + 1);
            (0..n).map(|_| OnceLock::new()).collect()
        });
        let slot = slots.get(ordinal).ok_or(Error::InvalidDevice {
            ordinal,
            count: slots.len(),
        })?;
        let loaded = self.inner.module.loaded_on(&device)?;
        let symbol = resolve_symbol(&loaded, &self.inner.name);
        let Some(f) = KernelFunction::load(&loaded.handle, symbol, &self.inner.name)? else {
            return Err(Error::FunctionNotFound {
                name: self.inner.name.clone(),
                hint: self.inner.module.kernel_hint(&self.inner.name),
            });
        };
        {
            let s = self
                .inner
                .settings
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            if let Some(v) = s.max_dynamic_shared_size_bytes {
                f.set_attribute(
                    CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    v,
                )?;
            }
            if let Some(v) = s.preferred_shared_memory_carveout {
                f.set_attribute(
                    CUfunction_attribute::CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
                    v,
                )?;
            }
        }
        // Another thread may have set it meanwhile: either value is the same kernel.
        let _ = slot.set(Arc::new(f));
        Ok(slot.get().expect("set above"))
    }

    /// Launches the kernel on `cfg`'s stream (default: the current stream of the current device),
    /// compiling and loading it on that device first if needed. A bad configuration (zero or
    /// too large grid/block, too much dynamic shared memory) is an error and nothing is launched.
    ///
    /// # Safety
    ///
    /// As [`launch::launch`]: `args` must match the kernel's parameters in number, order and type,
    /// and the kernel must stay within the memory it is given. CuPy does not check either; nor
    /// can cuprum, for a kernel written in CUDA C.
    #[inline]
    pub unsafe fn launch<A: KernelArgs>(&self, cfg: &LaunchConfig<'_>, args: A) -> Result<()> {
        let ordinal = match cfg.stream {
            Some(s) => s.device().ordinal(),
            None => Device::current_ordinal(),
        };
        let f = self.function_at(ordinal)?;
        // SAFETY: forwarded to the caller (this function's contract).
        unsafe { launch::launch(f, cfg, args) }
    }

    /// The ten attributes on the current device (loading the kernel when needed).
    pub fn attributes(&self) -> Result<KernelAttributes> {
        self.function()?.attributes()
    }

    fn attr(&self, a: CUfunction_attribute) -> Result<i32> {
        self.function()?.attribute(a)
    }

    pub fn max_threads_per_block(&self) -> Result<i32> {
        self.attr(CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)
    }

    pub fn shared_size_bytes(&self) -> Result<i32> {
        self.attr(CUfunction_attribute::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)
    }

    pub fn const_size_bytes(&self) -> Result<i32> {
        self.attr(CUfunction_attribute::CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES)
    }

    pub fn local_size_bytes(&self) -> Result<i32> {
        self.attr(CUfunction_attribute::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)
    }

    pub fn num_regs(&self) -> Result<i32> {
        self.attr(CUfunction_attribute::CU_FUNC_ATTRIBUTE_NUM_REGS)
    }

    pub fn ptx_version(&self) -> Result<i32> {
        self.attr(CUfunction_attribute::CU_FUNC_ATTRIBUTE_PTX_VERSION)
    }

    pub fn binary_version(&self) -> Result<i32> {
        self.attr(CUfunction_attribute::CU_FUNC_ATTRIBUTE_BINARY_VERSION)
    }

    pub fn cache_mode_ca(&self) -> Result<i32> {
        self.attr(CUfunction_attribute::CU_FUNC_ATTRIBUTE_CACHE_MODE_CA)
    }

    pub fn max_dynamic_shared_size_bytes(&self) -> Result<i32> {
        self.attr(CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)
    }

    pub fn preferred_shared_memory_carveout(&self) -> Result<i32> {
        self.attr(CUfunction_attribute::CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT)
    }

    /// Lets launches ask for up to `bytes` of dynamic shared memory (above the default 48 KiB
    /// needs this). Applied on the current device now (loading the kernel there) and on every
    /// other device the kernel is or gets loaded on.
    pub fn set_max_dynamic_shared_size_bytes(&self, bytes: i32) -> Result<()> {
        self.set(
            CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            bytes,
            |s| s.max_dynamic_shared_size_bytes = Some(bytes),
        )
    }

    /// Sets the preferred shared memory carveout (percent of the unified L1/shared memory, or -1
    /// for no preference), as [`RawKernel::set_max_dynamic_shared_size_bytes`] does.
    pub fn set_preferred_shared_memory_carveout(&self, percent: i32) -> Result<()> {
        self.set(
            CUfunction_attribute::CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
            percent,
            |s| s.preferred_shared_memory_carveout = Some(percent),
        )
    }

    fn set(
        &self,
        a: CUfunction_attribute,
        value: i32,
        remember: impl FnOnce(&mut Settings),
    ) -> Result<()> {
        // Validate on the current device first, so a refused value is not remembered.
        self.function()?.set_attribute(a, value)?;
        let mut s = self
            .inner
            .settings
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        remember(&mut s);
        if let Some(slots) = self.inner.functions.get() {
            for f in slots.iter().filter_map(|s| s.get()) {
                f.set_attribute(a, value)?;
            }
        }
        Ok(())
    }
}
