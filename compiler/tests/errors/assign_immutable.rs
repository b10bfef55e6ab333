use cuprum::prelude::*;

#[elementwise]
pub fn accumulate(x: f32) -> f32 {
    let total = 0.0f32;
    for k in 0..4 {
        total += x * k as f32;
    }
    total
}
