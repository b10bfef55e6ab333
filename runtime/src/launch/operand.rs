//! The operands of the erased launches (elementwise and reduction), type-erased: arrays (pointer, element type, shape,
//! strides, device) and scalar values. Arrays may hold `#[device]` structs; scalar values are
//! dtypes only (a struct input is always an array). A typed wrapper (what `#[elementwise]` generates, or
//! `ElementwiseKernel`'s call) turns its Rust arguments into these.

use half::{bf16, f16};

use crate::scalar::fp8::{f8e4m3, f8e5m2};
use num_complex::Complex;

use crate::array::Array;
use crate::element::{ElemType, Element};
use crate::scalar::traits::Scalar;
use crate::DType;

/// An array as a launch sees it. Borrowed from an [`Array`], so the array outlives the call (the
/// memory pool orders any reuse of its memory after the kernel on the stream).
#[derive(Clone, Copy, Debug)]
pub struct ArrayArg<'a> {
    /// The device address of the first element.
    pub(crate) ptr: u64,
    /// The element type (a dtype or a `#[device]` struct).
    pub(crate) elem: ElemType,
    pub(crate) shape: &'a [usize],
    /// Strides in elements.
    pub(crate) strides: &'a [isize],
    /// The ordinal of the device holding the array.
    pub(crate) device: usize,
    /// On the CPU device, the lock of the array's buffer (held by a host launch); `None` for a
    /// CUDA device's array and for memory described by [`ArrayArg::from_raw_parts`].
    pub(crate) host_lock: Option<&'a std::sync::RwLock<()>>,
}

impl<'a> ArrayArg<'a> {
    /// A 0-d input of dtype `dtype` whose value is the first bytes of `buf` (a scalar uploaded
    /// for a launch that reads its inputs from memory: `ReductionCall`). `buf` holds at least the
    /// dtype's size (16 bytes), aligned for it.
    pub(crate) fn scalar_in(buf: &'a Array<u64>, dtype: DType) -> ArrayArg<'a> {
        ArrayArg { elem: ElemType::Scalar(dtype), shape: &[], strides: &[], ..ArrayArg::of(buf) }
    }

    /// The array `a` as a launch sees it (the only safe way to make one: a launch writes through
    /// it, so it must describe memory cuprum owns).
    pub fn of<T: Element>(a: &'a Array<T>) -> ArrayArg<'a> {
        ArrayArg {
            ptr: a.device_ptr(),
            elem: T::ELEM,
            shape: a.shape(),
            strides: a.strides(),
            device: a.device().ordinal(),
            host_lock: a.buffer().host_lock(),
        }
    }

    /// An array described by its parts, for memory cuprum does not own (or for host-side
    /// tests of the planner with made-up addresses that are never launched).
    ///
    /// # Safety
    ///
    /// If the argument is launched, `ptr` must be the address of the first element of an
    /// allocation on device `device` that holds every element the shape and strides (in
    /// elements of `elem`) reach, valid until the launch's work completes.
    pub unsafe fn from_raw_parts(ptr: u64, elem: ElemType, shape: &'a [usize], strides: &'a [isize], device: usize) -> ArrayArg<'a> {
        ArrayArg { ptr, elem, shape, strides, device, host_lock: None }
    }

    /// The device address of the first element.
    pub fn ptr(&self) -> u64 {
        self.ptr
    }

    /// The element type.
    pub fn elem(&self) -> ElemType {
        self.elem
    }

    /// The shape.
    pub fn shape(&self) -> &'a [usize] {
        self.shape
    }

    /// The strides, in elements.
    pub fn strides(&self) -> &'a [isize] {
        self.strides
    }

    /// The ordinal of the device holding the array.
    pub fn device(&self) -> usize {
        self.device
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// Whether it has no element.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the elements are C-contiguous (strides of extent-1 axes do not matter).
    pub fn is_c_contiguous(&self) -> bool {
        crate::array::shape::is_c_contiguous(self.shape, self.strides)
    }
}

/// One argument of an elementwise launch, in the kernel's parameter order (inputs and output
/// parameters as declared, then the returned outputs).
#[derive(Clone, Copy, Debug)]
pub enum Arg<'a> {
    /// A per-element input given as an array (broadcast with the other non-raw arrays).
    In(ArrayArg<'a>),
    /// A per-element input given as a scalar: passed by value, converted to the parameter's dtype.
    Scalar(Value),
    /// A raw argument (indexed by the kernel itself; not broadcast).
    Raw(ArrayArg<'a>),
    /// An output (a returned value or a `&mut T` parameter): must have the broadcast shape.
    Out(ArrayArg<'a>),
}

impl<'a> Arg<'a> {
    /// An input array.
    pub fn input<T: Element>(a: &'a Array<T>) -> Arg<'a> {
        Arg::In(ArrayArg::of(a))
    }

    /// A scalar input.
    pub fn scalar(v: impl Into<Value>) -> Arg<'a> {
        Arg::Scalar(v.into())
    }

    /// A raw argument.
    pub fn raw<T: Element>(a: &'a Array<T>) -> Arg<'a> {
        Arg::Raw(ArrayArg::of(a))
    }

    /// An output array (written by the kernel).
    pub fn output<T: Element>(a: &'a mut Array<T>) -> Arg<'a> {
        Arg::Out(ArrayArg::of(a))
    }

    /// The array, unless this is a scalar.
    pub fn array(&self) -> Option<&ArrayArg<'a>> {
        match self {
            Arg::In(a) | Arg::Raw(a) | Arg::Out(a) => Some(a),
            Arg::Scalar(_) => None,
        }
    }

    /// What kind of argument this is, for messages.
    pub fn describe(&self) -> String {
        match self {
            Arg::In(a) => format!("an input array of {} with shape {:?}", a.elem, a.shape),
            Arg::Scalar(v) => format!("the scalar {v:?}"),
            Arg::Raw(a) => format!("a raw array of {} with shape {:?}", a.elem, a.shape),
            Arg::Out(a) => format!("an output array of {} with shape {:?}", a.elem, a.shape),
        }
    }
}

/// A scalar value of one of the dtypes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// A `bool`.
    Bool(bool),
    /// An `i8`.
    I8(i8),
    /// An `i16`.
    I16(i16),
    /// An `i32`.
    I32(i32),
    /// An `i64`.
    I64(i64),
    /// A `u8`.
    U8(u8),
    /// A `u16`.
    U16(u16),
    /// A `u32`.
    U32(u32),
    /// A `u64`.
    U64(u64),
    /// An `f16`.
    F16(f16),
    /// A `bf16`.
    BF16(bf16),
    /// An `f32`.
    F32(f32),
    /// An `f64`.
    F64(f64),
    /// A `Complex<f32>`.
    C32(Complex<f32>),
    /// A `Complex<f64>`.
    C64(Complex<f64>),
    /// An `f8e4m3`.
    F8E4M3(f8e4m3),
    /// An `f8e5m2`.
    F8E5M2(f8e5m2),
}

macro_rules! value_from {
    ($($t:ty => $v:ident),* $(,)?) => {$(
        impl From<$t> for Value {
            fn from(x: $t) -> Value {
                Value::$v(x)
            }
        }
    )*};
}

value_from!(
    bool => Bool, i8 => I8, i16 => I16, i32 => I32, i64 => I64, u8 => U8, u16 => U16, u32 => U32,
    u64 => U64, f16 => F16, bf16 => BF16, f32 => F32, f64 => F64, Complex<f32> => C32,
    Complex<f64> => C64, f8e4m3 => F8E4M3, f8e5m2 => F8E5M2,
);

/// A per-element input of a typed wrapper: an array or a scalar of the element type. What the
/// function `#[elementwise]` generates takes `impl Into<Input<'a, T>>` per input parameter.
#[derive(Clone, Copy, Debug)]
pub enum Input<'a, T: Scalar> {
    /// An array, broadcast with the other inputs.
    Array(&'a Array<T>),
    /// One value for every element.
    Scalar(T),
}

impl<'a, T: Scalar> From<&'a Array<T>> for Input<'a, T> {
    fn from(a: &'a Array<T>) -> Self {
        Input::Array(a)
    }
}

impl<'a, T: Scalar> From<T> for Input<'a, T> {
    fn from(x: T) -> Self {
        Input::Scalar(x)
    }
}

impl<'a, T: Scalar> Input<'a, T> {
    /// The launch argument.
    pub fn arg(&self) -> Arg<'a> {
        match self {
            Input::Array(a) => Arg::input(*a),
            Input::Scalar(x) => Arg::Scalar(Value::of(*x)),
        }
    }

    /// The array, if any (for the device and stream of the outputs).
    pub fn array(&self) -> Option<&'a Array<T>> {
        match self {
            Input::Array(a) => Some(a),
            Input::Scalar(_) => None,
        }
    }
}

impl Value {
    /// The value of any scalar type.
    pub fn of<T: Scalar>(x: T) -> Value {
        let any = &x as &dyn std::any::Any;
        macro_rules! try_types {
            ($($t:ty),*) => {$(
                if let Some(v) = any.downcast_ref::<$t>() {
                    return Value::from(*v);
                }
            )*};
        }
        try_types!(bool, i8, i16, i32, i64, u8, u16, u32, u64, f16, bf16, f32, f64, Complex<f32>, Complex<f64>, f8e4m3, f8e5m2);
        // Another type implementing `Scalar`: by its contract its bytes are the C value of
        // `T::DTYPE`, so read it as the table's type of that dtype.
        macro_rules! by_dtype {
            ($($d:ident => $t:ty),*) => {
                match T::DTYPE {
                    // SAFETY: `Scalar`'s contract: `T` has the size, alignment and value bytes of
                    // the dtype's C type, which is `$t`'s, and every such value is a valid `$t`
                    // (bool: exactly 0 or 1 by the same contract).
                    $(DType::$d => Value::from(unsafe { std::mem::transmute_copy::<T, $t>(&x) }),)*
                }
            };
        }
        by_dtype!(Bool => bool, I8 => i8, I16 => i16, I32 => i32, I64 => i64, U8 => u8, U16 => u16, U32 => u32,
            U64 => u64, F16 => f16, BF16 => bf16, F32 => f32, F64 => f64, C32 => Complex<f32>, C64 => Complex<f64>,
            F8E4M3 => f8e4m3, F8E5M2 => f8e5m2)
    }

    /// The value's dtype.
    pub fn dtype(&self) -> DType {
        match self {
            Value::Bool(_) => DType::Bool,
            Value::I8(_) => DType::I8,
            Value::I16(_) => DType::I16,
            Value::I32(_) => DType::I32,
            Value::I64(_) => DType::I64,
            Value::U8(_) => DType::U8,
            Value::U16(_) => DType::U16,
            Value::U32(_) => DType::U32,
            Value::U64(_) => DType::U64,
            Value::F16(_) => DType::F16,
            Value::BF16(_) => DType::BF16,
            Value::F32(_) => DType::F32,
            Value::F64(_) => DType::F64,
            Value::C32(_) => DType::C32,
            Value::C64(_) => DType::C64,
            Value::F8E4M3(_) => DType::F8E4M3,
            Value::F8E5M2(_) => DType::F8E5M2,
        }
    }

    /// The value converted to `to` as NumPy's C casts do: integers wrap to the target width
    /// (300 as uint8 is 44, -1 is 255), floats truncate toward zero (then wrap; NaN becomes 0),
    /// anything to bool is "non-zero", complex to real drops the imaginary part, real to complex
    /// has a zero imaginary part.
    pub fn cast(self, to: DType) -> Value {
        if self.dtype() == to {
            return self;
        }
        // (exact integer when integral, real part, imaginary part)
        let (int, re, im): (Option<i128>, f64, f64) = match self {
            Value::Bool(v) => (Some(v as i128), v as u8 as f64, 0.0),
            Value::I8(v) => (Some(v as i128), v as f64, 0.0),
            Value::I16(v) => (Some(v as i128), v as f64, 0.0),
            Value::I32(v) => (Some(v as i128), v as f64, 0.0),
            Value::I64(v) => (Some(v as i128), v as f64, 0.0),
            Value::U8(v) => (Some(v as i128), v as f64, 0.0),
            Value::U16(v) => (Some(v as i128), v as f64, 0.0),
            Value::U32(v) => (Some(v as i128), v as f64, 0.0),
            Value::U64(v) => (Some(v as i128), v as f64, 0.0),
            Value::F16(v) => (None, v.to_f64(), 0.0),
            Value::BF16(v) => (None, v.to_f64(), 0.0),
            Value::F32(v) => (None, v as f64, 0.0),
            Value::F64(v) => (None, v, 0.0),
            Value::C32(v) => (None, v.re as f64, v.im as f64),
            Value::C64(v) => (None, v.re, v.im),
            Value::F8E4M3(v) => (None, v.to_f64(), 0.0),
            Value::F8E5M2(v) => (None, v.to_f64(), 0.0),
        };
        // Saturates at i128's range, NaN -> 0; then `as` to the target wraps.
        let i = int.unwrap_or(re as i128);
        let re64 = int.map(|i| i as f64).unwrap_or(re);
        match to {
            DType::Bool => Value::Bool(match int {
                Some(i) => i != 0,
                None => re != 0.0 || im != 0.0,
            }),
            DType::I8 => Value::I8(i as i8),
            DType::I16 => Value::I16(i as i16),
            DType::I32 => Value::I32(i as i32),
            DType::I64 => Value::I64(i as i64),
            DType::U8 => Value::U8(i as u8),
            DType::U16 => Value::U16(i as u16),
            DType::U32 => Value::U32(i as u32),
            DType::U64 => Value::U64(i as u64),
            DType::F16 => Value::F16(match int {
                Some(i) => f16::from_f32(i as f32),
                None => f16::from_f64(re),
            }),
            DType::BF16 => Value::BF16(match int {
                Some(i) => bf16::from_f32(i as f32),
                None => bf16::from_f64(re),
            }),
            DType::F32 => Value::F32(match int {
                Some(i) => i as f32,
                None => re as f32,
            }),
            DType::F64 => Value::F64(re64),
            DType::C32 => Value::C32(Complex::new(
                match int {
                    Some(i) => i as f32,
                    None => re as f32,
                },
                im as f32,
            )),
            DType::C64 => Value::C64(Complex::new(re64, im)),
            // One rounding from the f64 (an integer beyond 2^53 has long saturated).
            DType::F8E4M3 => Value::F8E4M3(f8e4m3::from_f64(re64)),
            DType::F8E5M2 => Value::F8E5M2(f8e5m2::from_f64(re64)),
        }
    }

    /// The bytes of the C value (little-endian, as the device reads them) and their count.
    pub fn to_bytes(self) -> ([u8; 16], usize) {
        let mut b = [0u8; 16];
        let mut put = |s: &[u8]| {
            b[..s.len()].copy_from_slice(s);
            s.len()
        };
        let n = match self {
            Value::Bool(v) => put(&[v as u8]),
            Value::I8(v) => put(&v.to_le_bytes()),
            Value::I16(v) => put(&v.to_le_bytes()),
            Value::I32(v) => put(&v.to_le_bytes()),
            Value::I64(v) => put(&v.to_le_bytes()),
            Value::U8(v) => put(&v.to_le_bytes()),
            Value::U16(v) => put(&v.to_le_bytes()),
            Value::U32(v) => put(&v.to_le_bytes()),
            Value::U64(v) => put(&v.to_le_bytes()),
            Value::F16(v) => put(&v.to_bits().to_le_bytes()),
            Value::BF16(v) => put(&v.to_bits().to_le_bytes()),
            Value::F8E4M3(v) => put(&[v.to_bits()]),
            Value::F8E5M2(v) => put(&[v.to_bits()]),
            Value::F32(v) => put(&v.to_le_bytes()),
            Value::F64(v) => put(&v.to_le_bytes()),
            Value::C32(v) => {
                put(&v.re.to_le_bytes());
                b[4..8].copy_from_slice(&v.im.to_le_bytes());
                8
            }
            Value::C64(v) => {
                put(&v.re.to_le_bytes());
                b[8..16].copy_from_slice(&v.im.to_le_bytes());
                16
            }
        };
        (b, n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn casts_wrap_like_numpy() {
        assert_eq!(Value::I64(300).cast(DType::U8), Value::U8(44));
        assert_eq!(Value::I32(-1).cast(DType::U8), Value::U8(255));
        assert_eq!(Value::I64(-129).cast(DType::I8), Value::I8(127));
        assert_eq!(Value::U64(u64::MAX).cast(DType::I64), Value::I64(-1));
        assert_eq!(Value::F64(-2.7).cast(DType::I32), Value::I32(-2));
        assert_eq!(Value::F64(f64::NAN).cast(DType::I16), Value::I16(0));
        assert_eq!(Value::F64(0.5).cast(DType::Bool), Value::Bool(true));
        assert_eq!(Value::I32(0).cast(DType::Bool), Value::Bool(false));
        assert_eq!(Value::I32(3).cast(DType::F16), Value::F16(f16::from_f32(3.0)));
        assert_eq!(Value::F32(1.5).cast(DType::C64), Value::C64(Complex::new(1.5, 0.0)));
        assert_eq!(Value::C32(Complex::new(2.0, 9.0)).cast(DType::F64), Value::F64(2.0));
        assert_eq!(Value::U64(1 << 63).cast(DType::F64), Value::F64(9.223372036854775808e18));
        assert_eq!(Value::F32(2.0).cast(DType::F32), Value::F32(2.0));
    }

    #[test]
    fn bytes_are_the_c_layout() {
        assert_eq!(Value::U16(0x1234).to_bytes().1, 2);
        assert_eq!(Value::I32(-2).to_bytes().0[..4], (-2i32).to_le_bytes());
        let (b, n) = Value::C64(Complex::new(1.0, -1.0)).to_bytes();
        assert_eq!(n, 16);
        assert_eq!(b[8..16], (-1.0f64).to_le_bytes());
        assert_eq!(Value::F16(f16::ONE).to_bytes().0[..2], f16::ONE.to_bits().to_le_bytes());
    }
}
