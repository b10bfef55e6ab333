//! Reductions (CuPy's ReductionKernel semantics, docs/reduction.md): the type-erased launch that the
//! `#[reduction]` glue and [`ReductionKernel`] call, the planner that picks a strategy from the
//! layout, `ReductionKernel` itself (CuPy's CUDA C grammar), [`ReductionCall`] (the builder every
//! `#[reduction]` kernel's `NAME::call(..)` returns) and the array reductions ([`array`](mod@array):
//! [`Reductions`], `x.sum()`, `x.max()`, ..., on the built-in kernels of `kernels/reductions.rs`).
//!
//! A reduction maps every element of its (broadcast) inputs, combines the mapped values along
//! the reduced axes with its reduce function, and applies its post-map to each result. The axes
//! follow NumPy: one, several, negative, all; `keepdims` keeps them as extent 1; an explicit
//! output must have the output shape. An empty reduction gives `post(identity)`, and is an error
//! for a kernel without identity.
//!
//! The macro glue calls [`output_shape`] to allocate the output, then [`launch`]:
//!
//! ```ignore
//! let inputs = [Arg::array(x)];
//! let shape = reduction::output_shape(&inputs, &axes, keepdims)?;
//! let mut out = Array::<T>::empty_on(shape, &stream)?;
//! // SAFETY: `l2norm`'s map takes one `T` array and its output is `T`.
//! unsafe { reduction::launch(&L2NORM, &INFO, &[T::DTYPE], &inputs, OutArg::from(&mut out), &axes, keepdims, &opts)? };
//! ```

pub mod array;
mod call;
mod kernel;
mod launch;
pub mod plan;

pub use array::Reductions;
pub use call::ReductionCall;
pub use kernel::ReductionKernel;
pub use launch::launch;
pub use plan::{Axes, Plan, Strategy};

use crate::array::Array;
use crate::error::{Error, Result};
use crate::lang::traits::Scalar;
use crate::stream::Stream;
use crate::DType;

/// An array as a reduction argument, without its element type.
#[derive(Clone, Copy, Debug)]
pub struct ArrayRef<'a> {
    /// The device address of the first element.
    pub ptr: u64,
    pub shape: &'a [usize],
    /// Strides in elements.
    pub strides: &'a [isize],
    pub dtype: DType,
    pub device: usize,
}

impl<'a, T: Scalar> From<&'a Array<T>> for ArrayRef<'a> {
    fn from(a: &'a Array<T>) -> ArrayRef<'a> {
        ArrayRef { ptr: a.device_ptr(), shape: a.shape(), strides: a.strides(), dtype: T::DTYPE, device: a.device().ordinal() }
    }
}

/// One argument of a reduction's map, in the order of its parameters.
#[derive(Clone, Copy, Debug)]
pub enum Arg<'a> {
    /// Broadcast with the other arrays; element (o, r) is passed to the map.
    Array(ArrayRef<'a>),
    /// `Raw<T>` (CuPy's `raw T`): passed whole, indexed by hand; not broadcast.
    Raw(ArrayRef<'a>),
}

impl<'a> Arg<'a> {
    pub fn array<T: Scalar>(a: &'a Array<T>) -> Arg<'a> {
        Arg::Array(a.into())
    }

    pub fn raw<T: Scalar>(a: &'a Array<T>) -> Arg<'a> {
        Arg::Raw(a.into())
    }

    pub fn array_ref(&self) -> &ArrayRef<'a> {
        match self {
            Arg::Array(a) | Arg::Raw(a) => a,
        }
    }
}

/// The output array of a reduction (written).
#[derive(Debug)]
pub struct OutArg<'a>(pub(crate) ArrayRef<'a>);

impl<'a> OutArg<'a> {
    /// The output described by `a` (its memory is written: the caller must own it mutably).
    pub fn from_ref(a: ArrayRef<'a>) -> OutArg<'a> {
        OutArg(a)
    }
}

impl<'a, T: Scalar> From<&'a mut Array<T>> for OutArg<'a> {
    fn from(a: &'a mut Array<T>) -> OutArg<'a> {
        OutArg(ArrayRef::from(&*a))
    }
}

/// What the launch needs to know about a reduction kernel beyond its instances.
#[derive(Clone, Copy, Debug)]
pub struct ReductionInfo {
    /// The kernel has an identity (an empty reduction is then `post(identity)`, not an error).
    pub has_identity: bool,
    /// `size_of` the accumulator (an upper bound is fine): sizes the partial results of split
    /// reductions.
    pub acc_bytes: usize,
}

/// Per-call options.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options<'s> {
    /// The stream; `None`: the current stream of the arrays' device.
    pub stream: Option<&'s Stream>,
}

/// The broadcast shape of the non-raw inputs: the reduction's loop shape.
pub fn loop_shape(kernel: &str, inputs: &[Arg<'_>]) -> Result<Vec<usize>> {
    let shapes: Vec<&[usize]> = inputs
        .iter()
        .filter_map(|a| match a {
            Arg::Array(a) => Some(a.shape),
            Arg::Raw(_) => None,
        })
        .collect();
    if shapes.is_empty() {
        return Err(Error::Reduction {
            kernel: kernel.to_string(),
            detail: "every argument is raw, so there is no shape to reduce; pass at least one \
                     array argument that is not `Raw`"
                .into(),
        });
    }
    crate::array::shape::broadcast_shapes(&shapes)
}

/// The shape of the output of a reduction of `inputs` over `axes` (CuPy's rules), for the
/// caller to allocate it; an error for an invalid or repeated axis.
pub fn output_shape(inputs: &[Arg<'_>], axes: &Axes, keepdims: bool) -> Result<Vec<usize>> {
    let shape = loop_shape("reduction", inputs)?;
    let mask = plan::reduced_mask(shape.len(), axes)?;
    Ok(plan::output_shape(&shape, &mask, keepdims))
}
