//! The built-in reductions behind the array reductions of `cuprum::prelude::Reductions`
//! (`x.sum()`, `prod`, `min`, `max`, `argmin`, `argmax`, `mean`, `var`, `std`, `all`, `any`;
//! issue 7, item 4), as `#[reduction]` kernels: a module of the runtime (`reduction::array`
//! includes it as `kernels`), written with cuprum's own macros (`crate = crate`) and precompiled
//! by the runtime's build.rs.
//!
//! Accumulators: sums and products keep the element type (integers wrap, as NumPy's
//! `sum(dtype=...)`). `min`/`max` have no identity: an empty reduction is an error, as in NumPy;
//! for floats a NaN wins, as in NumPy. `mean`, `var` and `std` accumulate in f64; the mean of
//! complex numbers (`mean_c32`, `mean_c64`: the kernel language has no bound for "a complex
//! type", so one concrete kernel each) in `Complex<f64>`.
//!
//! A reduction's map cannot see how many elements it reduces, and its accumulator is one
//! scalar, so some reductions take small `Raw` arguments that the array glue
//! (`runtime/src/reduction/array.rs`) uploads:
//! - `mean_*` take `scale = [1 / n]` and sum `x * scale[0]` (n: the number of reduced elements);
//! - `var_*`/`std_*` take the first element of each output's reduction (a view with the kept
//!   dimensions, so that it broadcasts along the reduced axes) and
//!   `scale = [1 / (n (n - ddof))]`, and reduce shifted sums in one pass (`Shifted`);
//! - `arg_of_int` (`argmin`/`argmax` of integers) takes the minimum or maximum of each output
//!   (from `min_int` or `max_int`, broadcast the same way) and reduces to the first position
//!   along the reduced axes (`reduce_index()`, C order) where the element equals it: two passes.
//!   Floats reduce `(value, position)` pairs (`ArgF`, exact in f64) in one pass
//!   (`arg_best_float`, which takes `dir = [1]` for argmax, `[-1]` for argmin: one kernel for
//!   both keeps the built-ins' fat binaries under their 1 MB budget); `f32` reduces
//!   `(order key, position)` pairs instead (`arg_best_f32`: integer compares, no branch).
//!
//! No map divides per element: an integer division is about a hundred instructions, and a map is
//! inlined at every element read of every strategy (the maps that did, `index() / n`, were 1 MB
//! of machine code per kernel at sm_90, against 0.3 MB for `sum`).
//!
//! `instances` lists what is precompiled: the dtypes NumPy programs use by default (f32, f64, and
//! i64, NumPy's default integer), and complex64/complex128 for `sum`, `prod` and `mean` (where
//! f32/f64 are; 132 KB at sm_90 + compute_90, docs/building.md). Other dtypes (and integer
//! `var`/`std`, `all`/`any` of numbers) are compiled by NVRTC on first use and kept in the disk
//! cache (docs/building.md, "What the built-ins precompile").

use crate::lang::prelude::*;
use cuprum_macros::{device, reduction};

#[reduction(crate = crate, identity = T::zero(), reduce = |a, b| a + b, instances = [i64, f32, f64, Complex<f32>, Complex<f64>])]
pub fn sum<T: Number>(x: T) -> T {
    x
}

#[reduction(crate = crate, identity = T::one(), reduce = |a, b| a * b, instances = [f32, f64, Complex<f32>, Complex<f64>])]
pub fn prod<T: Number>(x: T) -> T {
    x
}

/// Minimum of integers (no identity).
#[reduction(crate = crate, reduce = |a, b| a.min(b), instances = [i64])]
pub fn min_int<T: Int>(x: T) -> T {
    x
}

/// Maximum of integers (no identity).
#[reduction(crate = crate, reduce = |a, b| a.max(b), instances = [i64])]
pub fn max_int<T: Int>(x: T) -> T {
    x
}

/// Minimum of floats; a NaN propagates (NumPy's `min`).
#[reduction(crate = crate, reduce = |a, b| if a.is_nan() || a < b { a } else { b }, instances = [f32, f64])]
pub fn min_float<T: Float>(x: T) -> T {
    x
}

/// Maximum of floats; a NaN propagates (NumPy's `max`).
#[reduction(crate = crate, reduce = |a, b| if a.is_nan() || a > b { a } else { b }, instances = [f32, f64])]
pub fn max_float<T: Float>(x: T) -> T {
    x
}

/// The mean of floats, in f64, rounded to `T`: the sum of `x * scale[0]`, `scale = [1 / n]`.
#[reduction(crate = crate, identity = 0.0, reduce = |a, b| a + b, post = |a| T::from_f64(a), instances = [f32, f64])]
pub fn mean_float<T: Float>(x: T, scale: Raw<f64>) -> f64 {
    // SAFETY: the runtime passes `scale` as one element (runtime/src/reduction/array.rs); no index check.
    x.to_f64() * unsafe { *scale.get_unchecked(0) }
}

/// The mean of `Complex<f32>`, in `Complex<f64>`, rounded to `Complex<f32>` (NumPy's and CuPy's
/// result type; CuPy accumulates in complex64): the sum of `x * scale[0]`, `scale = [1 / n]`.
#[reduction(crate = crate, identity = Complex::new(0.0, 0.0), reduce = |a, b| a + b, post = |a| Complex::new(a.re as f32, a.im as f32))]
pub fn mean_c32(x: Complex<f32>, scale: Raw<f64>) -> Complex<f64> {
    let s = scale[0];
    Complex::new(x.re as f64 * s, x.im as f64 * s)
}

/// The mean of `Complex<f64>`: the sum of `x * scale[0]`, `scale = [1 / n]`.
#[reduction(crate = crate, identity = Complex::new(0.0, 0.0), reduce = |a, b| a + b)]
pub fn mean_c64(x: Complex<f64>, scale: Raw<f64>) -> Complex<f64> {
    let s = scale[0];
    Complex::new(x.re * s, x.im * s)
}

/// The mean in f64 of any real type (integers' `mean`; the mean inside `var` and `std`).
#[reduction(crate = crate, identity = 0.0, reduce = |a, b| a + b, instances = [i64, f32, f64])]
pub fn mean_f64<T: Real>(x: T, scale: Raw<f64>) -> f64 {
    // SAFETY: the runtime passes `scale` as one element (runtime/src/reduction/array.rs); no index check.
    x.to_f64() * unsafe { *scale.get_unchecked(0) }
}

/// The accumulator of `var`/`std` (one pass, shifted sums): the count of elements `n`, the sums
/// `s1` of `d = x - k` and `s2` of `d^2` in f64, where `k` is an element of the output's own
/// reduction (its first: the runtime passes it with the kept dimensions, so that it broadcasts
/// along the reduced axes), and `c`, the sum of `scale[0] = 1 / (n (n - ddof))` over the
/// elements, that is `1 / (n - ddof)` (infinite when `n <= ddof`, as NumPy's division by zero).
/// The variance is `(s2 - s1^2 / n) * c`. Shifting by an element of the data keeps the
/// difference of the two sums well conditioned when the mean is large against the spread (the
/// unshifted `sum x^2 - (sum x)^2 / n` loses every digit there).
#[device(crate = crate)]
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shifted {
    pub n: f64,
    pub s1: f64,
    pub s2: f64,
    pub c: f64,
}

/// One element's `Shifted`: `x` shifted by `k`, and `scale`.
#[device(crate = crate)]
fn shifted<T: Real>(x: T, k: T, scale: f64) -> Shifted {
    let d = x.to_f64() - k.to_f64();
    Shifted { n: 1.0, s1: d, s2: d * d, c: scale }
}

/// The variance of an accumulated `Shifted`: `(s2 - s1^2 / n) * c`, never below 0 (a NaN stays).
#[device(crate = crate)]
fn variance(a: Shifted) -> f64 {
    let m2 = a.s2 - a.s1 * a.s1 / a.n;
    if m2 < 0.0 { 0.0 } else { m2 * a.c }
}

/// The variance of floats in f64, rounded to `T`, in one pass (`Shifted`).
#[reduction(
    crate = crate,
    identity = Shifted { n: 0.0, s1: 0.0, s2: 0.0, c: 0.0 },
    reduce = |a, b| Shifted { n: a.n + b.n, s1: a.s1 + b.s1, s2: a.s2 + b.s2, c: a.c + b.c },
    post = |a| T::from_f64(variance(a)),
    instances = [f32, f64]
)]
pub fn var_float<T: Float>(x: T, k: T, scale: Raw<f64>) -> Shifted {
    // SAFETY: the runtime passes `scale` as one element (runtime/src/reduction/array.rs).
    shifted(x, k, unsafe { *scale.get_unchecked(0) })
}

/// The variance in f64 of integers, in one pass (`Shifted`).
#[reduction(
    crate = crate,
    identity = Shifted { n: 0.0, s1: 0.0, s2: 0.0, c: 0.0 },
    reduce = |a, b| Shifted { n: a.n + b.n, s1: a.s1 + b.s1, s2: a.s2 + b.s2, c: a.c + b.c },
    post = |a| variance(a) as f64,
    instances = []
)]
pub fn var_f64<T: Real>(x: T, k: T, scale: Raw<f64>) -> Shifted {
    // SAFETY: the runtime passes `scale` as one element (runtime/src/reduction/array.rs).
    shifted(x, k, unsafe { *scale.get_unchecked(0) })
}

/// The standard deviation of floats: the square root of the variance, rounded to `T`.
#[reduction(
    crate = crate,
    identity = Shifted { n: 0.0, s1: 0.0, s2: 0.0, c: 0.0 },
    reduce = |a, b| Shifted { n: a.n + b.n, s1: a.s1 + b.s1, s2: a.s2 + b.s2, c: a.c + b.c },
    post = |a| T::from_f64(variance(a).sqrt()),
    instances = [f32, f64]
)]
pub fn std_float<T: Float>(x: T, k: T, scale: Raw<f64>) -> Shifted {
    // SAFETY: the runtime passes `scale` as one element (runtime/src/reduction/array.rs).
    shifted(x, k, unsafe { *scale.get_unchecked(0) })
}

/// The standard deviation in f64 of integers.
#[reduction(
    crate = crate,
    identity = Shifted { n: 0.0, s1: 0.0, s2: 0.0, c: 0.0 },
    reduce = |a, b| Shifted { n: a.n + b.n, s1: a.s1 + b.s1, s2: a.s2 + b.s2, c: a.c + b.c },
    post = |a| variance(a).sqrt() as f64,
    instances = []
)]
pub fn std_f64<T: Real>(x: T, k: T, scale: Raw<f64>) -> Shifted {
    // SAFETY: the runtime passes `scale` as one element (runtime/src/reduction/array.rs).
    shifted(x, k, unsafe { *scale.get_unchecked(0) })
}

/// The accumulator of `argmin`/`argmax` of floats: a value (exact in f64) and its position along
/// the reduced axes.
#[device(crate = crate)]
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ArgF {
    pub v: f64,
    pub i: i64,
}

/// `argmax` of floats in one pass, and `argmin` as the argmax of `-x`: `dir = [1]` or `[-1]` (the
/// runtime keeps one array of each per device). The result is the first position along the
/// reduced axes (`reduce_index()`, C order) of the maximum of `x * dir[0]`, or of the first NaN
/// (NumPy's). The reduction keeps, of two candidates, a NaN, else the larger value, and the
/// smaller position among equals, so it is associative and commutative.
#[reduction(
    crate = crate,
    reduce = |a, b| if a.v.is_nan() || b.v.is_nan() {
        if a.v.is_nan() && (!b.v.is_nan() || a.i < b.i) { a } else { b }
    } else if a.v > b.v || (a.v == b.v && a.i < b.i) { a } else { b },
    post = |a| a.i,
    instances = [f64]
)]
pub fn arg_best_float<T: Float>(x: T, dir: Raw<f64>) -> ArgF {
    // SAFETY: the runtime passes `dir` as one element (runtime/src/reduction/array.rs).
    ArgF { v: x.to_f64() * unsafe { *dir.get_unchecked(0) }, i: reduce_index() as i64 }
}

/// The accumulator of `argmin`/`argmax` of `f32` (`arg_best_f32`): the position along the
/// reduced axes and the value's order key ([`order_key`]); `_pad` is 0 (explicit padding to 16
/// bytes).
#[device(crate = crate)]
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ArgK {
    pub i: i64,
    pub k: i32,
    pub _pad: i32,
}

/// The order key of an `f32` of bits `bits`: an `i32` that orders as the values do, with -0.0
/// and +0.0 equal (both 0) and every NaN above +inf and equal to the others (`i32::MAX`).
/// Integer compares of keys replace `arg_best_float`'s f64 compares and NaN tests.
#[device(crate = crate)]
fn order_key(bits: u32) -> i32 {
    let mag = bits & 0x7fff_ffff;
    if mag > 0x7f80_0000 {
        i32::MAX
    } else if bits >> 31 == 1 {
        -(mag as i32)
    } else {
        mag as i32
    }
}

/// `argmax` of `f32` in one pass, and `argmin` as the argmax of `-x` (`dir = [1]` or `[-1]`, as
/// `arg_best_float`, whose results it gives: the first position of the maximum, or of the first
/// NaN). The value is an `i32` order key, `-x` the key of the bits with the sign flipped, so the
/// reduction is a few integer compares and selects per element (issue 37: `arg_best_float`'s
/// f64 compares and NaN tests, compiled to branches, made `argmax` of 1 GiB issue-bound at 0.81
/// of the copy ceiling on the H200).
#[reduction(
    crate = crate,
    reduce = |a, b| if a.k > b.k || (a.k == b.k && a.i < b.i) { a } else { b },
    post = |a| a.i
)]
pub fn arg_best_f32(x: f32, dir: Raw<f64>) -> ArgK {
    // SAFETY: the runtime passes `dir` as one element (runtime/src/reduction/array.rs).
    let flip: u32 = if unsafe { *dir.get_unchecked(0) } < 0.0 { 0x8000_0000 } else { 0 };
    ArgK { i: reduce_index() as i64, k: order_key(x.to_bits() ^ flip), _pad: 0 }
}

/// `argmin`/`argmax` of integers given the minimum or maximum `m` of each output (broadcast
/// along the reduced axes): the first position along the reduced axes whose element equals it.
#[reduction(crate = crate, identity = i64::MAX, reduce = |a, b| a.min(b), instances = [i64])]
pub fn arg_of_int<T: Int>(x: T, m: T) -> i64 {
    if x == m { reduce_index() as i64 } else { i64::MAX }
}

/// Whether every element is nonzero.
#[reduction(crate = crate, identity = true, reduce = |a, b| a && b, instances = [])]
pub fn all<T: Number>(x: T) -> bool {
    x != T::zero()
}

/// Whether any element is nonzero.
#[reduction(crate = crate, identity = false, reduce = |a, b| a || b, instances = [])]
pub fn any<T: Number>(x: T) -> bool {
    x != T::zero()
}

/// `all` of a bool array.
#[reduction(crate = crate, identity = true, reduce = |a, b| a && b)]
pub fn all_bool(x: bool) -> bool {
    x
}

/// `any` of a bool array.
#[reduction(crate = crate, identity = false, reduce = |a, b| a || b)]
pub fn any_bool(x: bool) -> bool {
    x
}
