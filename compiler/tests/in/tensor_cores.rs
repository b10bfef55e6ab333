//! Snapshot: tensor cores (`mma_*`), `ldmatrix_*` and `cp_async` with its groups; also the kernels
//! of testsuite/tests/gpu_tensor.rs (built by testsuite/build.rs), one warp per tile, row-major.
#![allow(dead_code)]

use cuprum::prelude::*;

/// D = A * B + C with `bf16` inputs, K = 16.
#[rawkernel]
pub fn mma_bf16(a: &[bf16], b: &[bf16], c: &[f32], d: &mut [f32]) {
    let l = lane_id() as usize;
    let (g, t) = (l / 4, 2 * (l % 4));
    let fa = [
        a[g * 16 + t],
        a[g * 16 + t + 1],
        a[(g + 8) * 16 + t],
        a[(g + 8) * 16 + t + 1],
        a[g * 16 + t + 8],
        a[g * 16 + t + 9],
        a[(g + 8) * 16 + t + 8],
        a[(g + 8) * 16 + t + 9],
    ];
    let fb = [b[t * 8 + g], b[(t + 1) * 8 + g], b[(t + 8) * 8 + g], b[(t + 9) * 8 + g]];
    let fc = [c[g * 8 + t], c[g * 8 + t + 1], c[(g + 8) * 8 + t], c[(g + 8) * 8 + t + 1]];
    let fd = mma_m16n8k16(fa, fb, fc);
    store_tile(d, g, t, fd);
}

/// D = A * B + C with `f16` inputs, K = 16.
#[rawkernel]
pub fn mma_f16(a: &[f16], b: &[f16], c: &[f32], d: &mut [f32]) {
    let l = lane_id() as usize;
    let (g, t) = (l / 4, 2 * (l % 4));
    let fa = [
        a[g * 16 + t],
        a[g * 16 + t + 1],
        a[(g + 8) * 16 + t],
        a[(g + 8) * 16 + t + 1],
        a[g * 16 + t + 8],
        a[g * 16 + t + 9],
        a[(g + 8) * 16 + t + 8],
        a[(g + 8) * 16 + t + 9],
    ];
    let fb = [b[t * 8 + g], b[(t + 1) * 8 + g], b[(t + 8) * 8 + g], b[(t + 9) * 8 + g]];
    let fc = [c[g * 8 + t], c[g * 8 + t + 1], c[(g + 8) * 8 + t], c[(g + 8) * 8 + t + 1]];
    let fd = mma_m16n8k16(fa, fb, fc);
    store_tile(d, g, t, fd);
}

/// D = A * B + C with inputs rounded to TF32, K = 8.
#[rawkernel]
pub fn mma_tf32(a: &[f32], b: &[f32], c: &[f32], d: &mut [f32]) {
    let l = lane_id() as usize;
    let (g, t) = (l / 4, l % 4);
    let fa = [a[g * 8 + t], a[(g + 8) * 8 + t], a[g * 8 + t + 4], a[(g + 8) * 8 + t + 4]];
    let fb = [b[t * 8 + g], b[(t + 4) * 8 + g]];
    let (g2, t2) = (g, 2 * t);
    let fc = [c[g2 * 8 + t2], c[g2 * 8 + t2 + 1], c[(g2 + 8) * 8 + t2], c[(g2 + 8) * 8 + t2 + 1]];
    let fd = mma_m16n8k8_tf32(fa, fb, fc);
    store_tile(d, g2, t2, fd);
}

/// D = A * B + C with `i8` inputs and `i32` sums, K = 32.
#[rawkernel]
pub fn mma_i8(a: &[i8], b: &[i8], c: &[i32], d: &mut [i32]) {
    let l = lane_id() as usize;
    let (g, t) = (l / 4, 4 * (l % 4));
    let mut fa = [0i8; 16];
    let mut fb = [0i8; 8];
    for j in 0..4 {
        fa[j] = a[g * 32 + t + j];
        fa[4 + j] = a[(g + 8) * 32 + t + j];
        fa[8 + j] = a[g * 32 + t + 16 + j];
        fa[12 + j] = a[(g + 8) * 32 + t + 16 + j];
        fb[j] = b[(t + j) * 8 + g];
        fb[4 + j] = b[(t + 16 + j) * 8 + g];
    }
    let (g2, t2) = (g, 2 * (l % 4));
    let fc = [c[g2 * 8 + t2], c[g2 * 8 + t2 + 1], c[(g2 + 8) * 8 + t2], c[(g2 + 8) * 8 + t2 + 1]];
    let fd = mma_m16n8k32_i8(fa, fb, fc);
    d[g2 * 8 + t2] = fd[0];
    d[g2 * 8 + t2 + 1] = fd[1];
    d[(g2 + 8) * 8 + t2] = fd[2];
    d[(g2 + 8) * 8 + t2 + 1] = fd[3];
}

/// Writes a lane's part of a 16 x 8 f32 tile.
#[device]
fn store_tile(d: &mut [f32], g: usize, t: usize, v: [f32; 4]) {
    d[g * 8 + t] = v[0];
    d[g * 8 + t + 1] = v[1];
    d[(g + 8) * 8 + t] = v[2];
    d[(g + 8) * 8 + t + 1] = v[3];
}

/// D = A * B (bf16, K = 16) with A and B staged in shared memory by `cp_async` (one 16-byte
/// chunk per lane), then loaded by `ldmatrix_x4` (A) and `ldmatrix_x2_trans` (B).
#[rawkernel]
pub fn mma_shared_bf16(a: &[bf16], b: &[bf16], d: &mut [f32]) {
    let sa = shared_array::<bf16, 256>();
    let sb = shared_array::<bf16, 128>();
    let l = lane_id();
    cp_async(sa, l * 8, a, l * 8);
    if l < 16 {
        cp_async(sb, l * 8, b, l * 8);
    }
    cp_async_commit();
    cp_async_wait::<0>();
    sync_threads();
    // Matrices 0..4 of A: rows 0-7 / 8-15 of columns 0-7, then of columns 8-15.
    let fa = ldmatrix_x4(sa, (l % 16) * 16 + 8 * (l / 16));
    // Matrices 0..2 of B: rows 0-7 and 8-15, transposed into the column-major fragment.
    let fb = ldmatrix_x2_trans(sb, (l % 16) * 8);
    let fd = mma_m16n8k16(fa, fb, [0.0; 4]);
    let (g, t) = ((l / 4) as usize, (2 * (l % 4)) as usize);
    store_tile(d, g, t, fd);
}

/// `ldmatrix_x1` with row index `offset + 8 * lane` (lanes 0-7): a misaligned `offset` is an
/// error; each lane writes its two elements.
#[rawkernel]
pub fn ldmatrix_rows(x: &[u16], offset: u32, out: &mut [u16]) {
    let s = shared_array::<u16, 72>();
    let l = lane_id();
    for k in 0..3u32 {
        let i = l + 32 * k;
        if i < 72 {
            s[i as usize] = x[i as usize];
        }
    }
    sync_warp(0xffff_ffff);
    let r = ldmatrix_x1(s, offset + 8 * (l % 8));
    out[(2 * l) as usize] = r[0];
    out[(2 * l + 1) as usize] = r[1];
}

/// `cp_async` of `x[from..from + 4]` to a shared array, copied out by lane 0: a `from` that is not
/// a multiple of 4 (16 bytes) is an error.
#[rawkernel]
pub fn cp_async_from(x: &[f32], from: u32, out: &mut [f32]) {
    let s = shared_array::<f32, 4>();
    if thread_idx().x == 0 {
        cp_async(s, 0u32, x, from);
        cp_async_commit();
        cp_async_wait::<0>();
        for k in 0..4usize {
            out[k] = s[k];
        }
    }
}

/// `cp_async_unchecked` of `x[from..from + 4]`: the kernel checks `x`'s start for 16-byte
/// alignment on entry (a view that starts one element in is an error).
#[rawkernel]
pub fn cp_async_unchecked_from(x: &[f32], from: u32, out: &mut [f32]) {
    let s = shared_array::<f32, 4>();
    if thread_idx().x == 0 && from % 4 == 0 && (from as usize) + 4 <= x.len() {
        // SAFETY: `from` is a multiple of 4 elements (16 bytes) with 4 elements of `x` after it,
        // and element 0 of `s` starts 4 in range.
        unsafe { cp_async_unchecked(s, 0u32, x, from) };
        cp_async_commit();
        cp_async_wait::<0>();
        for k in 0..4usize {
            out[k] = s[k];
        }
    }
}
