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
