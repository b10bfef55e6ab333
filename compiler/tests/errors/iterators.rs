use cuprum::prelude::*;

#[rawkernel]
pub fn total(x: &[f32], out: &mut [f32]) {
    let s: f32 = x.iter().sum();
    let mut t = 0.0;
    for v in x {
        t += *v;
    }
    out[0] = s + t;
}
