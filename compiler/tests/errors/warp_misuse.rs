use cuprum::prelude::*;

/// Warp collectives used wrongly: every mistake at its span.
#[rawkernel]
pub fn misuse(x: &[Complex<f32>], flags: &[bool], out: &mut [f32]) {
    let i = grid_1d() as usize;
    // Complex numbers have no order; booleans are not numbers.
    let _ = warp_reduce_max(x[i]);
    let _ = warp_inclusive_sum(flags[i]);
    // The width is a `u32`.
    out[i] = warp_reduce_sum_width(out[i], 8.0);
}

/// Warp collectives need the warp's lanes together: not in an elementwise body.
#[elementwise]
pub fn per_element(x: f32) -> f32 {
    warp_reduce_sum(x)
}
