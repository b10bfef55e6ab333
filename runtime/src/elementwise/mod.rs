//! Elementwise kernels (CuPy's ElementwiseKernel semantics): the launch machinery shared by
//! `#[elementwise]` kernels and [`ElementwiseKernel`] (kernels from CUDA C text).
//!
//! - [`plan`]: the loop shape (broadcast), dimension collapsing, the launch variant (`contig`,
//!   `s32`, `s64`) and vector accesses.
//! - the type-erased arguments ([`Arg`], [`ArrayArg`], [`Value`]) and the signature ([`Param`])
//!   are the launch vocabulary's (`crate::launch::{operand, signature}`), shared with reductions.
//! - `params`: the kernel parameters, laid out as `abi/include/cuprum/elementwise.h`'s structs in
//!   the one parameter buffer ([`crate::launch::ArgList`]).
//! - [`launch`](mod@launch): the checked launch ([`launch()`]) and [`broadcast_shape`].
//! - `grammar`, `source`, [`kernel`]: `ElementwiseKernel`'s parameter grammar, its CUDA C, and the
//!   kernel object with its call API.
//!
//! Which variant ran is visible in [`variant_counts`] and a `log::debug!` event (target
//! `cuprum::elementwise`); which layer served the kernel (fat binary, cache, NVRTC) in
//! [`crate::registry::served`].

mod grammar;
pub mod kernel;
pub mod launch;
pub mod params;
pub mod plan;
mod source;

pub use grammar::{ParamSpec, TypeSpec, parse_params};
pub use kernel::{Call, ElementwiseKernel, Output};
pub use launch::{Options, VariantCounts, broadcast_shape, launch, output_stream, reset_variant_counts, variant_counts};
pub use crate::launch::operand::{Arg, ArrayArg, Input, Value};
pub use crate::launch::signature::{Param, ParamType, Role};
pub use plan::{DEFAULT_BLOCK, Plan, PlanOperand, Variant};
