use cuprum::prelude::*;

/// `#[rawkernel(fast_math)]`: the unit is compiled with `--use_fast_math` (approximate
/// transcendental functions, flush to zero); the Rust semantics of integers stay.
#[rawkernel(fast_math)]
pub fn softmax_row(x: &[f32], y: &mut [f32], n: u32) {
    let i = grid_1d();
    if i >= n {
        return;
    }
    let mut m = f32::NEG_INFINITY;
    for k in 0..n {
        m = m.max(x[k as usize]);
    }
    let mut s = 0.0f32;
    for k in 0..n {
        s += (x[k as usize] - m).exp();
    }
    y[i as usize] = (x[i as usize] - m).exp() / s;
}
