//! The built-in scan kernel behind `cumsum` and `cumprod` (runtime/src/scan.rs): a single-pass
//! scan with decoupled look-back (Merrill and Garland, "Single-pass Parallel Prefix Scan with
//! Decoupled Look-back", 2016), written with cuprum's own macros (`crate = crate`) and
//! precompiled by the runtime's build.rs.
//!
//! The input is `rows` contiguous rows of `row_len` elements, cut into tiles of 8192 (256 threads
//! of 32 elements, staged in dynamic shared memory: 33 KiB for 4-byte types, 66 KiB for 8-byte
//! ones). Each tile pays one look-back, so larger tiles pay fewer: on an H200 a 2^28 f32 scan ran
//! at 0.37 of the copy ceiling with tiles of 2048, 0.54 with 4096, 0.67 with 8192, and no better
//! with 12288 or 16384. Each block takes the next tile from an atomic counter (so that a tile's
//! predecessors belong to blocks that started earlier and are running: no block waits for one
//! that is not resident), scans it in shared memory, publishes its total (flag 1), then looks back
//! over its predecessors in the row, 32 at a time with the first warp, adding their totals until
//! it meets one that has published its inclusive prefix (flag 2), publishes its own (flag 2), and
//! writes its elements: each element is read once and written once (8 bytes per f32 element,
//! what a copy moves). A value is published before its flag, with a fence between, and read with
//! an atomic add of -0 (the identity of every type's `+`, negative zero included) after its flag:
//! both go through the L2 cache, which every multiprocessor sees alike. (Polling with
//! `atomic_load`, a volatile load, instead of these read-modify-writes measured slower on an H200:
//! 0.498 of copy against 0.545; each poll returns sooner, so the waiting warps poll more often and
//! the L2 cache, 69% busy, serves more polls.)
//!
//! Sums start from -0 (so that a row of negative zeros sums to -0, as a sequential sum does) and
//! products from 1. The order in which floats are combined differs from a sequential loop
//! (within a thread, then a warp, a block, and across tiles), so float results differ from
//! NumPy's in the last bits, as CuPy's do.
//!
//! Element types: those with atomic adds (i32, u32, i64, u64, f32, f64). Precompiled instances:
//! f32, f64 and i64 (NumPy's defaults); i32, u32 and u64 are compiled by NVRTC at first use.

use crate::lang::prelude::*;
use cuprum_macros::{device, rawkernel};

/// Threads per block.
pub const THREADS: usize = 256;
/// Elements per thread.
const ITEMS: usize = 32;
/// Elements per tile (`THREADS * ITEMS`).
pub const TILE: usize = THREADS * ITEMS;
/// Warps per block.
const WARPS: usize = THREADS / 32;

/// `a + b`, or `a * b` when `prod` is not 0.
#[device(crate = crate)]
fn combine<T: Number>(a: T, b: T, prod: u32) -> T {
    if prod != 0 { a * b } else { a + b }
}

/// `v` combined over the 32 lanes of the warp (every lane gets the result).
#[device(crate = crate)]
fn warp_combine<T: Number>(v: T, prod: u32) -> T {
    let mut r = v;
    let mut off = 16u32;
    while off > 0 {
        let o = shfl_xor_sync(0xffff_ffff, r, off);
        r = combine(r, o, prod);
        off /= 2;
    }
    r
}

/// The inclusive scan (`+`, or `*` when `prod` is not 0) of each row of `x` (rows of `row_len`
/// contiguous elements, `tiles_per_row` tiles of `TILE` each) into `y`. Launch with 256 threads
/// and one block per tile, with `TILE + TILE / 32` elements of dynamic shared memory; `flags` (one
/// per tile) and `counter` zeroed; `agg` and `inc` (one per tile) need no initial value.
#[rawkernel(crate = crate, unchecked, max_threads = 256, min_blocks = 4, instances = [f32, f64, i64])]
pub fn scan_rows<T: Number>(
    x: &[T],
    y: &mut [T],
    row_len: u64,
    tiles_per_row: u64,
    prod: u32,
    flags: &mut [u32],
    agg: &mut [T],
    inc: &mut [T],
    counter: &mut [u32],
) {
    let tile_s = shared_array::<u32, 1>();
    // `TILE + TILE / 32` elements (the launch's dynamic shared memory).
    let data = dynamic_shared::<T>();
    let warp_tot = shared_array::<T, WARPS>();
    let prefix_s = shared_array::<T, 1>();
    let tid = thread_idx().x as usize;
    let lane = tid % 32;
    let warp = tid / 32;
    if tid == 0 {
        tile_s[0] = atomic_add(counter, 0, 1u32);
    }
    sync_threads();
    let t = tile_s[0] as u64;
    let row = t / tiles_per_row;
    let tr = t % tiles_per_row;
    let start = row * row_len + tr * TILE as u64;
    let row_end = (row + 1) * row_len;
    let count = if start + (TILE as u64) < row_end { TILE as u64 } else { row_end - start };
    let ident = if prod != 0 { T::from_f64(1.0) } else { T::from_f64(-0.0) };
    // All 16 loads first (coalesced, independent: they are in flight together), then the stores
    // to shared memory: a store between two loads would make each load wait for the last one.
    let mut v = [ident; ITEMS];
    for j in (0..ITEMS).unroll() {
        let k = j * THREADS + tid;
        if (k as u64) < count {
            v[j] = x[start as usize + k];
        }
    }
    for j in (0..ITEMS).unroll() {
        let k = j * THREADS + tid;
        data[k + k / 32] = v[j];
    }
    sync_threads();
    // The thread's 16 consecutive elements, scanned in place (`v` is dead from here on: its
    // registers are free during the look-back).
    let mut acc = ident;
    for j in (0..ITEMS).unroll() {
        let k = tid * ITEMS + j;
        acc = combine(acc, data[k + k / 32], prod);
        data[k + k / 32] = acc;
    }
    let mut incl = acc;
    let mut off = 1u32;
    while off < 32 {
        let o = shfl_up_sync(0xffff_ffff, incl, off);
        if lane as u32 >= off {
            incl = combine(o, incl, prod);
        }
        off *= 2;
    }
    let up = shfl_up_sync(0xffff_ffff, incl, 1);
    let excl_in_warp = if lane == 0 { ident } else { up };
    if lane == 31 {
        warp_tot[warp] = incl;
    }
    sync_threads();
    let mut before = ident;
    let mut total = ident;
    let mut w = 0usize;
    while w < WARPS {
        if w < warp {
            before = combine(before, warp_tot[w], prod);
        }
        total = combine(total, warp_tot[w], prod);
        w += 1;
    }
    if warp == 0 {
        let mut prefix = ident;
        if tr == 0 {
            if lane == 0 {
                inc[t as usize] = total;
                thread_fence();
                atomic_exch(flags, t as usize, 2u32);
            }
        } else {
            if lane == 0 {
                agg[t as usize] = total;
                thread_fence();
                atomic_exch(flags, t as usize, 1u32);
            }
            let first = (row * tiles_per_row) as i64;
            let mut p = t as i64 - 1 - lane as i64;
            loop {
                let f = if p >= first { atomic_or(flags, p as usize, 0u32) } else { 2u32 };
                let first2 = warp_reduce_min(if f == 2 { lane as u32 } else { 32u32 });
                let waiting = warp_reduce_max(if f == 0 && lane as u32 <= first2 { 1u32 } else { 0u32 });
                if waiting != 0 {
                    continue;
                }
                thread_fence();
                let mut v = ident;
                if p >= first && lane as u32 <= first2 {
                    v = if f == 2 { atomic_add(inc, p as usize, T::from_f64(-0.0)) } else { atomic_add(agg, p as usize, T::from_f64(-0.0)) };
                }
                prefix = combine(prefix, warp_combine(v, prod), prod);
                if first2 < 32 {
                    break;
                }
                p -= 32;
            }
            if lane == 0 {
                inc[t as usize] = combine(prefix, total, prod);
                thread_fence();
                atomic_exch(flags, t as usize, 2u32);
            }
        }
        if lane == 0 {
            prefix_s[0] = prefix;
        }
    }
    sync_threads();
    let mine = combine(combine(prefix_s[0], before, prod), excl_in_warp, prod);
    for j in (0..ITEMS).unroll() {
        let k = tid * ITEMS + j;
        data[k + k / 32] = combine(mine, data[k + k / 32], prod);
    }
    sync_threads();
    for j in (0..ITEMS).unroll() {
        let k = j * THREADS + tid;
        if (k as u64) < count {
            y[start as usize + k] = data[k + k / 32];
        }
    }
}
