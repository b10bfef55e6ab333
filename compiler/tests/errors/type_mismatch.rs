use cuprum::prelude::*;

/// No implicit conversions: mixing f32 and f64, or i32 and u32, needs `as`.
#[elementwise]
pub fn mixed(x: f32, scale: f64, n: i32, m: u32) -> f32 {
    let y = x * scale;
    let k = n + m;
    y
}
