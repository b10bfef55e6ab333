use cuprum::prelude::*;

/// The unroll factor is an integer literal from 1, and `.unroll()` comes last.
#[rawkernel]
pub fn bad_unroll(x: &mut [f32], n: u32) {
    for i in (0..n).unroll_by(n) {
        x[i as usize] = 0.0;
    }
    for i in (0..n).unroll_by(0) {
        x[i as usize] = 1.0;
    }
    for i in (0..n).unroll().rev() {
        x[i as usize] = 2.0;
    }
}
