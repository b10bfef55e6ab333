//! Snapshot: Hopper's mbarriers, TMA tile copies (`&TensorMap<T>` parameters, `__grid_constant__`),
//! `wgmma_m64n{64,128,256}k16` from static and dynamic shared memory (1024-byte aligned). Also the
//! kernels of testsuite/tests/gpu_hopper.rs, built for sm_90a alone there (testsuite/build.rs):
//! `wgmma_*` exists only on that target.

use cuprum::prelude::*;

/// Copies one box of `map` at (x, y) to shared memory through TMA, then the whole box, as
/// shared memory holds it (swizzled), to `out`. One thread issues the copy, every thread waits.
#[rawkernel]
pub fn tma_box_bf16(map: &TensorMap<bf16>, x: i32, y: i32, box_elems: u32, out: &mut [bf16]) {
    let s = shared_array::<bf16, 8192>();
    let bars = shared_array::<u64, 1>();
    let tid = thread_idx().x;
    if tid == 0 {
        mbarrier_init(bars, 0, 1);
    }
    sync_threads();
    if tid == 0 {
        mbarrier_arrive_expect_tx(bars, 0, box_elems * 2);
        tma_load_2d(s, 0, map, x, y, bars, 0);
    }
    mbarrier_wait(bars, 0, 0);
    let mut i = tid;
    while i < box_elems {
        out[i as usize] = s[i as usize];
        i += block_dim().x;
    }
}

/// The same for `f32` elements, into `dst_index` of the shared array (for the checks).
#[rawkernel]
pub fn tma_box_f32(map: &TensorMap<f32>, x: i32, y: i32, box_elems: u32, dst_index: u32, out: &mut [f32]) {
    let s = shared_array::<f32, 4096>();
    let bars = shared_array::<u64, 1>();
    let tid = thread_idx().x;
    if tid == 0 {
        mbarrier_init(bars, 0, 1);
    }
    sync_threads();
    if tid == 0 {
        mbarrier_arrive_expect_tx(bars, 0, box_elems * 4);
        tma_load_2d(s, dst_index, map, x, y, bars, 0);
    }
    mbarrier_wait(bars, 0, 0);
    let mut i = tid;
    while i < box_elems {
        out[i as usize] = s[i as usize];
        i += block_dim().x;
    }
}

/// One warpgroup: A (64 x 64) and B (64 x 64), given already swizzled, into shared memory, then
/// `acc += A B` in four `wgmma_m64n64k16` k-steps from `acc`; thread t writes its 32
/// accumulators to `out[32 t ..]`.
#[rawkernel]
pub fn wgmma_n64(a: &[bf16], b: &[bf16], acc_in: &[f32], a_shift: u32, out: &mut [f32]) {
    let sa = shared_array::<bf16, 4096>();
    let sb = shared_array::<bf16, 4096>();
    let tid = thread_idx().x;
    for i in 0..32u32 {
        let k = (i * 128 + tid) as usize;
        sa[k] = a[k];
        sb[k] = b[k];
    }
    sync_threads();
    let mut acc = [0.0f32; 32];
    for i in 0..32usize {
        acc[i] = acc_in[tid as usize * 32 + i];
    }
    wgmma_fence();
    for kk in 0..4u32 {
        wgmma_m64n64k16(&mut acc, sa, kk * 16 + a_shift, sb, kk * 1024);
    }
    wgmma_commit();
    wgmma_wait::<0>(&mut acc);
    for i in 0..32usize {
        out[tid as usize * 32 + i] = acc[i];
    }
}

/// As `wgmma_n64` with `f16` operands and N = 128 (B: two 64 x 64 tiles).
#[rawkernel]
pub fn wgmma_n128_f16(a: &[f16], b: &[f16], out: &mut [f32]) {
    let sa = shared_array::<f16, 4096>();
    let sb = shared_array::<f16, 8192>();
    let tid = thread_idx().x;
    for i in 0..32u32 {
        let k = (i * 128 + tid) as usize;
        sa[k] = a[k];
        sb[k] = b[k];
        sb[k + 4096] = b[k + 4096];
    }
    sync_threads();
    let mut acc = [0.0f32; 64];
    wgmma_fence();
    for kk in 0..4u32 {
        wgmma_m64n128k16(&mut acc, sa, kk * 16, sb, kk * 1024);
    }
    wgmma_commit();
    wgmma_wait::<0>(&mut acc);
    for i in 0..64usize {
        out[tid as usize * 64 + i] = acc[i];
    }
}

/// One warpgroup: A (64 x 64) and B (64 x 256) of row-major arrays brought by TMA into dynamic
/// shared memory (A's box of 64 x 64, then four boxes of B), then `acc = A B` with
/// `wgmma_m64n256k16`; thread t writes its 128 accumulators to `out[128 t ..]`.
#[rawkernel]
pub fn wgmma_tma_n256(ma: &TensorMap<bf16>, mb: &TensorMap<bf16>, out: &mut [f32]) {
    let s = dynamic_shared::<bf16>();
    let bars = dynamic_shared::<u64>();
    // Elements 0..4096: A; 4096..20480: B; the barrier after them (u64 index 5120).
    let tid = thread_idx().x;
    if tid == 0 {
        mbarrier_init(bars, 5120, 1);
    }
    sync_threads();
    if tid == 0 {
        mbarrier_arrive_expect_tx(bars, 5120, 20480 * 2);
        tma_load_2d(s, 0, ma, 0, 0, bars, 5120);
        for j in 0..4u32 {
            tma_load_2d(s, 4096 + 4096 * j, mb, (64 * j) as i32, 0, bars, 5120);
        }
    }
    mbarrier_wait(bars, 5120, 0);
    let mut acc = [0.0f32; 128];
    wgmma_fence();
    for kk in 0..4u32 {
        wgmma_m64n256k16(&mut acc, s, kk * 16, s, 4096 + kk * 1024);
    }
    wgmma_commit();
    wgmma_wait::<0>(&mut acc);
    for i in 0..128usize {
        out[tid as usize * 128 + i] = acc[i];
    }
}

/// A producer and a consumer warp passing `rounds` values through a two-slot ring guarded by
/// `full` and `empty` barriers (phases reused many times): out[r] = values[r] * 2.
#[rawkernel]
pub fn mbarrier_ring(values: &[u32], rounds: u32, out: &mut [u32]) {
    let slots = shared_array::<u32, 2>();
    let bars = shared_array::<u64, 4>();
    let tid = thread_idx().x;
    if tid == 0 {
        for i in 0..2u32 {
            mbarrier_init(bars, i, 1);
            mbarrier_init(bars, 2 + i, 1);
        }
    }
    sync_threads();
    if tid == 0 {
        for r in 0..rounds {
            let st = r % 2;
            if r >= 2 {
                mbarrier_wait(bars, 2 + st, (r / 2 - 1) % 2);
            }
            slots[st as usize] = values[r as usize];
            thread_fence_block();
            mbarrier_arrive(bars, st);
        }
    } else if tid == 32 {
        for r in 0..rounds {
            let st = r % 2;
            mbarrier_wait(bars, st, (r / 2) % 2);
            out[r as usize] = slots[st as usize] * 2;
            mbarrier_arrive(bars, 2 + st);
        }
    }
}
