//! The built-in elementwise kernels behind the array operators and functions (issue 6, item 5):
//! `+ - * / %`, negation, comparisons, `astype`, `fill`/`copy`, `where`, `minimum`/`maximum`,
//! `abs`, `sqrt`, `exp`, `log`, `sin`, `cos`, `tanh`, `clip`. A module of the runtime
//! (`ops` includes it as `kernels`), written with cuprum's own macros (`crate = crate`:
//! the generated code reaches the runtime through `crate::__private`) and precompiled by the
//! runtime's build.rs; the `Array` methods and operators launch each kernel through its
//! generated module (`kernels::add::kernel()`, `kernels::add::SIGNATURE`).
//!
//! Semantics are Rust's (docs/semantics.md): integer arithmetic wraps, integer division and
//! remainder by zero give 0, `%` is the truncated remainder (Rust's, not NumPy's floored one),
//! float `min`/`max` ignore a NaN operand (`f32::min`; NumPy's `fmin`/`fmax`, the array methods
//! `fmin`/`fmax`; NumPy's NaN-propagating `minimum`/`maximum` of floats are `math.rs`'s),
//! `clip` keeps a NaN.
//!
//! Precompiled instances: the dtypes NumPy programs use by default, f32, f64 and i64 (NumPy's
//! default integer), and bool where a kernel takes it; every other dtype is compiled by NVRTC on
//! first use and kept in the disk cache (docs/building.md, "What the built-ins precompile").

use crate::lang::prelude::*;
use cuprum_macros::elementwise;

// ---- arithmetic ---------------------------------------------------------------------------

#[elementwise(crate = crate, instances = [i64, f32, f64])]
pub fn add<T: Number>(x: T, y: T) -> T {
    x + y
}

#[elementwise(crate = crate, instances = [i64, f32, f64])]
pub fn sub<T: Number>(x: T, y: T) -> T {
    x - y
}

#[elementwise(crate = crate, instances = [i64, f32, f64])]
pub fn mul<T: Number>(x: T, y: T) -> T {
    x * y
}

/// Integer division truncates; by zero it gives 0.
#[elementwise(crate = crate, instances = [i64, f32, f64])]
pub fn div<T: Number>(x: T, y: T) -> T {
    x / y
}

/// Truncated remainder of integers; by zero it gives 0.
#[elementwise(crate = crate, instances = [i64])]
pub fn rem_int<T: Int>(x: T, y: T) -> T {
    x % y
}

/// Truncated remainder of floats (C's `fmod`, Rust's `%`).
#[elementwise(crate = crate)]
pub fn rem_float<T: Float>(x: T, y: T) -> T {
    x % y
}

/// `-x` of floats (flips the sign of zeros and NaNs).
#[elementwise(crate = crate)]
pub fn neg_float<T: Float>(x: T) -> T {
    -x
}

/// `-x` of integers (wrapping: `-MIN` is `MIN`; unsigned `-x` is `0 - x` mod 2^n) and complex numbers.
#[elementwise(crate = crate, instances = [i64])]
pub fn neg_number<T: Number>(x: T) -> T {
    T::zero() - x
}

// ---- comparisons --------------------------------------------------------------------------

#[elementwise(crate = crate, instances = [i64, f32, f64])]
pub fn lt<T: Real>(x: T, y: T) -> bool {
    x < y
}

#[elementwise(crate = crate, instances = [i64, f32, f64])]
pub fn le<T: Real>(x: T, y: T) -> bool {
    x <= y
}

#[elementwise(crate = crate, instances = [i64, f32, f64])]
pub fn gt<T: Real>(x: T, y: T) -> bool {
    x > y
}

#[elementwise(crate = crate, instances = [i64, f32, f64])]
pub fn ge<T: Real>(x: T, y: T) -> bool {
    x >= y
}

#[elementwise(crate = crate, instances = [i64, f32, f64])]
pub fn eq<T: Number>(x: T, y: T) -> bool {
    x == y
}

#[elementwise(crate = crate, instances = [i64, f32, f64])]
pub fn ne<T: Number>(x: T, y: T) -> bool {
    x != y
}

// ---- selection, copies --------------------------------------------------------------------

/// `cond ? x : y` (NumPy's `where`).
#[elementwise(crate = crate, instances = [i64, f32, f64])]
pub fn select<T: Scalar>(cond: bool, x: T, y: T) -> T {
    if cond { x } else { y }
}

/// The identity: a copy into a given layout (`copy`, contiguous copies), and with a scalar
/// input, `fill`.
#[elementwise(crate = crate, instances = [f32, f64, i32, i64, u8, bool])]
pub fn copy<T: Scalar>(x: T) -> T {
    x
}

#[elementwise(crate = crate, instances = [i64, f32, f64])]
pub fn minimum<T: Real>(x: T, y: T) -> T {
    x.min(y)
}

#[elementwise(crate = crate, instances = [i64, f32, f64])]
pub fn maximum<T: Real>(x: T, y: T) -> T {
    x.max(y)
}

/// `x` limited to `[lo, hi]` (NumPy's `minimum(maximum(x, lo), hi)`: `hi` when `lo > hi`); a
/// NaN `x` stays NaN.
#[elementwise(crate = crate, instances = [i64, f32, f64])]
pub fn clip<T: Real>(x: T, lo: T, hi: T) -> T {
    let y = if x < lo { lo } else { x };
    if y > hi { hi } else { y }
}

// ---- math ---------------------------------------------------------------------------------

#[elementwise(crate = crate)]
pub fn abs_float<T: Float>(x: T) -> T {
    x.abs()
}

/// `|x|` of integers (wrapping: `|MIN|` is `MIN`).
#[elementwise(crate = crate, instances = [i64])]
pub fn abs_int<T: Int>(x: T) -> T {
    if x < T::zero() { T::zero() - x } else { x }
}

#[elementwise(crate = crate)]
pub fn sqrt<T: Float>(x: T) -> T {
    x.sqrt()
}

#[elementwise(crate = crate)]
pub fn exp<T: Float>(x: T) -> T {
    x.exp()
}

/// The natural logarithm.
#[elementwise(crate = crate)]
pub fn log<T: Float>(x: T) -> T {
    x.ln()
}

#[elementwise(crate = crate)]
pub fn sin<T: Float>(x: T) -> T {
    x.sin()
}

#[elementwise(crate = crate)]
pub fn cos<T: Float>(x: T) -> T {
    x.cos()
}

#[elementwise(crate = crate)]
pub fn tanh<T: Float>(x: T) -> T {
    x.tanh()
}

// ---- astype -------------------------------------------------------------------------------
//
// One kernel per source dtype, generic over the target, each Rust's `x as U` (integers wrap or
// sign-extend, floats to integers saturate with NaN -> 0, to floats round to nearest) through
// `from_i64`/`from_f64`, which are exact for every source value that reaches them. Casting to
// `bool` is `nonzero` ("x != 0", NumPy's rule).

#[elementwise(crate = crate, instances = [f32, f64, i64])]
pub fn cast_bool<U: Real>(x: bool) -> U {
    if x { U::one() } else { U::zero() }
}

#[elementwise(crate = crate, instances = [])]
pub fn cast_i8<U: Real>(x: i8) -> U {
    U::from_i64(x as i64)
}

#[elementwise(crate = crate, instances = [])]
pub fn cast_i16<U: Real>(x: i16) -> U {
    U::from_i64(x as i64)
}

#[elementwise(crate = crate, instances = [f32, f64, i64])]
pub fn cast_i32<U: Real>(x: i32) -> U {
    U::from_i64(x as i64)
}

#[elementwise(crate = crate, instances = [f32, f64])]
pub fn cast_i64<U: Real>(x: i64) -> U {
    U::from_i64(x)
}

#[elementwise(crate = crate, instances = [f32, f64])]
pub fn cast_u8<U: Real>(x: u8) -> U {
    U::from_i64(x as i64)
}

#[elementwise(crate = crate, instances = [])]
pub fn cast_u16<U: Real>(x: u16) -> U {
    U::from_i64(x as i64)
}

#[elementwise(crate = crate, instances = [])]
pub fn cast_u32<U: Real>(x: u32) -> U {
    U::from_i64(x as i64)
}

/// To integers the bits wrap (`x as i64` then `as U`); to floats from `x as f64` (exact below
/// 2^53; above, rounded twice for an `f32`/`f16` target).
#[elementwise(crate = crate, instances = [])]
pub fn cast_u64<U: Real>(x: u64) -> U {
    if U::from_f64(0.5) == U::zero() { U::from_i64(x as i64) } else { U::from_f64(x as f64) }
}

#[elementwise(crate = crate, instances = [])]
pub fn cast_f16<U: Real>(x: f16) -> U {
    U::from_f64(x.to_f64())
}

#[elementwise(crate = crate, instances = [])]
pub fn cast_bf16<U: Real>(x: bf16) -> U {
    U::from_f64(x.to_f64())
}

/// From an 8-bit float: exact to `f64`, then `from_f64`'s one rounding (to another 8-bit float:
/// round to nearest even, saturating, `runtime/src/scalar/fp8.rs`). Compiled at first use.
#[elementwise(crate = crate, instances = [])]
pub fn cast_f8e4m3<U: Real>(x: f8e4m3) -> U {
    U::from_f64(x.to_f64())
}

#[elementwise(crate = crate, instances = [])]
pub fn cast_f8e5m2<U: Real>(x: f8e5m2) -> U {
    U::from_f64(x.to_f64())
}

#[elementwise(crate = crate, instances = [f64, i64])]
pub fn cast_f32<U: Real>(x: f32) -> U {
    U::from_f64(x as f64)
}

#[elementwise(crate = crate, instances = [f32, i64])]
pub fn cast_f64<U: Real>(x: f64) -> U {
    U::from_f64(x)
}

/// `x != 0` (astype to `bool`).
#[elementwise(crate = crate, instances = [f32, f64, i64])]
pub fn nonzero<T: Number>(x: T) -> bool {
    x != T::zero()
}
