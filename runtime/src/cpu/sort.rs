//! The stable radix sort under `sort`, `argsort` and `unique` on the CPU device: the host's LSD
//! radix sort of 8-bit digits instead of the GPU's kernels (`kernels/sort.rs`), whose tiles rank
//! their keys with shared memory and barriers, every CUDA thread run on the host, at about 0.03
//! of a parallel host sort (the `cuprum-bench --cpu` row). The same contract as the GPU's
//! `radix` (runtime/src/sort.rs): the keys are moved as their raw bits, ordered by the same
//! order-preserving image (`order_bits` of `kernels/sort.rs`: NumPy's order, every NaN last,
//! -0.0 equal to 0.0), stably, by their low `bits` bits, with optional `i64` values; so the
//! results are the GPU's bit for bit.
//!
//! One read of the keys counts the digits of every pass at once; a pass whose digit is the same
//! for every key is skipped (integers that use few bits, and the high digits of small row
//! indices), and each other pass moves the keys (and values) once, in order, to the positions
//! the counts give. The counting and every pass are spread over the host's threads: a chunk of
//! the keys each, whose keys of each digit go to their own run of the output (the chunks' runs
//! of a digit in chunk order, so the sort stays stable). Short arrays (fewer than `SMALL` keys) take the standard library's stable
//! sort by the image instead. The launch holds the input's buffers locked shared and the new
//! outputs' exclusive while it reads and writes them, as a CPU kernel launch does.

use crate::array::Array;
use crate::error::{Error, Result};
use crate::stream::Stream;
use crate::sync;
use crate::Element;

/// Digit width of a pass, in bits.
const DIGIT: u32 = 8;
/// Buckets of a pass.
const BUCKETS: usize = 1 << DIGIT;
/// Below this many keys, the standard library's stable sort by image.
const SMALL: usize = 512;

/// The key bits the sort moves (`u32`, `u64`), with their order-preserving image.
pub(crate) trait HostKey: Element + Copy + Default {
    /// Bits per key.
    const WIDTH: u32;
    /// The image of `self` in the order of `mode` (0 unsigned, 1 two's complement, 2 IEEE float
    /// with NumPy's ties), as `order_bits` of `kernels/sort.rs` computes it, widened to `u64`.
    fn image(self, mode: u32) -> u64;
}

macro_rules! host_key {
    ($t:ty, $f:ty) => {
        impl HostKey for $t {
            const WIDTH: u32 = <$t>::BITS;
            #[inline]
            fn image(self, mode: u32) -> u64 {
                let sign: $t = 1 << (<$t>::BITS - 1);
                let b = self;
                (match mode {
                    0 => b,
                    1 => b ^ sign,
                    _ => {
                        let mag = b & !sign;
                        if mag > <$f>::INFINITY.to_bits() {
                            <$t>::MAX
                        } else if mag == 0 {
                            sign
                        } else if b & sign != 0 {
                            !b
                        } else {
                            b | sign
                        }
                    }
                }) as u64
            }
        }
    };
}
host_key!(u32, f32);
host_key!(u64, f64);

/// The values a sort carries: none, each key's index, or given ones (`i64`, as long as the keys).
pub(crate) enum HostVals<'a> {
    None,
    Iota,
    Given(&'a Array<i64>),
}

/// The stable sort of the 1-d C-contiguous key bits `keys` by the low `bits` bits of their image
/// in `mode`'s order, with `vals` carried along (returned unless `HostVals::None`): new
/// C-contiguous arrays on `stream`'s device (the CPU device).
pub(crate) fn radix<K: HostKey>(
    keys: &Array<K>,
    vals: HostVals<'_>,
    mode: u32,
    bits: u32,
    stream: &Stream,
) -> Result<(Array<K>, Option<Array<i64>>)> {
    let n = keys.len();
    let out = Array::<K>::empty_on(n, stream)?;
    let with_vals = !matches!(vals, HostVals::None);
    let out_vals = Array::<i64>::empty_on(if with_vals { n } else { 0 }, stream)?;
    sort_locked(keys, vals, &out, &out_vals, mode, bits)?;
    Ok((out, with_vals.then_some(out_vals)))
}

/// [`radix`] into the new arrays `out` and `out_vals` (empty without values), their buffers
/// locked.
fn sort_locked<K: HostKey>(
    keys: &Array<K>,
    vals: HostVals<'_>,
    out: &Array<K>,
    out_vals: &Array<i64>,
    mode: u32,
    bits: u32,
) -> Result<()> {
    let n = keys.len();
    let with_vals = !matches!(vals, HostVals::None);
    let not_host = || Error::Unsupported { what: "a sort on the CPU device of an array of a CUDA device".into() };
    let lk = keys.buffer().host_lock().ok_or_else(not_host)?;
    let lo = out.buffer().host_lock().ok_or_else(not_host)?;
    let lov = out_vals.buffer().host_lock().ok_or_else(not_host)?;
    let given = match vals {
        HostVals::Given(v) => Some(v),
        _ => None,
    };
    let lg = match given {
        Some(v) => Some(v.buffer().host_lock().ok_or_else(not_host)?),
        None => None,
    };
    debug_assert!(keys.is_c_contiguous() && given.is_none_or(|v| v.is_c_contiguous() && v.len() == n));
    // The inputs shared (the keys and the given values may share a buffer: once), the new
    // outputs (two new buffers) exclusive.
    let _rk = sync::read(lk);
    let _rg = lg.filter(|l| !std::ptr::eq(*l, lk)).map(sync::read);
    let _wo = sync::write(lo);
    let _wov = sync::write(lov);
    if n == 0 {
        return Ok(());
    }
    // SAFETY: every buffer here is a live host allocation of the CPU device (each has a host
    // lock), held locked above until the end of this function, which the slices do not outlive:
    // shared for the inputs, exclusive for the two new outputs. Each array is C-contiguous with
    // `n` elements from its offset (`out_vals` when there are values; else it is not read), inside its
    // buffer; the outputs are new buffers, so no output slice overlaps another slice.
    let (src, dst, vdst, vsrc) = unsafe {
        (
            std::slice::from_raw_parts((keys.buffer().ptr() as *const K).add(keys.offset()), n),
            std::slice::from_raw_parts_mut((out.buffer().ptr() as *mut K).add(out.offset()), n),
            if with_vals {
                std::slice::from_raw_parts_mut((out_vals.buffer().ptr() as *mut i64).add(out_vals.offset()), n)
            } else {
                &mut []
            },
            given.map(|v| std::slice::from_raw_parts((v.buffer().ptr() as *const i64).add(v.offset()), n)),
        )
    };
    let vsrc = if with_vals { Some(vsrc.map_or(Source::Iota, Source::Given)) } else { None };
    sort_into(src, vsrc, dst, vdst, mode, bits.min(K::WIDTH));
    Ok(())
}

/// Where the values of the first pass come from.
#[derive(Clone, Copy)]
enum Source<'a> {
    Iota,
    Given(&'a [i64]),
}

impl Source<'_> {
    #[inline]
    fn at(self, i: usize) -> i64 {
        match self {
            Source::Iota => i as i64,
            Source::Given(v) => v[i],
        }
    }
}

/// Sorts `src` (values `vals`, when some) into `dst` (`vdst`) by the low `bits` bits of the
/// images.
fn sort_into<K: HostKey>(src: &[K], vals: Option<Source<'_>>, dst: &mut [K], vdst: &mut [i64], mode: u32, bits: u32) {
    let n = src.len();
    let mask = if bits >= 64 { u64::MAX } else { (1u64 << bits) - 1 };
    if n < SMALL {
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&i| src[i].image(mode) & mask);
        for (k, &i) in order.iter().enumerate() {
            dst[k] = src[i];
            if let Some(v) = vals {
                vdst[k] = v.at(i);
            }
        }
        return;
    }
    // Every pass's counts in one read.
    let passes = bits.div_ceil(DIGIT) as usize;
    let count_all = |part: &[K]| {
        let mut counts = vec![[0usize; BUCKETS]; passes];
        for &k in part {
            let img = k.image(mode) & mask;
            for (p, c) in counts.iter_mut().enumerate() {
                c[((img >> (p as u32 * DIGIT)) as usize) & (BUCKETS - 1)] += 1;
            }
        }
        counts
    };
    let threads = std::thread::available_parallelism().map_or(1, |t| t.get()).min(n / PER_THREAD_MIN).max(1);
    let counts = if threads == 1 {
        count_all(src)
    } else {
        let parts: Vec<Vec<[usize; BUCKETS]>> = std::thread::scope(|s| {
            let hs: Vec<_> = src.chunks(n.div_ceil(threads)).map(|c| s.spawn(move || count_all(c))).collect();
            hs.into_iter().map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect()
        });
        let mut total = vec![[0usize; BUCKETS]; passes];
        for part in parts {
            for (t, c) in total.iter_mut().zip(part) {
                for (a, b) in t.iter_mut().zip(c) {
                    *a += b;
                }
            }
        }
        total
    };
    let live: Vec<usize> = (0..passes).filter(|&p| !counts[p].contains(&n)).collect();
    if live.is_empty() {
        // Every key's image the same: the input order.
        dst.copy_from_slice(src);
        if let Some(v) = vals {
            for (i, d) in vdst.iter_mut().enumerate() {
                *d = v.at(i);
            }
        }
        return;
    }
    // Ping-pong between `dst` and a scratch buffer, arranged so that the last pass writes `dst`.
    let mut tmp = vec![K::default(); n];
    let mut vtmp = vec![0i64; if vals.is_some() { n } else { 0 }];
    let last = live.len() - 1;
    for (j, &p) in live.iter().enumerate() {
        let shift = p as u32 * DIGIT;
        // Into `dst` on the passes an even number of passes before the last, else into `tmp`.
        let to_dst = (last - j).is_multiple_of(2);
        let digits = Digits { mode, mask, shift };
        match (j == 0, to_dst) {
            (true, true) => scatter(src, vals, dst, vdst, digits, threads),
            (true, false) => scatter(src, vals, &mut tmp, &mut vtmp, digits, threads),
            (false, true) => scatter(&tmp, vals.map(|_| Source::Given(&vtmp)), dst, vdst, digits, threads),
            (false, false) => scatter(dst, vals.map(|_| Source::Given(vdst)), &mut tmp, &mut vtmp, digits, threads),
        }
    }
}

/// Which digit of which image a pass sorts by.
#[derive(Clone, Copy)]
struct Digits {
    mode: u32,
    mask: u64,
    shift: u32,
}

/// Keys per thread below which a pass runs on fewer threads.
const PER_THREAD_MIN: usize = 1 << 16;

/// One pass (stable): each key of `from` (and its value) to `to` at the next free position of its
/// digit, in order. The keys are cut into one chunk per thread (`threads`, chosen once per sort
/// by `sort_into`); each chunk counts its digits, each (digit, chunk) gets its own run of `to`
/// (digits in order, the chunks in order within a digit: split off `to` safely, one slice each),
/// and each chunk's thread writes its keys into its runs.
fn scatter<K: HostKey>(from: &[K], vals: Option<Source<'_>>, to: &mut [K], vto: &mut [i64], d: Digits, threads: usize) {
    let n = from.len();
    let digit = move |k: K| (((k.image(d.mode) & d.mask) >> d.shift) as usize) & (BUCKETS - 1);
    let chunk = n.div_ceil(threads).max(1);
    let count = |c: &[K]| {
        let mut h = [0usize; BUCKETS];
        for &k in c {
            h[digit(k)] += 1;
        }
        h
    };
    let counts: Vec<[usize; BUCKETS]> = if threads == 1 {
        vec![count(from)]
    } else {
        std::thread::scope(|s| {
            let hs: Vec<_> = from.chunks(chunk).map(|c| s.spawn(move || count(c))).collect();
            hs.into_iter().map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect()
        })
    };
    // Each chunk's run of each digit, in `to` and (with values) in `vto`.
    let mut runs: Vec<Vec<&mut [K]>> = (0..counts.len()).map(|_| Vec::with_capacity(BUCKETS)).collect();
    let mut vruns: Vec<Vec<&mut [i64]>> = (0..counts.len()).map(|_| Vec::with_capacity(BUCKETS)).collect();
    let (mut rest, mut vrest) = (to, if vals.is_some() { vto } else { &mut [][..] });
    for b in 0..BUCKETS {
        for (c, h) in counts.iter().enumerate() {
            let (run, r) = std::mem::take(&mut rest).split_at_mut(h[b]);
            runs[c].push(run);
            rest = r;
            if vals.is_some() {
                let (vrun, vr) = std::mem::take(&mut vrest).split_at_mut(h[b]);
                vruns[c].push(vrun);
                vrest = vr;
            }
        }
    }
    let write = |ci: usize, c: &[K], runs: Vec<&mut [K]>, vruns: Vec<&mut [i64]>| {
        let mut at = [0usize; BUCKETS];
        let (mut runs, mut vruns) = (runs, vruns);
        for (i, &k) in c.iter().enumerate() {
            let b = digit(k);
            runs[b][at[b]] = k;
            if let Some(v) = vals {
                vruns[b][at[b]] = v.at(ci * chunk + i);
            }
            at[b] += 1;
        }
    };
    if threads == 1 {
        let (r, v) = (runs.pop().unwrap_or_default(), vruns.pop().unwrap_or_default());
        write(0, from, r, v);
    } else {
        std::thread::scope(|s| {
            for (ci, ((c, r), v)) in from.chunks(chunk).zip(runs).zip(vruns).enumerate() {
                s.spawn(move || write(ci, c, r, v));
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pass spread over several threads (whatever the host has) moves each key, and its value,
    /// where one thread does: stable, every chunk's run of a digit after the earlier chunks'.
    #[test]
    fn a_pass_on_several_threads_is_the_pass_on_one() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let keys: Vec<u32> = (0..10_007)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                // Few distinct digits, so that stability shows.
                (x >> 40) as u32 & 0x0f0f
            })
            .collect();
        let d = Digits { mode: 0, mask: u64::MAX, shift: 8 };
        let (mut one, mut vone) = (vec![0u32; keys.len()], vec![0i64; keys.len()]);
        scatter(&keys, Some(Source::Iota), &mut one, &mut vone, d, 1);
        for threads in [2, 3, 7] {
            let (mut many, mut vmany) = (vec![0u32; keys.len()], vec![0i64; keys.len()]);
            scatter(&keys, Some(Source::Iota), &mut many, &mut vmany, d, threads);
            assert_eq!(many, one, "keys on {threads} threads");
            assert_eq!(vmany, vone, "values on {threads} threads");
        }
        // One thread's pass is the stable order by the digit.
        let mut want: Vec<(u32, i64)> = keys.iter().copied().zip(0..).collect();
        want.sort_by_key(|&(k, _)| (k >> 8) & 0xff);
        assert_eq!(one.iter().copied().zip(vone.iter().copied()).collect::<Vec<_>>(), want);
    }
}
