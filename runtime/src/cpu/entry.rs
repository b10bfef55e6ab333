//! `HostEntry`: a kernel's entry point on the CPU device, written by `#[elementwise]` and
//! `#[reduction]` next to its CUDA code and kept in the unit table (`registry::Kernel`).

use super::element_loop::ElementLoop;
use super::reduce_loop::ReduceLoop;
use crate::error::Result;

/// A kernel's entry point on the CPU device, written by the macro next to its CUDA code.
#[derive(Clone, Copy)]
pub enum HostEntry {
    /// An `#[elementwise]` kernel: runs its body through [`ElementLoop::run`] for the loop's
    /// instance (an error for an instance it was not compiled for).
    Elementwise(fn(&ElementLoop<'_>) -> Result<()>),
    /// A `#[reduction]`: runs its map, `reduce` and `post` through [`ReduceLoop::run`].
    Reduction(fn(&ReduceLoop<'_>) -> Result<()>),
}

impl std::fmt::Debug for HostEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HostEntry::Elementwise(_) => f.write_str("HostEntry::Elementwise"),
            HostEntry::Reduction(_) => f.write_str("HostEntry::Reduction"),
        }
    }
}
