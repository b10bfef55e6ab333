//! Element types of arrays: the scalars of the dtype table and `#[device]` structs.
//!
//! [`Element`] is what [`crate::Array`] stores and what kernels receive through slices, views and
//! elementwise arguments. Every [`Scalar`] is an element; so is every `#[repr(C)]` struct marked
//! `#[device]` in a kernel file (the macro implements the trait after checking the layout). A
//! struct has no dtype: array operations that need one (arithmetic, reductions, `astype`) stay on
//! `Array<T: Scalar>`; the structural ones (creation from host data, views, copies, transfers)
//! take any element.

use std::fmt;

use cuprum_abi::dtype::DType;

use crate::launch::DeviceRepr;
use crate::lang::traits::Scalar;

/// The layout of a `#[device]` struct, as the compiler computed it from the struct's fields (the
/// same numbers rustc gives `#[repr(C)]`; the macro asserts they agree).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StructType {
    /// The struct's Rust name (its C name is the same).
    pub name: &'static str,
    pub size: usize,
    pub align: usize,
}

/// The type of an array's elements, as the runtime checks it at a launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ElemType {
    Scalar(DType),
    Struct(StructType),
}

impl ElemType {
    /// The size of one element in bytes.
    pub const fn size(self) -> usize {
        match self {
            ElemType::Scalar(d) => d.size(),
            ElemType::Struct(s) => s.size,
        }
    }

    /// The alignment of the C type in bytes (a scalar's C type is aligned to its size:
    /// `cuprum::complex<T>` is aligned to its size, as thrust's is).
    pub const fn align(self) -> usize {
        match self {
            ElemType::Scalar(d) => d.c_align(),
            ElemType::Struct(s) => s.align,
        }
    }

    /// The dtype, for scalars.
    pub const fn dtype(self) -> Option<DType> {
        match self {
            ElemType::Scalar(d) => Some(d),
            ElemType::Struct(_) => None,
        }
    }

    /// The Rust spelling (`f32`, `Complex<f64>`, `Particle`).
    pub fn rust_name(self) -> &'static str {
        match self {
            ElemType::Scalar(d) => d.rust_name(),
            ElemType::Struct(s) => s.name,
        }
    }
}

impl From<DType> for ElemType {
    fn from(d: DType) -> ElemType {
        ElemType::Scalar(d)
    }
}

impl fmt::Display for ElemType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.rust_name())
    }
}

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
    ($($t:ty),*) => {$(
        // SAFETY: see above.
        unsafe impl Element for $t {
            const ELEM: ElemType = ElemType::Scalar(<$t as Scalar>::DTYPE);
        }
    )*};
}

scalar_elements!(
    bool,
    i8,
    i16,
    i32,
    i64,
    u8,
    u16,
    u32,
    u64,
    half::f16,
    half::bf16,
    f32,
    f64,
    num_complex::Complex<f32>,
    num_complex::Complex<f64>
);
