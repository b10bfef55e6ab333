//! The type of an array's elements as the runtime checks it: a dtype or a `#[device]` struct's
//! layout (plain data; what errors and launch checks name).

use std::fmt;

use cuprum_abi::dtype::DType;

/// The layout of a `#[device]` struct, as the compiler computed it from the struct's fields (the
/// same numbers rustc gives `#[repr(C)]`; the macro asserts they agree).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StructType {
    /// The struct's Rust name (its C name is the same).
    pub name: &'static str,
    /// Size in bytes.
    pub size: usize,
    /// Alignment in bytes.
    pub align: usize,
}

/// The type of an array's elements, as the runtime checks it at a launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ElemType {
    /// A scalar dtype.
    Scalar(DType),
    /// A `#[device]` struct.
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

