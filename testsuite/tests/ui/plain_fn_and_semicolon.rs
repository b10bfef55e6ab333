use cuprum::prelude::*;

// Each mistake is reported once, by the attribute, at its token (no rustc error follows).
fn softplus(x: f32) -> f32 {
    (1.0 + x.exp()).ln()
}

#[elementwise]
pub fn act(x: f32) -> f32 {
    softplus(x) * 2.0
}

#[elementwise]
pub fn twice(x: f32) -> f32 {
    let y = x * 2.0;;
    y
}

#[elementwise]
pub fn larger(x: f32) -> f32 {
    x.max()
}

fn main() {}
