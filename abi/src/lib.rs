//! cuprum's ABI: the contract between the code generator and the runtime.
//!
//! Everything both sides must agree on for a kernel generated at build time (by the compiler, from
//! Rust) or at run time (by the runtime, from CuPy-style C text) to be found, compiled and launched
//! lives here, and only that:
//!
//! | module | what |
//! |---|---|
//! | [`bounds`] | the record of an out-of-range index, which kernels write and the runtime reads |
//! | [`dtype`] | the scalar types, their Rust, C and symbol names, sizes and alignments |
//! | [`kind`] | [`KernelKind`]: rawkernel, elementwise, reduction |
//! | [`variant`] | the launch variants of elementwise and reduction kernels |
//! | [`mangle`] | symbol, macro and file names: the one place that names generated things |
//! | [`parts`] | a unit's fat binary as one piece per kernel, and the listing of the pieces |
//! | [`record`] | the audit record each embedded unit carries in the program's data (`cuprum audit`) |
//! | [`headers`] | the CUDA headers generated code includes (`include/cuprum/*.h`, embedded) |
//! | [`mod@unit`] | the first line of a generated unit and the compiler options it needs |
//! | [`elementwise`] | the entry point of an elementwise kernel (C template) |
//! | [`reduction`] | the entry points of a reduction (C template) |
//! | [`fatbin`] | the fat binary format (which targets a fat binary holds), and its checks |
//! | [`cubin`] | the checks a cubin (CUDA ELF) passes before the driver reads it |
//!
//! # Who depends on it
//!
//! The compiler (which re-exports `dtype`, `mangle` and `headers`), the build crate and the runtime.
//! It depends on nothing but `std` and knows nothing of the compiler's IR or of the driver: the
//! C templates take strings, so a program that only launches kernels carries no parser. Anything
//! that needs the IR belongs to the compiler; anything that needs a GPU belongs to the runtime.

#![warn(missing_docs)]

// The modules bottom-up: each may import only the modules above it in this list (the order is
// a contract that the compiler's tests/layers.rs enforces): the scalar types, the kernel kinds and
// their launch variants, the names built from them; the generated unit's options, the headers and
// the index-check record that names a header; the images (cubin, then the per-kernel parts and the
// fat binary made of them); the C templates of the entry points; the units' audit record; the
// tuning file's format.
pub mod dtype;
pub mod kind;
pub mod variant;
pub mod mangle;
pub mod unit;
pub mod headers;
pub mod bounds;
pub mod cubin;
pub mod parts;
pub mod fatbin;
pub mod elementwise;
pub mod reduction;
pub mod record;
pub mod tuning;

pub use dtype::DType;
pub use kind::KernelKind;
pub use unit::{unit_options, UNIT_HEADER};
pub use variant::{ElementwiseVariant, ReductionVariant, Variant};
