//! Loop-unroll control in kernels (docs/kernel-language.md, "Statements and expressions"):
//! `for k in (0..8).unroll()` is a loop the CUDA compiler unrolls fully (`#pragma unroll`),
//! `for k in (0..n).unroll_by(4)` one it unrolls by 4 (`#pragma unroll 4`; 1 keeps it rolled).
//! They come last, after `.rev()` and `.step_by(s)`; the factor is an integer literal. On the host
//! and the CPU device the range is iterated as it is.

/// `.unroll()` and `.unroll_by(n)` on the ranges of kernel `for` loops.
pub trait Unroll: Iterator + Sized {
    /// Asks the CUDA compiler to unroll the loop fully (`#pragma unroll`): for a trip count it
    /// can compute. Host: the iterator, unchanged.
    fn unroll(self) -> Self {
        self
    }

    /// Asks the CUDA compiler to unroll the loop by `factor` (`#pragma unroll factor`, an integer
    /// literal from 1). Host: the iterator, unchanged.
    fn unroll_by(self, factor: u32) -> Self {
        let _ = factor;
        self
    }
}

impl<I: Iterator> Unroll for I {}
