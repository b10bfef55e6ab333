//! NVRTC, the runtime compiler: CUDA C source -> CUBIN (or PTX) for one GPU.
//!
//! - Target: CUBIN for the device's `sm_XX` when this NVRTC supports it; for a device newer than
//!   this NVRTC, CUBIN for an older architecture of the same major version when there is one, else
//!   PTX for the newest architecture NVRTC knows (the driver compiles PTX for the GPU at load time).
//!   `CUPY_COMPILE_WITH_PTX=1` always emits PTX. See [`choose_target`].
//! - `CUPY_CUDA_COMPILE_WITH_DEBUG=1` adds `--device-debug --generate-line-info`
//!   ([`effective_options`]); `CUPY_DUMP_CUDA_SOURCE_ON_ERROR=1` puts the numbered source into
//!   [`Error::Compile`] ([`Program::dump_source_on_error`]). The callers read these variables;
//!   this module reads only `CUDA_PATH`.
//! - cuprum's headers (`abi/include/cuprum`, embedded by `cuprum_abi::headers::HEADERS`) are
//!   handed to NVRTC in memory, so `#include <cuprum/...>` works with only the driver and libnvrtc.
//! - Name expressions (`fx3<float>`) are registered before compiling and their lowered (mangled)
//!   names are returned with the image.
//!
//! libnvrtc is loaded on first use. cudarc panics when it cannot load the library, so [`info`]
//! checks first and returns [`Error::NoNvrtc`]. When `CUDA_PATH` is set, libnvrtc (and its
//! builtins library) is loaded from `$CUDA_PATH/lib64`, `$CUDA_PATH/lib` or
//! `$CUDA_PATH/targets/*/lib` before the loader's usual search.

use std::ffi::{CStr, CString, c_char, c_int};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use cudarc::nvrtc::sys::{self, nvrtcProgram, nvrtcResult};

use crate::cache::{CompiledImage, ImageKind};
use crate::env;
use crate::error::{Error, Result};
use crate::stats;

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
    // SAFETY: `is_culib_present` only dlopens libnvrtc under its usual names and closes it again;
    // loading it runs only the library's own initialisers.
    if !unsafe { sys::is_culib_present() } {
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

/// The folders under a CUDA root where libnvrtc may live.
fn library_dirs(root: &Path) -> Vec<PathBuf> {
    let mut dirs = vec![root.join("lib64"), root.join("lib")];
    if let Ok(targets) = std::fs::read_dir(root.join("targets")) {
        for t in targets.flatten() {
            dirs.push(t.path().join("lib"));
        }
    }
    dirs.push(root.join("bin"));
    dirs
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
    pub fn kind(self) -> ImageKind {
        match self {
            CodeTarget::Cubin(_) => ImageKind::Cubin,
            CodeTarget::Ptx(_) => ImageKind::Ptx,
        }
    }
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

/// The complete option list for a compile: the architecture, the user's options, and the debug
/// flags when `debug` (`CUPY_CUDA_COMPILE_WITH_DEBUG=1`). This list is also part of the cache key.
pub fn effective_options(user: &[String], target: CodeTarget, debug: bool) -> Vec<String> {
    let mut opts = Vec::with_capacity(user.len() + 3);
    opts.push(format!("--gpu-architecture={}", target.name()));
    opts.extend(user.iter().cloned());
    if debug {
        opts.push("--device-debug".into());
        opts.push("--generate-line-info".into());
    }
    opts
}

/// The headers embedded for NVRTC: `(include name, text)`.
pub fn headers() -> &'static [(&'static str, &'static str)] {
    cuprum_abi::headers::HEADERS
}

/// [`headers_digest`](crate::cache::headers_digest) of [`headers`] (part of every JIT cache key),
/// computed by the build script with the same code (`build.rs`): rustc's const evaluator takes
/// seconds over the headers' 85 KB.
pub const EMBEDDED_HEADERS_DIGEST: [u8; 32] =
    include!(concat!(env!("OUT_DIR"), "/headers_digest.rs"));

/// [`EMBEDDED_HEADERS_DIGEST`].
pub fn embedded_headers_digest() -> [u8; 32] {
    EMBEDDED_HEADERS_DIGEST
}

/// The embedded headers as C strings, converted once.
fn c_headers() -> &'static (Vec<CString>, Vec<CString>) {
    static C: OnceLock<(Vec<CString>, Vec<CString>)> = OnceLock::new();
    C.get_or_init(|| {
        let mut names = Vec::new();
        let mut texts = Vec::new();
        for (n, t) in headers() {
            // Interior NULs cannot occur in our own headers; skip such a header rather than fail.
            if let (Ok(n), Ok(t)) = (CString::new(*n), CString::new(*t)) {
                names.push(n);
                texts.push(t);
            }
        }
        (names, texts)
    })
}

/// One compile job.
#[derive(Clone, Copy, Debug)]
pub struct Program<'a> {
    /// A name for messages and logs (e.g. the kernel's name).
    pub name: &'a str,
    /// The file name NVRTC uses in its diagnostics (`<file_name>.cu`).
    pub file_name: &'a str,
    /// The CUDA C source.
    pub source: &'a str,
    /// The complete options ([`effective_options`]).
    pub options: &'a [String],
    /// Name expressions to lower (template instantiations such as `fx3<float>`).
    pub name_expressions: &'a [String],
    /// Put the numbered source into a compile error (`CUPY_DUMP_CUDA_SOURCE_ON_ERROR`).
    pub dump_source_on_error: bool,
}

/// A successful compile.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// The image NVRTC produced, with the lowered names.
    pub image: CompiledImage,
    /// NVRTC's log (warnings; often empty).
    pub log: String,
    /// Wall time of the compile.
    pub elapsed: Duration,
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

/// An NVRTC program, destroyed on drop.
struct ProgramHandle(nvrtcProgram);

impl Drop for ProgramHandle {
    fn drop(&mut self) {
        // SAFETY: the handle came from a successful nvrtcCreateProgram and is destroyed only here.
        let _ = unsafe { sys::nvrtcDestroyProgram(&mut self.0) };
    }
}

impl ProgramHandle {
    fn log(&self) -> String {
        let mut size = 0usize;
        // SAFETY: live program; `size` is a valid out pointer.
        if unsafe { sys::nvrtcGetProgramLogSize(self.0, &mut size) } != nvrtcResult::NVRTC_SUCCESS {
            return String::new();
        }
        let mut buf = vec![0u8; size.max(1)];
        // SAFETY: `buf` holds the `size` bytes NVRTC reported.
        if unsafe { sys::nvrtcGetProgramLog(self.0, buf.as_mut_ptr() as *mut c_char) }
            != nvrtcResult::NVRTC_SUCCESS
        {
            return String::new();
        }
        c_bytes_to_string(buf)
    }

    fn output(&self, kind: ImageKind) -> Result<Vec<u8>> {
        let mut size = 0usize;
        let mut buf;
        match kind {
            ImageKind::Ptx => {
                // SAFETY: live, compiled program; valid out pointer.
                check("nvrtcGetPTXSize", unsafe {
                    sys::nvrtcGetPTXSize(self.0, &mut size)
                })?;
                buf = vec![0u8; size];
                // SAFETY: `buf` holds the `size` bytes NVRTC reported (NUL included).
                check("nvrtcGetPTX", unsafe {
                    sys::nvrtcGetPTX(self.0, buf.as_mut_ptr() as *mut c_char)
                })?;
            }
            _ => {
                // SAFETY: as above.
                check("nvrtcGetCUBINSize", unsafe {
                    sys::nvrtcGetCUBINSize(self.0, &mut size)
                })?;
                buf = vec![0u8; size];
                // SAFETY: `buf` holds the `size` bytes NVRTC reported.
                check("nvrtcGetCUBIN", unsafe {
                    sys::nvrtcGetCUBIN(self.0, buf.as_mut_ptr() as *mut c_char)
                })?;
            }
        }
        Ok(buf)
    }
}

fn c_bytes_to_string(mut buf: Vec<u8>) -> String {
    if let Some(nul) = buf.iter().position(|&b| b == 0) {
        buf.truncate(nul);
    }
    String::from_utf8_lossy(&buf).into_owned()
}

/// `source` with right-aligned line numbers, as `CUPY_DUMP_CUDA_SOURCE_ON_ERROR` shows it.
pub fn numbered_source(source: &str) -> String {
    let width = source.lines().count().max(1).to_string().len();
    let mut out = String::with_capacity(source.len() + source.lines().count() * (width + 1));
    for (i, line) in source.lines().enumerate() {
        out.push_str(&format!("{:>width$} {line}\n", i + 1));
    }
    out
}

fn cstring(what: &str, s: &str) -> Result<CString> {
    CString::new(s).map_err(|_| Error::Nvrtc {
        call: "nvrtcCreateProgram",
        detail: format!("the {what} contains a NUL byte"),
    })
}

/// Compiles `program` for `target`. The options must already hold the architecture
/// ([`effective_options`]). Counts the compile in [`stats`] and logs it.
pub fn compile(program: &Program<'_>, target: CodeTarget) -> Result<Compiled> {
    crate::capture::refuse("compiling a kernel with NVRTC")?;
    info()?;
    let src = cstring("source", program.source)?;
    let file_name = cstring("program name", &format!("{}.cu", program.file_name))?;
    let options: Vec<CString> = program
        .options
        .iter()
        .map(|o| cstring("option", o))
        .collect::<Result<_>>()?;
    let exprs: Vec<CString> = program
        .name_expressions
        .iter()
        .map(|e| cstring("name expression", e))
        .collect::<Result<_>>()?;
    let (h_names, h_texts) = c_headers();
    let h_name_ptrs: Vec<*const c_char> = h_names.iter().map(|c| c.as_ptr()).collect();
    let h_text_ptrs: Vec<*const c_char> = h_texts.iter().map(|c| c.as_ptr()).collect();
    let opt_ptrs: Vec<*const c_char> = options.iter().map(|c| c.as_ptr()).collect();

    let start = Instant::now();
    let mut raw: nvrtcProgram = std::ptr::null_mut();
    // SAFETY: every pointer is a live NUL-terminated string that outlives the program (the
    // headers are static; `src` and `file_name` live to the end of this function, after the
    // handle is dropped); the two header arrays have the same length, given as the count.
    check("nvrtcCreateProgram", unsafe {
        sys::nvrtcCreateProgram(
            &mut raw,
            src.as_ptr(),
            file_name.as_ptr(),
            h_text_ptrs.len() as c_int,
            h_text_ptrs.as_ptr(),
            h_name_ptrs.as_ptr(),
        )
    })?;
    let prog = ProgramHandle(raw);
    for e in &exprs {
        // SAFETY: live program; `e` is NUL-terminated and outlives the call (NVRTC copies it).
        check("nvrtcAddNameExpression", unsafe {
            sys::nvrtcAddNameExpression(prog.0, e.as_ptr())
        })?;
    }
    // SAFETY: live program; `opt_ptrs` holds `options.len()` pointers to live C strings.
    let r = unsafe { sys::nvrtcCompileProgram(prog.0, opt_ptrs.len() as c_int, opt_ptrs.as_ptr()) };
    let log = prog.log();
    let target_name = target.name();
    if r != nvrtcResult::NVRTC_SUCCESS {
        stats::record_compile(program.name, &target_name, start.elapsed(), false);
        if r == nvrtcResult::NVRTC_ERROR_COMPILATION || r == nvrtcResult::NVRTC_ERROR_INVALID_OPTION
        {
            let dump = program.dump_source_on_error;
            let log = if log.trim().is_empty() {
                error_string(r)
            } else {
                log
            };
            return Err(Error::Compile {
                name: program.name.to_string(),
                options: program.options.to_vec(),
                log,
                numbered_source: dump.then(|| numbered_source(program.source)),
            });
        }
        return Err(Error::Nvrtc {
            call: "nvrtcCompileProgram",
            detail: format!(
                "{}{}{}",
                error_string(r),
                if log.is_empty() { "" } else { ": " },
                log
            ),
        });
    }
    let kind = target.kind();
    let image = prog.output(kind)?;
    let mut lowered_names = Vec::with_capacity(exprs.len());
    for (e, expr) in exprs.iter().zip(program.name_expressions) {
        let mut p: *const c_char = std::ptr::null();
        // SAFETY: live, compiled program; `e` was registered before compiling; `p` is a valid
        // out pointer. The returned string is owned by the program, copied before it is dropped.
        check("nvrtcGetLoweredName", unsafe {
            sys::nvrtcGetLoweredName(prog.0, e.as_ptr(), &mut p)
        })?;
        if p.is_null() {
            return Err(Error::Nvrtc {
                call: "nvrtcGetLoweredName",
                detail: format!("no lowered name for `{expr}`"),
            });
        }
        // SAFETY: non-null, NUL-terminated, owned by the live program.
        let lowered = unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
        lowered_names.push((expr.clone(), lowered));
    }
    drop(prog);
    let elapsed = start.elapsed();
    stats::record_compile(program.name, &target_name, elapsed, true);
    if !log.trim().is_empty() {
        log::debug!(target: "cuprum::jit", "NVRTC log for `{}`:\n{log}", program.name);
    }
    Ok(Compiled {
        image: CompiledImage {
            kind,
            image,
            lowered_names,
        },
        log,
        elapsed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::headers_digest;

    const ARCHS: [u32; 8] = [75, 80, 86, 87, 89, 90, 100, 120];

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
