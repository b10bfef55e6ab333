//! Flash attention forward in FlashAttention-3's design on Hopper's warpgroup tensor cores, as
//! `#[rawkernel]`s: `O = softmax(Q K^T / sqrt(D)) V` for `Q`, `K`, `V`, `O` of shape
//! `[B, H, S, D]`, contiguous, in `bf16` or `f16`, `D` 128 (`attention_wgmma_bf16`,
//! `attention_wgmma_f16`) or 64 (`attention_wgmma_d64_bf16`, `attention_wgmma_d64_f16`), causal
//! (query `i` sees keys `j <= i`) or not, any `S`; f32 accumulation.
//!
//! A block of three warpgroups (384 threads) takes BM = 128 query rows of one (batch, head):
//! grid `(ceil(S / 128), B * H)`. Warpgroup 0 is the producer: one thread copies the block's
//! `Q` once (`tma_load_2d`, barrier `QBAR`) and then each tile of BN = 128 keys of `K` and `V`
//! into a ring of STAGES stages, each completing on its `FULL` barrier, reusing a stage once both
//! consumers have released it (`EMPTY`). Warpgroups 1 and 2 are the consumers, 64 query rows
//! each. Per key tile a consumer computes its 64 x 128 scores `S = Q K^T` with
//! `wgmma_m64n128k16_bt` (`Q` and `K` from shared memory, `K` the transposed B operand: its rows
//! are keys, K-major), updates the online softmax on the accumulator registers (row maxima and
//! sums over the quad of lanes that share a row, one multiply-add and one `exp2` per score with
//! `log2(e) / sqrt(D)` folded in), rounds the probabilities to the element type and feeds them
//! straight from registers to `O += P V` (`wgmma_m64n128k16_rs`: eight consecutive accumulators
//! are the A fragment of 16 keys, no shuffle), `V` N-major from shared memory. The `P V` of tile
//! `i - 1` is issued together with the `Q K^T` of tile `i`, so the softmax of tile `i` runs while
//! it multiplies (FlashAttention-3's intra-warpgroup overlap); `O` stays in 64 f32 accumulators
//! per thread, rescaled once that group is done, and is divided by the row sums and stored at the
//! end. The producer gives its registers to the consumers (`warpgroup_reg_dealloc::<24>`,
//! `warpgroup_reg_alloc::<240>`).
//!
//! Ping-pong: with `pingpong`, the two consumers take turns issuing their multiplies through
//! named barriers 1 and 2 (`named_barrier_sync`/`named_barrier_arrive`, 256 threads): consumer 1
//! issues its products of a tile and lets consumer 2 issue its own while it runs its softmax, and
//! so on, so that one warpgroup's exponentials overlap the other's multiplies (FlashAttention-3,
//! section 3.1).
//!
//! Shared memory (dynamic, 1024-byte aligned, 128-byte swizzle as the TMA boxes of 64 x 64
//! write it): `Q` in tiles `(t, w)` at `(2 t + w) * 4096` (d-tile `t` of 64 columns, rows
//! `64 w ..` of the block); each stage of `K` at `Q_ELEMS + st * STAGE`, tile `(t, u)` (d-tile
//! `t`, keys `64 u ..`) at `(2 t + u) * 4096`; each stage of `V` after the K stages, tile
//! `(u, t)` at `(2 u + t) * 4096`, so that the two d-tiles of 64 keys are the N / 64 = 2
//! consecutive tiles `wgmma_m64n128k16_rs` reads. The D = 64 kernels (`attention_wgmma_d64_*`)
//! are the same with one d-tile: `Q K^T` in 4 k-steps, `O` 64 x 64 by `wgmma_m64n64k16_rs` (a
//! branch on `D` around the multiplies in one kernel makes ptxas serialise every `wgmma`).
//!
//! Tails: the tensor maps see `[B H S, D]` arrays, so the rows of a tile past `S` are the next
//! head's (finite) or zeros past the array; their scores are `-inf` (keys) or they are not
//! stored (queries). Causal: key tiles after the block's last query row are not loaded; the
//! tiles crossing the diagonal are masked. The blocks with the most tiles (the last rows) are
//! scheduled first.
//!
//! `examples/attention_wgmma.rs` launches them through a checked wrapper (examples/attention_lib.rs
//! has the FlashAttention-2 one; `flash_attention_wgmma` here checks the same shapes).

// The kernel language has no `is_multiple_of`.
#![allow(clippy::manual_is_multiple_of)]

use cuprum::prelude::*;

/// Query rows per block: two consumer warpgroups of 64.
pub const BM: u32 = 128;
/// Keys per tile.
pub const BN: u32 = 128;
/// Threads per block: the producer warpgroup and two consumers.
pub const THREADS: u32 = 384;
/// The stages of the K/V ring (with `Q`, 224 KiB of the 227 a block may have).
const STAGES: u32 = 3;
/// Elements of the block's `Q` (128 x 128 at most: four tiles of 4096).
const Q_ELEMS: u32 = 16384;
/// Elements of one stage of `K` (or of `V`): 128 keys x 128 columns at most.
const STAGE: u32 = 16384;
/// Elements of dynamic shared memory the kernel uses: `Q` and the `K` and `V` stages.
pub const ELEMS: u32 = Q_ELEMS + 2 * STAGES * STAGE;
/// The dynamic shared memory a launch needs (16-bit elements).
pub const SHARED_BYTES: u32 = 2 * ELEMS;
/// Bytes of one TMA box of 64 x 64 16-bit elements.
const BOX_BYTES: u32 = 8192;
/// The barriers (a static shared array of `u64`): `Q`'s, then `FULL` and `EMPTY` per stage.
const QBAR: u32 = 0;
const FULL: u32 = 1;
const EMPTY: u32 = FULL + STAGES;

/// The number of key tiles block row `m0` needs: all of `S`, or up to its last row when causal.
#[device]
#[allow(clippy::manual_div_ceil)] // the kernel language has no `div_ceil`
fn key_tiles(s: u32, m0: u32, causal: bool) -> u32 {
    let end = if causal { s.min(m0 + BM) } else { s };
    (end + BN - 1) / BN
}

/// The online-softmax step of one key tile for the thread's two rows `r` and `r + 8` (query
/// indices within the head): masks the scores `sacc` (64 x 128 accumulators, keys from `n0`)
/// when `edge` (the tile reaches past `S` or crosses the causal diagonal) and updates the running
/// maxima `mrow` (of the unscaled scores) and the thread's partial sums `lrow`. Returns
/// `exp2(score * scale_log2 - max * scale_log2)` in the place of the scores (one multiply-add
/// and one `exp2` each), the new maxima and sums, and the factors `alpha` by which each row of
/// `O` accumulated so far is rescaled. The mask costs nothing on the other tiles: the scale is
/// positive, so the maximum of the unscaled scores gives the scaled one.
#[device]
#[allow(clippy::too_many_arguments)]
fn softmax_tile(
    sacc: [f32; 64],
    mrow: [f32; 2],
    lrow: [f32; 2],
    n0: u32,
    r: u32,
    s: u32,
    causal: bool,
    edge: bool,
    scale_log2: f32,
) -> ([f32; 64], [f32; 2], [f32; 2], [f32; 2]) {
    let mut p = sacc;
    let mut m = mrow;
    let mut l = lrow;
    let mut alpha = [0.0f32; 2];
    if edge {
        let c0 = n0 + 2 * (lane_id() % 4);
        for h in (0..2usize).unroll() {
            let row = r + 8 * h as u32;
            for j in (0..16usize).unroll() {
                for e in (0..2usize).unroll() {
                    let kv = c0 + 8 * j as u32 + e as u32;
                    if kv >= s || (causal && kv > row) {
                        p[4 * j + 2 * h + e] = -f32::INFINITY;
                    }
                }
            }
        }
    }
    for h in (0..2usize).unroll() {
        let mut mx = -f32::INFINITY;
        for j in (0..16usize).unroll() {
            mx = mx.max(p[4 * j + 2 * h]).max(p[4 * j + 2 * h + 1]);
        }
        mx = warp_reduce_max_width(mx, 4);
        let m_new = m[h].max(mx);
        // In base 2: a row with no visible key yet keeps a zero sum (exp2(-inf - 0) = 0), never NaN.
        let m_use = if m_new == -f32::INFINITY { 0.0 } else { m_new * scale_log2 };
        alpha[h] = (m[h] * scale_log2 - m_use).exp2();
        m[h] = m_new;
        let mut sum = 0.0f32;
        for j in (0..16usize).unroll() {
            for e in (0..2usize).unroll() {
                let i = 4 * j + 2 * h + e;
                let x = (p[i] * scale_log2 - m_use).exp2();
                p[i] = x;
                sum += x;
            }
        }
        l[h] = l[h] * alpha[h] + sum;
    }
    (p, m, l, alpha)
}

/// `O`'s rows rescaled by `alpha` (the thread's row `h` holds elements `4 j + 2 h + e`).
#[device]
fn rescale(o: [f32; 64], alpha: [f32; 2]) -> [f32; 64] {
    let mut r = o;
    for j in (0..16usize).unroll() {
        for h in (0..2usize).unroll() {
            r[4 * j + 2 * h] *= alpha[h];
            r[4 * j + 2 * h + 1] *= alpha[h];
        }
    }
    r
}

/// [`rescale`] for the 32 accumulators of a 64 x 64 `O` (D = 64).
#[device]
fn rescale_d64(o: [f32; 32], alpha: [f32; 2]) -> [f32; 32] {
    let mut r = o;
    for j in (0..8usize).unroll() {
        for h in (0..2usize).unroll() {
            r[4 * j + 2 * h] *= alpha[h];
            r[4 * j + 2 * h + 1] *= alpha[h];
        }
    }
    r
}

/// The quad's total row sums of the thread's two rows, as the factors `1 / l` that finish `O`
/// (0 for a row that saw no key, which only a row past `S` can be).
#[device]
fn row_scales(lrow: [f32; 2]) -> [f32; 2] {
    let mut inv = [0.0f32; 2];
    for h in (0..2usize).unroll() {
        let l = warp_reduce_sum_width(lrow[h], 4);
        inv[h] = if l > 0.0 { 1.0 / l } else { 0.0 };
    }
    inv
}

/// Whether a key tile from `n0` needs masking: it reaches past `S`, or (causal) one of its keys
/// lies after the consumer's first row `m0`.
#[device]
fn tile_has_edge(n0: u32, s: u32, m0: u32, causal: bool) -> bool {
    n0 + BN > s || (causal && n0 + BN > m0 + 1)
}

/// The shape checks every kernel makes on entry (each kernel also checks its own `D`): `D` 64 or
/// 128, `S > 0`, the block's 384
/// threads, dynamic shared memory for the stages, `O` of `B H S D` elements.
#[device]
fn shape_ok(s: u32, d: u32, heads: u32, o_len: usize, shared: usize) -> bool {
    (d == 64 || d == 128) && s > 0 && block_dim().x == THREADS && shared >= ELEMS as usize && o_len >= heads as usize * s as usize * d as usize
}

#[rawkernel(max_threads = 384, fast_math)]
#[allow(clippy::too_many_arguments)] // the shape, the flags, the three maps and the output
pub fn attention_wgmma_bf16(
    s: u32,
    d: u32,
    causal: bool,
    pingpong: bool,
    scale_log2: f32,
    q: &TensorMap<bf16>,
    k: &TensorMap<bf16>,
    v: &TensorMap<bf16>,
    o: &mut [bf16],
) {
    let sm = dynamic_shared::<bf16>();
    let bars = shared_array::<u64, 8>();
    let tid = thread_idx().x;
    let bh = block_idx().y;
    // The last query rows (the most key tiles when causal) first.
    let mblk = grid_dim().x - 1 - block_idx().x;
    let m_blk = mblk * BM;
    // The wrapper checks these with a clear error first; the kernel then computes nothing. No
    // checked access follows (its report would cost the consumers registers).
    if d != 128 || !shape_ok(s, d, grid_dim().y, o.len(), sm.len()) {
        return;
    }
    let tiles = key_tiles(s, m_blk, causal);
    if tid == 0 {
        mbarrier_init(bars, QBAR, 1);
        for i in 0..STAGES {
            mbarrier_init(bars, FULL + i, 1);
            mbarrier_init(bars, EMPTY + i, 2);
        }
    }
    sync_threads();
    let wg = tid / 128;
    if wg == 0 {
        warpgroup_reg_dealloc::<24>();
        if tid == 0 {
            // The block's Q (d / 64 d-tiles of two 64-row boxes), then the key tiles of K and V
            // into the ring, each stage reused once both consumers have released it.
            // Two d-tiles of Q, K and V (D = 128).
            let (row0, kv0, dt) = (bh * s + m_blk, bh * s, 2u32);
            mbarrier_arrive_expect_tx(bars, QBAR, 2 * dt * BOX_BYTES);
            for t in 0..dt {
                for w in 0..2u32 {
                    tma_load_2d(sm, (2 * t + w) * 4096, q, (64 * t) as i32, (row0 + 64 * w) as i32, bars, QBAR);
                }
            }
            for it in 0..tiles {
                let st = it % STAGES;
                if it >= STAGES {
                    mbarrier_wait(bars, EMPTY + st, (it / STAGES - 1) % 2);
                }
                mbarrier_arrive_expect_tx(bars, FULL + st, 4 * dt * BOX_BYTES);
                let kb = Q_ELEMS + st * STAGE;
                let vb = Q_ELEMS + STAGES * STAGE + st * STAGE;
                let n0 = kv0 + it * BN;
                for u in 0..2u32 {
                    for t in 0..dt {
                        tma_load_2d(sm, kb + (2 * t + u) * 4096, k, (64 * t) as i32, (n0 + 64 * u) as i32, bars, FULL + st);
                    }
                    for t in 0..dt {
                        tma_load_2d(sm, vb + (2 * u + t) * 4096, v, (64 * t) as i32, (n0 + 64 * u) as i32, bars, FULL + st);
                    }
                }
            }
        }
        return;
    }
    warpgroup_reg_alloc::<240>();
    let cw = wg - 1;
    let (l, qw) = (tid % 32, (tid % 128) / 32);
    let m0 = m_blk + 64 * cw;
    // The thread's first row within the head (and row + 8).
    let r = m0 + 16 * qw + l / 4;
    let mut mrow = [-f32::INFINITY; 2];
    let mut lrow = [0.0f32; 2];
    let mut oacc = [0.0f32; 64];
    mbarrier_wait(bars, QBAR, 0);
    if pingpong && cw == 0 {
        // Consumer 1 takes the first turn.
        named_barrier_arrive(1, 256);
    }
    // Tile 0: Q K^T alone.
    mbarrier_wait(bars, FULL, 0);
    if pingpong {
        named_barrier_sync(1 + cw, 256);
    }
    let mut sacc = [0.0f32; 64];
    wgmma_fence();
    for kk in (0..8u32).unroll() {
        // SAFETY: Q's tile (kk / 4, cw) and K's two tiles of d-tile kk / 4 in stage 0 start at
        // multiples of 4096 below ELEMS, columns kk % 4 * 16 (0, 16, 32, 48); `sm` holds ELEMS
        // (checked on entry) and dynamic shared memory is 1024-byte aligned.
        unsafe { wgmma_m64n128k16_bt_unchecked(&mut sacc, sm, (2 * (kk / 4) + cw) * 4096 + (kk % 4) * 16, sm, Q_ELEMS + 2 * (kk / 4) * 4096 + (kk % 4) * 16) };
    }
    wgmma_commit();
    if pingpong {
        // The other consumer's turn at the tensor cores while this one runs its softmax.
        named_barrier_arrive(2 - cw, 256);
    }
    wgmma_wait::<0>(&mut sacc);
    let (p0, m0r, l0r, _) = softmax_tile(sacc, mrow, lrow, 0, r, s, causal, tile_has_edge(0, s, m0, causal), scale_log2);
    mrow = m0r;
    lrow = l0r;
    // P of the previous tile, the A operand of its P V, issued with the next tile's Q K^T.
    let mut pv = [bf16::from_f32(0.0); 64];
    // Two values per instruction (`cvt.rn.bf16x2.f32`): P holds no NaN.
    for i in (0..32usize).unroll() {
        let two = bf16::from_f32_pair(p0[2 * i], p0[2 * i + 1]);
        pv[2 * i] = two[0];
        pv[2 * i + 1] = two[1];
    }
    for it in 1..tiles {
        let st = it % STAGES;
        let n0 = it * BN;
        mbarrier_wait(bars, FULL + st, (it / STAGES) % 2);
        if pingpong {
            named_barrier_sync(1 + cw, 256);
        }
        let kb = Q_ELEMS + st * STAGE;
        let vb = Q_ELEMS + STAGES * STAGE + ((it - 1) % STAGES) * STAGE;
        sacc = [0.0f32; 64];
        wgmma_fence();
        for kk in (0..8u32).unroll() {
            // SAFETY: as for tile 0, in stage st.
            unsafe { wgmma_m64n128k16_bt_unchecked(&mut sacc, sm, (2 * (kk / 4) + cw) * 4096 + (kk % 4) * 16, sm, kb + 2 * (kk / 4) * 4096 + (kk % 4) * 16) };
        }
        wgmma_commit();
        for kk in (0..8u32).unroll() {
            let x = (8 * kk) as usize;
            let a = [pv[x], pv[x + 1], pv[x + 2], pv[x + 3], pv[x + 4], pv[x + 5], pv[x + 6], pv[x + 7]];
            // SAFETY: V's tiles (kk / 4, 0) and (kk / 4, 1) of the previous tile's stage start at
            // a multiple of 4096 below ELEMS, rows kk % 4 * 16 (x 64); `sm` holds ELEMS (checked
            // on entry).
            unsafe { wgmma_m64n128k16_rs_unchecked(&mut oacc, a, sm, vb + 2 * (kk / 4) * 4096 + (kk % 4) * 1024) };
        }
        wgmma_commit();
        if pingpong {
            named_barrier_arrive(2 - cw, 256);
        }
        // Q K^T is done (P V may still run): the softmax of this tile.
        wgmma_wait::<1>(&mut sacc);
        let (p, m2, l2, alpha) = softmax_tile(sacc, mrow, lrow, n0, r, s, causal, tile_has_edge(n0, s, m0, causal), scale_log2);
        mrow = m2;
        lrow = l2;
        // The previous tile's P V is done: release its stage, rescale O.
        wgmma_wait::<0>(&mut oacc);
        if tid % 128 == 0 {
            mbarrier_arrive(bars, EMPTY + (it - 1) % STAGES);
        }
        oacc = rescale(oacc, alpha);
        // Two values per instruction (`cvt.rn.bf16x2.f32`): P holds no NaN.
        for i in (0..32usize).unroll() {
            let two = bf16::from_f32_pair(p[2 * i], p[2 * i + 1]);
            pv[2 * i] = two[0];
            pv[2 * i + 1] = two[1];
        }
    }
    if pingpong && cw == 0 {
        // Consumer 2's last arrival at barrier 1 (one more than consumer 1 waits for in the
        // loop), so that no round is left open.
        named_barrier_sync(1, 256);
    }
    // The last tile's P V.
    let last = tiles - 1;
    let vb = Q_ELEMS + STAGES * STAGE + (last % STAGES) * STAGE;
    wgmma_fence();
    for kk in (0..8u32).unroll() {
        let x = (8 * kk) as usize;
        let a = [pv[x], pv[x + 1], pv[x + 2], pv[x + 3], pv[x + 4], pv[x + 5], pv[x + 6], pv[x + 7]];
        // SAFETY: as in the loop.
        unsafe { wgmma_m64n128k16_rs_unchecked(&mut oacc, a, sm, vb + 2 * (kk / 4) * 4096 + (kk % 4) * 1024) };
    }
    wgmma_commit();
    wgmma_wait::<0>(&mut oacc);
    if tid % 128 == 0 {
        mbarrier_arrive(bars, EMPTY + last % STAGES);
    }
    let inv = row_scales(lrow);
    for h in (0..2usize).unroll() {
        let row = r + 8 * h as u32;
        if row < s {
            let base = (bh * s + row) as usize * d as usize + 2 * (l % 4) as usize;
            for j in (0..16usize).unroll() {
                if (8 * j as u32) < d {
                    let at = base + 8 * j;
                    // SAFETY: row < S and column 8 j + 2 (l % 4) + 1 < D of head bh lie in the
                    // B H S D elements of `o` (checked on entry).
                    unsafe {
                        *o.get_unchecked_mut(at) = bf16::from_f32(oacc[4 * j + 2 * h] * inv[h]);
                        *o.get_unchecked_mut(at + 1) = bf16::from_f32(oacc[4 * j + 2 * h + 1] * inv[h]);
                    }
                }
            }
        }
    }
}

#[rawkernel(max_threads = 384, fast_math)]
#[allow(clippy::too_many_arguments)] // the shape, the flags, the three maps and the output
pub fn attention_wgmma_f16(
    s: u32,
    d: u32,
    causal: bool,
    pingpong: bool,
    scale_log2: f32,
    q: &TensorMap<f16>,
    k: &TensorMap<f16>,
    v: &TensorMap<f16>,
    o: &mut [f16],
) {
    let sm = dynamic_shared::<f16>();
    let bars = shared_array::<u64, 8>();
    let tid = thread_idx().x;
    let bh = block_idx().y;
    // The last query rows (the most key tiles when causal) first.
    let mblk = grid_dim().x - 1 - block_idx().x;
    let m_blk = mblk * BM;
    // The wrapper checks these with a clear error first; the kernel then computes nothing. No
    // checked access follows (its report would cost the consumers registers).
    if d != 128 || !shape_ok(s, d, grid_dim().y, o.len(), sm.len()) {
        return;
    }
    let tiles = key_tiles(s, m_blk, causal);
    if tid == 0 {
        mbarrier_init(bars, QBAR, 1);
        for i in 0..STAGES {
            mbarrier_init(bars, FULL + i, 1);
            mbarrier_init(bars, EMPTY + i, 2);
        }
    }
    sync_threads();
    let wg = tid / 128;
    if wg == 0 {
        warpgroup_reg_dealloc::<24>();
        if tid == 0 {
            // The block's Q (d / 64 d-tiles of two 64-row boxes), then the key tiles of K and V
            // into the ring, each stage reused once both consumers have released it.
            // Two d-tiles of Q, K and V (D = 128).
            let (row0, kv0, dt) = (bh * s + m_blk, bh * s, 2u32);
            mbarrier_arrive_expect_tx(bars, QBAR, 2 * dt * BOX_BYTES);
            for t in 0..dt {
                for w in 0..2u32 {
                    tma_load_2d(sm, (2 * t + w) * 4096, q, (64 * t) as i32, (row0 + 64 * w) as i32, bars, QBAR);
                }
            }
            for it in 0..tiles {
                let st = it % STAGES;
                if it >= STAGES {
                    mbarrier_wait(bars, EMPTY + st, (it / STAGES - 1) % 2);
                }
                mbarrier_arrive_expect_tx(bars, FULL + st, 4 * dt * BOX_BYTES);
                let kb = Q_ELEMS + st * STAGE;
                let vb = Q_ELEMS + STAGES * STAGE + st * STAGE;
                let n0 = kv0 + it * BN;
                for u in 0..2u32 {
                    for t in 0..dt {
                        tma_load_2d(sm, kb + (2 * t + u) * 4096, k, (64 * t) as i32, (n0 + 64 * u) as i32, bars, FULL + st);
                    }
                    for t in 0..dt {
                        tma_load_2d(sm, vb + (2 * u + t) * 4096, v, (64 * t) as i32, (n0 + 64 * u) as i32, bars, FULL + st);
                    }
                }
            }
        }
        return;
    }
    warpgroup_reg_alloc::<240>();
    let cw = wg - 1;
    let (l, qw) = (tid % 32, (tid % 128) / 32);
    let m0 = m_blk + 64 * cw;
    // The thread's first row within the head (and row + 8).
    let r = m0 + 16 * qw + l / 4;
    let mut mrow = [-f32::INFINITY; 2];
    let mut lrow = [0.0f32; 2];
    let mut oacc = [0.0f32; 64];
    mbarrier_wait(bars, QBAR, 0);
    if pingpong && cw == 0 {
        // Consumer 1 takes the first turn.
        named_barrier_arrive(1, 256);
    }
    // Tile 0: Q K^T alone.
    mbarrier_wait(bars, FULL, 0);
    if pingpong {
        named_barrier_sync(1 + cw, 256);
    }
    let mut sacc = [0.0f32; 64];
    wgmma_fence();
    for kk in (0..8u32).unroll() {
        // SAFETY: Q's tile (kk / 4, cw) and K's two tiles of d-tile kk / 4 in stage 0 start at
        // multiples of 4096 below ELEMS, columns kk % 4 * 16 (0, 16, 32, 48); `sm` holds ELEMS
        // (checked on entry) and dynamic shared memory is 1024-byte aligned.
        unsafe { wgmma_m64n128k16_bt_unchecked(&mut sacc, sm, (2 * (kk / 4) + cw) * 4096 + (kk % 4) * 16, sm, Q_ELEMS + 2 * (kk / 4) * 4096 + (kk % 4) * 16) };
    }
    wgmma_commit();
    if pingpong {
        // The other consumer's turn at the tensor cores while this one runs its softmax.
        named_barrier_arrive(2 - cw, 256);
    }
    wgmma_wait::<0>(&mut sacc);
    let (p0, m0r, l0r, _) = softmax_tile(sacc, mrow, lrow, 0, r, s, causal, tile_has_edge(0, s, m0, causal), scale_log2);
    mrow = m0r;
    lrow = l0r;
    // P of the previous tile, the A operand of its P V, issued with the next tile's Q K^T.
    let mut pv = [f16::from_f32(0.0); 64];
    // Two values per instruction (`cvt.rn.f16x2.f32`): P holds no NaN.
    for i in (0..32usize).unroll() {
        let two = f16::from_f32_pair(p0[2 * i], p0[2 * i + 1]);
        pv[2 * i] = two[0];
        pv[2 * i + 1] = two[1];
    }
    for it in 1..tiles {
        let st = it % STAGES;
        let n0 = it * BN;
        mbarrier_wait(bars, FULL + st, (it / STAGES) % 2);
        if pingpong {
            named_barrier_sync(1 + cw, 256);
        }
        let kb = Q_ELEMS + st * STAGE;
        let vb = Q_ELEMS + STAGES * STAGE + ((it - 1) % STAGES) * STAGE;
        sacc = [0.0f32; 64];
        wgmma_fence();
        for kk in (0..8u32).unroll() {
            // SAFETY: as for tile 0, in stage st.
            unsafe { wgmma_m64n128k16_bt_unchecked(&mut sacc, sm, (2 * (kk / 4) + cw) * 4096 + (kk % 4) * 16, sm, kb + 2 * (kk / 4) * 4096 + (kk % 4) * 16) };
        }
        wgmma_commit();
        for kk in (0..8u32).unroll() {
            let x = (8 * kk) as usize;
            let a = [pv[x], pv[x + 1], pv[x + 2], pv[x + 3], pv[x + 4], pv[x + 5], pv[x + 6], pv[x + 7]];
            // SAFETY: V's tiles (kk / 4, 0) and (kk / 4, 1) of the previous tile's stage start at
            // a multiple of 4096 below ELEMS, rows kk % 4 * 16 (x 64); `sm` holds ELEMS (checked
            // on entry).
            unsafe { wgmma_m64n128k16_rs_unchecked(&mut oacc, a, sm, vb + 2 * (kk / 4) * 4096 + (kk % 4) * 1024) };
        }
        wgmma_commit();
        if pingpong {
            named_barrier_arrive(2 - cw, 256);
        }
        // Q K^T is done (P V may still run): the softmax of this tile.
        wgmma_wait::<1>(&mut sacc);
        let (p, m2, l2, alpha) = softmax_tile(sacc, mrow, lrow, n0, r, s, causal, tile_has_edge(n0, s, m0, causal), scale_log2);
        mrow = m2;
        lrow = l2;
        // The previous tile's P V is done: release its stage, rescale O.
        wgmma_wait::<0>(&mut oacc);
        if tid % 128 == 0 {
            mbarrier_arrive(bars, EMPTY + (it - 1) % STAGES);
        }
        oacc = rescale(oacc, alpha);
        // Two values per instruction (`cvt.rn.f16x2.f32`): P holds no NaN.
        for i in (0..32usize).unroll() {
            let two = f16::from_f32_pair(p[2 * i], p[2 * i + 1]);
            pv[2 * i] = two[0];
            pv[2 * i + 1] = two[1];
        }
    }
    if pingpong && cw == 0 {
        // Consumer 2's last arrival at barrier 1 (one more than consumer 1 waits for in the
        // loop), so that no round is left open.
        named_barrier_sync(1, 256);
    }
    // The last tile's P V.
    let last = tiles - 1;
    let vb = Q_ELEMS + STAGES * STAGE + (last % STAGES) * STAGE;
    wgmma_fence();
    for kk in (0..8u32).unroll() {
        let x = (8 * kk) as usize;
        let a = [pv[x], pv[x + 1], pv[x + 2], pv[x + 3], pv[x + 4], pv[x + 5], pv[x + 6], pv[x + 7]];
        // SAFETY: as in the loop.
        unsafe { wgmma_m64n128k16_rs_unchecked(&mut oacc, a, sm, vb + 2 * (kk / 4) * 4096 + (kk % 4) * 1024) };
    }
    wgmma_commit();
    wgmma_wait::<0>(&mut oacc);
    if tid % 128 == 0 {
        mbarrier_arrive(bars, EMPTY + last % STAGES);
    }
    let inv = row_scales(lrow);
    for h in (0..2usize).unroll() {
        let row = r + 8 * h as u32;
        if row < s {
            let base = (bh * s + row) as usize * d as usize + 2 * (l % 4) as usize;
            for j in (0..16usize).unroll() {
                if (8 * j as u32) < d {
                    let at = base + 8 * j;
                    // SAFETY: row < S and column 8 j + 2 (l % 4) + 1 < D of head bh lie in the
                    // B H S D elements of `o` (checked on entry).
                    unsafe {
                        *o.get_unchecked_mut(at) = f16::from_f32(oacc[4 * j + 2 * h] * inv[h]);
                        *o.get_unchecked_mut(at + 1) = f16::from_f32(oacc[4 * j + 2 * h + 1] * inv[h]);
                    }
                }
            }
        }
    }
}

/// The D = 64 kernel: one d-tile of `Q`, `K` and `V`, `Q K^T` in 4 k-steps, `O` (64 x 64, 32
/// accumulators per thread) by `wgmma_m64n64k16_rs`; otherwise `attention_wgmma_bf16`.
#[rawkernel(max_threads = 384, fast_math)]
#[allow(clippy::too_many_arguments)] // the shape, the flags, the three maps and the output
pub fn attention_wgmma_d64_bf16(
    s: u32,
    d: u32,
    causal: bool,
    pingpong: bool,
    scale_log2: f32,
    q: &TensorMap<bf16>,
    k: &TensorMap<bf16>,
    v: &TensorMap<bf16>,
    o: &mut [bf16],
) {
    let sm = dynamic_shared::<bf16>();
    let bars = shared_array::<u64, 8>();
    let tid = thread_idx().x;
    let bh = block_idx().y;
    // The last query rows (the most key tiles when causal) first.
    let mblk = grid_dim().x - 1 - block_idx().x;
    let m_blk = mblk * BM;
    // The wrapper checks these with a clear error first; the kernel then computes nothing. No
    // checked access follows (its report would cost the consumers registers).
    if d != 64 || !shape_ok(s, d, grid_dim().y, o.len(), sm.len()) {
        return;
    }
    let tiles = key_tiles(s, m_blk, causal);
    if tid == 0 {
        mbarrier_init(bars, QBAR, 1);
        for i in 0..STAGES {
            mbarrier_init(bars, FULL + i, 1);
            mbarrier_init(bars, EMPTY + i, 2);
        }
    }
    sync_threads();
    let wg = tid / 128;
    if wg == 0 {
        warpgroup_reg_dealloc::<24>();
        if tid == 0 {
            // The block's Q (d / 64 d-tiles of two 64-row boxes), then the key tiles of K and V
            // into the ring, each stage reused once both consumers have released it.
            // One d-tile of Q, K and V (D = 64).
            let (row0, kv0, dt) = (bh * s + m_blk, bh * s, 1u32);
            mbarrier_arrive_expect_tx(bars, QBAR, 2 * dt * BOX_BYTES);
            for t in 0..dt {
                for w in 0..2u32 {
                    tma_load_2d(sm, (2 * t + w) * 4096, q, (64 * t) as i32, (row0 + 64 * w) as i32, bars, QBAR);
                }
            }
            for it in 0..tiles {
                let st = it % STAGES;
                if it >= STAGES {
                    mbarrier_wait(bars, EMPTY + st, (it / STAGES - 1) % 2);
                }
                mbarrier_arrive_expect_tx(bars, FULL + st, 4 * dt * BOX_BYTES);
                let kb = Q_ELEMS + st * STAGE;
                let vb = Q_ELEMS + STAGES * STAGE + st * STAGE;
                let n0 = kv0 + it * BN;
                for u in 0..2u32 {
                    for t in 0..dt {
                        tma_load_2d(sm, kb + (2 * t + u) * 4096, k, (64 * t) as i32, (n0 + 64 * u) as i32, bars, FULL + st);
                    }
                    for t in 0..dt {
                        tma_load_2d(sm, vb + (2 * u + t) * 4096, v, (64 * t) as i32, (n0 + 64 * u) as i32, bars, FULL + st);
                    }
                }
            }
        }
        return;
    }
    warpgroup_reg_alloc::<240>();
    let cw = wg - 1;
    let (l, qw) = (tid % 32, (tid % 128) / 32);
    let m0 = m_blk + 64 * cw;
    // The thread's first row within the head (and row + 8).
    let r = m0 + 16 * qw + l / 4;
    let mut mrow = [-f32::INFINITY; 2];
    let mut lrow = [0.0f32; 2];
    let mut oacc = [0.0f32; 32];
    mbarrier_wait(bars, QBAR, 0);
    if pingpong && cw == 0 {
        // Consumer 1 takes the first turn.
        named_barrier_arrive(1, 256);
    }
    // Tile 0: Q K^T alone.
    mbarrier_wait(bars, FULL, 0);
    if pingpong {
        named_barrier_sync(1 + cw, 256);
    }
    let mut sacc = [0.0f32; 64];
    wgmma_fence();
    for kk in (0..4u32).unroll() {
        // SAFETY: Q's tile (kk / 4, cw) and K's two tiles of d-tile kk / 4 in stage 0 start at
        // multiples of 4096 below ELEMS, columns kk % 4 * 16 (0, 16, 32, 48); `sm` holds ELEMS
        // (checked on entry) and dynamic shared memory is 1024-byte aligned.
        unsafe { wgmma_m64n128k16_bt_unchecked(&mut sacc, sm, (2 * (kk / 4) + cw) * 4096 + (kk % 4) * 16, sm, Q_ELEMS + 2 * (kk / 4) * 4096 + (kk % 4) * 16) };
    }
    wgmma_commit();
    if pingpong {
        // The other consumer's turn at the tensor cores while this one runs its softmax.
        named_barrier_arrive(2 - cw, 256);
    }
    wgmma_wait::<0>(&mut sacc);
    let (p0, m0r, l0r, _) = softmax_tile(sacc, mrow, lrow, 0, r, s, causal, tile_has_edge(0, s, m0, causal), scale_log2);
    mrow = m0r;
    lrow = l0r;
    // P of the previous tile, the A operand of its P V, issued with the next tile's Q K^T.
    let mut pv = [bf16::from_f32(0.0); 64];
    // Two values per instruction (`cvt.rn.bf16x2.f32`): P holds no NaN.
    for i in (0..32usize).unroll() {
        let two = bf16::from_f32_pair(p0[2 * i], p0[2 * i + 1]);
        pv[2 * i] = two[0];
        pv[2 * i + 1] = two[1];
    }
    for it in 1..tiles {
        let st = it % STAGES;
        let n0 = it * BN;
        mbarrier_wait(bars, FULL + st, (it / STAGES) % 2);
        if pingpong {
            named_barrier_sync(1 + cw, 256);
        }
        let kb = Q_ELEMS + st * STAGE;
        let vb = Q_ELEMS + STAGES * STAGE + ((it - 1) % STAGES) * STAGE;
        sacc = [0.0f32; 64];
        wgmma_fence();
        for kk in (0..4u32).unroll() {
            // SAFETY: as for tile 0, in stage st.
            unsafe { wgmma_m64n128k16_bt_unchecked(&mut sacc, sm, (2 * (kk / 4) + cw) * 4096 + (kk % 4) * 16, sm, kb + 2 * (kk / 4) * 4096 + (kk % 4) * 16) };
        }
        wgmma_commit();
        for kk in (0..8u32).unroll() {
            let x = (8 * kk) as usize;
            let a = [pv[x], pv[x + 1], pv[x + 2], pv[x + 3], pv[x + 4], pv[x + 5], pv[x + 6], pv[x + 7]];
            // SAFETY: V's tile (kk / 4, 0) of the previous tile's stage starts at
            // a multiple of 4096 below ELEMS, rows kk % 4 * 16 (x 64); `sm` holds ELEMS (checked
            // on entry).
            unsafe { wgmma_m64n64k16_rs_unchecked(&mut oacc, a, sm, vb + 2 * (kk / 4) * 4096 + (kk % 4) * 1024) };
        }
        wgmma_commit();
        if pingpong {
            named_barrier_arrive(2 - cw, 256);
        }
        // Q K^T is done (P V may still run): the softmax of this tile.
        wgmma_wait::<1>(&mut sacc);
        let (p, m2, l2, alpha) = softmax_tile(sacc, mrow, lrow, n0, r, s, causal, tile_has_edge(n0, s, m0, causal), scale_log2);
        mrow = m2;
        lrow = l2;
        // The previous tile's P V is done: release its stage, rescale O.
        wgmma_wait::<0>(&mut oacc);
        if tid % 128 == 0 {
            mbarrier_arrive(bars, EMPTY + (it - 1) % STAGES);
        }
        oacc = rescale_d64(oacc, alpha);
        // Two values per instruction (`cvt.rn.bf16x2.f32`): P holds no NaN.
        for i in (0..32usize).unroll() {
            let two = bf16::from_f32_pair(p[2 * i], p[2 * i + 1]);
            pv[2 * i] = two[0];
            pv[2 * i + 1] = two[1];
        }
    }
    if pingpong && cw == 0 {
        // Consumer 2's last arrival at barrier 1 (one more than consumer 1 waits for in the
        // loop), so that no round is left open.
        named_barrier_sync(1, 256);
    }
    // The last tile's P V.
    let last = tiles - 1;
    let vb = Q_ELEMS + STAGES * STAGE + (last % STAGES) * STAGE;
    wgmma_fence();
    for kk in (0..8u32).unroll() {
        let x = (8 * kk) as usize;
        let a = [pv[x], pv[x + 1], pv[x + 2], pv[x + 3], pv[x + 4], pv[x + 5], pv[x + 6], pv[x + 7]];
        // SAFETY: as in the loop.
        unsafe { wgmma_m64n64k16_rs_unchecked(&mut oacc, a, sm, vb + 2 * (kk / 4) * 4096 + (kk % 4) * 1024) };
    }
    wgmma_commit();
    wgmma_wait::<0>(&mut oacc);
    if tid % 128 == 0 {
        mbarrier_arrive(bars, EMPTY + last % STAGES);
    }
    let inv = row_scales(lrow);
    for h in (0..2usize).unroll() {
        let row = r + 8 * h as u32;
        if row < s {
            let base = (bh * s + row) as usize * d as usize + 2 * (l % 4) as usize;
            for j in (0..8usize).unroll() {
                if (8 * j as u32) < d {
                    let at = base + 8 * j;
                    // SAFETY: row < S and column 8 j + 2 (l % 4) + 1 < D of head bh lie in the
                    // B H S D elements of `o` (checked on entry).
                    unsafe {
                        *o.get_unchecked_mut(at) = bf16::from_f32(oacc[4 * j + 2 * h] * inv[h]);
                        *o.get_unchecked_mut(at + 1) = bf16::from_f32(oacc[4 * j + 2 * h + 1] * inv[h]);
                    }
                }
            }
        }
    }
}

/// The D = 64 kernel: one d-tile of `Q`, `K` and `V`, `Q K^T` in 4 k-steps, `O` (64 x 64, 32
/// accumulators per thread) by `wgmma_m64n64k16_rs`; otherwise `attention_wgmma_f16`.
#[rawkernel(max_threads = 384, fast_math)]
#[allow(clippy::too_many_arguments)] // the shape, the flags, the three maps and the output
pub fn attention_wgmma_d64_f16(
    s: u32,
    d: u32,
    causal: bool,
    pingpong: bool,
    scale_log2: f32,
    q: &TensorMap<f16>,
    k: &TensorMap<f16>,
    v: &TensorMap<f16>,
    o: &mut [f16],
) {
    let sm = dynamic_shared::<f16>();
    let bars = shared_array::<u64, 8>();
    let tid = thread_idx().x;
    let bh = block_idx().y;
    // The last query rows (the most key tiles when causal) first.
    let mblk = grid_dim().x - 1 - block_idx().x;
    let m_blk = mblk * BM;
    // The wrapper checks these with a clear error first; the kernel then computes nothing. No
    // checked access follows (its report would cost the consumers registers).
    if d != 64 || !shape_ok(s, d, grid_dim().y, o.len(), sm.len()) {
        return;
    }
    let tiles = key_tiles(s, m_blk, causal);
    if tid == 0 {
        mbarrier_init(bars, QBAR, 1);
        for i in 0..STAGES {
            mbarrier_init(bars, FULL + i, 1);
            mbarrier_init(bars, EMPTY + i, 2);
        }
    }
    sync_threads();
    let wg = tid / 128;
    if wg == 0 {
        warpgroup_reg_dealloc::<24>();
        if tid == 0 {
            // The block's Q (d / 64 d-tiles of two 64-row boxes), then the key tiles of K and V
            // into the ring, each stage reused once both consumers have released it.
            // One d-tile of Q, K and V (D = 64).
            let (row0, kv0, dt) = (bh * s + m_blk, bh * s, 1u32);
            mbarrier_arrive_expect_tx(bars, QBAR, 2 * dt * BOX_BYTES);
            for t in 0..dt {
                for w in 0..2u32 {
                    tma_load_2d(sm, (2 * t + w) * 4096, q, (64 * t) as i32, (row0 + 64 * w) as i32, bars, QBAR);
                }
            }
            for it in 0..tiles {
                let st = it % STAGES;
                if it >= STAGES {
                    mbarrier_wait(bars, EMPTY + st, (it / STAGES - 1) % 2);
                }
                mbarrier_arrive_expect_tx(bars, FULL + st, 4 * dt * BOX_BYTES);
                let kb = Q_ELEMS + st * STAGE;
                let vb = Q_ELEMS + STAGES * STAGE + st * STAGE;
                let n0 = kv0 + it * BN;
                for u in 0..2u32 {
                    for t in 0..dt {
                        tma_load_2d(sm, kb + (2 * t + u) * 4096, k, (64 * t) as i32, (n0 + 64 * u) as i32, bars, FULL + st);
                    }
                    for t in 0..dt {
                        tma_load_2d(sm, vb + (2 * u + t) * 4096, v, (64 * t) as i32, (n0 + 64 * u) as i32, bars, FULL + st);
                    }
                }
            }
        }
        return;
    }
    warpgroup_reg_alloc::<240>();
    let cw = wg - 1;
    let (l, qw) = (tid % 32, (tid % 128) / 32);
    let m0 = m_blk + 64 * cw;
    // The thread's first row within the head (and row + 8).
    let r = m0 + 16 * qw + l / 4;
    let mut mrow = [-f32::INFINITY; 2];
    let mut lrow = [0.0f32; 2];
    let mut oacc = [0.0f32; 32];
    mbarrier_wait(bars, QBAR, 0);
    if pingpong && cw == 0 {
        // Consumer 1 takes the first turn.
        named_barrier_arrive(1, 256);
    }
    // Tile 0: Q K^T alone.
    mbarrier_wait(bars, FULL, 0);
    if pingpong {
        named_barrier_sync(1 + cw, 256);
    }
    let mut sacc = [0.0f32; 64];
    wgmma_fence();
    for kk in (0..4u32).unroll() {
        // SAFETY: Q's tile (kk / 4, cw) and K's two tiles of d-tile kk / 4 in stage 0 start at
        // multiples of 4096 below ELEMS, columns kk % 4 * 16 (0, 16, 32, 48); `sm` holds ELEMS
        // (checked on entry) and dynamic shared memory is 1024-byte aligned.
        unsafe { wgmma_m64n128k16_bt_unchecked(&mut sacc, sm, (2 * (kk / 4) + cw) * 4096 + (kk % 4) * 16, sm, Q_ELEMS + 2 * (kk / 4) * 4096 + (kk % 4) * 16) };
    }
    wgmma_commit();
    if pingpong {
        // The other consumer's turn at the tensor cores while this one runs its softmax.
        named_barrier_arrive(2 - cw, 256);
    }
    wgmma_wait::<0>(&mut sacc);
    let (p0, m0r, l0r, _) = softmax_tile(sacc, mrow, lrow, 0, r, s, causal, tile_has_edge(0, s, m0, causal), scale_log2);
    mrow = m0r;
    lrow = l0r;
    // P of the previous tile, the A operand of its P V, issued with the next tile's Q K^T.
    let mut pv = [f16::from_f32(0.0); 64];
    // Two values per instruction (`cvt.rn.f16x2.f32`): P holds no NaN.
    for i in (0..32usize).unroll() {
        let two = f16::from_f32_pair(p0[2 * i], p0[2 * i + 1]);
        pv[2 * i] = two[0];
        pv[2 * i + 1] = two[1];
    }
    for it in 1..tiles {
        let st = it % STAGES;
        let n0 = it * BN;
        mbarrier_wait(bars, FULL + st, (it / STAGES) % 2);
        if pingpong {
            named_barrier_sync(1 + cw, 256);
        }
        let kb = Q_ELEMS + st * STAGE;
        let vb = Q_ELEMS + STAGES * STAGE + ((it - 1) % STAGES) * STAGE;
        sacc = [0.0f32; 64];
        wgmma_fence();
        for kk in (0..4u32).unroll() {
            // SAFETY: as for tile 0, in stage st.
            unsafe { wgmma_m64n128k16_bt_unchecked(&mut sacc, sm, (2 * (kk / 4) + cw) * 4096 + (kk % 4) * 16, sm, kb + 2 * (kk / 4) * 4096 + (kk % 4) * 16) };
        }
        wgmma_commit();
        for kk in (0..8u32).unroll() {
            let x = (8 * kk) as usize;
            let a = [pv[x], pv[x + 1], pv[x + 2], pv[x + 3], pv[x + 4], pv[x + 5], pv[x + 6], pv[x + 7]];
            // SAFETY: V's tile (kk / 4, 0) of the previous tile's stage starts at
            // a multiple of 4096 below ELEMS, rows kk % 4 * 16 (x 64); `sm` holds ELEMS (checked
            // on entry).
            unsafe { wgmma_m64n64k16_rs_unchecked(&mut oacc, a, sm, vb + 2 * (kk / 4) * 4096 + (kk % 4) * 1024) };
        }
        wgmma_commit();
        if pingpong {
            named_barrier_arrive(2 - cw, 256);
        }
        // Q K^T is done (P V may still run): the softmax of this tile.
        wgmma_wait::<1>(&mut sacc);
        let (p, m2, l2, alpha) = softmax_tile(sacc, mrow, lrow, n0, r, s, causal, tile_has_edge(n0, s, m0, causal), scale_log2);
        mrow = m2;
        lrow = l2;
        // The previous tile's P V is done: release its stage, rescale O.
        wgmma_wait::<0>(&mut oacc);
        if tid % 128 == 0 {
            mbarrier_arrive(bars, EMPTY + (it - 1) % STAGES);
        }
        oacc = rescale_d64(oacc, alpha);
        // Two values per instruction (`cvt.rn.f16x2.f32`): P holds no NaN.
        for i in (0..32usize).unroll() {
            let two = f16::from_f32_pair(p[2 * i], p[2 * i + 1]);
            pv[2 * i] = two[0];
            pv[2 * i + 1] = two[1];
        }
    }
    if pingpong && cw == 0 {
        // Consumer 2's last arrival at barrier 1 (one more than consumer 1 waits for in the
        // loop), so that no round is left open.
        named_barrier_sync(1, 256);
    }
    // The last tile's P V.
    let last = tiles - 1;
    let vb = Q_ELEMS + STAGES * STAGE + (last % STAGES) * STAGE;
    wgmma_fence();
    for kk in (0..8u32).unroll() {
        let x = (8 * kk) as usize;
        let a = [pv[x], pv[x + 1], pv[x + 2], pv[x + 3], pv[x + 4], pv[x + 5], pv[x + 6], pv[x + 7]];
        // SAFETY: as in the loop.
        unsafe { wgmma_m64n64k16_rs_unchecked(&mut oacc, a, sm, vb + 2 * (kk / 4) * 4096 + (kk % 4) * 1024) };
    }
    wgmma_commit();
    wgmma_wait::<0>(&mut oacc);
    if tid % 128 == 0 {
        mbarrier_arrive(bars, EMPTY + last % STAGES);
    }
    let inv = row_scales(lrow);
    for h in (0..2usize).unroll() {
        let row = r + 8 * h as u32;
        if row < s {
            let base = (bh * s + row) as usize * d as usize + 2 * (l % 4) as usize;
            for j in (0..8usize).unroll() {
                if (8 * j as u32) < d {
                    let at = base + 8 * j;
                    // SAFETY: row < S and column 8 j + 2 (l % 4) + 1 < D of head bh lie in the
                    // B H S D elements of `o` (checked on entry).
                    unsafe {
                        *o.get_unchecked_mut(at) = f16::from_f32(oacc[4 * j + 2 * h] * inv[h]);
                        *o.get_unchecked_mut(at + 1) = f16::from_f32(oacc[4 * j + 2 * h + 1] * inv[h]);
                    }
                }
            }
        }
    }
}
