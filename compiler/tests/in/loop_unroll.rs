//! Snapshot: loop-unroll control, `.unroll()` (`#pragma unroll`) and `.unroll_by(n)`
//! (`#pragma unroll n`), on plain, reversed and stepped ranges.
use cuprum::prelude::*;

#[rawkernel]
pub fn unrolled(x: &[f32], out: &mut [f32], n: u32) {
    let mut acc = [0.0f32; 8];
    for k in (0..8).unroll() {
        acc[k] = x[k];
    }
    let mut s = 0.0f32;
    for i in (0..n).unroll_by(4) {
        s += x[i as usize];
    }
    for i in (0..n).rev().step_by(2).unroll_by(2) {
        s -= x[i as usize];
    }
    for i in (0..n).unroll_by(1) {
        s += x[i as usize] * 0.5;
    }
    out[0] = s + acc[3];
}
