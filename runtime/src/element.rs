//! Element types of arrays: the scalars of the dtype table and `#[device]` structs.
//!
//! [`Element`] is what [`crate::Array`] stores and what kernels receive through slices, views and
//! elementwise arguments. Every [`Scalar`](crate::Scalar) is an element; so is every `#[repr(C)]` struct marked
//! `#[device]` in a kernel file (the macro implements the trait after checking the layout). A
//! struct has no dtype: array operations that need one (arithmetic, reductions, `astype`) stay on
//! `Array<T: Scalar>`; the structural ones (creation from host data, views, copies, transfers)
//! take any element.

use std::fmt;

use cuprum_abi::dtype::DType;

pub use crate::elem_type::{ElemType, StructType};
use crate::repr::DeviceRepr;

/// A type arrays can hold and kernels can read and write in device memory.
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

// SAFETY: `Scalar`'s contract is this trait's, for the dtype's C type (bool values are
// normalised on the way back, see `array::read_elems`).
macro_rules! scalar_elements {
    ($($t:ty => $d:ident),* $(,)?) => {$(
        // SAFETY: see above.
        unsafe impl Element for $t {
            const ELEM: ElemType = ElemType::Scalar(DType::$d);
        }
    )*};
}

scalar_elements!(
    bool => Bool,
    i8 => I8,
    i16 => I16,
    i32 => I32,
    i64 => I64,
    u8 => U8,
    u16 => U16,
    u32 => U32,
    u64 => U64,
    half::f16 => F16,
    half::bf16 => BF16,
    f32 => F32,
    f64 => F64,
    num_complex::Complex<f32> => C32,
    num_complex::Complex<f64> => C64,
);
