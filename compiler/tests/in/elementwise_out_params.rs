use cuprum::prelude::*;

/// Outputs given as `&mut T` parameters instead of a return value.
#[elementwise]
pub fn sincos<T: Float>(x: T, s: &mut T, c: &mut T) {
    *s = x.sin();
    *c = x.cos();
}

/// An output parameter updated in place (read and written).
#[elementwise]
pub fn accumulate(x: f32, acc: &mut f32) {
    *acc += x * x;
}
