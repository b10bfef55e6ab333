//! Relocatable device code: a `RawModule` compiled with `-rdc=true` (or `-dc`) is linked with
//! the CUDA device runtime, `libcudadevrt.a`, so that its kernels may launch kernels (dynamic
//! parallelism), as CuPy does. NVRTC emits relocatable PTX; the driver's linker (`cuLinkCreate`,
//! `cuLinkAddData`, `cuLinkAddFile`, `cuLinkComplete`: the route of NVRTC's own dynamic
//! parallelism example, still in CUDA 13's driver API) links it with the library into a cubin for
//! the device, which the kernel cache keeps like any other image. `libcudadevrt.a` comes from the
//! CUDA toolkit (`nvrtc::toolkit`): without one, such a module is [`Error::DeviceRuntime`].

use std::ffi::{CString, c_uint, c_void};
use std::path::{Path, PathBuf};

use cudarc::driver::sys::{self, CUjit_option, CUjitInputType, CUresult};

use crate::cache::{CompiledImage, ImageKind};
use crate::device::Device;
use crate::error::{Error, Result};
use crate::nvrtc;

/// Whether NVRTC `options` ask for relocatable device code (`-rdc=true`,
/// `--relocatable-device-code=true`, `-dc`, `--device-c`; the last one given wins).
pub(crate) fn is_relocatable(options: &[String]) -> bool {
    let mut rdc = false;
    let mut words = options.iter().map(String::as_str);
    while let Some(o) = words.next() {
        match o {
            "-dc" | "--device-c" => rdc = true,
            "-rdc" | "--relocatable-device-code" => {
                if let Some(v) = words.next() {
                    rdc = v == "true";
                }
            }
            _ => {
                if let Some(v) = o.strip_prefix("-rdc=").or_else(|| o.strip_prefix("--relocatable-device-code=")) {
                    rdc = v == "true";
                }
            }
        }
    }
    rdc
}

/// `libcudadevrt.a` of the toolkit, or [`Error::DeviceRuntime`] saying where it was looked for
/// and what to set.
pub(crate) fn cudadevrt() -> Result<PathBuf> {
    match nvrtc::toolkit() {
        Some(t) => t.cudadevrt().ok_or_else(|| Error::DeviceRuntime {
            detail: format!(
                "the CUDA toolkit at {} (found by {}) has no libcudadevrt.a in lib64/, lib/ or targets/*/lib/",
                t.root.display(),
                t.found_by
            ),
        }),
        None => Err(Error::DeviceRuntime { detail: format!("no CUDA toolkit was found (looked at {})", nvrtc::toolkit::searched()) }),
    }
}

/// A driver link, destroyed on drop.
struct LinkState(sys::CUlinkState);

impl Drop for LinkState {
    fn drop(&mut self) {
        // SAFETY: the state came from a successful cuLinkCreate and is destroyed only here (which
        // also frees the cubin cuLinkComplete returned, copied before).
        let _ = unsafe { sys::cuLinkDestroy(self.0) };
    }
}

const LOG_BYTES: usize = 16 * 1024;

/// Links `image` (relocatable PTX or cubin from NVRTC) with `cudadevrt` into a cubin for
/// `device` (the driver's linker runs in its context). `what` names the module in errors.
pub(crate) fn link_with_device_runtime(device: &Device, image: &CompiledImage, cudadevrt: &Path, what: &str) -> Result<CompiledImage> {
    device.bind_to_thread()?;
    let mut error_log = vec![0u8; LOG_BYTES];
    let mut options = [CUjit_option::CU_JIT_ERROR_LOG_BUFFER, CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES];
    // The driver reads a size option's value from the pointer's bits.
    let mut values = [error_log.as_mut_ptr() as *mut c_void, LOG_BYTES as *mut c_void];
    let mut raw: sys::CUlinkState = std::ptr::null_mut();
    let fail = |step: &str, r: CUresult, log: &[u8]| {
        let text = String::from_utf8_lossy(&log[..log.iter().position(|&b| b == 0).unwrap_or(log.len())]).trim().to_string();
        Error::DeviceRuntime {
            detail: format!(
                "linking the {what} with {} failed at {step} ({r:?}){}",
                cudadevrt.display(),
                if text.is_empty() { String::new() } else { format!(": {text}") }
            ),
        }
    };
    // SAFETY: the device's context is bound (above); `options` and `values` have the same length,
    // given as the count, and stay alive (with `error_log`, which the driver writes into until the
    // link is destroyed) until `state` is dropped at the end of this function.
    let r = unsafe { sys::cuLinkCreate_v2(options.len() as c_uint, options.as_mut_ptr(), values.as_mut_ptr(), &mut raw) };
    if r != CUresult::CUDA_SUCCESS {
        return Err(fail("cuLinkCreate", r, &error_log));
    }
    let state = LinkState(raw);
    let (input, mut data) = match image.kind {
        ImageKind::Ptx => {
            // The driver wants NUL-terminated PTX; NVRTC's PTX ends with its NUL already.
            let mut d = image.image.clone();
            if d.last() != Some(&0) {
                d.push(0);
            }
            (CUjitInputType::CU_JIT_INPUT_PTX, d)
        }
        ImageKind::Cubin => (CUjitInputType::CU_JIT_INPUT_CUBIN, image.image.clone()),
        ImageKind::Fatbin => (CUjitInputType::CU_JIT_INPUT_FATBINARY, image.image.clone()),
    };
    let name = CString::new("cuprum_jit").expect("no NUL");
    // SAFETY: live link state of the bound context; `data` holds `data.len()` bytes of the image
    // NVRTC produced for this device (the driver copies it); `name` is NUL-terminated; no options.
    let r = unsafe {
        sys::cuLinkAddData_v2(
            state.0,
            input,
            data.as_mut_ptr() as *mut c_void,
            data.len(),
            name.as_ptr(),
            0,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    };
    if r != CUresult::CUDA_SUCCESS {
        return Err(fail("cuLinkAddData", r, &error_log));
    }
    let path = path_cstring(cudadevrt)?;
    // SAFETY: live link state; `path` is a NUL-terminated path of an existing file; no options.
    let r = unsafe {
        sys::cuLinkAddFile_v2(state.0, CUjitInputType::CU_JIT_INPUT_LIBRARY, path.as_ptr(), 0, std::ptr::null_mut(), std::ptr::null_mut())
    };
    if r != CUresult::CUDA_SUCCESS {
        return Err(fail("cuLinkAddFile", r, &error_log));
    }
    let mut cubin: *mut c_void = std::ptr::null_mut();
    let mut size = 0usize;
    // SAFETY: live link state with its inputs added; both out pointers are valid.
    let r = unsafe { sys::cuLinkComplete(state.0, &mut cubin, &mut size) };
    if r != CUresult::CUDA_SUCCESS || cubin.is_null() {
        return Err(fail("cuLinkComplete", r, &error_log));
    }
    // SAFETY: the driver returned `size` bytes at `cubin`, owned by the link state, which lives
    // until the end of this function: copied now.
    let bytes = unsafe { std::slice::from_raw_parts(cubin as *const u8, size) }.to_vec();
    drop(state);
    Ok(CompiledImage { kind: ImageKind::Cubin, image: bytes, lowered_names: image.lowered_names.clone() })
}

fn path_cstring(path: &Path) -> Result<CString> {
    CString::new(path.as_os_str().to_string_lossy().as_bytes())
        .map_err(|_| Error::DeviceRuntime { detail: format!("the path {} holds a NUL byte", path.display()) })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(o: &[&str]) -> Vec<String> {
        o.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn relocatable_options() {
        assert!(is_relocatable(&opts(&["-rdc=true"])));
        assert!(is_relocatable(&opts(&["--relocatable-device-code=true", "-DN=1"])));
        assert!(is_relocatable(&opts(&["-dc"])));
        assert!(is_relocatable(&opts(&["-rdc", "true"])));
        assert!(!is_relocatable(&opts(&["-rdc=false"])));
        assert!(!is_relocatable(&opts(&["-rdc=true", "-rdc=false"])));
        assert!(!is_relocatable(&opts(&["-DRDC=true", "--use_fast_math"])));
        assert!(!is_relocatable(&[]));
    }
}
