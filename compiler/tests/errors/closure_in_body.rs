use cuprum::prelude::*;

#[elementwise]
pub fn scaled(x: f32, s: f32) -> f32 {
    let f = |v: f32| v * s;
    f(x)
}
