//! `RawModule`: a CUDA module from CUDA C source (compiled by NVRTC through the kernel cache) or
//! from a compiled image (cubin, PTX or fatbin, from a file or from bytes), loaded lazily on each
//! device that uses it (CuPy's `cupy.RawModule`).
//!
//! Lookup for source modules, per device (docs/architecture.md): modules already loaded in this process
//! (keyed by the cache key and the device) -> compiled images in memory -> the disk cache -> NVRTC.
//! [`crate::stats`] counts which layer served each lookup.

use std::collections::HashMap;
use std::ffi::{CString, c_void};
use std::fmt;
use std::path::Path;
use std::sync::{Arc, LazyLock, Mutex, OnceLock};

use cudarc::driver::result;
use cudarc::driver::sys::{self, CUresult};

use crate::cache::{self, CacheKey, CompiledImage, ImageKind, KeyInputs};
use crate::device::Device;
use crate::env;
use crate::error::{Error, Result};
use crate::nvrtc;
use crate::stats::{self, Layer};
use crate::sync;

pub(crate) mod cucomplex;
mod global;
mod image;
mod link;

pub use global::Global;
use image::checked_image;

/// The file name NVRTC sees for every JIT source (kept fixed so it need not be part of the key).
const PROGRAM_FILE: &str = "cuprum_jit";

/// A loaded `CUmodule`, unloaded on drop.
pub(crate) struct ModuleHandle {
    raw: sys::CUmodule,
    device: Device,
}

// SAFETY: a CUmodule is a driver handle usable from any thread once its context is current
// (every use binds the device's context first); the driver synchronizes access internally.
unsafe impl Send for ModuleHandle {}
// SAFETY: as above; `&ModuleHandle` only reads the handle.
unsafe impl Sync for ModuleHandle {}

impl Drop for ModuleHandle {
    fn drop(&mut self) {
        if self.device.bind_to_thread().is_ok() {
            // SAFETY: the module was loaded by `load_image` in this device's context (bound
            // above) and is unloaded only here, when the last user (functions and globals hold
            // an `Arc` of this handle) is gone.
            let _ = unsafe { result::module::unload(self.raw) };
        }
    }
}

impl ModuleHandle {
    pub(crate) fn device(&self) -> &Device {
        &self.device
    }

    /// The `CUfunction` named `symbol`, `None` when the module has no such kernel.
    pub(crate) fn function(&self, symbol: &str) -> Result<Option<sys::CUfunction>> {
        let Ok(c) = CString::new(symbol) else {
            return Ok(None);
        };
        self.device.bind_to_thread()?;
        // SAFETY: `self.raw` is a live module of the bound context; `c` is NUL-terminated.
        match unsafe { result::module::get_function(self.raw, c) } {
            Ok(f) => Ok(Some(f)),
            Err(e) if e.0 == CUresult::CUDA_ERROR_NOT_FOUND => Ok(None),
            Err(e) => Err(self.device.driver_error("cuModuleGetFunction", e)),
        }
    }

    /// The address and size of the global named `symbol`, `None` when there is none.
    fn global(&self, symbol: &str) -> Result<Option<(u64, usize)>> {
        let Ok(c) = CString::new(symbol) else {
            return Ok(None);
        };
        self.device.bind_to_thread()?;
        // SAFETY: `self.raw` is a live module of the bound context; `c` is NUL-terminated.
        match unsafe { result::module::get_global(self.raw, c) } {
            Ok(g) => Ok(Some(g)),
            Err(e) if e.0 == CUresult::CUDA_ERROR_NOT_FOUND => Ok(None),
            Err(e) => Err(self.device.driver_error("cuModuleGetGlobal", e)),
        }
    }
}


/// Loads a module image onto `device`.
fn load_image(
    device: &Device,
    kind: ImageKind,
    image: &[u8],
    what: &str,
) -> Result<Arc<ModuleHandle>> {
    let start = std::time::Instant::now();
    let image = checked_image(kind, image, what)?;
    device.bind_to_thread()?;
    // SAFETY: the context is bound; `image` is a complete cubin, fatbin or NUL-terminated PTX
    // whose internal sizes were checked to lie inside the buffer (`checked_image`), alive for the
    // call (the driver copies what it keeps).
    let raw =
        unsafe { result::module::load_data(image.as_ptr() as *const c_void) }.map_err(|e| {
            Error::ModuleLoad {
                what: what.to_string(),
                // A DriverError exists only when the driver is loaded, so its text can be read.
                detail: e.to_string(),
            }
        })?;
    let handle = Arc::new(ModuleHandle {
        raw,
        device: device.clone(),
    });
    // Index checks: point the module's record slot at the context's record (docs/runtime.md).
    crate::bounds::on_module_load(device.ordinal(), || device.bind_to_thread(), raw)?;
    crate::stats::record_module_load(start.elapsed());
    Ok(handle)
}

/// A module loaded on one device.
pub(crate) struct LoadedModule {
    pub(crate) handle: Arc<ModuleHandle>,
    /// `(name expression, lowered name)` pairs.
    lowered: Vec<(String, String)>,
    /// Which layer served it (`None` for images given by the user).
    layer: Option<Layer>,
    /// NVRTC's log when this process compiled the image (warnings; possibly empty), `None` when
    /// the image came from the kernel cache's memory or disk layer or from the user.
    compile_log: Option<Arc<str>>,
}

type LoadedMap = HashMap<(CacheKey, usize), Arc<LoadedModule>>;

/// Modules loaded in this process, by cache key and device ordinal.
static LOADED: LazyLock<Mutex<LoadedMap>> = LazyLock::new(|| Mutex::new(HashMap::new()));

fn loaded_map() -> std::sync::MutexGuard<'static, LoadedMap> {
    sync::lock(&LOADED)
}

enum Origin {
    Source(String),
    Image {
        bytes: Vec<u8>,
        kind: ImageKind,
        what: String,
    },
}

/// CuPy's switches of a `RawModule` (`translate_cucomplex`, `enable_cooperative_groups`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Flags {
    /// Compile `#include <cuComplex.h>` as cuprum's bridge header (`cucomplex`).
    translate_cucomplex: bool,
    /// Launch its kernels cooperatively (`RawKernel::launch`).
    cooperative: bool,
}

struct ModuleInner {
    origin: Origin,
    options: Vec<String>,
    name_expressions: Vec<String>,
    flags: Flags,
    /// Per device ordinal, sized by the device count on first use.
    loaded: OnceLock<Box<[OnceLock<Arc<LoadedModule>>]>>,
    /// Serializes loading so one module object loads once per device.
    load_lock: Mutex<()>,
}

/// A CUDA module from source or from a compiled image (CuPy's `RawModule`). Cheap to clone.
///
/// ```no_run
/// # use cuprum_runtime::RawModule;
/// let module = RawModule::new(r#"
///     template <typename T> __global__ void fx3(T* a, int n) {
///         int i = blockIdx.x * blockDim.x + threadIdx.x;
///         if (i < n) a[i] *= 3;
///     }"#)
///     .name_expressions(["fx3<float>", "fx3<double>"]);
/// let fx3_float = module.get_function("fx3<float>")?; // compiles (or hits the cache) here
/// # Ok::<(), cuprum_runtime::Error>(())
/// ```
#[derive(Clone)]
pub struct RawModule {
    inner: Arc<ModuleInner>,
}

impl fmt::Debug for RawModule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("RawModule");
        match &self.inner.origin {
            Origin::Source(s) => d.field("source_bytes", &s.len()),
            Origin::Image { kind, what, .. } => d.field("image", kind).field("from", what),
        };
        d.field("options", &self.inner.options)
            .field("name_expressions", &self.inner.name_expressions)
            .field("translate_cucomplex", &self.inner.flags.translate_cucomplex)
            .field("enable_cooperative_groups", &self.inner.flags.cooperative)
            .finish()
    }
}

fn strings<I, S>(items: I) -> Vec<String>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    items.into_iter().map(|s| s.as_ref().to_string()).collect()
}

impl RawModule {
    fn from_origin(
        origin: Origin,
        options: Vec<String>,
        name_expressions: Vec<String>,
        flags: Flags,
    ) -> RawModule {
        RawModule {
            inner: Arc::new(ModuleInner {
                origin,
                options,
                name_expressions,
                flags,
                loaded: OnceLock::new(),
                load_lock: Mutex::new(()),
            }),
        }
    }

    /// A module from CUDA C source. Nothing is compiled until a device needs it.
    pub fn new(code: impl Into<String>) -> RawModule {
        RawModule::from_origin(Origin::Source(code.into()), Vec::new(), Vec::new(), Flags::default())
    }

    /// The same module with these NVRTC options (e.g. `["-DN=4", "--use_fast_math"]`).
    pub fn options<I, S>(self, options: I) -> RawModule
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let (origin, _, names, flags) = self.into_parts();
        RawModule::from_origin(origin, strings(options), names, flags)
    }

    /// The same module with these name expressions: template instantiations (`fx3<float>`) whose
    /// kernels `get_function` then finds by that name.
    pub fn name_expressions<I, S>(self, names: I) -> RawModule
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let (origin, options, _, flags) = self.into_parts();
        RawModule::from_origin(origin, options, strings(names), flags)
    }

    /// The same module with CuPy's `translate_cucomplex` on or off (default off): source written
    /// against the toolkit's `cuComplex.h` compiles against cuprum's complex type. Each
    /// `#include <cuComplex.h>` (or `"cuComplex.h"`) line becomes `#include
    /// <cuprum/cucomplex_bridge.h>`, an embedded header that defines `cuFloatComplex` as
    /// `cuprum::complex<float>` (the element type of `Array<Complex<f32>>`), `cuDoubleComplex`
    /// as `cuprum::complex<double>`, and cuComplex.h's functions (`make_cuFloatComplex`,
    /// `cuCaddf`, `cuCsubf`, `cuCmulf`, `cuCdivf`, `cuCabsf`, `cuCrealf`, `cuCimagf`,
    /// `cuConjf`, `cuCfmaf`, their double versions, `make_cuComplex` and the conversions) as
    /// cuComplex.h computes them. The members `.x`/`.y` of cuComplex.h's `float2` are not
    /// translated: use `cuCrealf`/`cuCimagf`. Ignored for modules made from an image.
    pub fn translate_cucomplex(self, on: bool) -> RawModule {
        let (origin, options, names, mut flags) = self.into_parts();
        flags.translate_cucomplex = on;
        RawModule::from_origin(origin, options, names, flags)
    }

    /// The same module with CuPy's `enable_cooperative_groups` on or off (default off): every
    /// launch of its kernels (`RawKernel::launch`) is cooperative (`cuLaunchCooperativeKernel`),
    /// so that `cooperative_groups::this_grid().sync()` may be used in the source (include
    /// `<cooperative_groups.h>`, from the CUDA toolkit: `nvrtc::toolkit`). A cooperative launch
    /// needs every block resident at once: a grid of more blocks than the device keeps resident
    /// (`RawKernel::max_cooperative_blocks`) is `Error::CooperativeGrid` and nothing is launched.
    pub fn enable_cooperative_groups(self, on: bool) -> RawModule {
        let (origin, options, names, mut flags) = self.into_parts();
        flags.cooperative = on;
        RawModule::from_origin(origin, options, names, flags)
    }

    /// Whether `translate_cucomplex` is on.
    pub fn translates_cucomplex(&self) -> bool {
        self.inner.flags.translate_cucomplex
    }

    /// Whether `enable_cooperative_groups` is on: its kernels launch cooperatively.
    pub fn is_cooperative(&self) -> bool {
        self.inner.flags.cooperative
    }

    fn into_parts(self) -> (Origin, Vec<String>, Vec<String>, Flags) {
        match Arc::try_unwrap(self.inner) {
            Ok(inner) => (inner.origin, inner.options, inner.name_expressions, inner.flags),
            Err(shared) => {
                let origin = match &shared.origin {
                    Origin::Source(s) => Origin::Source(s.clone()),
                    Origin::Image { bytes, kind, what } => Origin::Image {
                        bytes: bytes.clone(),
                        kind: *kind,
                        what: what.clone(),
                    },
                };
                (
                    origin,
                    shared.options.clone(),
                    shared.name_expressions.clone(),
                    shared.flags,
                )
            }
        }
    }

    /// A module from a cubin, PTX or fatbin file (the kind is read from the content). The file
    /// is read now; it is loaded onto a device on first use.
    pub fn from_file(path: impl AsRef<Path>) -> Result<RawModule> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|source| Error::ModuleFile {
            path: path.to_path_buf(),
            source,
        })?;
        let kind = ImageKind::sniff(&bytes);
        checked_image(kind, &bytes, &path.display().to_string())?;
        Ok(RawModule::from_origin(
            Origin::Image {
                bytes,
                kind,
                what: format!("{} ({})", path.display(), kind.extension()),
            },
            Vec::new(),
            Vec::new(),
            Flags::default(),
        ))
    }

    /// A module from the bytes of a cubin, PTX or fatbin (the kind is read from the content).
    pub fn from_bytes(bytes: impl Into<Vec<u8>>) -> Result<RawModule> {
        let bytes = bytes.into();
        let kind = ImageKind::sniff(&bytes);
        let what = format!("a {} image of {} bytes", kind.extension(), bytes.len());
        checked_image(kind, &bytes, &what)?;
        Ok(RawModule::from_origin(
            Origin::Image { bytes, kind, what },
            Vec::new(),
            Vec::new(),
            Flags::default(),
        ))
    }

    /// A module from a fat binary, cubin or PTX that is checked when it is loaded, not now (the
    /// embedded parts: `load_image` checks every image before the driver sees it).
    pub(crate) fn from_image(bytes: Vec<u8>) -> RawModule {
        let kind = ImageKind::sniff(&bytes);
        let what = format!("a {} image of {} bytes", kind.extension(), bytes.len());
        RawModule::from_origin(Origin::Image { bytes, kind, what }, Vec::new(), Vec::new(), Flags::default())
    }

    /// The CUDA source, for modules made from source.
    pub fn code(&self) -> Option<&str> {
        match &self.inner.origin {
            Origin::Source(s) => Some(s),
            Origin::Image { .. } => None,
        }
    }

    /// The NVRTC options given by the user.
    pub fn user_options(&self) -> &[String] {
        &self.inner.options
    }

    /// The name expressions.
    pub fn name_expression_list(&self) -> &[String] {
        &self.inner.name_expressions
    }

    /// Compiles (or finds in the cache) and loads the module on the current device now.
    pub fn compile(&self) -> Result<()> {
        self.loaded_on(&Device::current()?).map(|_| ())
    }

    /// Compiles (or finds in the cache) and loads the module on `device` now.
    pub fn compile_for(&self, device: &Device) -> Result<()> {
        self.loaded_on(device).map(|_| ())
    }

    /// Which layer served this module on `device` (`None` before it was loaded there, or for a
    /// module made from an image).
    pub fn served_by(&self, device: &Device) -> Option<Layer> {
        self.inner.loaded.get()?.get(device.ordinal())?.get()?.layer
    }

    /// NVRTC's log of the compile that made this module's image for the current device: its
    /// warnings, often empty. `None` before the module is loaded on the current device, for a
    /// module made from an image, and when the kernel cache served the image (a hit in the
    /// memory or disk layer compiles nothing; the cache keeps images, not logs). A compile that
    /// warns also reports the log through `log`, at warn level under the target `cuprum::jit`.
    pub fn compile_log(&self) -> Option<&str> {
        self.compile_log_for(Device::current_ordinal())
    }

    /// [`RawModule::compile_log`] for device `ordinal`.
    pub fn compile_log_for(&self, ordinal: usize) -> Option<&str> {
        self.inner.loaded.get()?.get(ordinal)?.get()?.compile_log.as_deref()
    }

    /// The kernel cache key this source module has on `device` (`None` for image modules).
    /// Computing it needs libnvrtc (its version is part of the key), not a compile. For the tests.
    #[cfg(test)]
    pub(crate) fn cache_key(&self, device: &Device) -> Result<Option<CacheKey>> {
        match &self.inner.origin {
            Origin::Source(code) => Ok(Some(self.plan(&self.source_to_compile(code), device)?.key)),
            Origin::Image { .. } => Ok(None),
        }
    }


    /// The lowered (mangled) name of a name expression on the current device.
    pub fn lowered_name(&self, name_expression: &str) -> Result<String> {
        let loaded = self.loaded_on(&Device::current()?)?;
        loaded
            .lowered
            .iter()
            .find(|(e, _)| e == name_expression)
            .map(|(_, l)| l.clone())
            .ok_or_else(|| Error::FunctionNotFound {
                name: name_expression.to_string(),
                hint: format!(
                    "it is not one of the module's name expressions {:?}",
                    self.inner.name_expressions
                ),
            })
    }


    /// The module loaded on `device`, loading (and compiling) it when needed.
    pub(crate) fn loaded_on(&self, device: &Device) -> Result<Arc<LoadedModule>> {
        if device.is_cpu() {
            return Err(Error::kernel_on_cpu("a CUDA module"));
        }
        let slots = self.inner.loaded.get_or_init(|| {
            let n = Device::count().unwrap_or(0).max(device.ordinal() + 1);
            (0..n).map(|_| OnceLock::new()).collect()
        });
        let slot = slots.get(device.ordinal()).ok_or(Error::InvalidDevice {
            ordinal: device.ordinal(),
            count: slots.len(),
        })?;
        if let Some(m) = slot.get() {
            return Ok(m.clone());
        }
        let _g = sync::lock(&self.inner.load_lock);
        if let Some(m) = slot.get() {
            return Ok(m.clone());
        }
        let m = match &self.inner.origin {
            Origin::Source(code) => self.load_source(&self.source_to_compile(code), device)?,
            Origin::Image { bytes, kind, what } => Arc::new(LoadedModule {
                handle: load_image(device, *kind, bytes, what)?,
                lowered: Vec::new(),
                layer: None,
                compile_log: None,
            }),
        };
        let _ = slot.set(m.clone());
        Ok(m)
    }

    /// The source NVRTC compiles: the module's, translated when `translate_cucomplex` is on.
    fn source_to_compile<'a>(&self, code: &'a str) -> std::borrow::Cow<'a, str> {
        if self.inner.flags.translate_cucomplex {
            std::borrow::Cow::Owned(cucomplex::translate_cucomplex(code))
        } else {
            std::borrow::Cow::Borrowed(code)
        }
    }

    fn plan(&self, code: &str, device: &Device) -> Result<CompilePlan> {
        let info = nvrtc::info()?;
        // Relocatable code is linked by the driver from PTX (link.rs), into a cubin.
        let relocatable = link::is_relocatable(&self.inner.options);
        let target = nvrtc::choose_target(
            device.compute_capability(),
            &info.supported_archs,
            env::flag(env::COMPILE_WITH_PTX)? || relocatable,
            info.version,
        )?;
        let cudadevrt = if relocatable { Some(link::cudadevrt()?) } else { None };
        let debug = env::flag(env::CUDA_COMPILE_WITH_DEBUG)?;
        let dump_source = env::flag(env::DUMP_CUDA_SOURCE_ON_ERROR)?;
        let mut options = nvrtc::effective_options(&self.inner.options, target, debug);
        // Hopper's warpgroup instructions exist only on the arch-specific target: a unit that
        // uses them (it includes cuprum/hopper.h) is compiled for sm_90a on a 9.0 device.
        let specific = nvrtc::wants_arch_specific(code, device.compute_capability());
        if specific {
            options[0].push('a');
        }
        // The toolkit's headers after the user's `-I`s (NVRTC searches them in order).
        options.extend(nvrtc::toolkit_include_options());
        let target_name = if specific { format!("{}a", target.name()) } else { target.name() };
        // The linked image also depends on the device runtime linked in (and is for this
        // device's architecture).
        let mut key_options = options.clone();
        if let Some(lib) = &cudadevrt {
            key_options.push(format!("cuprum-link-cudadevrt={}", lib.display()));
            key_options.push(format!("cuprum-link-arch=sm_{}{}", device.compute_capability().0, device.compute_capability().1));
        }
        let key = KeyInputs::new(
            code,
            nvrtc::embedded_headers_digest(),
            &key_options,
            &self.inner.name_expressions,
            &target_name,
            info.version,
        )
        .key();
        Ok(CompilePlan {
            target,
            options,
            key,
            dump_source,
            cudadevrt,
        })
    }

    fn load_source(&self, code: &str, device: &Device) -> Result<Arc<LoadedModule>> {
        let plan = self.plan(code, device)?;
        let map_key = (plan.key, device.ordinal());
        if let Some(m) = loaded_map().get(&map_key) {
            stats::record_hit(Layer::Loaded);
            return Ok(Arc::new(LoadedModule {
                handle: m.handle.clone(),
                lowered: m.lowered.clone(),
                layer: Some(Layer::Loaded),
                compile_log: m.compile_log.clone(),
            }));
        }
        let cache = cache::global()?;
        let display = self.display_name();
        // The log of a compile made here (the cache's layers keep only images).
        let log = Mutex::new(None);
        let compile = || self.compile_now(code, &plan, &display, &log, device);
        let (image, layer) = cache.get_or_compile(&plan.key, Some(code), compile)?;
        let what = format!("the {} compiled for {}", display, plan.target.name());
        let (handle, image, layer) = match load_image(device, image.kind, &image.image, &what) {
            Ok(handle) => (handle, image, layer),
            // A cached image (its checksum right, so written whole) that is malformed or that the
            // driver refuses: report it and compile again, once; a fresh image that fails is an
            // error.
            Err(e @ Error::ModuleLoad { .. }) if matches!(layer, Layer::Disk | Layer::Memory) => {
                let entry = cache
                    .disk()
                    .map(|d| d.entry_path(&plan.key).display().to_string())
                    .unwrap_or_else(|| "in memory".to_string());
                log::warn!(
                    target: "cuprum::jit",
                    "the kernel cache's image of the {display} ({entry}, from the {} layer) cannot \
                     be loaded; compiling it again and replacing the entry: {e}",
                    layer.name()
                );
                if layer == Layer::Disk {
                    stats::record_disk_corrupt();
                }
                let image = cache.recompile(&plan.key, Some(code), compile)?;
                let handle = load_image(device, image.kind, &image.image, &what)?;
                (handle, image, Layer::Nvrtc)
            }
            Err(e) => return Err(e),
        };
        let compile_log = if layer == Layer::Nvrtc { sync::lock(&log).take() } else { None };
        let m = Arc::new(LoadedModule {
            handle,
            lowered: image.lowered_names.clone(),
            layer: Some(layer),
            compile_log,
        });
        Ok(loaded_map().entry(map_key).or_insert(m).clone())
    }

    /// Compiles the module with NVRTC now (the kernel cache's compile step), leaving NVRTC's log
    /// in `log`.
    fn compile_now(
        &self,
        code: &str,
        plan: &CompilePlan,
        display: &str,
        log: &Mutex<Option<Arc<str>>>,
        device: &Device,
    ) -> Result<CompiledImage> {
        let program = nvrtc::Program {
            name: display,
            file_name: PROGRAM_FILE,
            source: code,
            options: &plan.options,
            name_expressions: &self.inner.name_expressions,
            dump_source_on_error: plan.dump_source,
        };
        let compiled = nvrtc::compile(&program, plan.target)?;
        *sync::lock(log) = Some(compiled.log.into());
        match &plan.cudadevrt {
            Some(lib) => link::link_with_device_runtime(device, &compiled.image, lib, display),
            None => Ok(compiled.image),
        }
    }

    fn display_name(&self) -> String {
        let first = self.inner.name_expressions.first();
        match first {
            Some(n) => format!("module with {n}"),
            None => match &self.inner.origin {
                Origin::Source(code) => match first_kernel_name(code) {
                    Some(k) => format!("module with {k}"),
                    None => "module".to_string(),
                },
                Origin::Image { what, .. } => what.clone(),
            },
        }
    }

    pub(crate) fn kernel_hint(&self, name: &str) -> String {
        if !self.inner.name_expressions.is_empty() {
            format!(
                "`{name}` is not a kernel symbol, and not one of the name expressions {:?}",
                self.inner.name_expressions
            )
        } else if name.contains('<') {
            "a template instantiation must be listed in the module's name_expressions".to_string()
        } else {
            "check the spelling, and declare the kernel `extern \"C\"` so its name is not mangled \
             (or list it in name_expressions)"
                .to_string()
        }
    }
}

/// The first `__global__` function's name in `code`, for messages.
fn first_kernel_name(code: &str) -> Option<String> {
    let after = &code[code.find("__global__")? + "__global__".len()..];
    let paren = after.find('(')?;
    let name = after[..paren].split_whitespace().last()?;
    let name = name.trim_start_matches('*');
    (!name.is_empty()).then(|| name.to_string())
}

struct CompilePlan {
    target: nvrtc::CodeTarget,
    options: Vec<String>,
    key: CacheKey,
    dump_source: bool,
    /// `libcudadevrt.a` to link with, for relocatable device code (`-rdc=true`).
    cudadevrt: Option<std::path::PathBuf>,
}

/// The symbol for `name`: its lowered name when it is a name expression, else `name`.
pub(crate) fn resolve_symbol<'a>(loaded: &'a LoadedModule, name: &'a str) -> &'a str {
    loaded
        .lowered
        .iter()
        .find(|(e, _)| e == name)
        .map(|(_, l)| l.as_str())
        .unwrap_or(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_names_for_messages() {
        assert_eq!(
            first_kernel_name("extern \"C\" __global__ void my_add(const float* x)").as_deref(),
            Some("my_add")
        );
        assert_eq!(first_kernel_name("int x;"), None);
    }

    #[test]
    fn builders_keep_the_rest() {
        let m = RawModule::new("code")
            .options(["-DN=1"])
            .name_expressions(["f<int>"]);
        let m2 = m.clone().options(["-DN=2"]);
        assert_eq!(m.user_options(), ["-DN=1"]);
        assert_eq!(m2.user_options(), ["-DN=2"]);
        assert_eq!(m2.name_expression_list(), ["f<int>"]);
        assert_eq!(m2.code(), Some("code"));
    }
}
