//! `#[elementwise]` kernels for `tests/gpu_elementwise_macro.rs` (precompiled by
//! testsuite/build.rs). Each body is also the test's host reference.

use cuprum::prelude::*;

/// z = (x - y)^2.
#[elementwise(instances = [f32, f64])]
pub fn squared_diff<T: Float>(x: T, y: T) -> T {
    let d = x - y;
    d * d
}

/// z = (x - y)^2, compiled for blocks of at most 256 threads, four resident per multiprocessor
/// (`__launch_bounds__(256, 4)`).
#[elementwise(instances = [f32], max_threads = 256, min_blocks = 4)]
pub fn squared_diff_bounded<T: Float>(x: T, y: T) -> T {
    let d = x - y;
    d * d
}

/// a * x + b: three inputs, each an array or a scalar.
#[elementwise(instances = [f32, f64])]
pub fn axpb<T: Float>(a: T, x: T, b: T) -> T {
    a * x + b
}

/// Floored quotient and remainder: two outputs.
#[elementwise(instances = [i32, i64])]
pub fn floor_divmod<T: Int>(a: T, b: T) -> (T, T) {
    let q = a / b;
    let r = a % b;
    if r != T::zero() && (r < T::zero()) != (b < T::zero()) { (q - T::one(), r + b) } else { (q, r) }
}

/// Three outputs of fixed, different dtypes.
#[elementwise]
pub fn split_float(x: f64) -> (f64, f64, bool) {
    let whole = x.trunc();
    (whole, x - whole, x.is_sign_negative())
}

/// Outputs through `&mut` parameters.
#[elementwise(instances = [f32])]
pub fn sincos<T: Float>(x: T, s: &mut T, c: &mut T) {
    *s = x.sin();
    *c = x.cos();
}

/// An output parameter read and written.
#[elementwise]
pub fn accumulate(x: f32, acc: &mut f32) {
    *acc += x * x;
}

/// CuPy's raw-argument example: y = x[n - i - 1].
#[elementwise(instances = [f32, i32])]
pub fn reverse<T: Scalar>(x: Raw<T>) -> T {
    x[loop_size() - index() - 1]
}

/// A raw argument next to a scalar: a 3-point moving average.
#[elementwise]
pub fn smooth3(x: &Raw<f32>, w: f32) -> f32 {
    let i = index();
    let n = x.len();
    let left = if i > 0 { x[i - 1] } else { x[i] };
    let right = if i + 1 < n { x[i + 1] } else { x[i] };
    w * left + (1.0 - 2.0 * w) * x[i] + w * right
}

/// Two generic parameters; only (f32, i32) is precompiled, the rest goes to NVRTC.
#[elementwise(instances = [(f32, i32)])]
pub fn scale_by_int<T: Float, I: Int>(x: T, k: I) -> T {
    x * T::from_f64(k.to_f64())
}
