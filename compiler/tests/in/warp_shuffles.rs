use cuprum::prelude::*;

/// Every warp shuffle, plain and `_width` forms, on 32-bit and 64-bit values.
#[rawkernel]
pub fn shuffles(x: &[f64], y: &[i32], out: &mut [f64], n: u32) {
    let i = grid_1d();
    let lane = lane_id();
    let v = if i < n { x[i as usize] } else { 0.0 };
    let k = if i < n { y[i as usize] } else { 0 };
    let full = 0xffff_ffffu32;
    let a = shfl_sync(full, v, 0);
    let b = shfl_up_sync(full, v, 1);
    let c = shfl_down_sync(full, v, 1);
    let d = shfl_xor_sync(full, v, 1);
    let e = shfl_sync_width(full, k, lane & 7, 8);
    let f = shfl_up_sync_width(full, k, 2, 16);
    let g = shfl_down_sync_width(full, k, 2, 16);
    let h = shfl_xor_sync_width(full, k, 4, 8);
    if i < n {
        out[i as usize] = a + b + c + d + (e + f + g + h) as f64;
    }
}

/// Shuffles of a generic value, a half value and a `bool`.
#[device]
fn broadcast<T: Scalar>(v: T) -> T {
    shfl_sync(u32::MAX, v, 0)
}

#[rawkernel]
pub fn broadcasts(h: &mut [f16], flags: &mut [bool], z: &mut [Complex<f32>]) {
    let i = grid_1d() as usize;
    h[i] = broadcast(h[i]);
    flags[i] = broadcast(flags[i]);
    z[i] = shfl_xor_sync(u32::MAX, z[i], 1);
}
