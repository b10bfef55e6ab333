use cuprum::prelude::*;

struct Pair {
    a: f32,
    b: f32,
}

#[elementwise]
pub fn pair_sum(x: f32, y: f32) -> f32 {
    let p = Pair { a: x, b: y };
    p.a + p.b
}
