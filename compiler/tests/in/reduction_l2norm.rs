use cuprum::prelude::*;

/// L2 norm (CuPy's ReductionKernel): map x*x, reduce a + b, post sqrt, identity 0.
#[reduction(identity = T::zero(), reduce = |a, b| a + b, post = |a| a.sqrt())]
pub fn l2norm<T: Float>(x: T) -> T {
    x * x
}

/// An f32 map accumulated in f64 (each mapped value converts as by `as f64`), the result
/// converted back to f32 by `post`.
#[reduction(identity = 0.0, reduce = |a, b| a + b, post = |a| a.sqrt() as f32, acc = f64)]
pub fn l2norm_acc64(x: f32) -> f32 {
    x * x
}

/// The same with the map already producing the accumulator type.
#[reduction(identity = 0.0, reduce = |a, b| a + b, post = |a| a.sqrt() as f32, acc = f64)]
pub fn l2norm_f64acc(x: f32) -> f64 {
    let w = x as f64;
    w * w
}
