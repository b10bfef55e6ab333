//! cuBLAS, loaded at run time as libnvrtc is: cudarc's `cublas` bindings in its loading mode.
//!
//! cudarc panics when a library it calls cannot be loaded, so [`handle`] first asks
//! `culib::present` (libcublas under cudarc's names; libcublas loads libcublasLt itself, so a
//! missing libcublasLt fails that load too) and answers [`Error::NoCublas`] naming the library
//! and what to install. As for libnvrtc, the library folders of `CUDA_PATH` are tried first:
//! libcublasLt and libcublas found there are loaded by full path, and cudarc's load by name then
//! finds them loaded. Each device gets one handle, made at its first product with the device's
//! context current and kept for the process (as the context is); a call takes the handle's lock,
//! points it at the caller's stream (`cublasSetStream`) and calls cuBLAS while holding it, so
//! two threads never share the handle at once.

use std::sync::{Mutex, MutexGuard, OnceLock};

use cudarc::cublas::sys;

use crate::culib;
use crate::device::Device;
use crate::env;
use crate::error::{Error, Result};
use crate::stream::Stream;
use crate::sync;

/// A cuBLAS handle of one device.
pub(super) struct Handle(sys::cublasHandle_t);

// SAFETY: a cuBLAS handle may be used from any thread as long as one thread at a time uses it;
// every use goes through the `Mutex` of `HANDLES`.
unsafe impl Send for Handle {}

impl Handle {
    /// The raw handle, for the calls of `gpu.rs` (made while the lock is held).
    pub(super) fn raw(&self) -> sys::cublasHandle_t {
        self.0
    }
}

/// The handle of each device that made a product, by ordinal.
static HANDLES: Mutex<Vec<(usize, Handle)>> = Mutex::new(Vec::new());

/// The status of a cuBLAS call as a `Result`.
pub(super) fn check(call: &'static str, status: sys::cublasStatus_t) -> Result<()> {
    match status {
        sys::cublasStatus_t::CUBLAS_STATUS_SUCCESS => Ok(()),
        s => Err(Error::Cublas {
            call,
            status: format!("{s:?}"),
        }),
    }
}

/// Whether libcublas loads (asked once per process, after the libraries of `CUDA_PATH` were
/// loaded); the reason when it does not.
fn available() -> Result<()> {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    let present = PRESENT.get_or_init(|| {
        preload_from_cuda_path();
        // SAFETY: `culib::present` dlopens libcublas under cudarc's names and closes it again;
        // loading it runs only the library's own initialisers.
        unsafe { culib::present(&["cublas"]) }
    });
    if *present {
        return Ok(());
    }
    Err(Error::NoCublas {
        detail: match env::cuda_path() {
            Some(p) => format!(
                "libcublas (with libcublasLt) was found neither in CUDA_PATH={} nor on the loader path",
                p.display()
            ),
            None => "libcublas.so.13 (or another name cudarc tries) or its libcublasLt was not found on the \
                     loader path (CUDA_PATH is not set)"
                .into(),
        },
    })
}

/// Loads libcublasLt, then libcublas, from the library folders of `CUDA_PATH` by full path, for
/// the rest of the process (Linux; elsewhere the loader's search alone).
fn preload_from_cuda_path() {
    let Some(root) = env::cuda_path() else {
        return;
    };
    for dir in crate::nvrtc::toolkit::library_dirs(&root) {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let names: Vec<std::path::PathBuf> = entries.flatten().map(|e| e.path()).collect();
        let mut loaded = false;
        for prefix in ["libcublasLt.so", "libcublas.so"] {
            let mut found: Vec<&std::path::PathBuf> = names
                .iter()
                .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with(prefix)))
                .collect();
            // The shortest name is the soname link (`libcublas.so.13`) or the dev link.
            found.sort_by_key(|p| p.as_os_str().len());
            loaded = found.iter().any(|p| open_global(p));
        }
        if loaded {
            log::debug!(target: "cuprum::linalg", "loaded libcublas from {}", dir.display());
            return;
        }
    }
}

/// dlopens `path` for the rest of the process, its symbols global (so that a library loaded
/// later by name finds it).
#[cfg(unix)]
fn open_global(path: &std::path::Path) -> bool {
    use libloading::os::unix::{Library, RTLD_GLOBAL, RTLD_NOW};
    // SAFETY: loading a shared library runs its initialisers, which for the CUDA libraries is what
    // any CUDA program does.
    match unsafe { Library::open(Some(path), RTLD_NOW | RTLD_GLOBAL) } {
        Ok(lib) => {
            // Kept loaded while cudarc's bindings use it: the handle is never closed.
            std::mem::forget(lib);
            true
        }
        Err(_) => false,
    }
}

/// Loading by full path is implemented on Unix only; elsewhere the loader's search is used.
#[cfg(not(unix))]
fn open_global(_path: &std::path::Path) -> bool {
    false
}

/// The handle of `stream`'s device, locked and pointed at `stream`: the caller makes its cuBLAS
/// calls while holding the guard. The device's context is bound to this thread.
pub(super) fn handle(stream: &Stream) -> Result<HandleGuard> {
    available()?;
    let device = stream.device();
    device.bind_to_thread()?;
    let mut all = sync::lock(&HANDLES);
    let at = match all.iter().position(|(o, _)| *o == device.ordinal()) {
        Some(at) => at,
        None => {
            all.push((device.ordinal(), create(device)?));
            all.len() - 1
        }
    };
    let raw = all[at].1.raw();
    // SAFETY: a live handle of this device (its context is current) and a live stream of the same
    // device, which the caller keeps alive while it queues work through the handle.
    check("cublasSetStream", unsafe {
        sys::cublasSetStream_v2(raw, stream.handle() as _)
    })?;
    Ok(HandleGuard { _all: all, raw })
}

/// A handle made for `device` (whose context is current), in the default math mode: f32
/// products in full precision unless the call's compute type asks for TF32 (`CUPY_TF32`).
fn create(device: &Device) -> Result<Handle> {
    // cudarc panics when a symbol is missing (a libcublas older than its bindings): catch it.
    let made = std::panic::catch_unwind(|| {
        let mut raw: sys::cublasHandle_t = std::ptr::null_mut();
        // SAFETY: `raw` is a valid out pointer; the device's context is current.
        check("cublasCreate", unsafe { sys::cublasCreate_v2(&mut raw) })?;
        // SAFETY: the live handle just made.
        check("cublasSetMathMode", unsafe {
            sys::cublasSetMathMode(raw, sys::cublasMath_t::CUBLAS_DEFAULT_MATH)
        })?;
        Ok(Handle(raw))
    });
    match made {
        Ok(r) => r,
        Err(_) => Err(Error::NoCublas {
            detail: format!(
                "the libcublas loaded for device {} lacks a function cuprum calls (it is older than \
                 CUDA 13)",
                device.ordinal()
            ),
        }),
    }
}

/// A device's handle, locked for the caller's calls.
pub(super) struct HandleGuard {
    _all: MutexGuard<'static, Vec<(usize, Handle)>>,
    raw: sys::cublasHandle_t,
}

impl HandleGuard {
    /// The raw handle (valid while the guard lives).
    pub(super) fn raw(&self) -> sys::cublasHandle_t {
        self.raw
    }
}
