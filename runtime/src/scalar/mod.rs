//! The scalar types of the kernel language: their numeric traits ([`traits`]: `Scalar`, `Number`,
//! `Real`, `Float`, `Int`) and the arithmetic the host does as the GPU does ([`kernel_ops`], the
//! supertraits of `Number` and `Int`). Below arrays, launches and reductions, which bound their
//! element types by these traits; the kernel language (`lang`, above them) re-exports both under
//! its own name, as kernels and generated code see them.

pub mod fp8;
pub mod kernel_ops;
pub mod traits;
