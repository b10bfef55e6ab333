//! User `#[reduction]` kernels for `gpu_reduction_macro.rs`, precompiled by this crate's build
//! script (listed in `testsuite/build.rs`), so that their instances are served from the embedded fat binary.

use cuprum::prelude::*;

/// L2 norm (CuPy's ReductionKernel example): generic, accumulates in `T`.
#[reduction(identity = T::zero(), reduce = |a, b| a + b, post = |a| a.sqrt(), instances = [f32, f64])]
pub fn l2norm<T: Float>(x: T) -> T {
    x * x
}

/// L2 norm of any float type accumulated in f64, rounded back to `T`.
#[reduction(identity = 0.0, reduce = |a, b| a + b, post = |a| T::from_f64(a.sqrt()), acc = f64, instances = [f32])]
pub fn l2norm_f64<T: Float>(x: T) -> f64 {
    x.to_f64() * x.to_f64()
}

/// Sum of squared differences from a broadcast value: launched by no test but as the
/// `prefetch` of another call (`a_prefetch_loads_the_next_kernel_in_the_background`), so that its
/// loading proves the prefetch.
#[reduction(identity = T::zero(), reduce = |a, b| a + b, instances = [f32])]
pub fn sq_dev<T: Float>(x: T, m: T) -> T {
    (x - m) * (x - m)
}

/// An int8 sum kept in int8: wraps like NumPy's `sum(dtype=int8)`.
#[reduction(identity = 0, reduce = |a, b| a.wrapping_add(b))]
pub fn sum_i8(x: i8) -> i8 {
    x
}

/// The largest absolute value, no identity: an empty reduction is an error.
#[reduction(reduce = |a, b| if a > b { a } else { b })]
pub fn max_abs(x: f64) -> f64 {
    x.abs()
}

/// A raw argument indexed with the loop index, the map's value converted to the accumulator.
#[reduction(identity = 0.0, reduce = |a, b| a + b, acc = f64)]
pub fn weighted_sum(x: f32, w: Raw<f32>) -> f32 {
    x * w[index() % w.len()]
}

/// Two broadcast inputs, a post-map to another type.
#[reduction(identity = 0.0, reduce = |a, b| a + b, post = |a| a as f32)]
pub fn dot(x: f64, y: f64) -> f64 {
    x * y
}

/// A sum of squares generic over `Number`, precompiled for `Complex<f32>` only: `Complex<f64>`
/// goes through NVRTC (`T::zero()` is `cuprum::num<c64>::zero()` there).
#[reduction(identity = T::zero(), reduce = |a, b| a + b, instances = [Complex<f32>])]
pub fn sum_sq<T: Number>(x: T) -> T {
    x * x
}

/// `|sum(x * conj(y))|` of `Complex<f32>` accumulated in `Complex<f64>` (32-byte partials when
/// split), with `y` broadcast; the modulus as the result.
#[reduction(identity = Complex::new(0.0, 0.0), reduce = |a, b| a + b, post = |a| a.norm())]
pub fn cdot_abs(x: Complex<f32>, y: Complex<f32>) -> Complex<f64> {
    let p = x * y.conj();
    Complex::new(p.re as f64, p.im as f64)
}

/// The accumulator of [`spread`]: the smallest and largest value seen, and how many.
#[device]
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spread {
    pub lo: f64,
    pub hi: f64,
    pub n: f64,
}

/// A `#[device]` struct as the accumulator (`max - min` over the count, generic map, no identity).
#[reduction(
    reduce = |a, b| Spread { lo: a.lo.min(b.lo), hi: a.hi.max(b.hi), n: a.n + b.n },
    post = |a| (a.hi - a.lo) / a.n,
    instances = [f32, i32]
)]
pub fn spread<T: Real>(x: T) -> Spread {
    Spread { lo: x.to_f64(), hi: x.to_f64(), n: 1.0 }
}

/// The last position along the reduced axes (C order, `reduce_index()`) holding a negative
/// element, -1 when none does.
#[reduction(identity = -1, reduce = |a, b| a.max(b), instances = [f32])]
pub fn last_negative<T: Real>(x: T) -> i64 {
    if x < T::zero() { reduce_index() as i64 } else { -1 }
}

/// A literal identity on a generic accumulator (CuPy's `'0'`): converted to each instance's type.
/// Precompiled for `u8` and `i64`; `i32` goes through NVRTC.
#[reduction(identity = 0, reduce = |a, b| a.wrapping_add(b), instances = [u8, i64])]
pub fn wrapping_total<T: Int>(x: T) -> T {
    x
}

/// A float sum whose identity is the literal `-0.0` (the true identity of `+`: `-0.0 + x` is `x`
/// for every `x`, `+0.0` too), so an empty sum is `-0.0`, sign included.
#[reduction(identity = -0.0, reduce = |a, b| a + b, instances = [f16, f64])]
pub fn float_total<T: Float>(x: T) -> T {
    x
}

/// By-value scalar parameters of three widths (`call(&x, 0.3, 1.5, -2)`): the sum of
/// `(sqrt(x^2 + eps) + shift) * scale`, accumulated in f64.
#[reduction(identity = 0.0, reduce = |a, b| a + b, acc = f64, instances = [f32, f64])]
pub fn smooth_l1<T: Float>(x: T, eps: T, scale: f64, shift: i64) -> f64 {
    ((x * x + eps).sqrt().to_f64() + shift as f64) * scale
}
