//! Row-kernel shapes for a fused softmax over (8192, 8192) f32 (`run.sh` times them on a GPU):
//! what the `#[fuse]` row kernel should be. `checked` is the first generated form.
use cuprum::prelude::*;

/// The first generated form: checked indexing, one element per loop step.
#[rawkernel]
pub fn checked(x: &[f32], x_rs: i64, x_cs: i64, out: &mut [f32], cols: i64) {
    let row = block_idx().x as i64;
    let tid = thread_idx().x as i64;
    let nt = block_dim().x as i64;
    let lane = lane_id();
    let warp = (tid / 32) as usize;
    let nwarps = ((nt + 31) / 32) as usize;
    let red0 = shared_array::<f32, 32>();
    let mut acc0 = f32::neg_infinity();
    let mut j = tid;
    while j < cols {
        let v0 = x[(row * x_rs + j * x_cs) as usize];
        acc0 = acc0.max(v0);
        j += nt;
    }
    let mut m = 16u32;
    while m > 0 {
        acc0 = acc0.max(shfl_xor_sync(u32::MAX, acc0, m));
        m /= 2;
    }
    if lane == 0 {
        red0[warp] = acc0;
    }
    sync_threads();
    let mut mx = f32::neg_infinity();
    let mut w = 0usize;
    while w < nwarps {
        mx = mx.max(red0[w]);
        w += 1;
    }
    let red1 = shared_array::<f32, 32>();
    let mut acc1 = 0.0f32;
    let mut j = tid;
    while j < cols {
        let v0 = x[(row * x_rs + j * x_cs) as usize];
        acc1 += (v0 - mx).exp();
        j += nt;
    }
    let mut m = 16u32;
    while m > 0 {
        acc1 += shfl_xor_sync(u32::MAX, acc1, m);
        m /= 2;
    }
    if lane == 0 {
        red1[warp] = acc1;
    }
    sync_threads();
    let mut s = 0.0f32;
    let mut w = 0usize;
    while w < nwarps {
        s += red1[w];
        w += 1;
    }
    let mut j = tid;
    while j < cols {
        let v0 = x[(row * x_rs + j * x_cs) as usize];
        out[(row * cols + j) as usize] = (v0 - mx).exp() / s;
        j += nt;
    }
}

/// The same, unchecked.
#[rawkernel(unchecked)]
pub fn unchecked(x: &[f32], x_rs: i64, x_cs: i64, out: &mut [f32], cols: i64) {
    let row = block_idx().x as i64;
    let tid = thread_idx().x as i64;
    let nt = block_dim().x as i64;
    let lane = lane_id();
    let warp = (tid / 32) as usize;
    let nwarps = ((nt + 31) / 32) as usize;
    let red0 = shared_array::<f32, 32>();
    let mut acc0 = f32::neg_infinity();
    let mut j = tid;
    while j < cols {
        let v0 = x[(row * x_rs + j * x_cs) as usize];
        acc0 = acc0.max(v0);
        j += nt;
    }
    let mut m = 16u32;
    while m > 0 {
        acc0 = acc0.max(shfl_xor_sync(u32::MAX, acc0, m));
        m /= 2;
    }
    if lane == 0 {
        red0[warp] = acc0;
    }
    sync_threads();
    let mut mx = f32::neg_infinity();
    let mut w = 0usize;
    while w < nwarps {
        mx = mx.max(red0[w]);
        w += 1;
    }
    let red1 = shared_array::<f32, 32>();
    let mut acc1 = 0.0f32;
    let mut j = tid;
    while j < cols {
        let v0 = x[(row * x_rs + j * x_cs) as usize];
        acc1 += (v0 - mx).exp();
        j += nt;
    }
    let mut m = 16u32;
    while m > 0 {
        acc1 += shfl_xor_sync(u32::MAX, acc1, m);
        m /= 2;
    }
    if lane == 0 {
        red1[warp] = acc1;
    }
    sync_threads();
    let mut s = 0.0f32;
    let mut w = 0usize;
    while w < nwarps {
        s += red1[w];
        w += 1;
    }
    let mut j = tid;
    while j < cols {
        let v0 = x[(row * x_rs + j * x_cs) as usize];
        out[(row * cols + j) as usize] = (v0 - mx).exp() / s;
        j += nt;
    }
}

/// Checked, each thread's elements of the row kept in a local array of 8 (the row is read from
/// memory once): rows of at most 8 * block elements.
#[rawkernel]
pub fn cached(x: &[f32], x_rs: i64, x_cs: i64, out: &mut [f32], cols: i64) {
    let row = block_idx().x as i64;
    let tid = thread_idx().x as i64;
    let nt = block_dim().x as i64;
    let lane = lane_id();
    let warp = (tid / 32) as usize;
    let nwarps = ((nt + 31) / 32) as usize;
    let mut c0 = [0.0f32; 8];
    let mut k = 0usize;
    while k < 8 {
        let j = tid + k as i64 * nt;
        if j < cols {
            c0[k] = x[(row * x_rs + j * x_cs) as usize];
        }
        k += 1;
    }
    let red0 = shared_array::<f32, 32>();
    let mut acc0 = f32::neg_infinity();
    let mut k = 0usize;
    while k < 8 {
        if tid + (k as i64) * nt < cols {
            acc0 = acc0.max(c0[k]);
        }
        k += 1;
    }
    let mut m = 16u32;
    while m > 0 {
        acc0 = acc0.max(shfl_xor_sync(u32::MAX, acc0, m));
        m /= 2;
    }
    if lane == 0 {
        red0[warp] = acc0;
    }
    sync_threads();
    let mut mx = f32::neg_infinity();
    let mut w = 0usize;
    while w < nwarps {
        mx = mx.max(red0[w]);
        w += 1;
    }
    let red1 = shared_array::<f32, 32>();
    let mut acc1 = 0.0f32;
    let mut k = 0usize;
    while k < 8 {
        if tid + (k as i64) * nt < cols {
            acc1 += (c0[k] - mx).exp();
        }
        k += 1;
    }
    let mut m = 16u32;
    while m > 0 {
        acc1 += shfl_xor_sync(u32::MAX, acc1, m);
        m /= 2;
    }
    if lane == 0 {
        red1[warp] = acc1;
    }
    sync_threads();
    let mut s = 0.0f32;
    let mut w = 0usize;
    while w < nwarps {
        s += red1[w];
        w += 1;
    }
    let mut k = 0usize;
    while k < 8 {
        let j = tid + k as i64 * nt;
        if j < cols {
            out[(row * cols + j) as usize] = (c0[k] - mx).exp() / s;
        }
        k += 1;
    }
}

/// Generated by the script in the commit that added it: 4 elements per step, loads first.
#[rawkernel(unchecked)]
pub fn unroll4(x: &[f32], x_rs: i64, x_cs: i64, out: &mut [f32], cols: i64) {
    let row = block_idx().x as i64;
    let tid = thread_idx().x as i64;
    let nt = block_dim().x as i64;
    let lane = lane_id();
    let warp = (tid / 32) as usize;
    let nwarps = ((nt + 31) / 32) as usize;
    let red0 = shared_array::<f32, 32>();
    let mut acc0 = f32::neg_infinity();
    let mut j = tid;
    while j + 3 * nt < cols {
        let e0 = x[(row * x_rs + (j + 0 * nt) * x_cs) as usize];
        let e1 = x[(row * x_rs + (j + 1 * nt) * x_cs) as usize];
        let e2 = x[(row * x_rs + (j + 2 * nt) * x_cs) as usize];
        let e3 = x[(row * x_rs + (j + 3 * nt) * x_cs) as usize];
        acc0 = acc0.max(e0);
        acc0 = acc0.max(e1);
        acc0 = acc0.max(e2);
        acc0 = acc0.max(e3);
        j += 4 * nt;
    }
    while j < cols {
        let e0 = x[(row * x_rs + j * x_cs) as usize];
        acc0 = acc0.max(e0);
        j += nt;
    }

    let mut m = 16u32;
    while m > 0 {
        acc0 = acc0.max(shfl_xor_sync(u32::MAX, acc0, m));
        m /= 2;
    }
    if lane == 0 {
        red0[warp] = acc0;
    }
    sync_threads();
    let mut mx = f32::neg_infinity();
    let mut w = 0usize;
    while w < nwarps {
        mx = mx.max(red0[w]);
        w += 1;
    }
    let red1 = shared_array::<f32, 32>();
    let mut acc1 = 0.0f32;
    let mut j = tid;
    while j + 3 * nt < cols {
        let e0 = x[(row * x_rs + (j + 0 * nt) * x_cs) as usize];
        let e1 = x[(row * x_rs + (j + 1 * nt) * x_cs) as usize];
        let e2 = x[(row * x_rs + (j + 2 * nt) * x_cs) as usize];
        let e3 = x[(row * x_rs + (j + 3 * nt) * x_cs) as usize];
        acc1 += (e0 - mx).exp();
        acc1 += (e1 - mx).exp();
        acc1 += (e2 - mx).exp();
        acc1 += (e3 - mx).exp();
        j += 4 * nt;
    }
    while j < cols {
        let e0 = x[(row * x_rs + j * x_cs) as usize];
        acc1 += (e0 - mx).exp();
        j += nt;
    }

    let mut m = 16u32;
    while m > 0 {
        acc1 = acc1 + shfl_xor_sync(u32::MAX, acc1, m);
        m /= 2;
    }
    if lane == 0 {
        red1[warp] = acc1;
    }
    sync_threads();
    let mut s = 0.0f32;
    let mut w = 0usize;
    while w < nwarps {
        s = s + red1[w];
        w += 1;
    }
    let mut j = tid;
    while j + 3 * nt < cols {
        let e0 = x[(row * x_rs + (j + 0 * nt) * x_cs) as usize];
        let e1 = x[(row * x_rs + (j + 1 * nt) * x_cs) as usize];
        let e2 = x[(row * x_rs + (j + 2 * nt) * x_cs) as usize];
        let e3 = x[(row * x_rs + (j + 3 * nt) * x_cs) as usize];
        out[(row * cols + j + 0 * nt) as usize] = (e0 - mx).exp() / s;
        out[(row * cols + j + 1 * nt) as usize] = (e1 - mx).exp() / s;
        out[(row * cols + j + 2 * nt) as usize] = (e2 - mx).exp() / s;
        out[(row * cols + j + 3 * nt) as usize] = (e3 - mx).exp() / s;
        j += 4 * nt;
    }
    while j < cols {
        let e0 = x[(row * x_rs + j * x_cs) as usize];
        out[(row * cols + j) as usize] = (e0 - mx).exp() / s;
        j += nt;
    }
}

/// K register slots per thread, straight-line (rows of at most K * block).
#[rawkernel(unchecked)]
pub fn cached8(x: &[f32], x_rs: i64, x_cs: i64, out: &mut [f32], cols: i64) {
    let row = block_idx().x as i64;
    let tid = thread_idx().x as i64;
    let nt = block_dim().x as i64;
    let lane = lane_id();
    let warp = (tid / 32) as usize;
    let nwarps = ((nt + 31) / 32) as usize;
    let j0 = tid + 0 * nt;
    let e0 = if j0 < cols { x[(row * x_rs + j0 * x_cs) as usize] } else { 0.0 };
    let j1 = tid + 1 * nt;
    let e1 = if j1 < cols { x[(row * x_rs + j1 * x_cs) as usize] } else { 0.0 };
    let j2 = tid + 2 * nt;
    let e2 = if j2 < cols { x[(row * x_rs + j2 * x_cs) as usize] } else { 0.0 };
    let j3 = tid + 3 * nt;
    let e3 = if j3 < cols { x[(row * x_rs + j3 * x_cs) as usize] } else { 0.0 };
    let j4 = tid + 4 * nt;
    let e4 = if j4 < cols { x[(row * x_rs + j4 * x_cs) as usize] } else { 0.0 };
    let j5 = tid + 5 * nt;
    let e5 = if j5 < cols { x[(row * x_rs + j5 * x_cs) as usize] } else { 0.0 };
    let j6 = tid + 6 * nt;
    let e6 = if j6 < cols { x[(row * x_rs + j6 * x_cs) as usize] } else { 0.0 };
    let j7 = tid + 7 * nt;
    let e7 = if j7 < cols { x[(row * x_rs + j7 * x_cs) as usize] } else { 0.0 };
    let red0 = shared_array::<f32, 32>();
    let mut acc0 = f32::neg_infinity();
    if j0 < cols { acc0 = acc0.max(e0); }
    if j1 < cols { acc0 = acc0.max(e1); }
    if j2 < cols { acc0 = acc0.max(e2); }
    if j3 < cols { acc0 = acc0.max(e3); }
    if j4 < cols { acc0 = acc0.max(e4); }
    if j5 < cols { acc0 = acc0.max(e5); }
    if j6 < cols { acc0 = acc0.max(e6); }
    if j7 < cols { acc0 = acc0.max(e7); }

    let mut m = 16u32;
    while m > 0 {
        acc0 = acc0.max(shfl_xor_sync(u32::MAX, acc0, m));
        m /= 2;
    }
    if lane == 0 {
        red0[warp] = acc0;
    }
    sync_threads();
    let mut mx = f32::neg_infinity();
    let mut w = 0usize;
    while w < nwarps {
        mx = mx.max(red0[w]);
        w += 1;
    }
    let red1 = shared_array::<f32, 32>();
    let mut acc1 = 0.0f32;
    if j0 < cols { acc1 += (e0 - mx).exp(); }
    if j1 < cols { acc1 += (e1 - mx).exp(); }
    if j2 < cols { acc1 += (e2 - mx).exp(); }
    if j3 < cols { acc1 += (e3 - mx).exp(); }
    if j4 < cols { acc1 += (e4 - mx).exp(); }
    if j5 < cols { acc1 += (e5 - mx).exp(); }
    if j6 < cols { acc1 += (e6 - mx).exp(); }
    if j7 < cols { acc1 += (e7 - mx).exp(); }

    let mut m = 16u32;
    while m > 0 {
        acc1 = acc1 + shfl_xor_sync(u32::MAX, acc1, m);
        m /= 2;
    }
    if lane == 0 {
        red1[warp] = acc1;
    }
    sync_threads();
    let mut s = 0.0f32;
    let mut w = 0usize;
    while w < nwarps {
        s = s + red1[w];
        w += 1;
    }
    if j0 < cols { out[(row * cols + j0) as usize] = (e0 - mx).exp() / s; }
    if j1 < cols { out[(row * cols + j1) as usize] = (e1 - mx).exp() / s; }
    if j2 < cols { out[(row * cols + j2) as usize] = (e2 - mx).exp() / s; }
    if j3 < cols { out[(row * cols + j3) as usize] = (e3 - mx).exp() / s; }
    if j4 < cols { out[(row * cols + j4) as usize] = (e4 - mx).exp() / s; }
    if j5 < cols { out[(row * cols + j5) as usize] = (e5 - mx).exp() / s; }
    if j6 < cols { out[(row * cols + j6) as usize] = (e6 - mx).exp() / s; }
    if j7 < cols { out[(row * cols + j7) as usize] = (e7 - mx).exp() / s; }
}

#[rawkernel(unchecked)]
pub fn cached16(x: &[f32], x_rs: i64, x_cs: i64, out: &mut [f32], cols: i64) {
    let row = block_idx().x as i64;
    let tid = thread_idx().x as i64;
    let nt = block_dim().x as i64;
    let lane = lane_id();
    let warp = (tid / 32) as usize;
    let nwarps = ((nt + 31) / 32) as usize;
    let j0 = tid + 0 * nt;
    let e0 = if j0 < cols { x[(row * x_rs + j0 * x_cs) as usize] } else { 0.0 };
    let j1 = tid + 1 * nt;
    let e1 = if j1 < cols { x[(row * x_rs + j1 * x_cs) as usize] } else { 0.0 };
    let j2 = tid + 2 * nt;
    let e2 = if j2 < cols { x[(row * x_rs + j2 * x_cs) as usize] } else { 0.0 };
    let j3 = tid + 3 * nt;
    let e3 = if j3 < cols { x[(row * x_rs + j3 * x_cs) as usize] } else { 0.0 };
    let j4 = tid + 4 * nt;
    let e4 = if j4 < cols { x[(row * x_rs + j4 * x_cs) as usize] } else { 0.0 };
    let j5 = tid + 5 * nt;
    let e5 = if j5 < cols { x[(row * x_rs + j5 * x_cs) as usize] } else { 0.0 };
    let j6 = tid + 6 * nt;
    let e6 = if j6 < cols { x[(row * x_rs + j6 * x_cs) as usize] } else { 0.0 };
    let j7 = tid + 7 * nt;
    let e7 = if j7 < cols { x[(row * x_rs + j7 * x_cs) as usize] } else { 0.0 };
    let j8 = tid + 8 * nt;
    let e8 = if j8 < cols { x[(row * x_rs + j8 * x_cs) as usize] } else { 0.0 };
    let j9 = tid + 9 * nt;
    let e9 = if j9 < cols { x[(row * x_rs + j9 * x_cs) as usize] } else { 0.0 };
    let j10 = tid + 10 * nt;
    let e10 = if j10 < cols { x[(row * x_rs + j10 * x_cs) as usize] } else { 0.0 };
    let j11 = tid + 11 * nt;
    let e11 = if j11 < cols { x[(row * x_rs + j11 * x_cs) as usize] } else { 0.0 };
    let j12 = tid + 12 * nt;
    let e12 = if j12 < cols { x[(row * x_rs + j12 * x_cs) as usize] } else { 0.0 };
    let j13 = tid + 13 * nt;
    let e13 = if j13 < cols { x[(row * x_rs + j13 * x_cs) as usize] } else { 0.0 };
    let j14 = tid + 14 * nt;
    let e14 = if j14 < cols { x[(row * x_rs + j14 * x_cs) as usize] } else { 0.0 };
    let j15 = tid + 15 * nt;
    let e15 = if j15 < cols { x[(row * x_rs + j15 * x_cs) as usize] } else { 0.0 };
    let red0 = shared_array::<f32, 32>();
    let mut acc0 = f32::neg_infinity();
    if j0 < cols { acc0 = acc0.max(e0); }
    if j1 < cols { acc0 = acc0.max(e1); }
    if j2 < cols { acc0 = acc0.max(e2); }
    if j3 < cols { acc0 = acc0.max(e3); }
    if j4 < cols { acc0 = acc0.max(e4); }
    if j5 < cols { acc0 = acc0.max(e5); }
    if j6 < cols { acc0 = acc0.max(e6); }
    if j7 < cols { acc0 = acc0.max(e7); }
    if j8 < cols { acc0 = acc0.max(e8); }
    if j9 < cols { acc0 = acc0.max(e9); }
    if j10 < cols { acc0 = acc0.max(e10); }
    if j11 < cols { acc0 = acc0.max(e11); }
    if j12 < cols { acc0 = acc0.max(e12); }
    if j13 < cols { acc0 = acc0.max(e13); }
    if j14 < cols { acc0 = acc0.max(e14); }
    if j15 < cols { acc0 = acc0.max(e15); }

    let mut m = 16u32;
    while m > 0 {
        acc0 = acc0.max(shfl_xor_sync(u32::MAX, acc0, m));
        m /= 2;
    }
    if lane == 0 {
        red0[warp] = acc0;
    }
    sync_threads();
    let mut mx = f32::neg_infinity();
    let mut w = 0usize;
    while w < nwarps {
        mx = mx.max(red0[w]);
        w += 1;
    }
    let red1 = shared_array::<f32, 32>();
    let mut acc1 = 0.0f32;
    if j0 < cols { acc1 += (e0 - mx).exp(); }
    if j1 < cols { acc1 += (e1 - mx).exp(); }
    if j2 < cols { acc1 += (e2 - mx).exp(); }
    if j3 < cols { acc1 += (e3 - mx).exp(); }
    if j4 < cols { acc1 += (e4 - mx).exp(); }
    if j5 < cols { acc1 += (e5 - mx).exp(); }
    if j6 < cols { acc1 += (e6 - mx).exp(); }
    if j7 < cols { acc1 += (e7 - mx).exp(); }
    if j8 < cols { acc1 += (e8 - mx).exp(); }
    if j9 < cols { acc1 += (e9 - mx).exp(); }
    if j10 < cols { acc1 += (e10 - mx).exp(); }
    if j11 < cols { acc1 += (e11 - mx).exp(); }
    if j12 < cols { acc1 += (e12 - mx).exp(); }
    if j13 < cols { acc1 += (e13 - mx).exp(); }
    if j14 < cols { acc1 += (e14 - mx).exp(); }
    if j15 < cols { acc1 += (e15 - mx).exp(); }

    let mut m = 16u32;
    while m > 0 {
        acc1 = acc1 + shfl_xor_sync(u32::MAX, acc1, m);
        m /= 2;
    }
    if lane == 0 {
        red1[warp] = acc1;
    }
    sync_threads();
    let mut s = 0.0f32;
    let mut w = 0usize;
    while w < nwarps {
        s = s + red1[w];
        w += 1;
    }
    if j0 < cols { out[(row * cols + j0) as usize] = (e0 - mx).exp() / s; }
    if j1 < cols { out[(row * cols + j1) as usize] = (e1 - mx).exp() / s; }
    if j2 < cols { out[(row * cols + j2) as usize] = (e2 - mx).exp() / s; }
    if j3 < cols { out[(row * cols + j3) as usize] = (e3 - mx).exp() / s; }
    if j4 < cols { out[(row * cols + j4) as usize] = (e4 - mx).exp() / s; }
    if j5 < cols { out[(row * cols + j5) as usize] = (e5 - mx).exp() / s; }
    if j6 < cols { out[(row * cols + j6) as usize] = (e6 - mx).exp() / s; }
    if j7 < cols { out[(row * cols + j7) as usize] = (e7 - mx).exp() / s; }
    if j8 < cols { out[(row * cols + j8) as usize] = (e8 - mx).exp() / s; }
    if j9 < cols { out[(row * cols + j9) as usize] = (e9 - mx).exp() / s; }
    if j10 < cols { out[(row * cols + j10) as usize] = (e10 - mx).exp() / s; }
    if j11 < cols { out[(row * cols + j11) as usize] = (e11 - mx).exp() / s; }
    if j12 < cols { out[(row * cols + j12) as usize] = (e12 - mx).exp() / s; }
    if j13 < cols { out[(row * cols + j13) as usize] = (e13 - mx).exp() / s; }
    if j14 < cols { out[(row * cols + j14) as usize] = (e14 - mx).exp() / s; }
    if j15 < cols { out[(row * cols + j15) as usize] = (e15 - mx).exp() / s; }
}

/// As `unroll4`, 8 elements per step.
#[rawkernel(unchecked)]
pub fn unroll8(x: &[f32], x_rs: i64, x_cs: i64, out: &mut [f32], cols: i64) {
    let row = block_idx().x as i64;
    let tid = thread_idx().x as i64;
    let nt = block_dim().x as i64;
    let lane = lane_id();
    let warp = (tid / 32) as usize;
    let nwarps = ((nt + 31) / 32) as usize;
    let red0 = shared_array::<f32, 32>();
    let mut acc0 = f32::neg_infinity();
    let mut j = tid;
    while j + 7 * nt < cols {
        let e0 = x[(row * x_rs + (j + 0 * nt) * x_cs) as usize];
        let e1 = x[(row * x_rs + (j + 1 * nt) * x_cs) as usize];
        let e2 = x[(row * x_rs + (j + 2 * nt) * x_cs) as usize];
        let e3 = x[(row * x_rs + (j + 3 * nt) * x_cs) as usize];
        let e4 = x[(row * x_rs + (j + 4 * nt) * x_cs) as usize];
        let e5 = x[(row * x_rs + (j + 5 * nt) * x_cs) as usize];
        let e6 = x[(row * x_rs + (j + 6 * nt) * x_cs) as usize];
        let e7 = x[(row * x_rs + (j + 7 * nt) * x_cs) as usize];
        acc0 = acc0.max(e0);
        acc0 = acc0.max(e1);
        acc0 = acc0.max(e2);
        acc0 = acc0.max(e3);
        acc0 = acc0.max(e4);
        acc0 = acc0.max(e5);
        acc0 = acc0.max(e6);
        acc0 = acc0.max(e7);
        j += 8 * nt;
    }
    while j < cols {
        let e0 = x[(row * x_rs + j * x_cs) as usize];
        acc0 = acc0.max(e0);
        j += nt;
    }

    let mut m = 16u32;
    while m > 0 {
        acc0 = acc0.max(shfl_xor_sync(u32::MAX, acc0, m));
        m /= 2;
    }
    if lane == 0 {
        red0[warp] = acc0;
    }
    sync_threads();
    let mut mx = f32::neg_infinity();
    let mut w = 0usize;
    while w < nwarps {
        mx = mx.max(red0[w]);
        w += 1;
    }
    let red1 = shared_array::<f32, 32>();
    let mut acc1 = 0.0f32;
    let mut j = tid;
    while j + 7 * nt < cols {
        let e0 = x[(row * x_rs + (j + 0 * nt) * x_cs) as usize];
        let e1 = x[(row * x_rs + (j + 1 * nt) * x_cs) as usize];
        let e2 = x[(row * x_rs + (j + 2 * nt) * x_cs) as usize];
        let e3 = x[(row * x_rs + (j + 3 * nt) * x_cs) as usize];
        let e4 = x[(row * x_rs + (j + 4 * nt) * x_cs) as usize];
        let e5 = x[(row * x_rs + (j + 5 * nt) * x_cs) as usize];
        let e6 = x[(row * x_rs + (j + 6 * nt) * x_cs) as usize];
        let e7 = x[(row * x_rs + (j + 7 * nt) * x_cs) as usize];
        acc1 += (e0 - mx).exp();
        acc1 += (e1 - mx).exp();
        acc1 += (e2 - mx).exp();
        acc1 += (e3 - mx).exp();
        acc1 += (e4 - mx).exp();
        acc1 += (e5 - mx).exp();
        acc1 += (e6 - mx).exp();
        acc1 += (e7 - mx).exp();
        j += 8 * nt;
    }
    while j < cols {
        let e0 = x[(row * x_rs + j * x_cs) as usize];
        acc1 += (e0 - mx).exp();
        j += nt;
    }

    let mut m = 16u32;
    while m > 0 {
        acc1 = acc1 + shfl_xor_sync(u32::MAX, acc1, m);
        m /= 2;
    }
    if lane == 0 {
        red1[warp] = acc1;
    }
    sync_threads();
    let mut s = 0.0f32;
    let mut w = 0usize;
    while w < nwarps {
        s = s + red1[w];
        w += 1;
    }
    let mut j = tid;
    while j + 7 * nt < cols {
        let e0 = x[(row * x_rs + (j + 0 * nt) * x_cs) as usize];
        let e1 = x[(row * x_rs + (j + 1 * nt) * x_cs) as usize];
        let e2 = x[(row * x_rs + (j + 2 * nt) * x_cs) as usize];
        let e3 = x[(row * x_rs + (j + 3 * nt) * x_cs) as usize];
        let e4 = x[(row * x_rs + (j + 4 * nt) * x_cs) as usize];
        let e5 = x[(row * x_rs + (j + 5 * nt) * x_cs) as usize];
        let e6 = x[(row * x_rs + (j + 6 * nt) * x_cs) as usize];
        let e7 = x[(row * x_rs + (j + 7 * nt) * x_cs) as usize];
        out[(row * cols + j + 0 * nt) as usize] = (e0 - mx).exp() / s;
        out[(row * cols + j + 1 * nt) as usize] = (e1 - mx).exp() / s;
        out[(row * cols + j + 2 * nt) as usize] = (e2 - mx).exp() / s;
        out[(row * cols + j + 3 * nt) as usize] = (e3 - mx).exp() / s;
        out[(row * cols + j + 4 * nt) as usize] = (e4 - mx).exp() / s;
        out[(row * cols + j + 5 * nt) as usize] = (e5 - mx).exp() / s;
        out[(row * cols + j + 6 * nt) as usize] = (e6 - mx).exp() / s;
        out[(row * cols + j + 7 * nt) as usize] = (e7 - mx).exp() / s;
        j += 8 * nt;
    }
    while j < cols {
        let e0 = x[(row * x_rs + j * x_cs) as usize];
        out[(row * cols + j) as usize] = (e0 - mx).exp() / s;
        j += nt;
    }
}

/// As `unroll8`, the row kept in dynamic shared memory after the first pass (cols * 4 bytes).
#[rawkernel(unchecked)]
pub fn smem8(x: &[f32], x_rs: i64, x_cs: i64, out: &mut [f32], cols: i64) {
    let row = block_idx().x as i64;
    let tid = thread_idx().x as i64;
    let nt = block_dim().x as i64;
    let lane = lane_id();
    let warp = (tid / 32) as usize;
    let nwarps = ((nt + 31) / 32) as usize;
    let buf = dynamic_shared::<f32>();
    let red0 = shared_array::<f32, 32>();
    let mut acc0 = f32::neg_infinity();
    let mut j = tid;
    while j + 7 * nt < cols {
        let c0 = j + 0 * nt;
        let e0 = x[(row * x_rs + c0 * x_cs) as usize];
        let c1 = j + 1 * nt;
        let e1 = x[(row * x_rs + c1 * x_cs) as usize];
        let c2 = j + 2 * nt;
        let e2 = x[(row * x_rs + c2 * x_cs) as usize];
        let c3 = j + 3 * nt;
        let e3 = x[(row * x_rs + c3 * x_cs) as usize];
        let c4 = j + 4 * nt;
        let e4 = x[(row * x_rs + c4 * x_cs) as usize];
        let c5 = j + 5 * nt;
        let e5 = x[(row * x_rs + c5 * x_cs) as usize];
        let c6 = j + 6 * nt;
        let e6 = x[(row * x_rs + c6 * x_cs) as usize];
        let c7 = j + 7 * nt;
        let e7 = x[(row * x_rs + c7 * x_cs) as usize];
        buf[c0 as usize] = e0;
        acc0 = acc0.max(e0);
        buf[c1 as usize] = e1;
        acc0 = acc0.max(e1);
        buf[c2 as usize] = e2;
        acc0 = acc0.max(e2);
        buf[c3 as usize] = e3;
        acc0 = acc0.max(e3);
        buf[c4 as usize] = e4;
        acc0 = acc0.max(e4);
        buf[c5 as usize] = e5;
        acc0 = acc0.max(e5);
        buf[c6 as usize] = e6;
        acc0 = acc0.max(e6);
        buf[c7 as usize] = e7;
        acc0 = acc0.max(e7);
        j += 8 * nt;
    }
    while j < cols {
        let c0 = j;
        let e0 = x[(row * x_rs + c0 * x_cs) as usize];
        buf[c0 as usize] = e0;
        acc0 = acc0.max(e0);
        j += nt;
    }
    let mut m = 16u32;
    while m > 0 {
        acc0 = acc0.max(shfl_xor_sync(u32::MAX, acc0, m));
        m /= 2;
    }
    if lane == 0 {
        red0[warp] = acc0;
    }
    sync_threads();
    let mut mx = f32::neg_infinity();
    let mut w = 0usize;
    while w < nwarps {
        mx = mx.max(red0[w]);
        w += 1;
    }
    let red1 = shared_array::<f32, 32>();
    let mut acc1 = 0.0f32;
    let mut j = tid;
    while j + 7 * nt < cols {
        let c0 = j + 0 * nt;
        let e0 = buf[c0 as usize];
        let c1 = j + 1 * nt;
        let e1 = buf[c1 as usize];
        let c2 = j + 2 * nt;
        let e2 = buf[c2 as usize];
        let c3 = j + 3 * nt;
        let e3 = buf[c3 as usize];
        let c4 = j + 4 * nt;
        let e4 = buf[c4 as usize];
        let c5 = j + 5 * nt;
        let e5 = buf[c5 as usize];
        let c6 = j + 6 * nt;
        let e6 = buf[c6 as usize];
        let c7 = j + 7 * nt;
        let e7 = buf[c7 as usize];
        acc1 += (e0 - mx).exp();
        acc1 += (e1 - mx).exp();
        acc1 += (e2 - mx).exp();
        acc1 += (e3 - mx).exp();
        acc1 += (e4 - mx).exp();
        acc1 += (e5 - mx).exp();
        acc1 += (e6 - mx).exp();
        acc1 += (e7 - mx).exp();
        j += 8 * nt;
    }
    while j < cols {
        let c0 = j;
        let e0 = buf[c0 as usize];
        acc1 += (e0 - mx).exp();
        j += nt;
    }
    let mut m = 16u32;
    while m > 0 {
        acc1 = acc1 + shfl_xor_sync(u32::MAX, acc1, m);
        m /= 2;
    }
    if lane == 0 {
        red1[warp] = acc1;
    }
    sync_threads();
    let mut s = 0.0f32;
    let mut w = 0usize;
    while w < nwarps {
        s = s + red1[w];
        w += 1;
    }
    let mut j = tid;
    while j + 7 * nt < cols {
        let c0 = j + 0 * nt;
        let e0 = buf[c0 as usize];
        let c1 = j + 1 * nt;
        let e1 = buf[c1 as usize];
        let c2 = j + 2 * nt;
        let e2 = buf[c2 as usize];
        let c3 = j + 3 * nt;
        let e3 = buf[c3 as usize];
        let c4 = j + 4 * nt;
        let e4 = buf[c4 as usize];
        let c5 = j + 5 * nt;
        let e5 = buf[c5 as usize];
        let c6 = j + 6 * nt;
        let e6 = buf[c6 as usize];
        let c7 = j + 7 * nt;
        let e7 = buf[c7 as usize];
        out[(row * cols + c0) as usize] = (e0 - mx).exp() / s;
        out[(row * cols + c1) as usize] = (e1 - mx).exp() / s;
        out[(row * cols + c2) as usize] = (e2 - mx).exp() / s;
        out[(row * cols + c3) as usize] = (e3 - mx).exp() / s;
        out[(row * cols + c4) as usize] = (e4 - mx).exp() / s;
        out[(row * cols + c5) as usize] = (e5 - mx).exp() / s;
        out[(row * cols + c6) as usize] = (e6 - mx).exp() / s;
        out[(row * cols + c7) as usize] = (e7 - mx).exp() / s;
        j += 8 * nt;
    }
    while j < cols {
        let c0 = j;
        let e0 = buf[c0 as usize];
        out[(row * cols + c0) as usize] = (e0 - mx).exp() / s;
        j += nt;
    }
}
