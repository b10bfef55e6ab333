//! Element types of arrays: the scalars of the dtype table and `#[device]` structs.
//!
//! [`Element`] is what [`crate::Array`] stores and what kernels receive through slices, views and
//! elementwise arguments. Every [`Scalar`](crate::Scalar) is an element; so is every `#[repr(C)]` struct marked
//! `#[device]` in a kernel file (the macro implements the trait after checking the layout). A
//! struct has no dtype: array operations that need one (arithmetic, reductions, `astype`) stay on
//! `Array<T: Scalar>`; the structural ones (creation from host data, views, copies, transfers)
//! take any element.

use std::fmt;

pub use crate::elem_type::{ElemType, StructType};
use crate::repr::DeviceRepr;

/// A type arrays can hold and kernels can read and write in device memory. The scalars of the
/// dtype table implement it with [`Scalar`](crate::Scalar) (`scalar/traits.rs`).
///
/// # Safety
///
/// Implementing `Element` promises that a value of `Self` is plain data whose bytes are exactly
/// the C value of [`Element::ELEM`] (same size and alignment, same field offsets, **no padding
/// bytes**), and that every bit pattern of that size is a valid `Self`: the runtime copies
/// buffers of elements to and from the device as raw bytes and reads back whatever the device
/// wrote. The scalars of the dtype table satisfy it (bool through the runtime's normalisation
/// of read-back bytes); `#[device]` structs get it from the macro, which rejects padding and
/// `bool` fields.
pub unsafe trait Element: DeviceRepr + Send + Sync + fmt::Debug {
    /// What the launch checks see.
    const ELEM: ElemType;
}
