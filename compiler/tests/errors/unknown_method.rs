use cuprum::prelude::*;

#[elementwise]
pub fn wrap_angle(x: f64) -> f64 {
    x.rem_euclid(std::f64::consts::TAU)
}

#[elementwise]
pub fn generic_sqrt<T: Real>(x: T) -> T {
    x.sqrt()
}
