use cuprum::prelude::*;

/// `as` converts between primitive numbers only.
#[elementwise]
pub fn convert<T: Float>(x: T, h: f16, n: i32) -> f64 {
    let flag = n as bool;
    let wide = h as f32;
    let g = x as f64;
    wide as f64 + g
}
