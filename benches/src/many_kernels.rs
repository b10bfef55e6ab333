//! A kernel file of many instances (the size of a real user's file): the row "first kernel of a
//! file with 20+ instances (new process)" times the first call of one of them, which loads the
//! whole file's module.

use cuprum::prelude::*;

/// `a * x + y`.
#[elementwise(instances = [f32, f64, i32, i64, u32, u64])]
pub fn axpy<T: Number>(a: T, x: T, y: T) -> T {
    a * x + y
}

/// `x` clamped to `[lo, hi]`.
#[elementwise(instances = [f32, f64, i32, i64, u32, u64])]
pub fn clamp<T: Real>(x: T, lo: T, hi: T) -> T {
    x.max(lo).min(hi)
}

/// A smooth step of floats.
#[elementwise(instances = [f32, f64])]
pub fn smoothstep<T: Float>(x: T) -> T {
    let t = x.max(T::zero()).min(T::one());
    t * t * (T::from_f64(3.0) - T::from_f64(2.0) * t)
}

/// A copy, one element per thread (a raw kernel in the same file).
#[rawkernel]
pub fn scale_copy<T: Scalar>(x: &[T], y: &mut [T], n: u32) {
    let i = grid_1d();
    if i < n {
        y[i as usize] = x[i as usize];
    }
}
