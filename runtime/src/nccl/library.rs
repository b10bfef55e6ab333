//! libnccl, loaded at run time (as libnvrtc and libcublas are) into a table of the functions cuprum
//! calls, with the C signatures of cudarc's `nccl::sys` types.
//!
//! Why not cudarc's own loader: it tries the names `libnccl.so`, `libnccl64_13.so`, ...,
//! `libnccl.so.13`, `.so.12`, ..., `.so.1` (`cudarc::get_lib_name_candidates`), never
//! `libnccl.so.2`, the soname every NCCL 2.x has: where only the runtime library is installed
//! (`pip install nvidia-nccl-cu13`, apt's `libnccl2` without `libnccl-dev`) cudarc would not find
//! it, and its bindings panic when the library is missing. So this module loads the library
//! itself, trying in order:
//!
//! 1. `CUPRUM_NCCL_PATH`: the library file, or a folder holding `libnccl.so.2` (or `libnccl.so`);
//! 2. `libnccl.so.2`, then `libnccl.so`, by name (the loader's search: `LD_LIBRARY_PATH`, the
//!    system folders);
//! 3. the library folders of `CUDA_PATH`, and `CUDA_PATH/../nccl/lib`: where the pip wheel puts it
//!    next to the CUDA wheels (`site-packages/nvidia/cu13` and `site-packages/nvidia/nccl/lib`).
//!
//! The first that loads and has every symbol below wins, for the rest of the process; when none
//! does, every NCCL call is [`Error::NoNccl`] listing what was tried. Result codes are read as
//! plain `int`s (not cudarc's `ncclResult_t` enum, which a newer library's code would make
//! undefined behaviour to read).

use std::ffi::{CStr, c_char, c_int, c_void};
use std::path::PathBuf;
use std::sync::OnceLock;

use cudarc::nccl::sys::{ncclComm_t, ncclUniqueId};

use crate::env;
use crate::error::{Error, Result};

/// NCCL's `cudaStream_t` (a `CUstream`: the same handle).
pub(super) type RawStream = *mut c_void;

/// The functions of libnccl that cuprum calls (NCCL 2.13 or newer: `ncclGetLastError`).
pub(super) struct Api {
    /// Kept loaded while the pointers below are used: for the rest of the process.
    _lib: libloading::Library,
    /// Where it was loaded from (`nccl::info`).
    pub(super) from: String,
    pub(super) get_version: unsafe extern "C" fn(*mut c_int) -> c_int,
    pub(super) get_unique_id: unsafe extern "C" fn(*mut ncclUniqueId) -> c_int,
    pub(super) comm_init_rank: unsafe extern "C" fn(*mut ncclComm_t, c_int, ncclUniqueId, c_int) -> c_int,
    pub(super) comm_init_all: unsafe extern "C" fn(*mut ncclComm_t, c_int, *const c_int) -> c_int,
    pub(super) comm_destroy: unsafe extern "C" fn(ncclComm_t) -> c_int,
    pub(super) get_error_string: unsafe extern "C" fn(c_int) -> *const c_char,
    pub(super) get_last_error: unsafe extern "C" fn(ncclComm_t) -> *const c_char,
    #[allow(clippy::type_complexity)]
    pub(super) all_reduce:
        unsafe extern "C" fn(*const c_void, *mut c_void, usize, c_int, c_int, ncclComm_t, RawStream) -> c_int,
    #[allow(clippy::type_complexity)]
    pub(super) broadcast:
        unsafe extern "C" fn(*const c_void, *mut c_void, usize, c_int, c_int, ncclComm_t, RawStream) -> c_int,
    #[allow(clippy::type_complexity)]
    pub(super) reduce:
        unsafe extern "C" fn(*const c_void, *mut c_void, usize, c_int, c_int, c_int, ncclComm_t, RawStream) -> c_int,
    #[allow(clippy::type_complexity)]
    pub(super) all_gather: unsafe extern "C" fn(*const c_void, *mut c_void, usize, c_int, ncclComm_t, RawStream) -> c_int,
    #[allow(clippy::type_complexity)]
    pub(super) reduce_scatter:
        unsafe extern "C" fn(*const c_void, *mut c_void, usize, c_int, c_int, ncclComm_t, RawStream) -> c_int,
    pub(super) send: unsafe extern "C" fn(*const c_void, usize, c_int, c_int, ncclComm_t, RawStream) -> c_int,
    pub(super) recv: unsafe extern "C" fn(*mut c_void, usize, c_int, c_int, ncclComm_t, RawStream) -> c_int,
    pub(super) group_start: unsafe extern "C" fn() -> c_int,
    pub(super) group_end: unsafe extern "C" fn() -> c_int,
}

/// The loaded library, or why it could not be loaded (asked once per process).
pub(super) fn api() -> Result<&'static Api> {
    static API: OnceLock<std::result::Result<Api, String>> = OnceLock::new();
    match API.get_or_init(|| load_first(&candidates())) {
        Ok(api) => Ok(api),
        Err(detail) => Err(Error::NoNccl { detail: detail.clone() }),
    }
}

/// The names and paths tried, in order (the module docs).
fn candidates() -> Vec<PathBuf> {
    const NAMES: [&str; 2] = ["libnccl.so.2", "libnccl.so"];
    let mut out = Vec::new();
    if let Some(p) = env::var(env::NCCL_PATH).map(PathBuf::from) {
        if p.is_dir() {
            out.extend(NAMES.map(|n| p.join(n)));
        } else {
            out.push(p);
        }
    }
    out.extend(NAMES.map(PathBuf::from));
    if let Some(root) = env::cuda_path() {
        let mut dirs = crate::nvrtc::toolkit::library_dirs(&root);
        if let Some(nvidia) = root.parent() {
            dirs.push(nvidia.join("nccl").join("lib"));
        }
        out.extend(dirs.iter().flat_map(|d| NAMES.map(|n| d.join(n))));
    }
    out
}

/// The first of `candidates` that loads with every symbol; else what was tried.
fn load_first(candidates: &[PathBuf]) -> std::result::Result<Api, String> {
    if !cfg!(target_os = "linux") {
        return Err("NCCL exists for Linux only".into());
    }
    let mut missing_symbols = Vec::new();
    for c in candidates {
        // SAFETY: loading a shared library runs its initialisers; libnccl's are what every NCCL
        // program runs.
        let Ok(lib) = (unsafe { libloading::Library::new(c) }) else {
            continue;
        };
        match resolve(lib, c.display().to_string()) {
            Ok(api) => {
                log::debug!(target: "cuprum::nccl", "loaded {}", api.from);
                return Ok(api);
            }
            Err(e) => missing_symbols.push(format!("{} ({e})", c.display())),
        }
    }
    let mut detail = format!("it was not found {}", places(candidates));
    if !missing_symbols.is_empty() {
        detail += &format!("; too old (NCCL 2.13 or newer is needed): {}", missing_symbols.join(", "));
    }
    if env::var(env::NCCL_PATH).is_none() && env::cuda_path().is_none() {
        detail += " (neither CUPRUM_NCCL_PATH nor CUDA_PATH is set)";
    }
    Err(detail)
}

/// Where `candidates` were looked for, in words: "on the loader path" for bare names, else the
/// folders (each once), and a file given by full name.
fn places(candidates: &[PathBuf]) -> String {
    let mut out: Vec<String> = Vec::new();
    for c in candidates {
        let place = match c.parent().filter(|p| !p.as_os_str().is_empty()) {
            None => "on the loader path (LD_LIBRARY_PATH, the system folders)".to_string(),
            Some(dir) if c.file_name().is_some_and(|n| n.to_string_lossy().starts_with("libnccl.so")) => {
                format!("in {}", dir.display())
            }
            Some(_) => format!("at {}", c.display()),
        };
        if !out.contains(&place) {
            out.push(place);
        }
    }
    out.join(", nor ")
}

/// The table of `lib`'s functions; the missing symbol's error otherwise.
fn resolve(lib: libloading::Library, from: String) -> std::result::Result<Api, libloading::Error> {
    macro_rules! sym {
        ($name:literal) => {
            // SAFETY: the symbol is NCCL's function of that name, whose C signature (nccl.h) is
            // the field's type this value is stored in; the pointer is used only while `_lib`
            // (moved into the same `Api`, never dropped before it) keeps the library loaded.
            *unsafe { lib.get(concat!($name, "\0").as_bytes()) }?
        };
    }
    Ok(Api {
        from,
        get_version: sym!("ncclGetVersion"),
        get_unique_id: sym!("ncclGetUniqueId"),
        comm_init_rank: sym!("ncclCommInitRank"),
        comm_init_all: sym!("ncclCommInitAll"),
        comm_destroy: sym!("ncclCommDestroy"),
        get_error_string: sym!("ncclGetErrorString"),
        get_last_error: sym!("ncclGetLastError"),
        all_reduce: sym!("ncclAllReduce"),
        broadcast: sym!("ncclBroadcast"),
        reduce: sym!("ncclReduce"),
        all_gather: sym!("ncclAllGather"),
        reduce_scatter: sym!("ncclReduceScatter"),
        send: sym!("ncclSend"),
        recv: sym!("ncclRecv"),
        group_start: sym!("ncclGroupStart"),
        group_end: sym!("ncclGroupEnd"),
        _lib: lib,
    })
}

/// NCCL's names of its result codes (`nccl.h`).
fn code_name(code: c_int) -> &'static str {
    match code {
        1 => "ncclUnhandledCudaError",
        2 => "ncclSystemError",
        3 => "ncclInternalError",
        4 => "ncclInvalidArgument",
        5 => "ncclInvalidUsage",
        6 => "ncclRemoteError",
        7 => "ncclInProgress",
        8 => "ncclTimeout",
        _ => "an unknown result code",
    }
}

impl Api {
    /// `code` of NCCL function `call` as a `Result`: the code, NCCL's text for it and, with a
    /// communicator (or null for the process's last error), NCCL's last error message.
    pub(super) fn check(&self, call: &'static str, code: c_int, comm: ncclComm_t) -> Result<()> {
        if code == 0 {
            return Ok(());
        }
        let text = |p: *const c_char| {
            // SAFETY: NCCL returns a NUL-terminated static (or thread-local) string, or null.
            (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
        };
        // SAFETY: both take any value (a code, a communicator or null) and return a C string.
        let (what, last) = unsafe { ((self.get_error_string)(code), (self.get_last_error)(comm)) };
        let mut detail = format!("{} ({code})", code_name(code));
        if let Some(w) = text(what) {
            detail += &format!(": {w}");
        }
        if let Some(l) = text(last).filter(|l| !l.is_empty()) {
            detail += &format!(" ({l})");
        }
        if code == 1 || code == 2 {
            detail += ". NCCL_DEBUG=WARN (or INFO) makes NCCL print why";
        }
        Err(Error::Nccl { call, detail })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_library_is_an_error_naming_it() {
        let tried = [
            PathBuf::from("/nonexistent/libnccl.so.2"),
            PathBuf::from("/nonexistent/libnccl.so"),
            PathBuf::from("libcuprum-no-such-nccl.so"),
            PathBuf::from("/elsewhere/my-nccl.so"),
        ];
        let Err(detail) = load_first(&tried) else { panic!("a library that does not exist loaded") };
        assert!(detail.starts_with("it was not found in /nonexistent, nor on the loader path"), "{detail}");
        assert!(detail.contains("nor at /elsewhere/my-nccl.so") && detail.matches("/nonexistent").count() == 1, "{detail}");
        let message = Error::NoNccl { detail }.to_string();
        for part in ["libnccl.so.2", "pip install nvidia-nccl-cu13", "LD_LIBRARY_PATH", "CUPRUM_NCCL_PATH"] {
            assert!(message.contains(part), "{part} missing from: {message}");
        }
    }

    #[test]
    fn the_soname_is_tried_by_name_before_the_dev_link() {
        let c = candidates();
        let by_name: Vec<&PathBuf> = c.iter().filter(|p| p.components().count() == 1).collect();
        assert_eq!(by_name, [&PathBuf::from("libnccl.so.2"), &PathBuf::from("libnccl.so")]);
    }

    #[test]
    fn result_codes_have_nccl_s_names() {
        assert_eq!(code_name(5), "ncclInvalidUsage");
        assert_eq!(code_name(99), "an unknown result code");
    }

    /// Runs where libnccl is installed (`CUPRUM_NCCL_PATH=... cargo test -- --ignored`): no GPU
    /// is needed to load it and ask its version.
    #[test]
    #[ignore = "needs libnccl.so.2 (set CUPRUM_NCCL_PATH)"]
    fn the_installed_library_loads() {
        let api = api().unwrap();
        let mut v = 0;
        // SAFETY: `v` is a place for the answer.
        api.check("ncclGetVersion", unsafe { (api.get_version)(&mut v) }, std::ptr::null_mut()).unwrap();
        assert!(v >= 21300, "NCCL {v}");
    }
}
