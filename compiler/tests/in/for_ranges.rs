use cuprum::prelude::*;

/// `for` over ranges: `a..b`, `a..=b`, `.rev()`, `.step_by(s)` and `.rev().step_by(s)`, with
/// Rust's ends kept (an inclusive range to the type's maximum stops, no overflow).
#[rawkernel]
pub fn ranges(out: &mut [i64], n: u32) {
    let t = grid_1d() as usize;
    let mut s: i64 = 0;
    for i in 0..n {
        s += i as i64;
    }
    for i in 1..=n {
        s += i as i64;
    }
    for i in (0..n).rev() {
        s -= i as i64;
    }
    for i in (0..100).step_by(7) {
        s += i;
    }
    for i in (0..=100u32).rev().step_by(3) {
        s ^= i as i64;
    }
    for b in 250u8..=255 {
        s += b as i64;
    }
    for i in (-5i32..5).rev() {
        s *= i as i64;
    }
    for k in (0..n as usize).step_by(n as usize) {
        s += k as i64;
    }
    // A `mut` loop variable is a copy: assigning it does not change the iteration.
    for mut i in 0..3u8 {
        i *= 2;
        s += i as i64;
    }
    for mut i in (0..=3u8).rev() {
        i += 1;
        s -= i as i64;
    }
    out[t] = s;
}
