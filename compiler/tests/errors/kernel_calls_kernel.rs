use cuprum::prelude::*;

#[elementwise]
pub fn relu(x: f32) -> f32 {
    x.max(0.0)
}

#[elementwise]
pub fn leaky(x: f32) -> f32 {
    relu(x) + 0.01 * x.min(0.0)
}
