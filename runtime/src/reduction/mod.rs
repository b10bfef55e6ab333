//! Reductions (CuPy's ReductionKernel semantics, docs/reduction.md): what users name are
//! [`ReductionKernel`] (CuPy's CUDA C grammar) with its arguments ([`Arg`]), [`ReductionCall`]
//! (the builder every `#[reduction]` kernel's `NAME::call(..)` returns) with its [`Axes`], and the
//! array reductions ([`array`](mod@array): [`Reductions`], `x.sum()`, `x.max()`, ..., on the
//! built-in kernels of `kernels/reductions.rs`). Inside: the type-erased launch that the
//! `#[reduction]` glue and `ReductionKernel` call, and the planner that picks a strategy from the
//! layout.
//!
//! A reduction maps every element of its (broadcast) inputs, combines the mapped values along
//! the reduced axes with its reduce function, and applies its post-map to each result. The axes
//! follow NumPy: one, several, negative, all; `keepdims` keeps them as extent 1; an explicit
//! output must have the output shape. An empty reduction gives `post(identity)`, and is an error
//! for a kernel without identity.
//!
//! The erased launch (`launch`, which generated code reaches through `cuprum::__private`) takes the kernel (whose signature it checks the operands
//! against: kinds, dtypes for the instance, the output's dtype), the instance, the map's
//! operands (`Arg::In` arrays, broadcast together, and `Arg::Raw` ones), the output
//! (`Arg::Out`), the axes and `keepdims`. [`ReductionCall`] is the builder every caller uses:
//! `#[reduction]`'s `NAME::call`, the array reductions and `ReductionKernel::call`.

pub mod array;
mod call;
mod reduction_kernel;
mod trace;
pub(crate) mod launch;
pub(crate) mod full;
pub(crate) mod plan;
mod full_trial;

pub use crate::launch::operand::Arg;
pub use array::Reductions;
pub use call::ReductionCall;
pub use reduction_kernel::ReductionKernel;
pub use plan::Axes;

/// The runtime's tuned reduction sites, with the problems the tuner times (`cuprum tune`,
/// docs/tuning.md): `reduce_full`, the geometry of a reduction to one value.
pub fn tunables() -> [&'static crate::tuning::Tunable; 1] {
    [&full_trial::TUNABLE]
}
pub(crate) use launch::{Options, launch, launch_unchecked, output_shape};

use crate::error::{Error, Result};

/// What the launch needs to know about a reduction beyond its instance, read from its
/// signature for the instance.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ReductionInfo {
    /// The kernel has an identity (an empty reduction is then `post(identity)`, not an error).
    pub(crate) has_identity: bool,
    /// `size_of` the accumulator: sizes the partial results of split reductions.
    pub(crate) acc_bytes: usize,
    /// The map reads the loop index: the reduced axes keep their C order.
    pub(crate) positional: bool,
}

/// The broadcast shape of the non-raw inputs: the reduction's loop shape.
pub(crate) fn loop_shape(kernel: &str, inputs: &[Arg<'_>]) -> Result<Vec<usize>> {
    let shapes: Vec<&[usize]> = inputs
        .iter()
        .filter_map(|a| match a {
            Arg::In(a) => Some(a.shape),
            Arg::Raw(_) | Arg::Scalar(_) | Arg::Out(_) => None,
        })
        .collect();
    if shapes.is_empty() {
        return Err(Error::Reduction {
            kernel: kernel.to_string(),
            detail: "every argument is raw, so there is no shape to reduce; pass at least one \
                     array (or scalar) argument that is not `Raw`"
                .into(),
        });
    }
    crate::array::shape::broadcast_shapes(&shapes)
}
