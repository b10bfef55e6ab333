//! Whether a CUDA library (the driver, libnvrtc, libcublas) can be loaded, asked before cudarc's
//! bindings are first called (they panic when the library is missing).
//!
//! cudarc's own check (`sys::is_culib_present`) exists only when cudarc loads the libraries at
//! run time (its `dynamic-loading` mode, cuprum's choice). A program that also depends on a crate
//! asking cudarc for `dynamic-linking` (candle-core's `cuda` feature) gets cudarc in that mode
//! instead (cuprum asks for `fallback-dynamic-loading`, which gives way), and the check is gone.
//! This one works in both: it tries the names cudarc's loader tries, in cudarc's order. When the
//! library is linked, the process has it loaded already and the first name that resolves to it
//! answers.

use std::env::consts::{DLL_PREFIX, DLL_SUFFIX};

/// The CUDA version of cudarc's bindings (the workspace asks for `cuda-13000`): cudarc's loader
/// puts it into some of the names it tries.
const MAJOR: u32 = 13;
const MINOR: u32 = 0;

/// The file names cudarc's loader tries for `lib` (`cudarc::get_lib_name_candidates`), in order.
fn candidates(lib: &str) -> Vec<String> {
    let (p, s) = (DLL_PREFIX, DLL_SUFFIX);
    let w = usize::BITS;
    let mut names = vec![
        format!("{p}{lib}{s}"),
        format!("{p}{lib}{w}{s}"),
        format!("{p}{lib}{w}_{MAJOR}{s}"),
        format!("{p}{lib}{w}_{MAJOR}{MINOR}{s}"),
        format!("{p}{lib}{w}_{MAJOR}{MINOR}_0{s}"),
        format!("{p}{lib}{w}_{MAJOR}0_{MINOR}{s}"),
    ];
    names.extend(["10", "11", "12"].map(|v| format!("{p}{lib}{w}_{v}{s}")));
    names.push(format!("{p}{lib}{w}_{MAJOR}0_0{s}"));
    names.push(format!("{p}{lib}{w}_9{s}"));
    names.push(format!("{p}{lib}{s}.{MAJOR}"));
    names.extend(["12", "11", "10", "9", "1"].map(|v| format!("{p}{lib}{s}.{v}")));
    names
}

/// True when one of `libs` (`["cuda", "nvcuda"]`, `["nvrtc"]`) loads under one of cudarc's names.
/// The library is closed again (a library the process had loaded stays loaded).
///
/// # Safety
///
/// Loading a shared library runs its initialisers; for the CUDA libraries that is what any CUDA
/// program does (cudarc's check does the same).
pub(crate) unsafe fn present(libs: &[&str]) -> bool {
    libs.iter().flat_map(|l| likely_first(l, candidates(l))).any(|name| {
        // SAFETY: the caller's (above); the handle is dropped (dlclose) at once.
        unsafe { libloading::Library::new(name) }.is_ok()
    })
}

/// `names` with the versioned names a Linux install has first: the driver's `libcuda.so.1`, then
/// a toolkit's `libnvrtc.so.13` (for the driver, `.so.1` before `.so.13`, which no driver has; for
/// the others the reverse), the others in their order: every name that is not found costs a search
/// of the library path (18 directories on the H200 machine, about 5 us each: 0.1 ms for
/// `libcuda.so.13` alone), and this check runs in every process's first use of a device.
fn likely_first(lib: &str, mut names: Vec<String>) -> Vec<String> {
    let (one, major) = (format!("{DLL_SUFFIX}.1"), format!("{DLL_SUFFIX}.{MAJOR}"));
    let (first, second) = if lib == "cuda" { (&one, &major) } else { (&major, &one) };
    names.sort_by_key(|n| if n.ends_with(first.as_str()) { 0 } else if n.ends_with(second.as_str()) { 1 } else { 2 });
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The workspace's builds have cudarc in its loading mode, where its list is public: a
    /// change of cudarc's names or of its CUDA version shows here.
    #[test]
    fn names_are_cudarc_s() {
        for lib in ["cuda", "nvcuda", "nvrtc", "cublas"] {
            assert_eq!(candidates(lib), cudarc::get_lib_name_candidates(lib), "{lib}");
        }
    }

    #[test]
    fn installed_names_are_tried_first() {
        let names = likely_first("cuda", candidates("cuda"));
        assert_eq!(names.len(), candidates("cuda").len());
        let nvrtc = likely_first("nvrtc", candidates("nvrtc"));
        let cublas = likely_first("cublas", candidates("cublas"));
        if cfg!(target_os = "linux") {
            assert_eq!(&names[..3], ["libcuda.so.1", "libcuda.so.13", "libcuda.so"]);
            assert_eq!(&nvrtc[..3], ["libnvrtc.so.13", "libnvrtc.so.1", "libnvrtc.so"]);
            assert_eq!(cublas[0], "libcublas.so.13");
        }
    }

    #[test]
    fn a_missing_library_is_absent() {
        // SAFETY: no such library exists, so nothing is loaded.
        assert!(!unsafe { present(&["cuprum-no-such-library"]) });
    }
}
