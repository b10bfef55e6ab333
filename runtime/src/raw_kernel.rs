//! `RawKernel` (CuPy's `cupy.RawKernel`): one kernel of a [`RawModule`], compiled lazily on first
//! use per device, and [`RawModule::get_function`].

use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::sys::CUfunction_attribute;

use crate::device::Device;
use crate::error::{Error, Result};
use crate::function::{KernelAttributes, KernelFunction};
use crate::launch::{self, KernelArgs, LaunchConfig};
use crate::module::{RawModule, resolve_symbol};
use crate::sync;


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
/// # use cuprum_runtime::{Array, LaunchConfig, RawKernel};
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

    /// The same kernel with CuPy's `translate_cucomplex` on or off
    /// ([`RawModule::translate_cucomplex`]): `cuComplex.h` code compiles against cuprum's
    /// complex type, so the kernel takes `Array<Complex<f32>>` for `cuFloatComplex*`.
    pub fn translate_cucomplex(self, on: bool) -> RawKernel {
        let module = self.inner.module.clone().translate_cucomplex(on);
        RawKernel::from_module(&module, self.inner.name.clone())
    }

    /// The same kernel with CuPy's `enable_cooperative_groups` on or off
    /// ([`RawModule::enable_cooperative_groups`]): [`RawKernel::launch`] launches it
    /// cooperatively, so its source may sync the grid with
    /// `cooperative_groups::this_grid().sync()`, after checking the grid against
    /// [`RawKernel::max_cooperative_blocks`].
    pub fn enable_cooperative_groups(self, on: bool) -> RawKernel {
        let module = self.inner.module.clone().enable_cooperative_groups(on);
        RawKernel::from_module(&module, self.inner.name.clone())
    }

    /// The most blocks a cooperative launch of this kernel with `cfg`'s block and dynamic shared
    /// memory may have on `cfg`'s device (the blocks the device keeps resident at once:
    /// `cuOccupancyMaxActiveBlocksPerMultiprocessor` times the multiprocessors; loading the
    /// kernel when needed). 0 when no such block fits on a multiprocessor.
    pub fn max_cooperative_blocks(&self, cfg: &LaunchConfig<'_>) -> Result<u32> {
        let ordinal = match cfg.stream {
            Some(s) => s.device().ordinal(),
            None => Device::current_ordinal(),
        };
        Ok(self.function_at(ordinal)?.co_residency(cfg.block, cfg.shared_mem_bytes)?.blocks_u32())
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

    /// NVRTC's log of the compile that made this kernel's module for the current device
    /// ([`RawModule::compile_log`]: `None` before the first launch or `compile()` there, and
    /// when the kernel cache served the image).
    pub fn compile_log(&self) -> Option<&str> {
        self.inner.module.compile_log()
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
        if device.is_cpu() {
            return Err(Error::kernel_on_cpu(&format!("kernel `{}`", self.inner.name)));
        }
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
            let s = sync::lock(&self.inner.settings);
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
    /// With `enable_cooperative_groups` the launch is cooperative (`cuLaunchCooperativeKernel`)
    /// and a grid of more than [`RawKernel::max_cooperative_blocks`] blocks is
    /// [`Error::CooperativeGrid`].
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
        if self.inner.module.is_cooperative() {
            // SAFETY: forwarded to the caller (this function's contract).
            return unsafe { launch::launch_cooperative_groups(f, cfg, args) };
        }
        // SAFETY: forwarded to the caller (this function's contract).
        unsafe { launch::launch_raw_kernel(f, cfg, args) }
    }

    /// The ten attributes on the current device (loading the kernel when needed).
    pub fn attributes(&self) -> Result<KernelAttributes> {
        self.function()?.attributes()
    }

    fn attr(&self, a: CUfunction_attribute) -> Result<i32> {
        self.function()?.attribute(a)
    }

    /// The most threads per block a launch of this kernel may use (`CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK`).
    pub fn max_threads_per_block(&self) -> Result<i32> {
        self.attr(CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)
    }

    /// Its static shared memory, in bytes (`CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES`).
    pub fn shared_size_bytes(&self) -> Result<i32> {
        self.attr(CUfunction_attribute::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)
    }

    /// Its constant memory, in bytes (`CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES`).
    pub fn const_size_bytes(&self) -> Result<i32> {
        self.attr(CUfunction_attribute::CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES)
    }

    /// Its local memory per thread, in bytes (`CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES`).
    pub fn local_size_bytes(&self) -> Result<i32> {
        self.attr(CUfunction_attribute::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)
    }

    /// Registers per thread (`CU_FUNC_ATTRIBUTE_NUM_REGS`).
    pub fn num_regs(&self) -> Result<i32> {
        self.attr(CUfunction_attribute::CU_FUNC_ATTRIBUTE_NUM_REGS)
    }

    /// The PTX ISA version it was compiled from, `major * 10 + minor` (`CU_FUNC_ATTRIBUTE_PTX_VERSION`).
    pub fn ptx_version(&self) -> Result<i32> {
        self.attr(CUfunction_attribute::CU_FUNC_ATTRIBUTE_PTX_VERSION)
    }

    /// The architecture of its machine code, `major * 10 + minor` (`CU_FUNC_ATTRIBUTE_BINARY_VERSION`).
    pub fn binary_version(&self) -> Result<i32> {
        self.attr(CUfunction_attribute::CU_FUNC_ATTRIBUTE_BINARY_VERSION)
    }

    /// 1 if it was compiled with `-Xptxas --dlcm=ca` (`CU_FUNC_ATTRIBUTE_CACHE_MODE_CA`).
    pub fn cache_mode_ca(&self) -> Result<i32> {
        self.attr(CUfunction_attribute::CU_FUNC_ATTRIBUTE_CACHE_MODE_CA)
    }

    /// The most dynamic shared memory a launch may ask for, in bytes (`CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`).
    pub fn max_dynamic_shared_size_bytes(&self) -> Result<i32> {
        self.attr(CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)
    }

    /// The preferred shared memory share of L1, in percent (`CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT`).
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
        let mut s = sync::lock(&self.inner.settings);
        remember(&mut s);
        if let Some(slots) = self.inner.functions.get() {
            for f in slots.iter().filter_map(|s| s.get()) {
                f.set_attribute(a, value)?;
            }
        }
        Ok(())
    }
}

impl RawModule {
    /// A kernel of this module, loaded on the current device now (so a missing kernel is an
    /// error here); other devices load it on first launch. `name` is a name expression given to
    /// [`RawModule::name_expressions`] or the kernel's symbol (`extern "C"` name).
    pub fn get_function(&self, name: &str) -> Result<RawKernel> {
        let kernel = RawKernel::from_module(self, name);
        kernel.function()?;
        Ok(kernel)
    }
}


