//! Flash attention forward (FlashAttention-2's design) on tensor cores as `#[rawkernel]`s:
//! `O = softmax(Q K^T / sqrt(D)) V` for `Q`, `K`, `V`, `O` of shape `[B, H, S, D]`, contiguous,
//! in `bf16` (`attention_bf16`) or `f16` (`attention_f16`), `D` 64 or 128, causal (query `i` sees
//! keys `j <= i`) or not, any `S`; f32 accumulation.
//!
//! A block of 4 warps takes 64 query rows of one (batch, head): grid `(B * H, ceil(S / 64))`,
//! 128 threads. Each warp owns 16 rows; their `Q` fragments (the A operand of `mma_m16n8k16`)
//! are loaded once into registers. `K` and `V` stream through shared memory in tiles of
//! `TILE` elements (`4096 / D` keys: 64 for D = 64, 32 for D = 128), two stages of `cp_async`:
//! the copy of tile `i + 1` runs while the warps work on tile `i`. Per tile each warp computes
//! its 16 x `4096 / D` scores `S = Q K^T` (the B fragment of `K^T` is `K`'s rows, loaded by
//! `ldmatrix_x4`), updates the online softmax in registers (row maxima and sums over the quad of
//! lanes that share a row, `exp2` with `log2(e) / sqrt(D)` folded into the scores), converts
//! the probabilities to the 16-bit type in place as the A fragment of `P V` (whose B fragment
//! comes from `V`'s rows through `ldmatrix_x4_trans`), and accumulates `O` in f32. At the end
//! `O` is divided by the row sums and stored.
//!
//! Tails: a key row past `S` is copied from row `S - 1` (memory of the head, finite values) and
//! its score is `-inf`, so it weighs nothing; query rows past `S` compute on zeros and are not
//! stored. Causal: tiles whose first key lies after the block's last query row are skipped
//! whole, the ones crossing the diagonal masked (`-inf` above it); the blocks with the most
//! tiles (the last rows) are scheduled first.
//!
//! Shared memory rows (D elements) are stored in 16-byte chunks permuted by an XOR with the
//! row's index mod 8, so that the 8 rows an `ldmatrix` phase reads fall in distinct banks.
//! D is a kernel argument (const generics are not in the language): the register arrays are
//! sized for D = 128 and 64-key tiles, and loops over D and keys are unrolled with a guard.
//!
//! `examples/attention.rs` launches them through a checked wrapper (examples/attention_lib.rs).

use cuprum::prelude::*;

/// Query rows per block (16 per warp).
pub const BM: u32 = 64;
/// Threads per block: 4 warps.
pub const THREADS: u32 = 128;
/// Elements of one stage of K (or V): `4096 / D` keys of `D` elements.
pub const TILE: u32 = 4096;

/// The online-softmax step of one tile for the lane's two rows `r0` and `r0 + 8`: masks the
/// scores (`sacc`, 16 rows x `8 * nb8` keys from key `n0`; `edge` when the tile reaches past `S`
/// or crosses the causal diagonal), scales them to base 2 and updates the running maxima `mrow`
/// and sums `lrow` (the lane's partial sums: the quad's are added at the end). Returns
/// `exp2(score - max)` in the place of the scores, the new maxima and sums, and the factors
/// `alpha` by which the rows of `O` accumulated so far are rescaled.
#[device]
#[allow(clippy::too_many_arguments)]
fn online_softmax(
    sacc: [[f32; 4]; 8],
    mrow: [f32; 2],
    lrow: [f32; 2],
    n0: u32,
    nb8: u32,
    r0: u32,
    s: u32,
    causal: bool,
    edge: bool,
    scale_log2: f32,
) -> ([[f32; 4]; 8], [f32; 2], [f32; 2], [f32; 2]) {
    let t2 = 2 * (lane_id() % 4);
    let mut p = sacc;
    let mut m = mrow;
    let mut l = lrow;
    let mut alpha = [0.0f32; 2];
    for h in (0..2usize).unroll() {
        let row = r0 + 8 * h as u32;
        let mut mx = -f32::INFINITY;
        for j in (0..8usize).unroll() {
            if (j as u32) < nb8 {
                for e in (0..2usize).unroll() {
                    let kv = n0 + 8 * j as u32 + t2 + e as u32;
                    let x = if edge && (kv >= s || (causal && kv > row)) { -f32::INFINITY } else { p[j][2 * h + e] * scale_log2 };
                    p[j][2 * h + e] = x;
                    mx = mx.max(x);
                }
            }
        }
        mx = warp_reduce_max_width(mx, 4);
        let m_new = m[h].max(mx);
        // A row with no visible key yet keeps a zero sum (exp2(-inf - 0) = 0), never NaN.
        let m_use = if m_new == -f32::INFINITY { 0.0 } else { m_new };
        alpha[h] = (m[h] - m_use).exp2();
        m[h] = m_new;
        let mut sum = 0.0f32;
        for j in (0..8usize).unroll() {
            if (j as u32) < nb8 {
                for e in (0..2usize).unroll() {
                    let x = (p[j][2 * h + e] - m_use).exp2();
                    p[j][2 * h + e] = x;
                    sum += x;
                }
            }
        }
        l[h] = l[h] * alpha[h] + sum;
    }
    (p, m, l, alpha)
}

/// The quad's total row sums of the lane's two rows, as the factors `1 / l` that finish `O`
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

/// The number of key tiles block row `m0` needs: all of `S`, or up to its last row when causal.
#[device]
#[allow(clippy::manual_div_ceil)] // the kernel language has no `div_ceil`
fn key_tiles(s: u32, m0: u32, bn: u32, causal: bool) -> u32 {
    let end = if causal { s.min(m0 + BM) } else { s };
    (end + bn - 1) / bn
}

/// Whether a key tile from `n0` (`bn` keys) needs masking: it reaches past `S`, or (causal) one
/// of its keys lies after the block's first row `m0`.
#[device]
fn tile_has_edge(n0: u32, bn: u32, s: u32, m0: u32, causal: bool) -> bool {
    n0 + bn > s || (causal && n0 + bn > m0 + 1)
}

/// Where this thread's four 16-byte chunks of a K or V tile go in shared memory (swizzled), and
/// which row and column of the tile they hold: chunk `tid + 128 i`. Returns (shared offsets,
/// rows, columns).
#[device]
fn copy_slots(tid: u32, d: u32) -> ([u32; 4], [u32; 4], [u32; 4]) {
    let lg = if d == 64 { 3u32 } else { 4u32 };
    let mut sm = [0u32; 4];
    let mut row = [0u32; 4];
    let mut col = [0u32; 4];
    for i in (0..4usize).unroll() {
        let qq = tid + THREADS * i as u32;
        let (r, c) = (qq >> lg, qq & ((1u32 << lg) - 1));
        row[i] = r;
        col[i] = 8 * c;
        sm[i] = r * d + ((c ^ (r % 8)) * 8);
    }
    (sm, row, col)
}

#[rawkernel]
#[allow(clippy::too_many_arguments)] // the shape, the flags and the four arrays
pub fn attention_bf16(s: u32, d: u32, causal: bool, scale_log2: f32, q: &[bf16], k: &[bf16], v: &[bf16], o: &mut [bf16]) {
    let sk = shared_array::<bf16, 8192>();
    let sv = shared_array::<bf16, 8192>();
    let tid = thread_idx().x;
    let (su, du) = (s as usize, d as usize);
    let len = grid_dim().x as usize * su * du;
    // The shapes the unchecked copies and loads rely on, checked once (the launch wrapper
    // checks the same and reports them).
    if tid >= THREADS || !(d == 64 || d == 128) || s == 0 || q.len() < len || k.len() < len || v.len() < len || o.len() < len {
        return;
    }
    let (lane, warp) = (tid % 32, tid / 32);
    let head = block_idx().x as usize * su * du;
    let m0 = (grid_dim().y - 1 - block_idx().y) * BM;
    let (nkd, bn) = (d / 16, TILE / d);
    let nkp = bn / 16;
    let (g, t2) = (lane / 4, 2 * (lane % 4));
    let r0 = m0 + warp * 16 + g;

    // Q's fragments: k-step kd holds columns 16 kd .. 16 kd + 16 of rows r0 and r0 + 8.
    let z = bf16::from_f32(0.0);
    let mut qf = [[z; 8]; 8];
    for kd in (0..8usize).unroll() {
        if (kd as u32) < nkd {
            for e in (0..8usize).unroll() {
                let row = r0 + 8 * ((e as u32 / 2) % 2);
                let col = 16 * kd as u32 + t2 + e as u32 % 2 + 8 * (e as u32 / 4);
                if row < s {
                    // SAFETY: row < S and col < D: inside the head, below `len <= q.len()`.
                    qf[kd][e] = unsafe { *q.get_unchecked(head + row as usize * du + col as usize) };
                }
            }
        }
    }

    let (c_sm, c_row, c_col) = copy_slots(tid, d);
    let tiles = key_tiles(s, m0, bn, causal);
    // Tile 0 in flight.
    for i in (0..4usize).unroll() {
        let src = head + (c_row[i].min(s - 1)) as usize * du + c_col[i] as usize;
        // SAFETY: the row is below S and the chunk inside D, so `src + 8 <= len <= k.len(), v.len()`
        // (checked above), a multiple of 8; `c_sm[i] + 8 <= TILE` (rows < 4096 / D), a multiple of 8.
        unsafe {
            cp_async_unchecked(sk, c_sm[i], k, src);
            cp_async_unchecked(sv, c_sm[i], v, src);
        }
    }
    cp_async_commit();

    // The lanes' ldmatrix rows within a tile: K's key lane % 8 + 8 (lane / 16) of a 16-key pair
    // with chunk bit (lane / 8) % 2; V's key lane % 8 + 8 ((lane / 8) % 2) of a 16-key step with
    // chunk bit lane / 16. Both rows are lane % 8 mod 8 (the swizzle).
    let (kx, kc) = ((lane % 8 + 8 * (lane / 16)) * d, (lane / 8) % 2);
    let (vx, vc) = ((lane % 8 + 8 * ((lane / 8) % 2)) * d, lane / 16);
    let sw = lane % 8;
    let mut oacc = [[0.0f32; 4]; 16];
    let mut mrow = [-f32::INFINITY; 2];
    let mut lrow = [0.0f32; 2];
    for it in 0..tiles {
        let nx = it + 1;
        if nx < tiles {
            let base = (nx % 2) * TILE;
            for i in (0..4usize).unroll() {
                let src = head + ((nx * bn + c_row[i]).min(s - 1)) as usize * du + c_col[i] as usize;
                // SAFETY: as for tile 0; `base + c_sm[i] + 8 <= 2 TILE`.
                unsafe {
                    cp_async_unchecked(sk, base + c_sm[i], k, src);
                    cp_async_unchecked(sv, base + c_sm[i], v, src);
                }
            }
        }
        cp_async_commit();
        // Tile `it` has landed (only tile `it + 1` may be in flight), for every thread.
        cp_async_wait::<1>();
        sync_threads();
        let st = (it % 2) * TILE;

        // S = Q K^T: 16 x bn scores, 8-key tiles 2 jp and 2 jp + 1 from one ldmatrix_x4.
        let mut sacc = [[0.0f32; 4]; 8];
        for kd in (0..8usize).unroll() {
            if (kd as u32) < nkd {
                for jp in (0..4usize).unroll() {
                    if (jp as u32) < nkp {
                        let off = st + 16 * jp as u32 * d + kx + (((2 * kd as u32 + kc) ^ sw) * 8);
                        // SAFETY: key rows < bn and chunks < D / 8 of the stage at `st`: 8
                        // elements inside `sk` at a multiple of 8.
                        let x = unsafe { ldmatrix_x4_unchecked(sk, off) };
                        sacc[2 * jp] = mma_m16n8k16(qf[kd], [x[0], x[1], x[2], x[3]], sacc[2 * jp]);
                        sacc[2 * jp + 1] = mma_m16n8k16(qf[kd], [x[4], x[5], x[6], x[7]], sacc[2 * jp + 1]);
                    }
                }
            }
        }
        let n0 = it * bn;
        let edge = tile_has_edge(n0, bn, s, m0, causal);
        let (p, m_next, l_next, alpha) = online_softmax(sacc, mrow, lrow, n0, 2 * nkp, r0, s, causal, edge, scale_log2);
        mrow = m_next;
        lrow = l_next;
        for j in (0..16usize).unroll() {
            if (j as u32) < 2 * nkd {
                oacc[j] = [oacc[j][0] * alpha[0], oacc[j][1] * alpha[0], oacc[j][2] * alpha[1], oacc[j][3] * alpha[1]];
            }
        }

        // O += P V: P's 16 x 16 k-step kk is score tiles 2 kk and 2 kk + 1, rounded to bf16.
        for kk in (0..4usize).unroll() {
            if (kk as u32) < nkp {
                let (p0, p1) = (p[2 * kk], p[2 * kk + 1]);
                let pa = [
                    bf16::from_f32(p0[0]),
                    bf16::from_f32(p0[1]),
                    bf16::from_f32(p0[2]),
                    bf16::from_f32(p0[3]),
                    bf16::from_f32(p1[0]),
                    bf16::from_f32(p1[1]),
                    bf16::from_f32(p1[2]),
                    bf16::from_f32(p1[3]),
                ];
                for jp in (0..8usize).unroll() {
                    if (jp as u32) < nkd {
                        let off = st + 16 * kk as u32 * d + vx + (((2 * jp as u32 + vc) ^ sw) * 8);
                        // SAFETY: as for K.
                        let x = unsafe { ldmatrix_x4_trans_unchecked(sv, off) };
                        oacc[2 * jp] = mma_m16n8k16(pa, [x[0], x[1], x[2], x[3]], oacc[2 * jp]);
                        oacc[2 * jp + 1] = mma_m16n8k16(pa, [x[4], x[5], x[6], x[7]], oacc[2 * jp + 1]);
                    }
                }
            }
        }
        // Every warp is done with stage `it % 2` before the next iteration refills it.
        sync_threads();
    }

    let inv = row_scales(lrow);
    for j in (0..16usize).unroll() {
        if (j as u32) < 2 * nkd {
            for h in (0..2usize).unroll() {
                let row = r0 + 8 * h as u32;
                if row < s {
                    let at = head + row as usize * du + (8 * j as u32 + t2) as usize;
                    // SAFETY: row < S and the column 8 j + t2 + 1 < D: below `len <= o.len()`.
                    unsafe {
                        *o.get_unchecked_mut(at) = bf16::from_f32(oacc[j][2 * h] * inv[h]);
                        *o.get_unchecked_mut(at + 1) = bf16::from_f32(oacc[j][2 * h + 1] * inv[h]);
                    }
                }
            }
        }
    }
}

/// `attention_bf16` for `f16` (the same body: `mma_m16n8k16` takes its element type from
/// concrete fragments, so the language has no generic form of it).
#[rawkernel]
#[allow(clippy::too_many_arguments)] // the shape, the flags and the four arrays
pub fn attention_f16(s: u32, d: u32, causal: bool, scale_log2: f32, q: &[f16], k: &[f16], v: &[f16], o: &mut [f16]) {
    let sk = shared_array::<f16, 8192>();
    let sv = shared_array::<f16, 8192>();
    let tid = thread_idx().x;
    let (su, du) = (s as usize, d as usize);
    let len = grid_dim().x as usize * su * du;
    // The shapes the unchecked copies and loads rely on, checked once (the launch wrapper
    // checks the same and reports them).
    if tid >= THREADS || !(d == 64 || d == 128) || s == 0 || q.len() < len || k.len() < len || v.len() < len || o.len() < len {
        return;
    }
    let (lane, warp) = (tid % 32, tid / 32);
    let head = block_idx().x as usize * su * du;
    let m0 = (grid_dim().y - 1 - block_idx().y) * BM;
    let (nkd, bn) = (d / 16, TILE / d);
    let nkp = bn / 16;
    let (g, t2) = (lane / 4, 2 * (lane % 4));
    let r0 = m0 + warp * 16 + g;

    // Q's fragments: k-step kd holds columns 16 kd .. 16 kd + 16 of rows r0 and r0 + 8.
    let z = f16::from_f32(0.0);
    let mut qf = [[z; 8]; 8];
    for kd in (0..8usize).unroll() {
        if (kd as u32) < nkd {
            for e in (0..8usize).unroll() {
                let row = r0 + 8 * ((e as u32 / 2) % 2);
                let col = 16 * kd as u32 + t2 + e as u32 % 2 + 8 * (e as u32 / 4);
                if row < s {
                    // SAFETY: row < S and col < D: inside the head, below `len <= q.len()`.
                    qf[kd][e] = unsafe { *q.get_unchecked(head + row as usize * du + col as usize) };
                }
            }
        }
    }

    let (c_sm, c_row, c_col) = copy_slots(tid, d);
    let tiles = key_tiles(s, m0, bn, causal);
    // Tile 0 in flight.
    for i in (0..4usize).unroll() {
        let src = head + (c_row[i].min(s - 1)) as usize * du + c_col[i] as usize;
        // SAFETY: the row is below S and the chunk inside D, so `src + 8 <= len <= k.len(), v.len()`
        // (checked above), a multiple of 8; `c_sm[i] + 8 <= TILE` (rows < 4096 / D), a multiple of 8.
        unsafe {
            cp_async_unchecked(sk, c_sm[i], k, src);
            cp_async_unchecked(sv, c_sm[i], v, src);
        }
    }
    cp_async_commit();

    // The lanes' ldmatrix rows within a tile: K's key lane % 8 + 8 (lane / 16) of a 16-key pair
    // with chunk bit (lane / 8) % 2; V's key lane % 8 + 8 ((lane / 8) % 2) of a 16-key step with
    // chunk bit lane / 16. Both rows are lane % 8 mod 8 (the swizzle).
    let (kx, kc) = ((lane % 8 + 8 * (lane / 16)) * d, (lane / 8) % 2);
    let (vx, vc) = ((lane % 8 + 8 * ((lane / 8) % 2)) * d, lane / 16);
    let sw = lane % 8;
    let mut oacc = [[0.0f32; 4]; 16];
    let mut mrow = [-f32::INFINITY; 2];
    let mut lrow = [0.0f32; 2];
    for it in 0..tiles {
        let nx = it + 1;
        if nx < tiles {
            let base = (nx % 2) * TILE;
            for i in (0..4usize).unroll() {
                let src = head + ((nx * bn + c_row[i]).min(s - 1)) as usize * du + c_col[i] as usize;
                // SAFETY: as for tile 0; `base + c_sm[i] + 8 <= 2 TILE`.
                unsafe {
                    cp_async_unchecked(sk, base + c_sm[i], k, src);
                    cp_async_unchecked(sv, base + c_sm[i], v, src);
                }
            }
        }
        cp_async_commit();
        // Tile `it` has landed (only tile `it + 1` may be in flight), for every thread.
        cp_async_wait::<1>();
        sync_threads();
        let st = (it % 2) * TILE;

        // S = Q K^T: 16 x bn scores, 8-key tiles 2 jp and 2 jp + 1 from one ldmatrix_x4.
        let mut sacc = [[0.0f32; 4]; 8];
        for kd in (0..8usize).unroll() {
            if (kd as u32) < nkd {
                for jp in (0..4usize).unroll() {
                    if (jp as u32) < nkp {
                        let off = st + 16 * jp as u32 * d + kx + (((2 * kd as u32 + kc) ^ sw) * 8);
                        // SAFETY: key rows < bn and chunks < D / 8 of the stage at `st`: 8
                        // elements inside `sk` at a multiple of 8.
                        let x = unsafe { ldmatrix_x4_unchecked(sk, off) };
                        sacc[2 * jp] = mma_m16n8k16(qf[kd], [x[0], x[1], x[2], x[3]], sacc[2 * jp]);
                        sacc[2 * jp + 1] = mma_m16n8k16(qf[kd], [x[4], x[5], x[6], x[7]], sacc[2 * jp + 1]);
                    }
                }
            }
        }
        let n0 = it * bn;
        let edge = tile_has_edge(n0, bn, s, m0, causal);
        let (p, m_next, l_next, alpha) = online_softmax(sacc, mrow, lrow, n0, 2 * nkp, r0, s, causal, edge, scale_log2);
        mrow = m_next;
        lrow = l_next;
        for j in (0..16usize).unroll() {
            if (j as u32) < 2 * nkd {
                oacc[j] = [oacc[j][0] * alpha[0], oacc[j][1] * alpha[0], oacc[j][2] * alpha[1], oacc[j][3] * alpha[1]];
            }
        }

        // O += P V: P's 16 x 16 k-step kk is score tiles 2 kk and 2 kk + 1, rounded to f16.
        for kk in (0..4usize).unroll() {
            if (kk as u32) < nkp {
                let (p0, p1) = (p[2 * kk], p[2 * kk + 1]);
                let pa = [
                    f16::from_f32(p0[0]),
                    f16::from_f32(p0[1]),
                    f16::from_f32(p0[2]),
                    f16::from_f32(p0[3]),
                    f16::from_f32(p1[0]),
                    f16::from_f32(p1[1]),
                    f16::from_f32(p1[2]),
                    f16::from_f32(p1[3]),
                ];
                for jp in (0..8usize).unroll() {
                    if (jp as u32) < nkd {
                        let off = st + 16 * kk as u32 * d + vx + (((2 * jp as u32 + vc) ^ sw) * 8);
                        // SAFETY: as for K.
                        let x = unsafe { ldmatrix_x4_trans_unchecked(sv, off) };
                        oacc[2 * jp] = mma_m16n8k16(pa, [x[0], x[1], x[2], x[3]], oacc[2 * jp]);
                        oacc[2 * jp + 1] = mma_m16n8k16(pa, [x[4], x[5], x[6], x[7]], oacc[2 * jp + 1]);
                    }
                }
            }
        }
        // Every warp is done with stage `it % 2` before the next iteration refills it.
        sync_threads();
    }

    let inv = row_scales(lrow);
    for j in (0..16usize).unroll() {
        if (j as u32) < 2 * nkd {
            for h in (0..2usize).unroll() {
                let row = r0 + 8 * h as u32;
                if row < s {
                    let at = head + row as usize * du + (8 * j as u32 + t2) as usize;
                    // SAFETY: row < S and the column 8 j + t2 + 1 < D: below `len <= o.len()`.
                    unsafe {
                        *o.get_unchecked_mut(at) = f16::from_f32(oacc[j][2 * h] * inv[h]);
                        *o.get_unchecked_mut(at + 1) = f16::from_f32(oacc[j][2 * h + 1] * inv[h]);
                    }
                }
            }
        }
    }
}
