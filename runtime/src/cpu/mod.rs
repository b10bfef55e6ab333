//! The CPU device (docs/cpu.md): how it runs each kind of kernel. An elementwise or reduction
//! launch runs a kernel's body, compiled for the host by rustc from the same function the macros
//! checked, once per element on host threads; a raw kernel runs its host copy on a grid.
//!
//! `#[elementwise]` writes, next to a kernel's CUDA code, a [`HostEntry`]: a function that matches
//! the instance's dtypes and hands [`ElementLoop::run`] a closure that reads the element's inputs
//! ([`Element::get`]), calls the user's function and writes its outputs ([`Element::set`]). The
//! erased launch (`elementwise::launch`) checks and plans the call as for a GPU, then builds the
//! [`ElementLoop`] from the plan: the collapsed loop shape and each operand's byte strides.
//!
//! Soundness on the host, where a data race is undefined behaviour:
//! - every buffer an operand lives in is locked for the whole launch (shared when only read,
//!   exclusive when written; each buffer once, in address order, so launches never deadlock);
//! - the loop runs on several threads only when each written buffer is reached by its operands
//!   through one layout (the same first element and strides), so each element's reads and writes
//!   belong to that element alone; otherwise (an output that is a transposed view of an input,
//!   two outputs sharing memory) it runs on one thread, in C order;
//! - a raw argument is read from a copy of its elements taken before the loop;
//! - a panic in the body (a debug build's integer overflow) is caught and becomes an error.
//!
//! Where each part is: [`HostEntry`] (`entry.rs`), a raw kernel's arguments as handles (`args.rs`),
//! the elementwise loop ([`ElementLoop`], `element_loop.rs`), the reduction loop ([`ReduceLoop`],
//! `reduce_loop.rs`), one element or run of a loop (`element.rs`), the operands' buffers during a
//! launch (`buffers.rs`), the grids of raw kernels (`grid.rs`: each CUDA thread a coroutine where
//! the kernel has barriers), the kernel language on the CPU device (`lang/`: memory handles, the
//! intrinsics of the running CUDA thread, atomics, shuffles), and the CPU side of the erased
//! elementwise and reduction launches (`launch.rs`, which `elementwise::launch` and
//! `reduction::launch` call once they have planned); and the host's own versions of two built-in
//! routines whose GPU kernels run badly thread by thread: the scans of `cumsum`/`cumprod`
//! (`scan.rs`) and the radix sort under `sort`/`argsort`/`unique` (`sort.rs`).

pub mod args;
mod buffers;
mod element;
mod element_loop;
mod entry;
pub mod grid;
pub mod lang;
pub(crate) mod launch;
mod reduce_loop;
pub(crate) mod scan;
pub(crate) mod sort;

/// Whether the routines that have host versions on the CPU device (`scan.rs`, `sort.rs`) use
/// them: always, except in the runtime's unit tests that run the GPU's kernels on the CPU device
/// to check them there too ([`with_kernels`]).
pub(crate) fn host_routines() -> bool {
    !KERNELS.with(std::cell::Cell::get)
}

// Set by `with_kernels` (only the unit tests call it).
thread_local!(static KERNELS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) });

/// `f` with the routines of [`host_routines`] launching the GPU's kernels on the CPU device
/// (calls made from this thread).
#[cfg(test)]
pub(crate) fn with_kernels<R>(f: impl FnOnce() -> R) -> R {
    KERNELS.with(|k| k.set(true));
    let r = f();
    KERNELS.with(|k| k.set(false));
    r
}

pub use element::{Element, Run};
pub use element_loop::ElementLoop;
pub use entry::HostEntry;
pub use reduce_loop::ReduceLoop;

use crate::error::Error;

/// Elements below which a loop runs on the calling thread only.
pub(crate) const PARALLEL_MIN: usize = 1 << 15;

/// The error of a kernel whose host code (`what`) panicked on the CPU device.
pub(crate) fn panicked(kernel: &str, what: &str, payload: &(dyn std::any::Any + Send)) -> Error {
    Error::InvalidLaunch {
        kernel: kernel.to_string(),
        detail: format!(
            "{what} panicked on the CPU device: {} (a debug build checks integer overflow, which \
             the GPU does not: build with `--release`, or use `wrapping_*` operations)",
            crate::error::panic_text(payload, "a panic")
        ),
    }
}
