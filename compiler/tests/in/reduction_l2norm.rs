use cuprum::prelude::*;

/// L2 norm (CuPy's ReductionKernel): map x*x, reduce a + b, post sqrt, identity 0.
#[reduction(identity = T::zero(), reduce = |a, b| a + b, post = |a| a.sqrt())]
pub fn l2norm<T: Float>(x: T) -> T {
    x * x
}

/// The same with an f64 accumulator for f32 input.
#[reduction(identity = 0.0, reduce = |a, b| a + b, post = |a| a.sqrt() as f32, acc = f64)]
pub fn l2norm_f64acc(x: f32) -> f64 {
    let w = x as f64;
    w * w
}
