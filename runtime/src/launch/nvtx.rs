//! An NVTX range around each launch (cargo feature `nvtx`, docs/debugging.md), named after the
//! kernel's Rust function and instance (`cuprum_abi::mangle::display_name`), so Nsight Systems
//! and Nsight Compute show which Rust kernel each launch came from. NVTX's calls are no-ops until
//! a tool injects itself (Nsight sets `NVTX_INJECTION64_PATH`): then one indirect call per push
//! and pop. Without the feature the range is a zero-sized value, nothing is called and no name is
//! computed.

use crate::function::KernelFunction;

/// The range of one launch: pushed on this thread by [`LaunchRange::push`], popped on drop.
#[must_use = "the range ends when this is dropped"]
pub(crate) struct LaunchRange(());

#[cfg(feature = "nvtx")]
impl LaunchRange {
    /// Pushes a range named after `func` on this thread's NVTX stack.
    #[inline]
    pub(crate) fn push(func: &KernelFunction) -> LaunchRange {
        nvtx_sys::range_push_ascii(func.range_name());
        LaunchRange(())
    }
}

#[cfg(feature = "nvtx")]
impl Drop for LaunchRange {
    #[inline]
    fn drop(&mut self) {
        nvtx_sys::range_pop();
    }
}

#[cfg(not(feature = "nvtx"))]
impl LaunchRange {
    /// Nothing to push without the `nvtx` feature.
    #[inline(always)]
    pub(crate) fn push(_func: &KernelFunction) -> LaunchRange {
        LaunchRange(())
    }
}

/// The NUL-terminated range name of kernel `symbol` (`squared_diff::<f32> [contig]`), computed
/// once when the kernel is loaded. A name with a NUL byte (a `RawKernel` named so) is cut there.
#[cfg(feature = "nvtx")]
pub(crate) fn range_name(symbol: &str) -> Box<std::ffi::CStr> {
    let name = cuprum_abi::mangle::display_name(symbol);
    let bytes: Vec<u8> = name.bytes().take_while(|&b| b != 0).collect();
    std::ffi::CString::new(bytes).map(Into::into).unwrap_or_default()
}

#[cfg(all(test, feature = "nvtx"))]
mod tests {
    use super::*;

    #[test]
    fn range_names_are_the_rust_names() {
        assert_eq!(range_name("cuprum_rawkernel_jacobi__f32").to_str(), Ok("jacobi::<f32>"));
        assert_eq!(range_name("cuprum_elementwise_sq_s32__f64").to_str(), Ok("sq::<f64> [s32]"));
        assert_eq!(range_name("my_add").to_str(), Ok("my_add"));
    }
}
