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
