//! The arithmetic operators `+ - * / %` and negation of arrays, and NumPy's arithmetic
//! functions by their names: `add`, `subtract`, `multiply`, `divide`/`true_divide`, `negative`,
//! `power`, `floor_divide`, `remainder`/`mod`, `fmod`, `divmod`, `reciprocal`, `square`.

use std::ops::{Add, Div, Mul, Neg, Rem, Sub};

use super::{Builtin, binary, builtin, is_float, launch_new2, unary};
use crate::array::Array;
use crate::elementwise::Input;
use crate::error::Result;
use crate::{DType, Number, Real, Scalar};

/// `%` and negation have one kernel for integers and one for floats.
fn rem_kernel(d: DType) -> Builtin {
    if is_float(d) { builtin!(rem_float) } else { builtin!(rem_int) }
}

fn neg_kernel(d: DType) -> Builtin {
    if is_float(d) { builtin!(neg_float) } else { builtin!(neg_number) }
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

scalar_lhs!(i8, i16, i32, i64, u8, u16, u32, u64, half::f16, half::bf16, f32, f64, crate::scalar::fp8::f8e4m3, crate::scalar::fp8::f8e5m2);

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

// ---- NumPy's names ----------------------------------------------------------------------------

/// Floored division and floored remainder have one kernel for integers and one for floats.
fn floor_divide_kernel(d: DType) -> Builtin {
    if is_float(d) { builtin!(math::floor_divide_float) } else { builtin!(math::floor_divide_int) }
}

fn remainder_kernel(d: DType) -> Builtin {
    if is_float(d) { builtin!(math::remainder_float) } else { builtin!(math::remainder_int) }
}

/// `f64` has a kernel of its own: the register cap that speeds up `f32`'s `powf` slows `f64`'s.
fn power_kernel(d: DType) -> Builtin {
    if d == DType::F64 {
        builtin!(math::power_float)
    } else if is_float(d) {
        builtin!(math::power_narrow)
    } else {
        builtin!(math::power_int)
    }
}

impl<T: Number> Array<T> {
    /// `self + other` elementwise (NumPy's `add`; the operator `+`), broadcast; `other` an array
    /// or a scalar. Integers wrap.
    pub fn add<'a>(&self, other: impl Into<Input<'a, T>>) -> Result<Array<T>> {
        binary(builtin!(add), self, other)
    }
    /// `self - other` elementwise (NumPy's `subtract`; the operator `-`). Integers wrap.
    pub fn subtract<'a>(&self, other: impl Into<Input<'a, T>>) -> Result<Array<T>> {
        binary(builtin!(sub), self, other)
    }
    /// `self * other` elementwise (NumPy's `multiply`; the operator `*`). Integers wrap.
    pub fn multiply<'a>(&self, other: impl Into<Input<'a, T>>) -> Result<Array<T>> {
        binary(builtin!(mul), self, other)
    }
    /// `self / other` elementwise (the operator `/`). Unlike NumPy's `divide`, integers divide
    /// in their own type, truncated (Rust's `/`; by zero 0, `MIN / -1` wraps): NumPy returns
    /// floats; `astype` to a float type first for its result.
    pub fn divide<'a>(&self, other: impl Into<Input<'a, T>>) -> Result<Array<T>> {
        binary(builtin!(div), self, other)
    }
    /// [`Array::divide`] (NumPy's `true_divide`, the same function; for integers see there).
    pub fn true_divide<'a>(&self, other: impl Into<Input<'a, T>>) -> Result<Array<T>> {
        binary(builtin!(div), self, other)
    }
    /// `-x` elementwise (NumPy's `negative`; the operator `-`): integers wrap (`-MIN` is `MIN`,
    /// unsigned `-x` is `0 - x`); floats flip the sign of zeros and NaNs.
    pub fn negative(&self) -> Result<Array<T>> {
        unary(neg_kernel(T::DTYPE), self)
    }
    /// `x * x` elementwise (NumPy's `square`); integers wrap.
    pub fn square(&self) -> Result<Array<T>> {
        unary(builtin!(math::square), self)
    }
    /// `1 / x` elementwise (NumPy's `reciprocal`); integers divide as Rust's `/` does: 1 and -1
    /// give themselves, 0 gives 0 (NumPy: undefined, with a warning), every other value 0.
    pub fn reciprocal(&self) -> Result<Array<T>> {
        unary(builtin!(math::reciprocal), self)
    }
}

impl<T: Real> Array<T> {
    /// `self` to the power `other` elementwise (NumPy's `power`, Python's `**`), broadcast.
    /// Floats: `powf`. Integers: by repeated squaring, wrapping (NumPy wraps too); a negative
    /// exponent, an error in NumPy, gives the truncated `1 / x^-y`: 1 for `x == 1`, ±1 for
    /// `x == -1`, else 0.
    pub fn power<'a>(&self, other: impl Into<Input<'a, T>>) -> Result<Array<T>> {
        binary(power_kernel(T::DTYPE), self, other)
    }
    /// [`Array::power`] (Rust's name).
    pub fn pow<'a>(&self, other: impl Into<Input<'a, T>>) -> Result<Array<T>> {
        self.power(other)
    }
    /// The floored quotient `⌊self / other⌋` elementwise (NumPy's `floor_divide`, Python's `//`).
    /// Integers: rounded towards negative infinity, by zero 0 (NumPy's value, without its
    /// warning), `MIN // -1` wraps to `MIN`. Floats: NumPy's `npy_divmod` (the quotient of
    /// `x - fmod(x, y)`, corrected to the floor; `x / y` when `y` is zero).
    pub fn floor_divide<'a>(&self, other: impl Into<Input<'a, T>>) -> Result<Array<T>> {
        binary(floor_divide_kernel(T::DTYPE), self, other)
    }
    /// The floored remainder elementwise, with the sign of `other` (NumPy's `remainder` and
    /// `mod`, Python's `%`). Integers by zero give 0; floats by zero give NaN, a zero remainder
    /// takes the sign of `other`. The operator `%` is Rust's truncated remainder instead (NumPy's
    /// `fmod`).
    #[doc(alias = "mod")]
    pub fn remainder<'a>(&self, other: impl Into<Input<'a, T>>) -> Result<Array<T>> {
        binary(remainder_kernel(T::DTYPE), self, other)
    }
    /// The truncated remainder elementwise, with the sign of `self` (NumPy's `fmod`, C's `fmod`,
    /// Rust's and this crate's `%`); integers by zero give 0.
    pub fn fmod<'a>(&self, other: impl Into<Input<'a, T>>) -> Result<Array<T>> {
        binary(rem_kernel(T::DTYPE), self, other)
    }
    /// `(floor_divide, remainder)` in one pass (Python's `divmod`, NumPy's `divmod`).
    pub fn divmod<'a>(&self, other: impl Into<Input<'a, T>>) -> Result<(Array<T>, Array<T>)> {
        let b = if is_float(T::DTYPE) { builtin!(math::divmod_float) } else { builtin!(math::divmod_int) };
        launch_new2::<T, T>(b, &[T::DTYPE], &[Input::Array(self).arg(), other.into().arg()])
    }
}

/// The kernel of an arithmetic operation for dtype `d` (what the in-place forms launch).
pub(super) fn kernel_of(op: ArithOp, d: DType) -> Builtin {
    match op {
        ArithOp::Add => builtin!(add),
        ArithOp::Sub => builtin!(sub),
        ArithOp::Mul => builtin!(mul),
        ArithOp::Div => builtin!(div),
        ArithOp::Rem => rem_kernel(d),
        ArithOp::Pow => power_kernel(d),
        ArithOp::FloorDiv => floor_divide_kernel(d),
        ArithOp::Remainder => remainder_kernel(d),
    }
}

/// The arithmetic operations that have an in-place form.
#[derive(Clone, Copy)]
pub(super) enum ArithOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Pow,
    FloorDiv,
    Remainder,
}
