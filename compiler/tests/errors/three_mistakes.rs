use cuprum::prelude::*;

/// Three independent mistakes, reported together in one run.
#[rawkernel]
pub fn normalize(x: &[f32], out: &mut [f32], n: u32) {
    let i = grid_1d();
    let scale: f64 = 2.0;
    let values = Vec::new();
    if i < n {
        out[i as usize] = x[i as usize] * scale;
        out[i as usize].unknown_op();
    }
}
