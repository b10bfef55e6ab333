use cuprum::prelude::*;

/// CuPy's raw-argument example: y = x[n - i - 1] through `index()` and `loop_size()`.
#[elementwise]
pub fn reverse<T: Scalar>(x: Raw<T>) -> T {
    x[loop_size() - index() - 1]
}

/// A 3-point moving average reading neighbours through a raw argument (taken by reference, so
/// that the body can be called on the host without moving the argument).
#[elementwise]
pub fn smooth3(x: &Raw<f32>, w: f32) -> f32 {
    let i = index();
    let n = x.len();
    let left = if i > 0 { x[i - 1] } else { x[i] };
    let right = if i + 1 < n { x[i + 1] } else { x[i] };
    w * left + (1.0 - 2.0 * w) * x[i] + w * right
}
