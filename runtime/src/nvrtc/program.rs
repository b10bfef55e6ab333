//! Compiling with NVRTC: the options, the embedded headers handed over in memory, the program
//! and its result (the module docs of `nvrtc`). The runtime's: programs reach it through
//! `RawKernel`, `RawModule` and the kernel cache.

use std::ffi::{CStr, CString, c_char, c_int};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use cudarc::nvrtc::sys::{self, nvrtcProgram, nvrtcResult};

use super::{CodeTarget, check, error_string, info};
use crate::cache::{CompiledImage, ImageKind};
use crate::error::{Error, Result};
use crate::stats;

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

/// The digest of the embedded headers (`EMBEDDED_HEADERS_DIGEST`, computed by build.rs).
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
    /// NVRTC's log of the successful compile: its warnings (often empty). Logged at warn level
    /// under the target `cuprum::jit` when not empty, and kept by `RawModule::compile_log`.
    pub log: String,
    /// Wall time of the compile (also counted in `stats`). Only the tests read it so far.
    #[cfg_attr(not(test), allow(dead_code))]
    pub elapsed: Duration,
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
            let mut log = if log.trim().is_empty() {
                error_string(r)
            } else {
                log
            };
            // NVRTC: `catastrophic error: cannot open source file "x.h"`.
            if log.contains("cannot open source file") {
                log = format!("{}\n{}", log.trim_end(), super::missing_header_hint(super::toolkit()));
            }
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
        log::warn!(
            target: "cuprum::jit",
            "NVRTC compiled the {} for {target_name} with warnings:\n{}",
            program.name,
            log.trim_end()
        );
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
