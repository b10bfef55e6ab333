//! The Hopper intrinsics of `every_intrinsic.rs`'s coverage (`HopperOp`: mbarriers, TMA,
//! warpgroup MMA and registers), built for sm_90a alone (testsuite/build.rs), each kernel writing
//! values that `tests/every_intrinsic.rs` checks against a host reference.

#![allow(dead_code)]
// Kernels index in loops: the kernel language has no slice copies or iterators.
#![allow(clippy::manual_memcpy, clippy::needless_range_loop)]

use cuprum::prelude::*;

/// Barriers and a TMA copy: thread 0 copies the 16 x 16 box of `map` (no swizzle) at (x, y) into
/// shared memory, completing on barrier 0 (`mbarrier_arrive_expect_tx`); every thread waits for
/// it, arrives on barrier 1 (which expects the whole block) and waits for that, then the block
/// copies the box to `out` (row-major, 256 elements).
#[rawkernel]
pub fn barriers_and_tma(map: &TensorMap<f32>, x: i32, y: i32, out: &mut [f32]) {
    let s = shared_array::<f32, 256>();
    let bars = shared_array::<u64, 2>();
    let tid = thread_idx().x;
    if tid == 0 {
        mbarrier_init(bars, 0, 1);
        mbarrier_init(bars, 1, block_dim().x);
    }
    sync_threads();
    if tid == 0 {
        mbarrier_arrive_expect_tx(bars, 0, 256 * 4);
        tma_load_2d(s, 0, map, x, y, bars, 0);
    }
    mbarrier_wait(bars, 0, 0);
    mbarrier_arrive(bars, 1);
    mbarrier_wait(bars, 1, 0);
    let mut i = tid;
    while i < 256 {
        out[i as usize] = s[i as usize];
        i += block_dim().x;
    }
}

/// Every `wgmma_*` shape, checked and unchecked, one warpgroup (128 threads): A (64 x 16 of one
/// swizzled tile, `a`) and B (`b`, four tiles) copied to shared memory; each accumulator starts at
/// `init` and takes two k-steps (the checked form, then the unchecked one) of the same tiles;
/// thread t writes its 32 + 64 + 128 accumulators to `out[224 t ..]`. The registers are raised
/// at the start and lowered at the end (`warpgroup_reg_*`).
#[rawkernel(max_threads = 128)]
pub fn wgmma_all(a: &[bf16], b: &[bf16], init: f32, out: &mut [f32]) {
    warpgroup_reg_alloc::<232>();
    let sa = shared_array::<bf16, 4096>();
    let sb = shared_array::<bf16, 16384>();
    let tid = thread_idx().x;
    for i in 0..32u32 {
        let k = (i * 128 + tid) as usize;
        sa[k] = a[k];
        for j in 0..4usize {
            sb[k + 4096 * j] = b[k + 4096 * j];
        }
    }
    sync_threads();
    let mut a64 = [init; 32];
    let mut a128 = [init; 64];
    let mut a256 = [init; 128];
    wgmma_fence();
    wgmma_m64n64k16(&mut a64, sa, 0u32, sb, 0u32);
    wgmma_m64n128k16(&mut a128, sa, 0u32, sb, 0u32);
    wgmma_m64n256k16(&mut a256, sa, 0u32, sb, 0u32);
    // SAFETY: the same operands the checked forms above accept (in range, 1024-byte aligned).
    unsafe {
        wgmma_m64n64k16_unchecked(&mut a64, sa, 0u32, sb, 0u32);
        wgmma_m64n128k16_unchecked(&mut a128, sa, 0u32, sb, 0u32);
        wgmma_m64n256k16_unchecked(&mut a256, sa, 0u32, sb, 0u32);
    }
    wgmma_commit();
    wgmma_wait::<0>(&mut a64);
    wgmma_wait::<0>(&mut a128);
    wgmma_wait::<0>(&mut a256);
    let at = 224 * tid as usize;
    for i in 0..32usize {
        out[at + i] = a64[i];
    }
    for i in 0..64usize {
        out[at + 32 + i] = a128[i];
    }
    for i in 0..128usize {
        out[at + 96 + i] = a256[i];
    }
    warpgroup_reg_dealloc::<40>();
}

/// The forms FlashAttention-3 needs, one warpgroup multiplying (threads 0..128) and a second one
/// (threads 128..256) signalling it through named barriers. `a` (one swizzled tile, 64 x 64) and
/// `b` (four tiles) are copied to shared memory; `frag` holds each thread's eight A elements for
/// the register forms. Thread t < 128 writes to `out[448 t ..]`: the accumulators (from `init`) of
/// `wgmma_m64n{64,128,256}k16_bt` (k-step at A's column 16 and B^T's column 32, then the unchecked
/// form at A's column 32 and B^T's column 48), then of `wgmma_m64n{64,128,256}k16_rs` (B's rows
/// 16 .. 32, then the unchecked form with rows 32 .. 48); and `out[448 * 128 + t]` the value
/// thread 128 + t stored before arriving at named barrier 1, which thread t read after waiting on
/// it (then all 128 wait on barrier 2 among themselves).
#[rawkernel(max_threads = 256)]
pub fn wgmma_bt_rs_named(a: &[bf16], b: &[bf16], frag: &[bf16], init: f32, out: &mut [f32]) {
    let sa = shared_array::<bf16, 4096>();
    let sb = shared_array::<bf16, 16384>();
    let flags = shared_array::<f32, 128>();
    let tid = thread_idx().x;
    for i in 0..16u32 {
        let k = (i * 256 + tid) as usize;
        sa[k] = a[k];
        for j in 0..4usize {
            sb[k + 4096 * j] = b[k + 4096 * j];
        }
    }
    sync_threads();
    if tid >= 128 {
        flags[(tid - 128) as usize] = (3 * tid) as f32;
        named_barrier_arrive(1, 256);
        return;
    }
    let mut b64 = [init; 32];
    let mut b128 = [init; 64];
    let mut b256 = [init; 128];
    let mut r64 = [init; 32];
    let mut r128 = [init; 64];
    let mut r256 = [init; 128];
    let f = tid as usize * 8;
    let p = [frag[f], frag[f + 1], frag[f + 2], frag[f + 3], frag[f + 4], frag[f + 5], frag[f + 6], frag[f + 7]];
    wgmma_fence();
    wgmma_m64n64k16_bt(&mut b64, sa, 16u32, sb, 32u32);
    wgmma_m64n128k16_bt(&mut b128, sa, 16u32, sb, 32u32);
    wgmma_m64n256k16_bt(&mut b256, sa, 16u32, sb, 32u32);
    wgmma_m64n64k16_rs(&mut r64, p, sb, 1024u32);
    wgmma_m64n128k16_rs(&mut r128, p, sb, 1024u32);
    wgmma_m64n256k16_rs(&mut r256, p, sb, 1024u32);
    // SAFETY: in range and aligned as the checked forms' operands above (columns 32 and 48 of
    // the same tiles, B's rows 32 .. 48).
    unsafe {
        wgmma_m64n64k16_bt_unchecked(&mut b64, sa, 32u32, sb, 48u32);
        wgmma_m64n128k16_bt_unchecked(&mut b128, sa, 32u32, sb, 48u32);
        wgmma_m64n256k16_bt_unchecked(&mut b256, sa, 32u32, sb, 48u32);
        wgmma_m64n64k16_rs_unchecked(&mut r64, p, sb, 2048u32);
        wgmma_m64n128k16_rs_unchecked(&mut r128, p, sb, 2048u32);
        wgmma_m64n256k16_rs_unchecked(&mut r256, p, sb, 2048u32);
    }
    wgmma_commit();
    wgmma_wait::<0>(&mut b64);
    wgmma_wait::<0>(&mut b128);
    wgmma_wait::<0>(&mut b256);
    wgmma_wait::<0>(&mut r64);
    wgmma_wait::<0>(&mut r128);
    wgmma_wait::<0>(&mut r256);
    let at = 448 * tid as usize;
    for i in 0..32usize {
        out[at + i] = b64[i];
        out[at + 224 + i] = r64[i];
    }
    for i in 0..64usize {
        out[at + 32 + i] = b128[i];
        out[at + 256 + i] = r128[i];
    }
    for i in 0..128usize {
        out[at + 96 + i] = b256[i];
        out[at + 320 + i] = r256[i];
    }
    named_barrier_sync(1, 256);
    let v = flags[tid as usize];
    named_barrier_sync(2, 128);
    out[448 * 128 + tid as usize] = v;
}

/// Every FP8 `wgmma_*` shape (`wgmma_m64nNk32`), checked and unchecked, one warpgroup: A (one
/// swizzled tile of 64 rows x 128 k, `a`) and B^T (`b`: 256 rows (n) x 128 k, four tiles) copied
/// to shared memory; each accumulator starts at `init` and takes two k-steps, the checked form
/// at k = `k0` of both operands, the unchecked one at k = `k1`; thread t writes its 32 + 64 + 128
/// accumulators to `out[224 t ..]`.
#[rawkernel(max_threads = 128)]
pub fn wgmma_fp8_all(a: &[f8e4m3], b: &[f8e4m3], init: f32, k0: u32, k1: u32, out: &mut [f32]) {
    let sa = shared_array::<f8e4m3, 8192>();
    let sb = shared_array::<f8e4m3, 32768>();
    let tid = thread_idx().x;
    for i in 0..64u32 {
        let k = (i * 128 + tid) as usize;
        sa[k] = a[k];
        for j in 0..4usize {
            sb[k + 8192 * j] = b[k + 8192 * j];
        }
    }
    sync_threads();
    let mut a64 = [init; 32];
    let mut a128 = [init; 64];
    let mut a256 = [init; 128];
    wgmma_fence();
    wgmma_m64n64k32(&mut a64, sa, k0, sb, k0);
    wgmma_m64n128k32(&mut a128, sa, k0, sb, k0);
    wgmma_m64n256k32(&mut a256, sa, k0, sb, k0);
    // SAFETY: `k1` is 0, 32, 64 or 96 (the caller's promise) and the tiles lie in the arrays,
    // which start 1024-byte aligned.
    unsafe {
        wgmma_m64n64k32_unchecked(&mut a64, sa, k1, sb, k1);
        wgmma_m64n128k32_unchecked(&mut a128, sa, k1, sb, k1);
        wgmma_m64n256k32_unchecked(&mut a256, sa, k1, sb, k1);
    }
    wgmma_commit();
    wgmma_wait::<0>(&mut a64);
    wgmma_wait::<0>(&mut a128);
    wgmma_wait::<0>(&mut a256);
    let at = 224 * tid as usize;
    for i in 0..32usize {
        out[at + i] = a64[i];
    }
    for i in 0..64usize {
        out[at + 32 + i] = a128[i];
    }
    for i in 0..128usize {
        out[at + 96 + i] = a256[i];
    }
}

/// The e5m2 form of `wgmma_m64n64k32` (the same instruction with `.e5m2` operands): one k-step
/// at k = `k0`, accumulators from 0, thread t's 32 to `out[32 t ..]`.
#[rawkernel(max_threads = 128)]
pub fn wgmma_fp8_e5m2(a: &[f8e5m2], b: &[f8e5m2], k0: u32, out: &mut [f32]) {
    let sa = shared_array::<f8e5m2, 8192>();
    let sb = shared_array::<f8e5m2, 8192>();
    let tid = thread_idx().x;
    for i in 0..64u32 {
        let k = (i * 128 + tid) as usize;
        sa[k] = a[k];
        sb[k] = b[k];
    }
    sync_threads();
    let mut acc = [0.0f32; 32];
    wgmma_fence();
    wgmma_m64n64k32(&mut acc, sa, k0, sb, k0);
    wgmma_commit();
    wgmma_wait::<0>(&mut acc);
    for i in 0..32usize {
        out[32 * tid as usize + i] = acc[i];
    }
}
