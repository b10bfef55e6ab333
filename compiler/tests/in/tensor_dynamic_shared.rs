//! Snapshot: `cp_async` and `ldmatrix_*` on dynamic shared memory (`dynamic_shared::<T>()`, whose
//! length is the launch's: `cuprum::cp_async_n` and `cuprum::ldmatrix_n` take it at run time),
//! checked and unchecked; also the kernels of testsuite/tests/gpu_tensor.rs's dynamic-shared
//! tests (built by testsuite/build.rs). One warp, row-major tiles.
#![allow(dead_code)]

use cuprum::prelude::*;

/// D (16 x 8) = A A[.., ..8] for a 16 x 16 `bf16` tile A: each lane copies 8 elements of A into
/// dynamic shared memory (which must hold 256), then A's fragment comes from `ldmatrix_x4` and
/// B's (A's first 8 columns, k-major) from `ldmatrix_x2_trans`.
#[rawkernel]
pub fn dynamic_tile(a: &[bf16], d: &mut [f32]) {
    let s = dynamic_shared::<bf16>();
    let l = lane_id();
    cp_async(s, 8 * l, a, 8 * l);
    cp_async_commit();
    cp_async_wait::<0>();
    sync_warp(0xffff_ffff);
    let fa = ldmatrix_x4(s, (l % 16) * 16 + (l / 16) * 8);
    let fb = ldmatrix_x2_trans(s, (l % 16) * 16);
    let fd = mma_m16n8k16(fa, fb, [0.0; 4]);
    store_tile(d, l as usize / 4, 2 * (l as usize % 4), fd);
}

/// `dynamic_tile` with the unchecked forms: the caller's promise, no check in the output.
#[rawkernel]
pub fn dynamic_tile_unchecked(a: &[bf16], d: &mut [f32]) {
    let s = dynamic_shared::<bf16>();
    let l = lane_id();
    if s.len() < 256 || a.len() < 256 {
        return;
    }
    // SAFETY: `s` holds 256 elements and `a` too (checked above); 8 l is a multiple of 8.
    unsafe { cp_async_unchecked(s, 8 * l, a, 8 * l) };
    cp_async_commit();
    cp_async_wait::<0>();
    sync_warp(0xffff_ffff);
    // SAFETY: rows of 8 elements inside the 256 copied, at multiples of 8.
    let fa = unsafe { ldmatrix_x4_unchecked(s, (l % 16) * 16 + (l / 16) * 8) };
    // SAFETY: as for A.
    let fb = unsafe { ldmatrix_x2_trans_unchecked(s, (l % 16) * 16) };
    let fd = mma_m16n8k16(fa, fb, [0.0; 4]);
    store_tile(d, l as usize / 4, 2 * (l as usize % 4), fd);
}

/// Lane (g, t)'s part of a 16 x 8 C/D tile.
#[device]
fn store_tile(d: &mut [f32], g: usize, t: usize, fd: [f32; 4]) {
    d[g * 8 + t] = fd[0];
    d[g * 8 + t + 1] = fd[1];
    d[(g + 8) * 8 + t] = fd[2];
    d[(g + 8) * 8 + t + 1] = fd[3];
}
