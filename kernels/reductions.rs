//! The built-in reductions behind `Array::sum`, `prod`, `min`, `max`, `argmin`, `argmax`, `mean`,
//! `var`, `std`, `all` and `any` (issue 7, item 4), as `#[reduction]` kernels.
//!
//! Accumulators: sums and products keep the element type (integers wrap, as NumPy's
//! `sum(dtype=...)`). `min`/`max` have no identity: an empty reduction is an error, as in NumPy;
//! for floats a NaN wins, as in NumPy. `mean`, `var` and `std` are built from `sum_f64` and
//! `sum_sq_dev` plus a division by the reduced count.
//!
//! Not here yet, because the kernel language cannot express them: `argmin`/`argmax` need a
//! `(value, index)` accumulator (a reduction's map and accumulator must be one scalar today) and
//! the element's index along the reduced axes (`index()` is its position in the whole loop);
//! a one-pass `mean`/`var` needs either a tuple accumulator `(count, mean, m2)` or the number of
//! reduced elements in `post`.

use cuprum::prelude::*;

#[reduction(identity = T::zero(), reduce = |a, b| a + b)]
pub fn sum<T: Number>(x: T) -> T {
    x
}

#[reduction(identity = T::one(), reduce = |a, b| a * b)]
pub fn prod<T: Number>(x: T) -> T {
    x
}

/// Minimum of integers (no identity).
#[reduction(reduce = |a, b| a.min(b))]
pub fn min_int<T: Int>(x: T) -> T {
    x
}

/// Maximum of integers (no identity).
#[reduction(reduce = |a, b| a.max(b))]
pub fn max_int<T: Int>(x: T) -> T {
    x
}

/// Minimum of floats; a NaN propagates (NumPy's `min`).
#[reduction(reduce = |a, b| if a.is_nan() || a < b { a } else { b })]
pub fn min_float<T: Float>(x: T) -> T {
    x
}

/// Maximum of floats; a NaN propagates (NumPy's `max`).
#[reduction(reduce = |a, b| if a.is_nan() || a > b { a } else { b })]
pub fn max_float<T: Float>(x: T) -> T {
    x
}

/// The sum in f64 of values of any real type: the numerator of `mean` (the glue divides by the
/// number of reduced elements, which a kernel cannot see yet).
#[reduction(identity = 0.0, reduce = |a, b| a + b)]
pub fn sum_f64<T: Real>(x: T) -> f64 {
    x.to_f64()
}

/// Sum of squared deviations from a given mean (broadcast, e.g. the `mean` with keepdims): the
/// numerator of `var` (divided by n - ddof) and `std`.
#[reduction(identity = 0.0, reduce = |a, b| a + b)]
pub fn sum_sq_dev<T: Real>(x: T, mean: f64) -> f64 {
    let d = x.to_f64() - mean;
    d * d
}

/// Whether every element is nonzero.
#[reduction(identity = true, reduce = |a, b| a && b)]
pub fn all<T: Number>(x: T) -> bool {
    x != T::zero()
}

/// Whether any element is nonzero.
#[reduction(identity = false, reduce = |a, b| a || b)]
pub fn any<T: Number>(x: T) -> bool {
    x != T::zero()
}

/// `all` of a bool array.
#[reduction(identity = true, reduce = |a, b| a && b)]
pub fn all_bool(x: bool) -> bool {
    x
}

/// `any` of a bool array.
#[reduction(identity = false, reduce = |a, b| a || b)]
pub fn any_bool(x: bool) -> bool {
    x
}
