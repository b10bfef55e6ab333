use cuprum::prelude::*;

/// `bool` values, `!`, `&&`, `||` (short-circuiting), `&`, `|`, `^` on bools, comparisons.
#[elementwise]
pub fn in_band(x: f32, lo: f32, hi: f32, strict: bool) -> bool {
    let inside = if strict { lo < x && x < hi } else { lo <= x && x <= hi };
    let nan = x != x;
    (inside || nan && !strict) ^ (lo > hi) | false & true
}

/// Bool outputs and a bool-typed raw-kernel argument.
#[rawkernel]
pub fn mask_positive(x: &[f64], mask: &mut [bool], invert: bool, n: u32) {
    let i = grid_1d();
    if i < n && !(x[i as usize] == 0.0) {
        let mut m = x[i as usize] > 0.0;
        m ^= invert;
        m &= true;
        m |= false;
        mask[i as usize] = m;
    }
}
