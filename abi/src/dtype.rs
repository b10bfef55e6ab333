//! The scalar types a kernel can use: one table shared by the compiler (C names, literal typing),
//! the mangler (instantiation names) and the runtime (array element types).
//!
//! The C names are the typedefs of `include/cuprum/types.h` (of this crate); they follow the seeds' dtype table
//! (bool -> `bool`, int8 -> `signed char`, ..., complex128 -> `complex<double>`).

use std::fmt;

/// A scalar element type. The order is the dtype table's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    /// `bool` (C `bool`).
    Bool,
    /// `i8` (C `signed char`).
    I8,
    /// `i16` (C `short`).
    I16,
    /// `i32` (C `int`).
    I32,
    /// `i64` (C `long long`).
    I64,
    /// `u8` (C `unsigned char`).
    U8,
    /// `u16` (C `unsigned short`).
    U16,
    /// `u32` (C `unsigned int`).
    U32,
    /// `u64` (C `unsigned long long`).
    U64,
    /// `half::f16` (C `cuprum::half`).
    F16,
    /// `half::bf16` (C `cuprum::bfloat16`).
    BF16,
    /// `f32` (C `float`).
    F32,
    /// `f64` (C `double`).
    F64,
    /// `Complex<f32>` (C `cuprum::complex<float>`).
    C32,
    /// `Complex<f64>` (C `cuprum::complex<double>`).
    C64,
    /// OCP FP8 E4M3 ("e4m3fn": max 448, no infinities; the runtime's `f8e4m3`, C
    /// `cuprum::fp8_e4m3`, CUDA's `__nv_fp8_e4m3`).
    F8E4M3,
    /// OCP FP8 E5M2 (max 57344, IEEE infinities; the runtime's `f8e5m2`, C `cuprum::fp8_e5m2`,
    /// CUDA's `__nv_fp8_e5m2`).
    F8E5M2,
}

impl DType {
    /// Every dtype, in table order.
    pub const ALL: [DType; 17] = [
        DType::Bool,
        DType::I8,
        DType::I16,
        DType::I32,
        DType::I64,
        DType::U8,
        DType::U16,
        DType::U32,
        DType::U64,
        DType::F16,
        DType::BF16,
        DType::F32,
        DType::F64,
        DType::C32,
        DType::C64,
        DType::F8E4M3,
        DType::F8E5M2,
    ];

    /// The Rust spelling (`f32`, `f16`, `Complex<f32>`).
    pub fn rust_name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::I8 => "i8",
            DType::I16 => "i16",
            DType::I32 => "i32",
            DType::I64 => "i64",
            DType::U8 => "u8",
            DType::U16 => "u16",
            DType::U32 => "u32",
            DType::U64 => "u64",
            DType::F16 => "f16",
            DType::BF16 => "bf16",
            DType::F32 => "f32",
            DType::F64 => "f64",
            DType::C32 => "Complex<f32>",
            DType::C64 => "Complex<f64>",
            DType::F8E4M3 => "f8e4m3",
            DType::F8E5M2 => "f8e5m2",
        }
    }

    /// NumPy's (and torch's) name: `float32`, `complex128`, `bfloat16`, `float8_e4m3fn`,
    /// `float8_e5m2` (which NumPy itself lacks: torch's and ml_dtypes' names), for CuPy's type
    /// strings and Python users' messages.
    pub fn numpy_name(self) -> &'static str {
        match self {
            DType::C32 => "complex64",
            DType::C64 => "complex128",
            DType::F16 => "float16",
            DType::BF16 => "bfloat16",
            DType::F32 => "float32",
            DType::F64 => "float64",
            DType::Bool => "bool",
            DType::I8 => "int8",
            DType::I16 => "int16",
            DType::I32 => "int32",
            DType::I64 => "int64",
            DType::U8 => "uint8",
            DType::U16 => "uint16",
            DType::U32 => "uint32",
            DType::U64 => "uint64",
            DType::F8E4M3 => "float8_e4m3fn",
            DType::F8E5M2 => "float8_e5m2",
        }
    }

    /// The short name used in generated C (a typedef in `cuprum/types.h`) and in mangled symbols.
    pub fn short_name(self) -> &'static str {
        match self {
            DType::C32 => "c32",
            DType::C64 => "c64",
            other => other.rust_name(),
        }
    }

    /// The C type the short name stands for, as in the seeds' dtype table.
    pub fn c_type(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::I8 => "signed char",
            DType::I16 => "short",
            DType::I32 => "int",
            DType::I64 => "long long",
            DType::U8 => "unsigned char",
            DType::U16 => "unsigned short",
            DType::U32 => "unsigned int",
            DType::U64 => "unsigned long long",
            DType::F16 => "cuprum::half",
            DType::BF16 => "cuprum::bfloat16",
            DType::F32 => "float",
            DType::F64 => "double",
            DType::C32 => "cuprum::complex<float>",
            DType::C64 => "cuprum::complex<double>",
            DType::F8E4M3 => "cuprum::fp8_e4m3",
            DType::F8E5M2 => "cuprum::fp8_e5m2",
        }
    }

    /// Alignment in bytes of the C type: its size (`cuprum::complex<T>` is aligned to its size,
    /// as thrust's is, so that a `complex<double>` is one 16-byte access; `num_complex::Complex<T>`
    /// is aligned to its part only).
    pub const fn c_align(self) -> usize {
        self.size()
    }

    /// Size in bytes.
    pub const fn size(self) -> usize {
        match self {
            DType::Bool | DType::I8 | DType::U8 | DType::F8E4M3 | DType::F8E5M2 => 1,
            DType::I16 | DType::U16 | DType::F16 | DType::BF16 => 2,
            DType::I32 | DType::U32 | DType::F32 => 4,
            DType::I64 | DType::U64 | DType::F64 | DType::C32 => 8,
            DType::C64 => 16,
        }
    }

    /// Parses a Rust type name as written in a kernel (`f32`, `half::f16`, `Complex<f64>` is
    /// handled by the front end).
    pub fn from_rust_name(name: &str) -> Option<DType> {
        DType::ALL.iter().copied().find(|d| d.rust_name() == name)
    }

    /// `bool`.
    pub fn is_bool(self) -> bool {
        self == DType::Bool
    }
    /// A signed or unsigned integer type.
    pub fn is_int(self) -> bool {
        self.is_signed_int() || self.is_unsigned_int()
    }
    /// `i8`, `i16`, `i32` or `i64`.
    pub fn is_signed_int(self) -> bool {
        matches!(self, DType::I8 | DType::I16 | DType::I32 | DType::I64)
    }
    /// `u8`, `u16`, `u32` or `u64`.
    pub fn is_unsigned_int(self) -> bool {
        matches!(self, DType::U8 | DType::U16 | DType::U32 | DType::U64)
    }
    /// A real floating-point type (f16, bf16, f32, f64, f8e4m3, f8e5m2).
    pub fn is_float(self) -> bool {
        matches!(self, DType::F16 | DType::BF16 | DType::F32 | DType::F64 | DType::F8E4M3 | DType::F8E5M2)
    }
    /// A float type that is not a C primitive: arithmetic goes through f32 (as `half` does):
    /// f16, bf16 and the 8-bit floats.
    pub fn is_half(self) -> bool {
        matches!(self, DType::F16 | DType::BF16 | DType::F8E4M3 | DType::F8E5M2)
    }
    /// An 8-bit float (f8e4m3, f8e5m2).
    pub fn is_fp8(self) -> bool {
        matches!(self, DType::F8E4M3 | DType::F8E5M2)
    }
    /// `Complex<f32>` or `Complex<f64>`.
    pub fn is_complex(self) -> bool {
        matches!(self, DType::C32 | DType::C64)
    }
    /// A primitive Rust numeric type: valid on both sides of `as`.
    pub fn is_primitive(self) -> bool {
        !self.is_half() && !self.is_complex()
    }
    /// Bit width of an integer type.
    pub fn bits(self) -> u32 {
        self.size() as u32 * 8
    }
    /// The real type of a complex type's parts.
    pub fn complex_part(self) -> Option<DType> {
        match self {
            DType::C32 => Some(DType::F32),
            DType::C64 => Some(DType::F64),
            _ => None,
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.rust_name())
    }
}
