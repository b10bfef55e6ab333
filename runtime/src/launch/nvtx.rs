//! An NVTX range around each launch (cargo feature `nvtx`, docs/debugging.md), named after the
//! kernel's Rust function and instance (`cuprum_abi::mangle::display_name`), so Nsight Systems
//! and Nsight Compute show which Rust kernel each launch came from. NVTX's calls are no-ops until
//! a tool injects itself (Nsight sets `NVTX_INJECTION64_PATH`): then one indirect call per push
//! and pop. Without the feature the range is a zero-sized value and nothing is called.

use std::ffi::CStr;

/// The range of one launch: pushed on this thread by [`LaunchRange::push`], popped on drop.
#[must_use = "the range ends when this is dropped"]
pub(crate) struct LaunchRange(());

#[cfg(feature = "nvtx")]
impl LaunchRange {
    /// Pushes a range named `name` on this thread's NVTX stack.
    #[inline]
    pub(crate) fn push(name: &CStr) -> LaunchRange {
        nvtx_sys::range_push_ascii(name);
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
    pub(crate) fn push(_name: &CStr) -> LaunchRange {
        LaunchRange(())
    }
}

/// The NUL-terminated range name of kernel `symbol` (`squared_diff::<f32> [contig]`), computed
/// once when the kernel is loaded. A name with a NUL byte (a `RawKernel` named so) is cut there.
pub(crate) fn range_name(symbol: &str) -> Box<CStr> {
    let name = cuprum_abi::mangle::display_name(symbol);
    let bytes: Vec<u8> = name.bytes().take_while(|&b| b != 0).collect();
    std::ffi::CString::new(bytes).map(Into::into).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_names_are_the_rust_names() {
        assert_eq!(range_name("cuprum_rawkernel_jacobi__f32").to_str(), Ok("jacobi::<f32>"));
        assert_eq!(range_name("cuprum_elementwise_sq_s32__f64").to_str(), Ok("sq::<f64> [s32]"));
        assert_eq!(range_name("my_add").to_str(), Ok("my_add"));
    }

    #[test]
    fn a_range_pushes_and_pops_in_pairs() {
        // With the feature, NVTX without a tool attached returns an error code for both calls and
        // does nothing; what matters here is that push/drop compiles to a balanced pair.
        let r = LaunchRange::push(c"cuprum test range");
        drop(r);
    }
}
