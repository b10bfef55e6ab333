//! The built-in scan kernel behind `cumsum` and `cumprod` (runtime/src/scan.rs): a single-pass
//! scan with decoupled look-back (Merrill and Garland, "Single-pass Parallel Prefix Scan with
//! Decoupled Look-back", 2016), written with cuprum's own macros (`crate = crate`) and
//! precompiled by the runtime's build.rs.
//!
//! The input is `rows` contiguous rows of `row_len` elements, cut into tiles of 4096 (256 threads
//! of 16 elements). A grid of a few blocks per multiprocessor loops over the tiles: each block
//! takes the next tile from an atomic counter (so that a tile's predecessors belong to blocks that
//! took them earlier and are running: no block waits for one that has not started), and issues
//! that tile's loads into registers before it scans the current one, so that the memory stays busy
//! while the block waits for its predecessors. A tile is scanned in shared memory, publishes its
//! total (flag 1), then looks back over its predecessors in the row, 32 at a time with the first
//! warp, adding their totals until it meets one that has published its inclusive prefix (flag 2),
//! publishes its own (flag 2), and writes its elements: each element is read once and written once
//! (8 bytes per f32 element, what a copy moves). A value is published before its flag, with a
//! fence between, and read with an atomic add of -0 (the identity of every type's `+`, negative
//! zero included) after its flag: both go through the L2 cache, which every multiprocessor sees
//! alike. The first warp issues its own loads of the next tile after its look-back, since its
//! fences would wait for them.
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

/// The `count` elements of the tile at `start` that thread `tid` loads (`j * 256 + tid`, 16 of
/// them, coalesced, all in flight together; `ident` past `count`). Unchecked: `start + count`
/// must lie within `x`.
#[device(crate = crate, unchecked)]
unsafe fn load_tile<T: Number>(x: &[T], start: u64, count: u32, tid: u32, ident: T) -> [T; 16] {
    let mut v = [ident; 16];
    for j in (0..16u32).unroll() {
        let k = j * 256 + tid;
        if k < count {
            v[j as usize] = x[start as usize + k as usize];
        }
    }
    v
}

/// Tile `t`'s first element, its number of elements (at most 4096, fewer at the end of a row)
/// and its place in its row.
#[device(crate = crate)]
fn tile_span(t: u64, row_len: u64, tiles_per_row: u64) -> (u64, u32, u64) {
    let row = t / tiles_per_row;
    let tr = t - row * tiles_per_row;
    let start = row * row_len + tr * 4096;
    let left = (row + 1) * row_len - start;
    (start, if left < 4096 { left as u32 } else { 4096u32 }, tr)
}

/// The inclusive scan (`+`, or `*` when `prod` is not 0) of each row of `x` (rows of `row_len`
/// contiguous elements, `tiles_per_row` tiles of 4096 each; `flags.len()` tiles in all) into
/// `y`. Launch with 256 threads and any number of blocks (a few per multiprocessor: each block
/// loops over tiles); `flags` (one per tile) and `counter` zeroed; `agg` and `inc` (one per
/// tile) need no initial value.
#[rawkernel(crate = crate, unchecked, max_threads = 256, min_blocks = 6, instances = [f32, f64, i64])]
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
    let tile_s = shared_array::<u32, 2>();
    let data = shared_array::<T, 4224>();
    let warp_tot = shared_array::<T, 8>();
    let prefix_s = shared_array::<T, 1>();
    let tid = thread_idx().x as usize;
    let lane = tid % 32;
    let warp = tid / 32;
    let tiles = flags.len() as u64;
    let ident = if prod != 0 { T::from_f64(1.0) } else { T::from_f64(-0.0) };
    if tid == 0 {
        tile_s[0] = atomic_add(counter, 0, 1u32);
    }
    // The current tile `t` (none in the first turn: `tiles`), its span, and its elements in `v`.
    let mut t = tiles;
    let mut start = 0u64;
    let mut count = 0u32;
    let mut tr = 0u64;
    let mut v = [ident; 16];
    let mut turn = 0usize;
    loop {
        if t < tiles {
            for j in (0..16usize).unroll() {
                let k = j * 256 + tid;
                data[k + k / 32] = v[j];
            }
        }
        sync_threads();
        // The next tile, taken from the counter (so that a tile's predecessors belong to blocks
        // that are running) a turn ahead, in the other slot of `tile_s`: every thread has read
        // that slot before the barrier above.
        let next = tile_s[turn % 2] as u64;
        if tid == 0 {
            tile_s[(turn + 1) % 2] = atomic_add(counter, 0, 1u32);
        }
        let (next_start, next_count, next_tr) = if next < tiles { tile_span(next, row_len, tiles_per_row) } else { (0u64, 0u32, 0u64) };
        // The next tile's loads, in flight while this one is scanned and looks back. Warp 0
        // issues its own after its look-back: a fence there would wait for them.
        if warp != 0 {
            // SAFETY: the tile's elements lie in `x` (none when `next` is past the last tile).
            v = unsafe { load_tile(x, next_start, next_count, tid as u32, ident) };
        }
        if t < tiles {
            // The thread's 16 consecutive elements, scanned in place.
            let mut acc = ident;
            for j in (0..16usize).unroll() {
                let k = tid * 16 + j;
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
            while w < 8 {
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
                    let first = (t - tr) as i64;
                    let mut p = t as i64 - 1 - lane as i64;
                    loop {
                        let f = if p >= first { atomic_or(flags, p as usize, 0u32) } else { 2u32 };
                        let first2 = warp_reduce_min(if f == 2 { lane as u32 } else { 32u32 });
                        let waiting = warp_reduce_max(if f == 0 && lane as u32 <= first2 { 1u32 } else { 0u32 });
                        if waiting != 0 {
                            continue;
                        }
                        thread_fence();
                        let mut pv = ident;
                        if p >= first && lane as u32 <= first2 {
                            pv = if f == 2 { atomic_add(inc, p as usize, T::from_f64(-0.0)) } else { atomic_add(agg, p as usize, T::from_f64(-0.0)) };
                        }
                        prefix = combine(prefix, warp_combine(pv, prod), prod);
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
            for j in (0..16usize).unroll() {
                let k = tid * 16 + j;
                data[k + k / 32] = combine(mine, data[k + k / 32], prod);
            }
            sync_threads();
            // Each thread reads back the slots it wrote at the top of the loop (`j * 256 + tid`),
            // so the next turn's stores to `data` need no barrier before them.
            for j in (0..16usize).unroll() {
                let k = j * 256 + tid;
                if (k as u32) < count {
                    y[start as usize + k] = data[k + k / 32];
                }
            }
        }
        if warp == 0 {
            // SAFETY: as above.
            v = unsafe { load_tile(x, next_start, next_count, tid as u32, ident) };
        }
        if next >= tiles {
            break;
        }
        t = next;
        start = next_start;
        count = next_count;
        tr = next_tr;
        turn += 1;
    }
}
