//! Array operators and functions through the built-in elementwise kernels (issue 6, item 5).
//!
//! The kernels are `#[elementwise(crate = crate)]` functions in the runtime's
//! `kernels/elementwise.rs`, precompiled by the runtime's build.rs and included below as the
//! module `kernels`. The operators pick a kernel (`Builtin`: its kernel table and its entry
//! point's signature, as the macro generated them) and launch it through
//! [`elementwise::launch`](fn@elementwise::launch), which checks every argument against the
//! signature: the type-erased launch lets one generic operator choose between kernels of
//! different bounds (`rem_int` and `rem_float`) by dtype.
//!
//! Operators return `Result` (a launch can fail; std's operator traits cannot): `(&a + &b)?`,
//! `(&a * 2.0)?`, `(2.0 * &a)?`, `(-&a)?`. Every binary operation broadcasts (NumPy's rules) and
//! takes an array or a scalar of the element type on either side.

use std::ops::{Add, Div, Mul, Neg, Rem, Sub};

use crate::array::Array;
use crate::element::{ElemType, Element};
use crate::elementwise::{self, Arg, ArrayArg, Input, Options};
use crate::error::{Error, Result};
use crate::registry::Kernel;
use crate::{DType, Float, Number, Real, Scalar};

/// The built-in elementwise kernels.
#[allow(dead_code)]
#[path = "../kernels/elementwise.rs"]
mod kernels;

/// A built-in kernel of `kernels/elementwise.rs` (its signature is part of it).
type Builtin = &'static Kernel;

/// The [`Builtin`] of kernel `$name` of `kernels/elementwise.rs`.
macro_rules! builtin {
    ($name:ident) => {
        kernels::$name::kernel()
    };
}

/// Launches `b` for `instance` over `args` (its outputs included).
fn launch_into(b: Builtin, instance: &[DType], args: &[Arg<'_>]) -> Result<()> {
    elementwise::launch(b, instance, args, &Options::default())
}

/// Launches `b` for `instance` over `inputs` with one output of element type `U`, allocated
/// with their broadcast shape on the current stream of their device.
fn launch_new<U: Scalar>(b: Builtin, instance: &[DType], inputs: &[Arg<'_>]) -> Result<Array<U>> {
    let shape = elementwise::broadcast_shape(b.name(), inputs, None)?;
    let stream = elementwise::output_stream(&Options::default(), inputs)?;
    let mut out = Array::<U>::empty_on(&shape, &stream)?;
    {
        let mut args = inputs.to_vec();
        args.push(Arg::output(&mut out));
        elementwise::launch(b, instance, &args, &Options::default())?;
    }
    Ok(out)
}

fn unary<T: Scalar, U: Scalar>(b: Builtin, x: &Array<T>) -> Result<Array<U>> {
    launch_new::<U>(b, &[T::DTYPE], &[Arg::input(x)])
}

fn binary<'a, 'b, T: Scalar, U: Scalar>(b: Builtin, x: impl Into<Input<'a, T>>, y: impl Into<Input<'b, T>>) -> Result<Array<U>> {
    launch_new::<U>(b, &[T::DTYPE], &[x.into().arg(), y.into().arg()])
}

/// `%` and negation have one kernel for integers and one for floats.
fn rem_kernel(d: DType) -> Builtin {
    if d.is_float() || d.is_half() { builtin!(rem_float) } else { builtin!(rem_int) }
}

fn neg_kernel(d: DType) -> Builtin {
    if d.is_float() || d.is_half() { builtin!(neg_float) } else { builtin!(neg_number) }
}

// ---- operators ------------------------------------------------------------------------------

macro_rules! binary_op {
    ($Trait:ident, $method:ident, $bound:ident, $kernel:expr) => {
        impl<'b, T: $bound> $Trait<&'b Array<T>> for &Array<T> {
            type Output = Result<Array<T>>;
            fn $method(self, rhs: &'b Array<T>) -> Result<Array<T>> {
                binary($kernel(T::DTYPE), self, rhs)
            }
        }
        impl<T: $bound> $Trait<Array<T>> for &Array<T> {
            type Output = Result<Array<T>>;
            fn $method(self, rhs: Array<T>) -> Result<Array<T>> {
                binary($kernel(T::DTYPE), self, &rhs)
            }
        }
        impl<'b, T: $bound> $Trait<&'b Array<T>> for Array<T> {
            type Output = Result<Array<T>>;
            fn $method(self, rhs: &'b Array<T>) -> Result<Array<T>> {
                binary($kernel(T::DTYPE), &self, rhs)
            }
        }
        impl<T: $bound> $Trait<Array<T>> for Array<T> {
            type Output = Result<Array<T>>;
            fn $method(self, rhs: Array<T>) -> Result<Array<T>> {
                binary($kernel(T::DTYPE), &self, &rhs)
            }
        }
        impl<T: $bound> $Trait<T> for &Array<T> {
            type Output = Result<Array<T>>;
            fn $method(self, rhs: T) -> Result<Array<T>> {
                binary($kernel(T::DTYPE), self, rhs)
            }
        }
        impl<T: $bound> $Trait<T> for Array<T> {
            type Output = Result<Array<T>>;
            fn $method(self, rhs: T) -> Result<Array<T>> {
                binary($kernel(T::DTYPE), &self, rhs)
            }
        }
    };
}

binary_op!(Add, add, Number, |_| builtin!(add));
binary_op!(Sub, sub, Number, |_| builtin!(sub));
binary_op!(Mul, mul, Number, |_| builtin!(mul));
binary_op!(Div, div, Number, |_| builtin!(div));
binary_op!(Rem, rem, Real, rem_kernel);

/// A scalar on the left: `2.0 * &a`, `1 - &a`, `1.0 / a`.
macro_rules! scalar_lhs {
    ($($t:ty),*) => {$(
        impl<'b> Add<&'b Array<$t>> for $t {
            type Output = Result<Array<$t>>;
            fn add(self, rhs: &'b Array<$t>) -> Result<Array<$t>> { binary(builtin!(add), self, rhs) }
        }
        impl<'b> Sub<&'b Array<$t>> for $t {
            type Output = Result<Array<$t>>;
            fn sub(self, rhs: &'b Array<$t>) -> Result<Array<$t>> { binary(builtin!(sub), self, rhs) }
        }
        impl<'b> Mul<&'b Array<$t>> for $t {
            type Output = Result<Array<$t>>;
            fn mul(self, rhs: &'b Array<$t>) -> Result<Array<$t>> { binary(builtin!(mul), self, rhs) }
        }
        impl<'b> Div<&'b Array<$t>> for $t {
            type Output = Result<Array<$t>>;
            fn div(self, rhs: &'b Array<$t>) -> Result<Array<$t>> { binary(builtin!(div), self, rhs) }
        }
        impl<'b> Rem<&'b Array<$t>> for $t {
            type Output = Result<Array<$t>>;
            fn rem(self, rhs: &'b Array<$t>) -> Result<Array<$t>> { binary(rem_kernel(<$t as Scalar>::DTYPE), self, rhs) }
        }
        impl Add<Array<$t>> for $t {
            type Output = Result<Array<$t>>;
            fn add(self, rhs: Array<$t>) -> Result<Array<$t>> { self + &rhs }
        }
        impl Sub<Array<$t>> for $t {
            type Output = Result<Array<$t>>;
            fn sub(self, rhs: Array<$t>) -> Result<Array<$t>> { self - &rhs }
        }
        impl Mul<Array<$t>> for $t {
            type Output = Result<Array<$t>>;
            fn mul(self, rhs: Array<$t>) -> Result<Array<$t>> { self * &rhs }
        }
        impl Div<Array<$t>> for $t {
            type Output = Result<Array<$t>>;
            fn div(self, rhs: Array<$t>) -> Result<Array<$t>> { self / &rhs }
        }
        impl Rem<Array<$t>> for $t {
            type Output = Result<Array<$t>>;
            fn rem(self, rhs: Array<$t>) -> Result<Array<$t>> { self % &rhs }
        }
    )*};
}

scalar_lhs!(i8, i16, i32, i64, u8, u16, u32, u64, half::f16, half::bf16, f32, f64);

impl<T: Number> Neg for &Array<T> {
    type Output = Result<Array<T>>;
    /// `-x`; integers wrap (`-MIN` is `MIN`, unsigned `-x` is `0 - x`).
    fn neg(self) -> Result<Array<T>> {
        unary(neg_kernel(T::DTYPE), self)
    }
}

impl<T: Number> Neg for Array<T> {
    type Output = Result<Array<T>>;
    fn neg(self) -> Result<Array<T>> {
        unary(neg_kernel(T::DTYPE), &self)
    }
}

// ---- functions ------------------------------------------------------------------------------

/// `cond ? x : y` elementwise (NumPy's `where`), broadcast; `x` and `y` are arrays or scalars.
pub fn where_<'a, 'b, T: Scalar>(cond: &Array<bool>, x: impl Into<Input<'a, T>>, y: impl Into<Input<'b, T>>) -> Result<Array<T>> {
    launch_new::<T>(builtin!(select), &[T::DTYPE], &[Arg::input(cond), x.into().arg(), y.into().arg()])
}

impl<T: Real> Array<T> {
    /// `self < other` elementwise (broadcast; `other` an array or a scalar).
    pub fn lt<'a>(&self, other: impl Into<Input<'a, T>>) -> Result<Array<bool>> {
        binary(builtin!(lt), self, other)
    }
    /// `self <= other` elementwise.
    pub fn le<'a>(&self, other: impl Into<Input<'a, T>>) -> Result<Array<bool>> {
        binary(builtin!(le), self, other)
    }
    /// `self > other` elementwise.
    pub fn gt<'a>(&self, other: impl Into<Input<'a, T>>) -> Result<Array<bool>> {
        binary(builtin!(gt), self, other)
    }
    /// `self >= other` elementwise.
    pub fn ge<'a>(&self, other: impl Into<Input<'a, T>>) -> Result<Array<bool>> {
        binary(builtin!(ge), self, other)
    }
    /// The smaller of each pair (broadcast); for floats a NaN operand is ignored (Rust's
    /// `f32::min`, NumPy's `fmin`).
    pub fn minimum<'a>(&self, other: impl Into<Input<'a, T>>) -> Result<Array<T>> {
        binary(builtin!(minimum), self, other)
    }
    /// The larger of each pair (broadcast); for floats a NaN operand is ignored.
    pub fn maximum<'a>(&self, other: impl Into<Input<'a, T>>) -> Result<Array<T>> {
        binary(builtin!(maximum), self, other)
    }
    /// Each element limited to `[lo, hi]` (arrays or scalars, broadcast): NumPy's
    /// `minimum(maximum(x, lo), hi)`, so `hi` wins when `lo > hi`; a NaN stays NaN.
    pub fn clip<'a, 'b>(&self, lo: impl Into<Input<'a, T>>, hi: impl Into<Input<'b, T>>) -> Result<Array<T>> {
        launch_new::<T>(builtin!(clip), &[T::DTYPE], &[Arg::input(self), lo.into().arg(), hi.into().arg()])
    }
    /// `|x|`; for signed integers `|MIN|` is `MIN` (wrapping).
    pub fn abs(&self) -> Result<Array<T>> {
        let d = T::DTYPE;
        unary(if d.is_float() || d.is_half() { builtin!(abs_float) } else { builtin!(abs_int) }, self)
    }
}

impl<T: Number> Array<T> {
    /// `self == other` elementwise (broadcast; `other` an array or a scalar).
    pub fn eq<'a>(&self, other: impl Into<Input<'a, T>>) -> Result<Array<bool>> {
        binary(builtin!(eq), self, other)
    }
    /// `self != other` elementwise.
    pub fn ne<'a>(&self, other: impl Into<Input<'a, T>>) -> Result<Array<bool>> {
        binary(builtin!(ne), self, other)
    }
}

impl<T: Float> Array<T> {
    /// `sqrt(x)` elementwise (NaN for negative `x`).
    pub fn sqrt(&self) -> Result<Array<T>> {
        unary(builtin!(sqrt), self)
    }
    /// `e^x` elementwise.
    pub fn exp(&self) -> Result<Array<T>> {
        unary(builtin!(exp), self)
    }
    /// The natural logarithm elementwise.
    pub fn log(&self) -> Result<Array<T>> {
        unary(builtin!(log), self)
    }
    /// `sin(x)` elementwise.
    pub fn sin(&self) -> Result<Array<T>> {
        unary(builtin!(sin), self)
    }
    /// `cos(x)` elementwise.
    pub fn cos(&self) -> Result<Array<T>> {
        unary(builtin!(cos), self)
    }
    /// `tanh(x)` elementwise.
    pub fn tanh(&self) -> Result<Array<T>> {
        unary(builtin!(tanh), self)
    }
}

impl<T: Scalar> Array<T> {
    /// A new C-contiguous array of element type `U` with the elements converted as Rust's `as`
    /// does (integers wrap or sign-extend, floats to integers saturate and NaN becomes 0, to
    /// floats round to nearest, `bool` to numbers is 0/1); to `bool` it is "non-zero" (NumPy's
    /// rule, as Rust has no `as bool`). The same dtype is a copy. Complex numbers convert only to
    /// `bool` for now (an error otherwise).
    pub fn astype<U: Scalar>(&self) -> Result<Array<U>> {
        let (from, to) = (T::DTYPE, U::DTYPE);
        if from == to {
            return unary::<T, U>(builtin!(copy), self);
        }
        if to == DType::Bool {
            return unary::<T, U>(builtin!(nonzero), self);
        }
        if from.is_complex() || to.is_complex() {
            return Err(Error::Unsupported {
                what: format!("astype from {from} to {to}: casts involving complex numbers are not implemented yet (only to bool)"),
            });
        }
        let cast = match from {
            DType::Bool => builtin!(cast_bool),
            DType::I8 => builtin!(cast_i8),
            DType::I16 => builtin!(cast_i16),
            DType::I32 => builtin!(cast_i32),
            DType::I64 => builtin!(cast_i64),
            DType::U8 => builtin!(cast_u8),
            DType::U16 => builtin!(cast_u16),
            DType::U32 => builtin!(cast_u32),
            DType::U64 => builtin!(cast_u64),
            DType::F16 => builtin!(cast_f16),
            DType::BF16 => builtin!(cast_bf16),
            DType::F32 => builtin!(cast_f32),
            DType::F64 => builtin!(cast_f64),
            DType::C32 | DType::C64 => unreachable!("complex casts are rejected above"),
        };
        launch_new::<U>(cast, &[to], &[Arg::input(self)])
    }

    /// Sets every element to `value`; any layout (a strided view writes only its elements). A
    /// broadcast view (stride 0) is an error.
    pub fn fill(&mut self, value: T) -> Result<()> {
        if self.device().is_cpu() {
            return self.write_host("fill", |_| value);
        }
        launch_into(builtin!(copy), &[T::DTYPE], &[Arg::scalar(elementwise::Value::of(value)), Arg::output(self)])
    }

    /// Copies `src` (broadcast to this array's shape) into this array, in any layout.
    pub fn assign(&mut self, src: &Array<T>) -> Result<()> {
        if self.device().is_cpu() && src.device().is_cpu() {
            // Read whole before any write: `src` may be a view of this array's buffer.
            let values = src.broadcast_to(self.shape())?.to_vec()?;
            return self.write_host("assign", |k| values[k]);
        }
        launch_into(builtin!(copy), &[T::DTYPE], &[Arg::input(src), Arg::output(self)])
    }
}

/// The dtype whose copy kernel copies elements of type `elem` bit for bit: its own for a scalar;
/// for a struct of 1, 2, 4, 8 or 16 bytes the integer of that size (`u8`, `u16`, `i32`, `i64`:
/// the signed ones have precompiled copy instances) or, for 16 bytes, `Complex<f64>` (a plain
/// 16-byte load and store). Every element of an array sits at a multiple of its size
/// from the buffer's start (the pool's blocks are 256-byte aligned), so that type's alignment
/// holds even when the struct's own is smaller. `None` for other sizes.
pub(crate) fn copy_dtype(elem: ElemType) -> Option<DType> {
    match elem {
        ElemType::Scalar(d) => Some(d),
        ElemType::Struct(s) => match s.size {
            1 => Some(DType::U8),
            2 => Some(DType::U16),
            4 => Some(DType::I32),
            8 => Some(DType::I64),
            16 => Some(DType::C64),
            _ => None,
        },
    }
}

impl<T: Element> Array<T> {
    /// The device-side copy behind [`Array::copy`] (and the `to_vec` of a non-contiguous view),
    /// when [`copy_dtype`] has a dtype for `T` (`None` for a struct of another size).
    pub(super) fn copy_on_device(&self) -> Option<Result<Array<T>>> {
        if self.device().is_cpu() {
            // The host gathers the elements itself (`to_vec`): no kernel to launch.
            return None;
        }
        let dtype = copy_dtype(T::ELEM)?;
        Some(self.copy_as(dtype))
    }

    /// A C-contiguous copy made by the copy kernel of `dtype`, whose size is `T`'s: both arrays
    /// are described to the launch as arrays of `dtype` (same addresses, shape and strides).
    fn copy_as(&self, dtype: DType) -> Result<Array<T>> {
        let b = builtin!(copy);
        let stream = elementwise::output_stream(&Options::default(), &[Arg::input(self)])?;
        let out = Array::<T>::empty_on(self.shape(), &stream)?;
        let elem = ElemType::Scalar(dtype);
        let args = [
            Arg::In(ArrayArg { elem, ..ArrayArg::of(self) }),
            Arg::Out(ArrayArg { elem, ..ArrayArg::of(&out) }),
        ];
        elementwise::launch(b, &[dtype], &args, &Options::default())?;
        Ok(out)
    }
}

