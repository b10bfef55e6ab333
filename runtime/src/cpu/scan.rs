//! `cumsum` and `cumprod` on the CPU device: the host's loop over each row instead of the GPU's
//! single-pass kernel (`kernels/scan.rs`), whose decoupled look-back runs every CUDA thread of
//! every tile on the host, with its barriers, at about 0.02 of a parallel host loop (the
//! `cuprum-bench --cpu` row). Same results as the kernel's, up to the order floats are combined
//! in (blocks of 2048 elements, each scanned from the identity and added to the running total
//! before it): sums start from -0 (a row of negative zeros sums to -0), products from 1, integers
//! wrap (the device's arithmetic, `kernel_ops`).
//!
//! Rows are spread over the host's threads, whole rows each; a row too long to leave threads
//! idle is scanned in two passes (the total of each of its parts in parallel, their prefix, then
//! each part scanned from its offset in parallel), as a parallel prefix sum on the host is.
//! The launch holds the input's buffer locked shared and the new output's exclusive while it
//! reads and writes them, as a CPU kernel launch does.

use crate::array::Array;
use crate::error::{Error, Result};
use crate::scalar::kernel_ops;
use crate::sync;
use crate::Number;

/// Below this many elements in all, one thread does the whole scan (no threads started).
const PARALLEL_MIN: usize = 1 << 15;
/// Elements of a block of [`scan_from`] and [`fold_blocks`].
const BLOCK: usize = 2048;

/// The scan of each row of `n` elements of the C-contiguous `input` into the new C-contiguous
/// `out` of the same length (`prod`: products, else sums).
pub(crate) fn scan_rows<T: Number>(input: &Array<T>, out: &Array<T>, n: usize, prod: bool) -> Result<()> {
    let (Some(li), Some(lo)) = (input.buffer().host_lock(), out.buffer().host_lock()) else {
        return Err(Error::Unsupported { what: "a scan on the CPU device of an array of a CUDA device".into() });
    };
    debug_assert!(input.is_c_contiguous() && out.is_c_contiguous() && input.len() == out.len());
    debug_assert!(!std::ptr::eq(li, lo), "the output is a new buffer");
    let _r = sync::read(li);
    let _w = sync::write(lo);
    let total = input.len();
    if total == 0 || n == 0 {
        return Ok(());
    }
    // SAFETY: both buffers are live host allocations of the CPU device (they have host locks),
    // held locked above (shared for the input, exclusive for the output) until the end of this
    // function, which is as long as the slices live; each array is C-contiguous with `total`
    // elements from its offset, inside its buffer; the output is another buffer than the input
    // (a new array), so the two slices do not overlap.
    let (src, dst) = unsafe {
        (
            std::slice::from_raw_parts((input.buffer().ptr() as *const T).add(input.offset()), total),
            std::slice::from_raw_parts_mut((out.buffer().ptr() as *mut T).add(out.offset()), total),
        )
    };
    let identity = if prod { T::one() } else { T::from_f64(-0.0) };
    let combine = move |a: T, b: T| if prod { kernel_ops::mul(a, b) } else { kernel_ops::add(a, b) };
    let threads = if total < PARALLEL_MIN { 1 } else { std::thread::available_parallelism().map_or(1, |t| t.get()) };
    let rows = total / n;
    if threads == 1 || rows >= threads {
        // Whole rows per thread.
        let per = rows.div_ceil(threads) * n;
        let scan_some = |s: &[T], d: &mut [T]| {
            for (s, d) in s.chunks(n).zip(d.chunks_mut(n)) {
                scan_from(s, d, identity, identity, combine);
            }
        };
        if threads == 1 {
            scan_some(src, dst);
        } else {
            std::thread::scope(|sc| {
                for (s, d) in src.chunks(per).zip(dst.chunks_mut(per)) {
                    sc.spawn(move || scan_some(s, d));
                }
            });
        }
        return Ok(());
    }
    // Fewer rows than threads: each row in `threads` parts, two passes.
    let part = n.div_ceil(threads);
    for (s, d) in src.chunks(n).zip(dst.chunks_mut(n)) {
        let totals: Vec<T> = std::thread::scope(|sc| {
            let running: Vec<_> = s.chunks(part).map(|p| sc.spawn(move || fold_blocks(p, identity, combine))).collect();
            running
                .into_iter()
                .map(|h| h.join().map_err(|_| Error::Unsupported { what: "a CPU scan thread panicked (a bug in cuprum)".into() }))
                .collect::<Result<Vec<T>>>()
        })?;
        let mut offsets = Vec::with_capacity(totals.len());
        let mut acc = identity;
        for t in totals {
            offsets.push(acc);
            acc = combine(acc, t);
        }
        std::thread::scope(|sc| {
            for ((p, q), off) in s.chunks(part).zip(d.chunks_mut(part)).zip(offsets) {
                sc.spawn(move || scan_from(p, q, off, identity, combine));
            }
        });
    }
    Ok(())
}

/// `d[i] = start ∘ s[0] ∘ ... ∘ s[i]`, in blocks of `BLOCK`: each element is the running total
/// before its block combined with its prefix within the block (a sum that starts from the
/// `identity`), so that a float's rounding error grows with the number of blocks, not of
/// elements, as in the GPU kernel's tiles (a sequential f32 scan of 2^24 elements of about 5 ends
/// 1e-3 off the exact sums, which the bench's check caught).
fn scan_from<T: Copy>(s: &[T], d: &mut [T], start: T, identity: T, combine: impl Fn(T, T) -> T) {
    let mut before = start;
    for (s, d) in s.chunks(BLOCK).zip(d.chunks_mut(BLOCK)) {
        let mut local = identity;
        for (d, &v) in d.iter_mut().zip(s) {
            local = combine(local, v);
            *d = combine(before, local);
        }
        before = combine(before, local);
    }
}

/// `identity ∘ s[0] ∘ ...`, in blocks of `BLOCK`, as [`scan_from`] adds.
fn fold_blocks<T: Copy>(s: &[T], identity: T, combine: impl Fn(T, T) -> T) -> T {
    s.chunks(BLOCK).fold(identity, |acc, b| combine(acc, b.iter().fold(identity, |a, &v| combine(a, v))))
}
