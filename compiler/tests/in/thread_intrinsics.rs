use cuprum::prelude::*;

/// Thread and block indices, the `grid_*` and `grid_size_*` helpers.
#[rawkernel]
pub fn index_maps(out1: &mut [u32], out2: &mut [u32], out3: &mut [u32]) {
    let t = thread_idx();
    let b = block_idx();
    let bd = block_dim();
    let gd = grid_dim();
    let flat = b.x * bd.x + t.x + (b.y * bd.y + t.y) * gd.x * bd.x + t.z * 0 + b.z * 0 + bd.z * 0 + gd.z * 0;
    let i = grid_1d();
    let (x, y) = grid_2d();
    let (gx, gy, gz) = grid_3d();
    let n1 = grid_size_1d();
    let (w, h) = grid_size_2d();
    let (sx, sy, sz) = grid_size_3d();
    let mut k = i;
    while k < out1.len() as u32 {
        out1[k as usize] = flat;
        k += n1;
    }
    if (x as usize) < out2.len() && y < h {
        out2[(y * w + x) as usize] = gx + gy + gz;
    }
    let idx = (gz * sy + gy) * sx + gx;
    if (idx as usize) < out3.len() {
        out3[idx as usize] = sz;
    }
}

/// Intrinsics called inside a device function.
#[device]
fn global_id() -> u32 {
    block_idx().x * block_dim().x + thread_idx().x
}

#[rawkernel]
pub fn iota(out: &mut [u32]) {
    let i = global_id();
    if (i as usize) < out.len() {
        out[i as usize] = i;
    }
}
