use cuprum::prelude::*;

#[device]
fn apply(op: &dyn Fn(f32) -> f32, x: f32) -> f32 {
    op(x)
}
