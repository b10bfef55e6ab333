//! NVRTC, the runtime compiler: CUDA C source -> CUBIN (or PTX) for one GPU.
//!
//! - Target: CUBIN for the device's `sm_XX` when this NVRTC supports it; for a device newer than
//!   this NVRTC, CUBIN for an older architecture of the same major version when there is one, else
//!   PTX for the newest architecture NVRTC knows (the driver compiles PTX for the GPU at load time).
//!   `CUPY_COMPILE_WITH_PTX=1` always emits PTX. See [`choose_target`].
//! - `CUPY_CUDA_COMPILE_WITH_DEBUG=1` adds `--device-debug --generate-line-info`
//!   (`effective_options`); `CUPY_DUMP_CUDA_SOURCE_ON_ERROR=1` puts the numbered source into
//!   [`Error::Compile`] (`Program::dump_source_on_error`). The callers read these variables;
//!   this module reads only `CUDA_PATH`.
//!
//! What programs and tools use: [`info`] (the version and the architectures of the libnvrtc
//! loaded, or the error saying what to install), [`is_available`], [`version`], and
//! [`choose_target`] (what the JIT emits for a device). Compiling (`Program`, `compile`) is the
//! runtime's: through `RawKernel`, `RawModule` and the kernel cache.
//! - cuprum's headers (`abi/include/cuprum`, embedded by `cuprum_abi::headers::HEADERS`) are
//!   handed to NVRTC in memory, so `#include <cuprum/...>` works with only the driver and libnvrtc.
//! - Name expressions (`fx3<float>`) are registered before compiling and their lowered (mangled)
//!   names are returned with the image.
//!
//! libnvrtc is loaded on first use. cudarc panics when it cannot load the library, so [`info`]
//! checks first and returns [`Error::NoNvrtc`]. When `CUDA_PATH` is set, libnvrtc (and its
//! builtins library) is loaded from `$CUDA_PATH/lib64`, `$CUDA_PATH/lib` or
//! `$CUDA_PATH/targets/*/lib` before the loader's usual search.

pub(crate) mod program;
pub(crate) mod toolkit;

use std::ffi::{CStr, c_int};
use std::path::PathBuf;
use std::sync::OnceLock;

use cudarc::nvrtc::sys::{self, nvrtcResult};

use crate::cache::ImageKind;
use crate::culib;
use crate::env;
use crate::error::{Error, Result};

pub(crate) use program::{Program, compile, effective_options, embedded_headers_digest};
pub use toolkit::{Toolkit, toolkit};
use toolkit::library_dirs;
pub(crate) use toolkit::{include_options as toolkit_include_options, missing_header_hint};

/// What the loaded libnvrtc is.
#[derive(Clone, Debug)]
pub struct NvrtcInfo {
    /// `(major, minor)`, e.g. `(13, 0)`.
    pub version: (i32, i32),
    /// The architectures it can generate code for, e.g. `[75, 80, 86, 87, 89, 90, 100, 120]`.
    pub supported_archs: Vec<u32>,
    /// The file loaded through `CUDA_PATH`, when that is where it came from.
    pub loaded_from: Option<PathBuf>,
}

/// Loads libnvrtc once and describes it; [`Error::NoNvrtc`] when it cannot be loaded.
pub fn info() -> Result<&'static NvrtcInfo> {
    static INFO: OnceLock<std::result::Result<NvrtcInfo, String>> = OnceLock::new();
    match INFO.get_or_init(load) {
        Ok(i) => Ok(i),
        Err(detail) => Err(Error::NoNvrtc {
            detail: detail.clone(),
        }),
    }
}

/// True when libnvrtc can be loaded.
pub fn is_available() -> bool {
    info().is_ok()
}

/// NVRTC's `(major, minor)` version.
pub fn version() -> Result<(i32, i32)> {
    info().map(|i| i.version)
}

fn load() -> std::result::Result<NvrtcInfo, String> {
    let loaded_from = preload_from_cuda_path();
    // SAFETY: `culib::present` only dlopens libnvrtc under its usual names and closes it again;
    // loading it runs only the library's own initialisers.
    if !unsafe { culib::present(&["nvrtc"]) } {
        return Err(match env::cuda_path() {
            Some(p) => format!(
                "libnvrtc was found neither in CUDA_PATH={} nor on the loader path",
                p.display()
            ),
            None => "libnvrtc.so was not found on the loader path (CUDA_PATH is not set)".into(),
        });
    }
    // cudarc panics when a symbol is missing (a libnvrtc older than the bindings): catch it.
    let probe = std::panic::catch_unwind(|| -> std::result::Result<_, String> {
        let (mut major, mut minor) = (0 as c_int, 0 as c_int);
        // SAFETY: the library is present (checked above); both out pointers are valid.
        check("nvrtcVersion", unsafe {
            sys::nvrtcVersion(&mut major, &mut minor)
        })
        .map_err(|e| e.to_string())?;
        let mut n: c_int = 0;
        // SAFETY: as above; `n` is a valid out pointer.
        check("nvrtcGetNumSupportedArchs", unsafe {
            sys::nvrtcGetNumSupportedArchs(&mut n)
        })
        .map_err(|e| e.to_string())?;
        let mut archs = vec![0 as c_int; n.max(0) as usize];
        // SAFETY: `archs` has room for the `n` entries NVRTC just said it will write.
        check("nvrtcGetSupportedArchs", unsafe {
            sys::nvrtcGetSupportedArchs(archs.as_mut_ptr())
        })
        .map_err(|e| e.to_string())?;
        Ok(((major, minor), archs))
    });
    match probe {
        Ok(Ok((version, archs))) => {
            let mut supported_archs: Vec<u32> = archs
                .into_iter()
                .filter(|&a| a > 0)
                .map(|a| a as u32)
                .collect();
            supported_archs.sort_unstable();
            supported_archs.dedup();
            Ok(NvrtcInfo {
                version,
                supported_archs,
                loaded_from,
            })
        }
        Ok(Err(e)) => Err(e),
        Err(_) => Err("libnvrtc lacks a function cuprum needs (it is older than CUDA 11.2)".into()),
    }
}

/// Loads libnvrtc (and libnvrtc-builtins) from `CUDA_PATH` by full path, so that cudarc's later
/// load by name finds the already-loaded library. Returns the file loaded.
fn preload_from_cuda_path() -> Option<PathBuf> {
    let root = env::cuda_path()?;
    for dir in library_dirs(&root) {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut main = Vec::new();
        let mut builtins = Vec::new();
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with("libnvrtc-builtins") && name.contains(".so") {
                builtins.push(e.path());
            } else if name.starts_with("libnvrtc.so") {
                main.push(e.path());
            }
        }
        if main.is_empty() {
            continue;
        }
        // The shortest name is the soname link (`libnvrtc.so.13`) or the dev link.
        main.sort_by_key(|p| p.as_os_str().len());
        builtins.sort_by_key(|p| p.as_os_str().len());
        for b in &builtins {
            if dl::open_global(b) {
                break;
            }
        }
        for m in &main {
            if dl::open_global(m) {
                log::debug!(target: "cuprum::jit", "loaded libnvrtc from {}", m.display());
                return Some(m.clone());
            }
        }
    }
    log::debug!(
        target: "cuprum::jit",
        "CUDA_PATH={} holds no loadable libnvrtc; using the loader's search path",
        root.display()
    );
    None
}

#[cfg(target_os = "linux")]
mod dl {
    use std::ffi::{CString, c_char, c_int, c_void};
    use std::os::unix::ffi::OsStrExt;
    use std::path::Path;

    const RTLD_NOW: c_int = 2;
    const RTLD_GLOBAL: c_int = 0x100;

    unsafe extern "C" {
        fn dlopen(filename: *const c_char, flags: c_int) -> *mut c_void;
    }

    /// dlopens `path` for the rest of the process (the handle is never closed).
    pub fn open_global(path: &Path) -> bool {
        let Ok(c) = CString::new(path.as_os_str().as_bytes()) else {
            return false;
        };
        // SAFETY: `c` is a NUL-terminated path; loading a shared library runs its initialisers,
        // which for the CUDA libraries is what any CUDA program does. The handle is leaked on
        // purpose: the library stays loaded while cudarc's bindings use it.
        !unsafe { dlopen(c.as_ptr(), RTLD_NOW | RTLD_GLOBAL) }.is_null()
    }
}

#[cfg(not(target_os = "linux"))]
mod dl {
    use std::path::Path;

    /// Loading by full path is only implemented on Linux; elsewhere the loader's search is used.
    pub fn open_global(_path: &Path) -> bool {
        false
    }
}

/// What NVRTC generates for a device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CodeTarget {
    /// Machine code for `sm_XX` (XX = 10 * major + minor).
    Cubin(u32),
    /// PTX for `compute_XX`.
    Ptx(u32),
}

impl CodeTarget {
    /// `sm_90` or `compute_90`.
    pub fn name(self) -> String {
        match self {
            CodeTarget::Cubin(a) => format!("sm_{a}"),
            CodeTarget::Ptx(a) => format!("compute_{a}"),
        }
    }

    /// The image kind it produces.
    pub(crate) fn kind(self) -> ImageKind {
        match self {
            CodeTarget::Cubin(_) => ImageKind::Cubin,
            CodeTarget::Ptx(_) => ImageKind::Ptx,
        }
    }
}

/// Whether NVRTC compiles `code` for the arch-specific variant of the device's target (`sm_90a`):
/// a generated unit that uses Hopper's intrinsics (it includes `cuprum/hopper.h`, whose
/// warpgroup instructions only sm_90a has) on a compute capability 9.0 device.
pub fn wants_arch_specific(code: &str, cc: (u32, u32)) -> bool {
    cc == (9, 0) && code.contains("#include <cuprum/hopper.h>")
}

/// Picks the code target for a device of compute capability `cc` given the architectures this
/// NVRTC supports (see the module docs). Pure, so it is tested without a GPU.
pub fn choose_target(
    cc: (u32, u32),
    supported: &[u32],
    want_ptx: bool,
    nvrtc_version: (i32, i32),
) -> Result<CodeTarget> {
    let arch = cc.0 * 10 + cc.1;
    let make = |a: u32, cubin: bool| {
        if cubin && !want_ptx {
            CodeTarget::Cubin(a)
        } else {
            CodeTarget::Ptx(a)
        }
    };
    if supported.contains(&arch) {
        return Ok(make(arch, true));
    }
    // A cubin for X.y runs on X.z with z >= y.
    if let Some(&a) = supported
        .iter()
        .filter(|&&a| a <= arch && a / 10 == cc.0)
        .max()
    {
        return Ok(make(a, true));
    }
    // PTX is forward compatible.
    if let Some(&a) = supported.iter().filter(|&&a| a <= arch).max() {
        return Ok(make(a, false));
    }
    Err(Error::UnsupportedArch {
        arch: format!("sm_{arch}"),
        nvrtc_version: format!("{}.{}", nvrtc_version.0, nvrtc_version.1),
        supported: supported
            .iter()
            .map(|a| format!("sm_{a}"))
            .collect::<Vec<_>>()
            .join(", "),
    })
}

fn error_string(r: nvrtcResult) -> String {
    // SAFETY: nvrtcGetErrorString returns a pointer to a static NUL-terminated string (or null).
    let p = unsafe { sys::nvrtcGetErrorString(r) };
    if p.is_null() {
        format!("{r:?}")
    } else {
        // SAFETY: non-null, static and NUL-terminated (NVRTC's documented contract).
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

fn check(call: &'static str, r: nvrtcResult) -> Result<()> {
    if r == nvrtcResult::NVRTC_SUCCESS {
        Ok(())
    } else {
        Err(Error::Nvrtc {
            call,
            detail: error_string(r),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use super::program::*;
    use crate::cache::key::headers_digest;

    const ARCHS: [u32; 8] = [75, 80, 86, 87, 89, 90, 100, 120];

    #[test]
    fn hopper_units_compile_for_sm_90a_on_a_9_0_device_only() {
        let hopper = "#include <cuprum/types.h>\n#include <cuprum/hopper.h>\n";
        assert!(wants_arch_specific(hopper, (9, 0)));
        assert!(!wants_arch_specific(hopper, (10, 0)));
        assert!(!wants_arch_specific(hopper, (8, 0)));
        assert!(!wants_arch_specific("#include <cuprum/tensor.h>\n", (9, 0)));
    }

    #[test]
    fn targets() {
        let v = (13, 0);
        assert_eq!(
            choose_target((9, 0), &ARCHS, false, v).unwrap(),
            CodeTarget::Cubin(90)
        );
        assert_eq!(
            choose_target((9, 0), &ARCHS, true, v).unwrap(),
            CodeTarget::Ptx(90)
        );
        // Newer minor of a known major: the older cubin runs.
        assert_eq!(
            choose_target((12, 1), &ARCHS, false, v).unwrap(),
            CodeTarget::Cubin(120)
        );
        // A newer major than NVRTC knows: PTX for the newest it knows.
        assert_eq!(
            choose_target((15, 0), &ARCHS, false, v).unwrap(),
            CodeTarget::Ptx(120)
        );
        // Older than NVRTC supports: an error that names both.
        let e = choose_target((6, 1), &ARCHS, false, v)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("sm_61") && e.contains("sm_75") && e.contains("13.0"),
            "{e}"
        );
        assert_eq!(CodeTarget::Cubin(90).name(), "sm_90");
        assert_eq!(CodeTarget::Ptx(90).name(), "compute_90");
    }

    #[test]
    fn options() {
        let user = vec!["-DN=4".to_string()];
        assert_eq!(
            effective_options(&user, CodeTarget::Cubin(90), false),
            ["--gpu-architecture=sm_90", "-DN=4"]
        );
        assert_eq!(
            effective_options(&user, CodeTarget::Ptx(80), true),
            [
                "--gpu-architecture=compute_80",
                "-DN=4",
                "--device-debug",
                "--generate-line-info"
            ]
        );
    }

    /// The digest fixed at build time (build.rs) is the one of the headers NVRTC gets, computed now.
    #[test]
    fn header_digest_at_compile_time_matches_run_time() {
        let headers = std::hint::black_box(headers());
        assert_eq!(EMBEDDED_HEADERS_DIGEST, headers_digest(headers));
        assert_eq!(embedded_headers_digest(), EMBEDDED_HEADERS_DIGEST);
    }

    #[test]
    fn numbering() {
        assert_eq!(numbered_source("a\nb\n"), "1 a\n2 b\n");
        let ten: String = (0..10).map(|i| format!("l{i}\n")).collect();
        assert!(numbered_source(&ten).starts_with(" 1 l0\n"));
        assert!(numbered_source(&ten).ends_with("10 l9\n"));
    }
}
