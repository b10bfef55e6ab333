use cuprum::prelude::*;

/// Tuples: construction, destructuring (nested, with `_`), field access, returning tuples from
/// device functions.
#[device]
fn divmod(a: u32, b: u32) -> (u32, u32) {
    (a / b, a % b)
}

#[device]
fn bounds(x: f32, y: f32) -> ((f32, f32), bool) {
    if x < y { ((x, y), false) } else { ((y, x), true) }
}

#[rawkernel]
pub fn tuple_ops(xs: &[f32], q: &mut [u32], out: &mut [f32], n: u32) {
    let i = grid_1d();
    if i >= n {
        return;
    }
    let (d, m) = divmod(i, 3);
    let ((lo, hi), swapped) = bounds(xs[i as usize], 1.0);
    let pair: (u32, f32) = (d + m, lo);
    let (_, keep) = pair;
    let t = bounds(hi, keep);
    q[i as usize] = pair.0 + if swapped { 1 } else { 0 };
    out[i as usize] = t.0 .1 - (t.0).0 + keep;
    let mut acc = (0u32, 0.0f32);
    acc.0 += 1;
    acc.1 = acc.1 + 2.0;
    q[i as usize] += acc.0;
}
