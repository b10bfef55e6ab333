use cuprum::prelude::*;

/// z = (x - y)^2, broadcast over all array arguments (CuPy's ElementwiseKernel).
#[elementwise]
pub fn squared_diff<T: Float>(x: T, y: T) -> T {
    let d = x - y;
    d * d
}

/// A non-generic elementwise kernel with a scalar-typed body.
#[elementwise]
pub fn axpy(a: f32, x: f32, y: f32) -> f32 {
    a * x + y
}
