//! Elementwise kernels (CuPy's ElementwiseKernel semantics, docs/elementwise.md): what users name
//! are [`ElementwiseKernel`] (kernels from CUDA C text) with its [`Call`] builder, the
//! [`Options`] of `#[elementwise]` kernels' `NAME::call_with`, the argument types ([`Input`]: an
//! array or a scalar; [`Value`]: a scalar of any dtype) and the launch variant counters
//! ([`variant_counts`]).
//!
//! Inside, the launch machinery shared by `#[elementwise]` kernels and `ElementwiseKernel`:
//!
//! - `plan`: the loop shape (broadcast), dimension collapsing, the launch variant (`contig`,
//!   `s32`, `s64`) and vector accesses.
//! - the type-erased arguments (`Arg`, `ArrayArg`, [`Value`]) and the signature (`Param`) are the
//!   launch vocabulary's (`crate::launch::{operand, signature}`), shared with reductions.
//! - `params`: the kernel parameters, laid out as `abi/include/cuprum/elementwise.h`'s structs in
//!   the one parameter buffer ([`ArgList`](crate::ArgList)).
//! - `launch`: the checked launch (`launch()`, which generated code reaches through
//!   `cuprum::__private`) and `broadcast_shape`.
//! - `grammar`, `source`, `elementwise_kernel`: `ElementwiseKernel`'s parameter grammar, its CUDA C, and the
//!   kernel object with its call API.
//!
//! Which variant ran is visible in [`variant_counts`] and a `log::debug!` event (target
//! `cuprum::elementwise`); which layer served the kernel (fat binary, cache, NVRTC) in
//! [`audit::served`](crate::audit::served).

mod grammar;
pub(crate) mod elementwise_kernel;
pub(crate) mod launch;
pub(crate) mod params;
pub(crate) mod plan;
mod source;

pub use elementwise_kernel::{Builder, Call, CallArg, CallInput, ElementwiseKernel, Output};
pub use launch::{Options, VariantCounts, reset_variant_counts, variant_counts};
pub use crate::launch::operand::{Input, Value};
pub(crate) use launch::{broadcast_shape, launch, output_stream};
pub(crate) use crate::launch::operand::{Arg, ArrayArg};
