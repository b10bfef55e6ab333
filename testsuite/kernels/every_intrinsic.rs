//! Every intrinsic of the kernel language called at least once (`compiler/src/lang/intrinsic.rs`:
//! `Intrinsic::ALL` and every family it embeds), each kernel writing values that
//! `tests/every_intrinsic.rs` checks against a host reference; the Hopper-only ones are in
//! `every_intrinsic_sm90a.rs`. A new intrinsic is called here (or there), or that test fails
//! naming it (docs/architecture.md, "Where to add things").

#![allow(dead_code)]
// Kernels index in loops: the kernel language has no slice copies or iterators.
#![allow(clippy::manual_memcpy, clippy::needless_range_loop)]

use cuprum::prelude::*;

/// Every thread and block index: thread `g` (its linear index in the grid, x fastest, blocks
/// after threads) writes 24 values to `out[24 g ..]`.
#[rawkernel]
pub fn indices(out: &mut [u32]) {
    let (t, b, bd, gd) = (thread_idx(), block_idx(), block_dim(), grid_dim());
    let in_block = t.x + bd.x * (t.y + bd.y * t.z);
    let block = b.x + gd.x * (b.y + gd.y * b.z);
    let at = (24 * (block * bd.x * bd.y * bd.z + in_block)) as usize;
    let (x2, y2) = grid_2d();
    let (x3, y3, z3) = grid_3d();
    let (sx2, sy2) = grid_size_2d();
    let (sx3, sy3, sz3) = grid_size_3d();
    let v = [
        t.x, t.y, t.z, b.x, b.y, b.z, bd.x, bd.y, bd.z, gd.x, gd.y, gd.z, grid_1d(), x2, y2, x3, y3, z3, grid_size_1d(), sx2, sy2,
        sx3 * sy3 * sz3, lane_id(), warp_size(),
    ];
    for i in 0..24usize {
        out[at + i] = v[i];
    }
}

/// Block barriers, warp barrier, fences, static and dynamic shared memory: each thread of a
/// block of 64 puts `x[g] * 3` in a static shared array, the block reverses it into the dynamic
/// shared array, and thread `t` writes `dynamic[(t + 1) % 64] + t` (the launch gives 256 bytes).
#[rawkernel]
pub fn shared_and_barriers(x: &[u32], out: &mut [u32]) {
    let s = shared_array::<u32, 64>();
    let d = dynamic_shared::<u32>();
    let t = thread_idx().x as usize;
    let g = grid_1d() as usize;
    s[t] = x[g] * 3;
    thread_fence_block();
    sync_threads();
    d[t] = s[63 - t];
    thread_fence();
    sync_warp(u32::MAX);
    sync_threads();
    out[g] = d[(t + 1) % 64] + t as u32;
}

/// `grid_sync()`: every block writes the sum of its threads' `x` to `partials`, the grid
/// synchronises, and thread 0 of block 0 writes the sum of the partials to `out[0]`.
#[rawkernel]
pub fn grid_sum(x: &[u32], partials: &mut [u32], out: &mut [u32]) {
    let b = block_idx().x as usize;
    atomic_add(partials, b, x[grid_1d() as usize]);
    grid_sync();
    if grid_1d() == 0 {
        let mut s = 0u32;
        for i in 0..grid_dim().x as usize {
            s += partials[i];
        }
        out[0] = s;
    }
}

/// Every atomic operation. All threads: `add`, `sub`, `min`, `max`, `and`, `or`, `xor` of their
/// `x[g]` on `ints[0..7]`, `inc` and `dec` on `counters[0..2]`; thread 0 alone (its returns in
/// `olds`): `exch` on `ints[7]`, two `cas` on `ints[8]` (one that swaps, one that does not), and
/// `add` on `floats[0]`, and a relaxed `load` of `ints[7]` after the `exch`.
#[rawkernel]
pub fn atomics(x: &[i32], ints: &mut [i32], counters: &mut [u32], floats: &mut [f32], olds: &mut [i32]) {
    let g = grid_1d() as usize;
    let v = x[g];
    atomic_add(ints, 0, v);
    atomic_sub(ints, 1, v);
    atomic_min(ints, 2, v);
    atomic_max(ints, 3, v);
    atomic_and(ints, 4, v);
    atomic_or(ints, 5, v);
    atomic_xor(ints, 6, v);
    atomic_inc(counters, 0, 1000);
    atomic_dec(counters, 1, 1000);
    if g == 0 {
        olds[0] = atomic_exch(ints, 7, 77);
        olds[1] = atomic_cas(ints, 8, 5, 9);
        olds[2] = atomic_cas(ints, 8, 5, 7);
        olds[3] = atomic_add(floats, 0, 2.5) as i32;
        olds[4] = atomic_load(ints, 7);
    }
}

/// Every shuffle, one warp: lane `l` writes `out[32 k + l]` for shuffle `k` of `x[l]` (whole-warp
/// forms, then the forms on tiles of 8 lanes).
#[rawkernel]
pub fn shuffles(x: &[i32], out: &mut [i32]) {
    let l = lane_id() as usize;
    let v = x[l];
    let m = u32::MAX;
    let r = [
        shfl_sync(m, v, 5),
        shfl_up_sync(m, v, 3),
        shfl_down_sync(m, v, 3),
        shfl_xor_sync(m, v, 6),
        shfl_sync_width(m, v, 5, 8),
        shfl_up_sync_width(m, v, 3, 8),
        shfl_down_sync_width(m, v, 3, 8),
        shfl_xor_sync_width(m, v, 6, 8),
    ];
    for k in 0..8 {
        out[32 * k + l] = r[k];
    }
}

/// Every warp collective, one warp: lane `l` writes `out[32 k + l]` for collective `k` of `x[l]`
/// (whole-warp forms, then the forms on tiles of 8 lanes, then the votes `warp_any(x > 900)` and
/// `warp_all(x > -900)` as 1 or 0).
#[rawkernel]
pub fn warp_collectives(x: &[i32], out: &mut [i32]) {
    let l = lane_id() as usize;
    let v = x[l];
    let r = [
        warp_reduce_sum(v),
        warp_reduce_min(v),
        warp_reduce_max(v),
        warp_inclusive_sum(v),
        warp_exclusive_sum(v),
        warp_reduce_sum_width(v, 8),
        warp_reduce_min_width(v, 8),
        warp_reduce_max_width(v, 8),
        warp_inclusive_sum_width(v, 8),
        warp_exclusive_sum_width(v, 8),
        if warp_any(v > 900) { 1 } else { 0 },
        if warp_all(v > -900) { 1 } else { 0 },
    ];
    for k in 0..12 {
        out[32 * k + l] = r[k];
    }
}

/// Element (m, k) of every `mma` test's A: `m + 1 + k`.
#[device]
fn a_at(m: usize, k: usize) -> f32 {
    (m + 1 + k) as f32
}

/// Element (k, n) of every `mma` test's B: `n + 1 + k % 3`.
#[device]
fn b_at(k: usize, n: usize) -> f32 {
    (n + 1 + k % 3) as f32
}

/// Writes a lane's part of a 16 x 8 tile to `out[at ..]` (row-major).
#[device]
fn store_tile(out: &mut [f32], at: usize, g: usize, t2: usize, d: [f32; 4]) {
    out[at + g * 8 + t2] = d[0];
    out[at + g * 8 + t2 + 1] = d[1];
    out[at + (g + 8) * 8 + t2] = d[2];
    out[at + (g + 8) * 8 + t2 + 1] = d[3];
}

/// The three warp multiplies, one warp, A and B from `a_at` and `b_at` gathered in the
/// documented fragment layouts, C = 0: each writes its 16 x 8 D (row-major) to `out[128 s ..]`
/// for shape `s` (bf16 K = 16, tf32 K = 8, i8 K = 32; the i8 one converted to f32).
#[rawkernel]
pub fn mma(out: &mut [f32]) {
    let l = lane_id() as usize;
    let (g, t2) = (l / 4, 2 * (l % 4));
    let fa = [
        bf16::from_f32(a_at(g, t2)),
        bf16::from_f32(a_at(g, t2 + 1)),
        bf16::from_f32(a_at(g + 8, t2)),
        bf16::from_f32(a_at(g + 8, t2 + 1)),
        bf16::from_f32(a_at(g, t2 + 8)),
        bf16::from_f32(a_at(g, t2 + 9)),
        bf16::from_f32(a_at(g + 8, t2 + 8)),
        bf16::from_f32(a_at(g + 8, t2 + 9)),
    ];
    let fb = [bf16::from_f32(b_at(t2, g)), bf16::from_f32(b_at(t2 + 1, g)), bf16::from_f32(b_at(t2 + 8, g)), bf16::from_f32(b_at(t2 + 9, g))];
    let d16 = mma_m16n8k16(fa, fb, [0.0; 4]);
    let t = l % 4;
    let fa = [a_at(g, t), a_at(g + 8, t), a_at(g, t + 4), a_at(g + 8, t + 4)];
    let fb = [b_at(t, g), b_at(t + 4, g)];
    let d8 = mma_m16n8k8_tf32(fa, fb, [0.0; 4]);
    let t4 = 4 * t;
    let mut fa = [0i8; 16];
    let mut fb = [0i8; 8];
    for j in 0..4 {
        fa[j] = a_at(g, t4 + j) as i8;
        fa[4 + j] = a_at(g + 8, t4 + j) as i8;
        fa[8 + j] = a_at(g, t4 + 16 + j) as i8;
        fa[12 + j] = a_at(g + 8, t4 + 16 + j) as i8;
        fb[j] = b_at(t4 + j, g) as i8;
        fb[4 + j] = b_at(t4 + 16 + j, g) as i8;
    }
    let d32 = mma_m16n8k32_i8(fa, fb, [0; 4]);
    let d32 = [d32[0] as f32, d32[1] as f32, d32[2] as f32, d32[3] as f32];
    store_tile(out, 0, g, t2, d16);
    store_tile(out, 128, g, t2, d8);
    store_tile(out, 256, g, t2, d32);
}

/// Every `ldmatrix_*`, one warp, from a shared array holding `x` (four 8 x 8 matrices, row-major,
/// 64 elements apart), lane `l` giving row `l % 8` of matrix `l / 8`; lane `l` writes what each
/// returns to `out[56 l ..]` (2 + 4 + 8 for each of four forms): x1, x2, x4, then the `_trans` forms, then the same
/// `_unchecked` (which must return the same).
#[rawkernel]
pub fn ldmatrix_all(x: &[u16], out: &mut [u16]) {
    let s = shared_array::<u16, 256>();
    let l = lane_id() as usize;
    for k in 0..8 {
        s[32 * k + l] = x[32 * k + l];
    }
    sync_warp(u32::MAX);
    let i = (64 * (l / 8) + 8 * (l % 8)) as u32;
    let at = 56 * l;
    let a1 = ldmatrix_x1(s, i);
    let a2 = ldmatrix_x2(s, i);
    let a4 = ldmatrix_x4(s, i);
    let t1 = ldmatrix_x1_trans(s, i);
    let t2 = ldmatrix_x2_trans(s, i);
    let t4 = ldmatrix_x4_trans(s, i);
    // SAFETY: every lane's row `i` is in `s` and 16-byte aligned (a multiple of 8 below 256),
    // which is all the unchecked forms skip checking.
    let (u1, u2, u4, v1, v2, v4) = unsafe {
        (
            ldmatrix_x1_unchecked(s, i),
            ldmatrix_x2_unchecked(s, i),
            ldmatrix_x4_unchecked(s, i),
            ldmatrix_x1_trans_unchecked(s, i),
            ldmatrix_x2_trans_unchecked(s, i),
            ldmatrix_x4_trans_unchecked(s, i),
        )
    };
    for j in 0..2 {
        out[at + j] = a1[j];
        out[at + 14 + j] = t1[j];
        out[at + 28 + j] = u1[j];
        out[at + 42 + j] = v1[j];
    }
    for j in 0..4 {
        out[at + 2 + j] = a2[j];
        out[at + 16 + j] = t2[j];
        out[at + 30 + j] = u2[j];
        out[at + 44 + j] = v2[j];
    }
    for j in 0..8 {
        out[at + 6 + j] = a4[j];
        out[at + 20 + j] = t4[j];
        out[at + 34 + j] = u4[j];
        out[at + 48 + j] = v4[j];
    }
}

/// `cp_async` and `cp_async_unchecked` (16 bytes each, in two groups), one warp: lane `l` copies
/// `x[4 l ..]` to `s[4 l ..]` checked and `x[128 + 4 l ..]` to `s[128 + 4 l ..]` unchecked, waits
/// for both groups, and writes `s[l]`, `s[32 + l]`, ... to `out` (`out[i] = x[i]`).
#[rawkernel]
pub fn copies(x: &[f32], out: &mut [f32]) {
    let s = shared_array::<f32, 256>();
    let l = lane_id();
    cp_async(s, 4 * l, x, 4 * l);
    cp_async_commit();
    // SAFETY: `s[128 + 4 l ..][..4]` and `x[128 + 4 l ..][..4]` are in range (l < 32) and
    // 16-byte aligned (shared arrays are; `x`'s start is, as the launch gives it).
    unsafe { cp_async_unchecked(s, 128 + 4 * l, x, 128 + 4 * l) };
    cp_async_commit();
    cp_async_wait::<0>();
    sync_threads();
    for k in 0..8 {
        let i = (32 * k + l) as usize;
        out[i] = s[i];
    }
}

/// `load4` and `store4`: thread `t` reads `x[4 t ..][..4]` and writes `2 v + 1` to
/// `out[4 t ..][..4]` (vector accesses where aligned, one per element elsewhere).
#[rawkernel]
pub fn quads(x: &[f32], out: &mut [f32]) {
    let i = 4 * thread_idx().x as usize;
    let mut v = load4(x, i);
    for k in 0..4usize {
        v[k] = 2.0 * v[k] + 1.0;
    }
    store4(out, i, v);
}

/// The same for 2-byte elements (an 8-byte access where aligned), copied as they are.
#[rawkernel]
pub fn quads_half(x: &[f16], out: &mut [f16]) {
    let i = 4 * thread_idx().x as usize;
    let v = load4(x, i);
    store4(out, i, v);
}

/// The error-function family and `Complex::new`: thread `i` writes the six functions of `x[i]`
/// (erf, erfc, erfinv, erfcinv, normcdf, normcdfinv) to `out[6 i ..]` and `Complex::new(x[i],
/// -2 x[i])` to `z[i]`.
#[rawkernel]
pub fn special_and_complex(x: &[f32], out: &mut [f32], z: &mut [Complex<f32>]) {
    let i = grid_1d() as usize;
    let v = x[i];
    let r = [erf(v), erfc(v), erfinv(v), erfcinv(v), normcdf(v), normcdfinv(v)];
    for k in 0..6 {
        out[6 * i + k] = r[k];
    }
    z[i] = Complex::new(v, -2.0 * v);
}

/// `index()` and `loop_size()`: `x + 1000 index + loop_size`.
#[elementwise]
pub fn placed(x: f32) -> f32 {
    x + (index() * 1000 + loop_size()) as f32
}

/// `reduce_index()`: the sum of the positions along the reduced axes of the non-negative
/// elements.
#[reduction(identity = 0, reduce = |a, b| a + b)]
pub fn position_sum(x: f32) -> i64 {
    if x >= 0.0 { reduce_index() as i64 } else { 0 }
}
