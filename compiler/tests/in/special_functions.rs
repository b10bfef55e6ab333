use cuprum::prelude::*;

/// The error-function family on concrete types: free functions (`erf(x)`), each CUDA's
/// `erff`/`erf`, ... through `cuprum/math.h`.
#[elementwise]
pub fn special_f32(x: f32, y: f32, p: f32) -> (f32, f32, f32) {
    let a = erf(x) + erfc(x);
    let b = erfinv(y) + erfcinv(y + 1.0);
    let c = normcdf(x) + normcdfinv(p);
    (a, b, c)
}

/// The same in f64, with a literal argument (an `f64`, as rustc infers it) and nested calls.
#[elementwise]
pub fn special_f64(x: f64, p: f64) -> f64 {
    -std::f64::consts::SQRT_2 * erfcinv(2.0 * p) + erf(erfinv(x)) + erfc(0.5)
}

/// Through a generic `Float` bound: f32, f64 and the half types (computed in f32).
#[elementwise(instances = [f32, f64, f16, bf16])]
pub fn normal_quantile<T: Float>(p: T) -> T {
    normcdfinv(p) + erfinv(p - T::one())
}

/// In a device function and a reduction's map.
#[device]
pub fn tail(z: f64) -> f64 {
    erfc(z / std::f64::consts::SQRT_2) * 0.5
}

#[reduction(identity = 0.0, reduce = |a, b| a + b)]
pub fn tail_sum(z: f64) -> f64 {
    tail(z) + normcdf(-z)
}
