//! [`KernelFunction`]: a kernel loaded on one device (its handle, its attributes, the limits a
//! launch is checked against), which is what a launch uses.

use std::fmt;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

use cudarc::driver::result;
use cudarc::driver::sys::{self, CUfunction_attribute};

use crate::device::Device;
use crate::error::{Error, Result};
use crate::dim3::Dim3;
use crate::module::ModuleHandle;

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
    /// Interned (`fault::intern`): launches record it as their device's last kernel.
    name: &'static String,
    /// The NVTX range of its launches (`launch::nvtx`): the Rust name and instance.
    #[cfg(feature = "nvtx")]
    range_name: Box<std::ffi::CStr>,
    max_threads_per_block: u32,
    static_shared_bytes: u32,
    max_dynamic_shared_bytes: AtomicU32,
    max_block_dim: [u32; 3],
    max_grid_dim: [u32; 3],
    max_shared_optin: u32,
    /// `(block size << 32) | resident blocks per SM` of the last occupancy query (0: none).
    occupancy: AtomicU64,
    /// `(threads per block, dynamic shared bytes, resident blocks per SM)` of the last
    /// co-residency query (a cooperative launch makes one per launch).
    co_residency: std::sync::Mutex<Option<(u32, u32, u32)>>,
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
            name: crate::fault::intern(name),
            #[cfg(feature = "nvtx")]
            range_name: range_name(symbol),
            max_threads_per_block: 0,
            static_shared_bytes: 0,
            max_dynamic_shared_bytes: AtomicU32::new(0),
            occupancy: AtomicU64::new(0),
            co_residency: std::sync::Mutex::new(None),
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
            .map_err(self.device().driver_fn("cuOccupancyMaxActiveBlocksPerMultiprocessor"))?;
        let n = n.max(1) as u32;
        self.occupancy.store((u64::from(block) << 32) | u64::from(n), Ordering::Relaxed);
        Ok(n)
    }

    /// How many blocks of `block` threads with `shared_mem_bytes` of dynamic shared memory the
    /// device keeps resident at once (`cuOccupancyMaxActiveBlocksPerMultiprocessor` times the
    /// multiprocessor count): the most blocks a cooperative launch of this kernel may have (a
    /// kernel that calls `grid_sync()`). Remembered for the last configuration asked.
    pub fn co_residency(&self, block: Dim3, shared_mem_bytes: u32) -> Result<CoResidency> {
        let threads = block.x.saturating_mul(block.y).saturating_mul(block.z);
        let multiprocessors = self.device().multiprocessor_count();
        if let Some((t, s, n)) = *crate::sync::lock(&self.co_residency)
            && (t, s) == (threads, shared_mem_bytes)
        {
            return Ok(CoResidency { per_multiprocessor: n, multiprocessors });
        }
        self.device().bind_to_thread()?;
        let mut n: std::ffi::c_int = 0;
        // SAFETY: `self.raw` is a function of a module this kernel keeps loaded, in the context
        // bound to this thread just above; `n` is a valid out pointer.
        unsafe {
            sys::cuOccupancyMaxActiveBlocksPerMultiprocessor(
                &mut n,
                self.raw,
                threads.min(i32::MAX as u32) as std::ffi::c_int,
                shared_mem_bytes as usize,
            )
        }
        .result()
        .map_err(self.device().driver_fn("cuOccupancyMaxActiveBlocksPerMultiprocessor"))?;
        let n = n.max(0) as u32;
        *crate::sync::lock(&self.co_residency) = Some((threads, shared_mem_bytes, n));
        Ok(CoResidency { per_multiprocessor: n, multiprocessors })
    }

    /// The kernel's name as the user gave it (a symbol or a name expression).
    pub fn name(&self) -> &str {
        self.name
    }

    /// Keeps this function's module loaded for the graph being recorded on this thread, if one is
    /// (`crate::capture`): a replay after the last `RawKernel` holding it was dropped would run
    /// an unloaded function.
    #[inline]
    pub(crate) fn keep_for_capture(&self) {
        crate::capture::keep(&self.module);
    }

    /// The name, interned: what a launch records as its device's last kernel (`fault.rs`).
    #[inline]

    pub(crate) fn interned_name(&self) -> &'static String {
        self.name
    }

    /// The name of the NVTX range around its launches (`launch::nvtx`).
    #[cfg(feature = "nvtx")]
    pub(crate) fn range_name(&self) -> &std::ffi::CStr {
        &self.range_name
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

    /// The most dynamic shared memory this kernel can be let use on its device: the device's
    /// shared memory per block after opting in, minus the kernel's static shared memory.
    pub fn max_dynamic_shared_optin(&self) -> u32 {
        self.max_shared_optin.saturating_sub(self.static_shared_bytes)
    }

    /// The limit a launch of a generated kernel asking for `bytes` of dynamic shared memory, more
    /// than [`LaunchLimits::max_dynamic_shared_bytes`] now, is checked against: when `bytes` fits
    /// [`KernelFunction::max_dynamic_shared_optin`], the kernel's
    /// `max_dynamic_shared_size_bytes` is raised to that maximum first (one driver call in the
    /// kernel's life: the raised value is kept, and every later request fits under it); a larger
    /// request is left for the launch check to refuse, against that maximum. Concurrent raises
    /// all write the same value.
    #[cold]
    pub(crate) fn raise_dynamic_shared(&self, bytes: u32) -> Result<u32> {
        let most = self.max_dynamic_shared_optin();
        let now = self.max_dynamic_shared_bytes.load(Ordering::Relaxed);
        if now >= most {
            return Ok(now);
        }
        if bytes > most {
            return Ok(most);
        }
        self.set_attribute(
            CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            i32::try_from(most).unwrap_or(i32::MAX),
        )?;
        Ok(most)
    }

    /// One attribute, read from the driver now.
    pub fn attribute(&self, a: CUfunction_attribute) -> Result<i32> {
        self.device().bind_to_thread()?;
        // SAFETY: `self.raw` is a function of a module `self.module` keeps loaded, in the
        // context bound above.
        unsafe { result::function::get_function_attribute(self.raw, a) }
            .map_err(self.device().driver_fn("cuFuncGetAttribute"))
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
                self.device().driver_error("cuFuncSetAttribute", e)
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

/// How many blocks of one configuration (threads per block, dynamic shared memory) a device keeps
/// resident at once: the most a cooperative launch (a kernel that calls `grid_sync()`) may have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CoResidency {
    /// Blocks one multiprocessor holds at once (`cuOccupancyMaxActiveBlocksPerMultiprocessor`
    /// on a GPU; 0 when not even one fits).
    pub per_multiprocessor: u32,
    /// The device's multiprocessors.
    pub multiprocessors: u32,
}

impl CoResidency {
    /// The most blocks a cooperative launch may have: `per_multiprocessor * multiprocessors`.
    pub fn blocks(&self) -> u64 {
        u64::from(self.per_multiprocessor) * u64::from(self.multiprocessors)
    }

    /// [`CoResidency::blocks`] as a grid dimension (saturated at `u32::MAX`).
    pub fn blocks_u32(&self) -> u32 {
        u32::try_from(self.blocks()).unwrap_or(u32::MAX)
    }
}

/// What a launch is checked against: the device's limits and the kernel's attributes, read when
/// the kernel is loaded on a device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchLimits {
    /// The kernel's `max_threads_per_block` attribute (at most the device's limit).
    pub max_threads_per_block: u32,
    /// The device's largest block extent per dimension.
    pub max_block_dim: [u32; 3],
    /// The device's largest grid extent per dimension.
    pub max_grid_dim: [u32; 3],
    /// The kernel's `max_dynamic_shared_size_bytes` attribute now.
    pub max_dynamic_shared_bytes: u32,
    /// The device's shared memory per block after opting in.
    pub max_shared_optin: u32,
    /// The kernel's static shared memory (`shared_size_bytes`).
    pub static_shared_bytes: u32,
}

impl LaunchLimits {
    /// The CPU device's limits, those of a CUDA device of compute capability 9.0 (docs/cpu.md):
    /// what every launch on it is checked against, so that a configuration a GPU refuses is
    /// refused there too. The dynamic shared memory limit is the opt-in maximum at once, as a
    /// generated launch on a GPU raises it; what a GPU alone knows (registers lowering a kernel's
    /// `max_threads_per_block`, its static shared memory) is not checked here.
    pub(crate) fn cpu_device() -> LaunchLimits {
        let cpu = Device::cpu();
        LaunchLimits {
            max_threads_per_block: cpu.max_threads_per_block(),
            max_block_dim: cpu.max_block_dim(),
            max_grid_dim: cpu.max_grid_dim(),
            max_dynamic_shared_bytes: cpu.max_shared_memory_per_block_optin() as u32,
            max_shared_optin: cpu.max_shared_memory_per_block_optin() as u32,
            static_shared_bytes: 0,
        }
    }
}

/// The NUL-terminated NVTX range name (`launch/nvtx.rs`, feature `nvtx`) of kernel `symbol`
/// (`squared_diff::<f32> [contig]`), computed once when the kernel is loaded. A name with a NUL
/// byte (a `RawKernel` named so) is cut there.
#[cfg(feature = "nvtx")]
fn range_name(symbol: &str) -> Box<std::ffi::CStr> {
    let name = cuprum_abi::mangle::display_name(symbol);
    let bytes: Vec<u8> = name.bytes().take_while(|&b| b != 0).collect();
    std::ffi::CString::new(bytes).map(Into::into).unwrap_or_default()
}

#[cfg(all(test, feature = "nvtx"))]
mod nvtx_tests {
    use super::*;

    #[test]
    fn range_names_are_the_rust_names() {
        assert_eq!(range_name("cuprum_rawkernel_jacobi__f32").to_str(), Ok("jacobi::<f32>"));
        assert_eq!(range_name("cuprum_elementwise_sq_s32__f64").to_str(), Ok("sq::<f64> [s32]"));
        assert_eq!(range_name("my_add").to_str(), Ok("my_add"));
    }
}
