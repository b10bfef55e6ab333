use cuprum::prelude::*;

/// The numeric traits' functions (num-traits naming): `T::zero()`, `T::one()`, `T::from_f64()`,
/// `T::from_i64()`, `x.to_f64()`, `T::infinity()`, `T::min_value()` ...
#[elementwise]
pub fn softplus<T: Float>(x: T) -> T {
    let threshold = T::from_f64(20.0);
    if x > threshold {
        x
    } else if x < -threshold {
        x.exp()
    } else {
        (T::one() + x.exp()).ln()
    }
}

#[device]
fn safe_log<T: Float>(x: T) -> T {
    if x <= T::zero() { T::neg_infinity() } else if x.is_infinite() { T::infinity() } else { x.ln() }
}

#[elementwise]
pub fn trait_consts<T: Float>(x: T) -> (T, T, f64) {
    let eps = T::epsilon();
    let wrap = (x - T::pi()).abs() + T::e() * eps;
    let nan_to_zero = if x.is_nan() { T::zero() } else { safe_log(x) + T::nan() * T::zero() };
    let clipped = x.max(T::min_value()).min(T::max_value());
    (wrap + nan_to_zero, clipped, x.to_f64() + T::from_i64(-3).to_f64())
}

/// `from_i64`/`to_f64`/`min_value` through `Real` and `Number` on integers.
#[elementwise(instances = [i16, u32])]
pub fn rescale<T: Real>(x: T, lo: T, hi: T) -> f64 {
    let span = hi.to_f64() - lo.to_f64();
    let zero = T::zero();
    let v = if x < zero { T::min_value() } else { x };
    (v.to_f64() - lo.to_f64()) / span + T::from_f64(0.5).to_f64() + T::max_value().to_f64() * 0.0
}
