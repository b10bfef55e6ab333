use cuprum::prelude::*;

#[rawkernel]
pub fn fill(out: &mut [f32], n: u32) {
    let v: Vec<f32> = Vec::new();
    println!("n = {}", n);
    out[0] = 1.0;
    let _ = v;
}

fn main() {}
