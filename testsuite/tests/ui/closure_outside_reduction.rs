use cuprum::prelude::*;

#[rawkernel]
pub fn k(out: &mut [f32]) {
    let f = |a: f32| a * 2.0;
    out[0] = f(1.0);
}

fn main() {}
