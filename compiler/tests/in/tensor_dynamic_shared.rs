//! Snapshot: `cp_async` and `ldmatrix_*` on dynamic shared memory (`dynamic_shared::<T>()`, whose
//! length is the launch's: `cuprum::cp_async_n` and `cuprum::ldmatrix_n` take it at run time),
//! checked and unchecked.
#![allow(dead_code)]

use cuprum::prelude::*;

/// One warp copies a 16 x 16 `bf16` tile into dynamic shared memory and loads it back as
/// fragments (A as is, B transposed), then multiplies them.
#[rawkernel]
pub fn dynamic_tile(a: &[bf16], d: &mut [f32]) {
    let s = dynamic_shared::<bf16>();
    let l = lane_id();
    cp_async(s, 8 * l, a, 8 * l);
    cp_async_commit();
    cp_async_wait::<0>();
    sync_warp(0xffff_ffff);
    let row = (l % 16) * 16 + (l / 16) * 8;
    let fa = ldmatrix_x4(s, row);
    let x = ldmatrix_x2_trans(s, (l % 16) * 16);
    let fd = mma_m16n8k16(fa, x, [0.0; 4]);
    d[l as usize] = fd[0];
}

/// The unchecked forms: the caller's promise, no check in the output.
#[rawkernel]
pub fn dynamic_tile_unchecked(a: &[bf16], d: &mut [f32]) {
    let s = dynamic_shared::<bf16>();
    let l = lane_id();
    // SAFETY: the launch gives at least 512 bytes of dynamic shared memory and `a` holds 256
    // elements.
    unsafe { cp_async_unchecked(s, 8 * l, a, 8 * l) };
    cp_async_commit();
    cp_async_wait::<0>();
    sync_warp(0xffff_ffff);
    // SAFETY: rows of 8 elements inside the 256 copied, multiples of 8.
    let fa = unsafe { ldmatrix_x4_unchecked(s, (l % 16) * 16 + (l / 16) * 8) };
    d[l as usize] = fa[0].to_f32();
}
