use cuprum::prelude::*;

#[elementwise]
pub fn activate(x: f32) -> f32 {
    sigmoid(x) * x
}
