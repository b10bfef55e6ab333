use cuprum::prelude::*;

#[elementwise]
pub fn bad(x: &[f32]) -> f32 {
    x[0]
}

fn main() {}
