//! `sort` and `argsort` (NumPy's, with `kind='stable'`) through the stable LSD radix sort
//! of `kernels/sort.rs`: 5 bits per pass, Onesweep-style: one launch counts the digits of every
//! pass, then one launch per pass ranks and scatters each tile, each tile finding its output
//! offsets by a decoupled look-back over the tiles before it; keys moved as their raw bits
//! between two buffers.
//!
//! Order: NumPy's. Integers by value; floats by value with every NaN last (in input order) and
//! -0.0 equal to 0.0 (a stable sort keeps the two zeros in input order, as NumPy's comparison
//! sorts do), so `argsort` gives NumPy's `argsort(kind='stable')` exactly, NaNs and zeros
//! included. `unique` (runtime/src/unique.rs) is built on the same sort.
//!
//! Along an axis, each row is sorted: the axis is made the last and contiguous first (a copy
//! unless it already is), and for more than one row the sort is two stable sorts over the whole
//! array, by key and then by row (a segmented sort in passes over the row index's bits only), so
//! that many short rows cost as much as one long one. Results are C-contiguous, of the input's
//! shape (1-d for `axis = None`).
//!
//! Integer keys often use few of their bits: for them one more kernel first finds the bits that
//! vary (the OR and AND of all keys, read back: a sync) and the passes over digits where none
//! varies are skipped (an `i64` array of values below 2^20 takes 4 passes, not 13). Floats use
//! every bit in practice and skip nothing.
//!
//! Element types: `i32`, `u32`, `i64`, `u64`, `f32`, `f64` (others are refused with a clear error
//! that names what to convert to). The kernels are instantiated for the key bits (`u32`, `u64`)
//! and precompiled; a pass reads each key once and writes it once (8 bytes per `f32` key and
//! pass, 7 passes for 4-byte keys, 13 for 8-byte ones), and the digit counts of all passes take
//! one more read of the keys (two for 8-byte keys).

use crate::cpu::sort::{HostKey, HostVals};
use crate::error::{Error, Result};
use crate::launch::LaunchConfig;
use crate::stream::Stream;
use crate::{Array, DType, DeviceRepr, Element, Int, Scalar};

/// The built-in sort kernels (`kernels/sort.rs`, precompiled by the runtime's build.rs).
#[path = "../kernels/sort.rs"]
#[allow(missing_docs, clippy::too_many_arguments)]
pub(crate) mod kernels;

/// Threads per block of `radix_scatter`.
pub(crate) const THREADS: u32 = kernels::THREADS as u32;
/// Keys per tile of `radix_scatter`.
pub(crate) const TILE: usize = kernels::TILE;
/// `TILE` plus one padding slot per 32: the keys' (and values') slots of `radix_scatter`.
const PADDED: u32 = kernels::PADDED as u32;
/// Bits sorted per pass.
const DIGIT_BITS: u32 = 5;
/// Buckets per pass.
const BUCKETS: usize = kernels::BUCKETS;
/// Passes whose digits one launch of `radix_hist` counts.
const HIST_PASSES: u32 = kernels::HIST_PASSES as u32;

/// The dynamic shared memory of a launch of `radix_scatter` with keys of `key_bytes` bytes:
/// `PADDED` keys, then `PADDED` `i64` values when `with_vals`, then the counters (`WORDS`
/// `u32`s).
pub(crate) fn scatter_shared_bytes(key_bytes: u32, with_vals: bool) -> u32 {
    PADDED * (key_bytes + if with_vals { 8 } else { 0 }) + kernels::WORDS as u32 * 4
}

/// The key bits the kernels move: `u32` for 4-byte dtypes, `u64` for 8-byte ones.
pub(crate) trait KeyBits: Int + Element + DeviceRepr + HostKey {
    /// Bits per key.
    const BITS: u32;
    /// The sign bit, as a float's or a signed integer's.
    fn sign() -> Self;
    /// The bits of the float +inf of this size.
    fn inf() -> Self;
}

impl KeyBits for u32 {
    const BITS: u32 = 32;
    fn sign() -> u32 {
        1 << 31
    }
    fn inf() -> u32 {
        f32::INFINITY.to_bits()
    }
}

impl KeyBits for u64 {
    const BITS: u32 = 64;
    fn sign() -> u64 {
        1 << 63
    }
    fn inf() -> u64 {
        f64::INFINITY.to_bits()
    }
}

/// How the kernels order a dtype's bits (`order_bits` in `kernels/sort.rs`).
#[derive(Clone, Copy)]
pub(crate) enum Mode {
    Unsigned = 0,
    Signed = 1,
    Float = 2,
}

/// What a sort returns: the sorted keys and the indices, each when asked for.
type Sorted<T> = (Option<Array<T>>, Option<Array<i64>>);

/// The values a radix sort carries with its keys.
pub(crate) enum Vals<'a> {
    None,
    /// Each key's index in the input.
    Iota,
    Given(&'a Array<i64>),
}

impl<T: Scalar> Array<T> {
    /// A sorted copy (NumPy's `sort` with `kind='stable'`): each row along `axis` (negative
    /// counts from the end) sorted, or the flattened array with `None` (1-d); C-contiguous. A
    /// stable radix sort in NumPy's order: NaN last (NaNs in input order), -0.0 equal to 0.0
    /// (the two zeros keep their input order). Element types: `i32`, `u32`, `i64`, `u64`, `f32`,
    /// `f64` (others are refused: convert with `astype` first).
    ///
    /// ```
    /// use cuprum_runtime::{Array, Device};
    /// let _cpu = Device::cpu().use_scoped()?;
    /// let x = Array::<f32>::from_shape_vec([2, 3], vec![3.0, f32::NAN, -1.0, 2.0, 0.5, 2.0])?;
    /// let s = x.sort(Some(1))?.to_vec()?;
    /// assert_eq!(&s[..2], [-1.0, 3.0]);
    /// assert!(s[2].is_nan());
    /// assert_eq!(&s[3..], [0.5, 2.0, 2.0]);
    /// assert_eq!(x.sort(Some(0))?.to_vec()?[..2], [2.0, 0.5]);
    /// # Ok::<(), cuprum_runtime::Error>(())
    /// ```
    pub fn sort(&self, axis: Option<isize>) -> Result<Array<T>> {
        let (keys, _) = sort_rows(self, axis, "sort", true, false)?;
        keys.ok_or_else(|| unreachable_result("sort"))
    }

    /// The indices that sort each row along `axis`, or the flattened array with `None` (NumPy's
    /// `argsort(kind='stable')`): equal keys keep their input order. `i64` indices along the
    /// axis (into the flattened array for `None`).
    ///
    /// ```
    /// use cuprum_runtime::{Array, Device};
    /// let _cpu = Device::cpu().use_scoped()?;
    /// let x = Array::<i64>::from_vec(vec![3, 1, 2, 1])?;
    /// assert_eq!(x.argsort(None)?.to_vec()?, [1, 3, 2, 0]);
    /// # Ok::<(), cuprum_runtime::Error>(())
    /// ```
    pub fn argsort(&self, axis: Option<isize>) -> Result<Array<i64>> {
        let (_, idx) = sort_rows(self, axis, "argsort", false, true)?;
        idx.ok_or_else(|| unreachable_result("argsort"))
    }
}

/// The error of a result that the code above always asks for (never returned).
pub(crate) fn unreachable_result(op: &'static str) -> Error {
    Error::InvalidShape { op, detail: "the sort produced no result (a bug in cuprum)".into() }
}

/// The order of `T`'s bits and their size in bytes, or the error that says what to convert to.
pub(crate) fn kind_of<T: Scalar>(op: &str) -> Result<(Mode, usize)> {
    Ok(match T::DTYPE {
        DType::F32 => (Mode::Float, 4),
        DType::F64 => (Mode::Float, 8),
        DType::I32 => (Mode::Signed, 4),
        DType::I64 => (Mode::Signed, 8),
        DType::U32 => (Mode::Unsigned, 4),
        DType::U64 => (Mode::Unsigned, 8),
        _ => {
            return Err(Error::Unsupported {
                what: format!(
                    "{op} of {} arrays (it takes i32, u32, i64, u64, f32 and f64: convert first, e.g. x.astype::<i32>() for \
                     smaller integers and bool, x.astype::<f32>() for f16, bf16 and the 8-bit floats)",
                    T::DTYPE.rust_name()
                ),
            });
        }
    })
}

/// The C-contiguous 1-d array `x` (`T`) seen as its bits (`K`, of the same size).
pub(crate) fn as_bits<T: Element, K: Element>(x: &Array<T>) -> Result<Array<K>> {
    debug_assert!(x.is_c_contiguous() && size_of::<T>() == size_of::<K>());
    Array::from_parts(x.buffer().clone(), vec![x.len()], vec![1], x.layout().offset)
}

/// Sorts each row along `axis` (or the flattened array): the sorted keys when `want_keys`, the
/// indices along the axis when `want_idx`.
fn sort_rows<T: Scalar>(
    x: &Array<T>,
    axis: Option<isize>,
    op: &'static str,
    want_keys: bool,
    want_idx: bool,
) -> Result<Sorted<T>> {
    let (mode, size) = kind_of::<T>(op)?;
    // The sorted axis last and contiguous: rows of `n` elements.
    let (rows_view, moved) = x.rows_along(axis)?;
    let shape = rows_view.shape().to_vec();
    let (keys, idx) = if size == 4 {
        sort_bits::<T, u32>(&rows_view, mode, want_keys, want_idx)?
    } else {
        sort_bits::<T, u64>(&rows_view, mode, want_keys, want_idx)?
    };
    let back = |a: Array<T>| a.reshape(shape.clone())?.from_rows(moved);
    let back_idx = |a: Array<i64>| a.reshape(shape.clone())?.from_rows(moved);
    Ok((keys.map(back).transpose()?, idx.map(back_idx).transpose()?))
}


/// Sorts the rows (the last axis) of the C-contiguous `x` through its bits `K`: flat results.
fn sort_bits<T: Scalar, K: KeyBits>(
    x: &Array<T>,
    mode: Mode,
    want_keys: bool,
    want_idx: bool,
) -> Result<Sorted<T>> {
    let stream = Stream::current_for(x.device())?;
    let total = x.len();
    let n = if x.ndim() == 0 { 1 } else { x.shape()[x.ndim() - 1] };
    let flat = x.reshape(total)?;
    if total == 0 {
        let keys = if want_keys { Some(Array::<T>::empty_on(0usize, &stream)?) } else { None };
        let idx = if want_idx { Some(Array::<i64>::empty_on(0usize, &stream)?) } else { None };
        return Ok((keys, idx));
    }
    let bits = as_bits::<T, K>(&flat)?;
    let rows = total / n;
    let (sorted, idx) = if rows == 1 {
        let vals = if want_idx { Vals::Iota } else { Vals::None };
        let (sk, sv) = radix(&bits, vals, mode, K::BITS, &stream)?;
        (want_keys.then_some(sk), sv)
    } else {
        // Two stable sorts: by key, then by row (carrying the flat indices), over the bits of the
        // largest row index only.
        let (_, p1) = radix(&bits, Vals::Iota, mode, K::BITS, &stream)?;
        let p1 = p1.ok_or_else(|| unreachable_result("sort"))?;
        let cfg = grid_stride_config(total, &stream);
        let mut row_keys = Array::<u64>::empty_on(total, &stream)?;
        kernels::row_keys::launch(&cfg, &p1, &mut row_keys, n as i64, total as u64)?;
        let row_bits = (u64::BITS - ((rows - 1) as u64).leading_zeros()).max(1);
        let (_, p2) = radix(&row_keys, Vals::Given(&p1), Mode::Unsigned, row_bits, &stream)?;
        let p2 = p2.ok_or_else(|| unreachable_result("sort"))?;
        let sk = if want_keys {
            let mut out = Array::<K>::empty_on(total, &stream)?;
            kernels::gather_keys::launch(&cfg, &p2, &bits, &mut out, total as u64)?;
            Some(out)
        } else {
            None
        };
        let cols = if want_idx {
            let mut out = Array::<i64>::empty_on(total, &stream)?;
            kernels::columns::launch(&cfg, &p2, &mut out, n as i64, total as u64)?;
            Some(out)
        } else {
            None
        };
        (sk, cols)
    };
    let keys = match sorted {
        Some(s) => Some(as_bits::<K, T>(&s)?),
        None => None,
    };
    Ok((keys, idx))
}

/// The stable radix sort of the 1-d contiguous key bits `keys` by their low `bits` bits (rounded
/// up to whole passes), in `mode`'s order, with the values `vals` (returned when not `None`).
pub(crate) fn radix<K: KeyBits>(
    keys: &Array<K>,
    vals: Vals<'_>,
    mode: Mode,
    bits: u32,
    stream: &Stream,
) -> Result<(Array<K>, Option<Array<i64>>)> {
    if keys.device().is_cpu() && crate::cpu::host_routines() {
        // The host's radix sort: the kernels below would run each CUDA thread on the host
        // (runtime/src/cpu/sort.rs).
        let vals = match vals {
            Vals::None => HostVals::None,
            Vals::Iota => HostVals::Iota,
            Vals::Given(v) => HostVals::Given(v),
        };
        return crate::cpu::sort::radix(keys, vals, mode as u32, bits, stream);
    }
    let n = keys.len();
    let tiles = n.div_ceil(TILE);
    let grid = u32::try_from(tiles).map_err(|_| Error::InvalidShape {
        op: "sort",
        detail: format!("{n} keys need more than 2^32 tiles of {TILE}"),
    })?;
    let with_vals = !matches!(vals, Vals::None);
    let mut bufs = [Array::<K>::empty_on(n, stream)?, Array::<K>::empty_on(n, stream)?];
    let val_len = if with_vals { n } else { 1 };
    let mut vbufs = [Array::<i64>::empty_on(val_len, stream)?, Array::<i64>::empty_on(val_len, stream)?];
    let cfg = LaunchConfig::new(grid, THREADS).stream(stream);
    let scatter_cfg = cfg.shared_mem(scatter_shared_bytes(K::BITS / 8, with_vals));
    let passes = bits.div_ceil(DIGIT_BITS).min(K::BITS.div_ceil(DIGIT_BITS));
    let (sign, inf) = (K::sign(), K::inf());
    let mut shifts: Vec<u32> = (0..passes).map(|p| p * DIGIT_BITS).collect();
    if !matches!(mode, Mode::Float) && bits == K::BITS {
        // Integers often use few of their bits: one read of the keys finds the bits that vary,
        // and the passes over digits where none does are skipped (a read back, so a sync).
        let acc = Array::<K>::from_shape_vec_on(2usize, &[K::zero(), K::max_value()], stream)?;
        let mut acc_w = acc.clone();
        let grid = n.div_ceil(256 * 16).clamp(1, 2048) as u32;
        let bits_cfg = LaunchConfig::new(grid, 256u32).stream(stream);
        kernels::radix_bits::launch(&bits_cfg, keys, n as u64, mode as u32, sign, inf, &mut acc_w)?;
        let v = acc.to_vec()?;
        let varying = v[0] ^ v[1];
        let mask = K::from_i64(BUCKETS as i64 - 1);
        shifts.retain(|&s| (varying >> s) & mask != K::zero());
        if shifts.is_empty() {
            // Every key equal: one pass still makes the copy (and the values).
            shifts.push(0);
        }
    }
    // The digit counts of every pass up to the last, in one read of the keys per `HIST_PASSES`.
    let hist_rows = shifts.last().map_or(1, |s| s / DIGIT_BITS + 1).next_multiple_of(HIST_PASSES);
    let mut hist = Array::<u64>::empty_on(hist_rows as usize * BUCKETS, stream)?;
    hist.buffer().zero(stream)?;
    let hist_cfg = LaunchConfig::new(n.div_ceil(256 * 16).clamp(1, 1024) as u32, 256u32).stream(stream);
    for first in (0..hist_rows).step_by(HIST_PASSES as usize) {
        // SAFETY: `radix_hist` is unchecked. Any grid of 256 threads: keys are read below `n`
        // (the length of `keys`), `hist` is written at `(first + q) * 32 + digit` for `q <
        // HIST_PASSES`, below `hist_rows * 32` (a multiple of `HIST_PASSES` rows); shared
        // indices are below `HIST_PASSES * 32 * 32`.
        unsafe { kernels::radix_hist::launch(&hist_cfg, keys, n as u64, mode as u32, sign, inf, first, &mut hist) }?;
    }
    // Each pass's tile counter and the tiles' look-back words (zeroed once: a pass's flags are
    // larger than the earlier passes').
    let passes = shifts.len() as u32;
    let mut counters = Array::<u32>::empty_on(passes as usize, stream)?;
    counters.buffer().zero(stream)?;
    let mut status = Array::<u64>::empty_on(tiles * BUCKETS, stream)?;
    status.buffer().zero(stream)?;
    for (pass, &shift) in (0u32..).zip(&shifts) {
        let dst_i = (pass as usize + 1) % 2;
        let [b0, b1] = &mut bufs;
        let (src, dst) = if dst_i == 1 { (&*b0, b1) } else { (&*b1, b0) };
        let src = if pass == 0 { keys } else { src };
        let [v0, v1] = &mut vbufs;
        let (vsrc, vdst) = if dst_i == 1 { (&*v0, v1) } else { (&*v1, v0) };
        let (vsrc, vmode) = match (&vals, pass) {
            (Vals::None, _) => (vsrc, 0u32),
            (Vals::Iota, 0) => (vsrc, 1),
            (Vals::Given(v), 0) => (*v, 2),
            _ => (vsrc, 2),
        };
        // SAFETY: `radix_scatter` is unchecked. `tiles` blocks of `THREADS`, each taking one
        // tile `t` below `tiles` from `counters[pass]` (zeroed, `passes` of them): it reads keys
        // `t * TILE ..` below `n` (the length of `src`) and `hist[(shift / 5) * 32 + digit]`
        // (below `hist_rows * 32`), writes `status[t * 32 + digit]` (`tiles * 32`) and reads
        // those of the tiles before; each key goes to its digit's start plus the keys of its
        // digit in the tiles before plus its rank in the tile, a permutation of `0..n` (`dst`,
        // and `vdst` when `vmode` is not 0, hold `n`); values are read below `n` from `vsrc`
        // only when `vmode` is 2; `scatter_cfg` gives `PADDED` keys of dynamic shared memory,
        // then `PADDED` i64 when there are values, then `WORDS` u32 counters (the kernel finds
        // the values and counters from the region's end: the values at their index
        // `len - WORDS / 2 - PADDED`, the counters at `len - WORDS`); shared indices are below
        // those lengths. 4-byte keys alone go to `radix_scatter_keys` (the same kernel with
        // `vmode` 0, at 6 blocks a multiprocessor), with the same contract.
        let launch = if vmode == 0 && K::BITS == 32 {
            kernels::radix_scatter_keys::launch::<K>
        } else {
            kernels::radix_scatter::launch::<K>
        };
        // SAFETY: as above.
        unsafe {
            launch(
                &scatter_cfg,
                src,
                dst,
                vsrc,
                vdst,
                vmode,
                n as u64,
                shift,
                mode as u32,
                sign,
                inf,
                &hist,
                shift / DIGIT_BITS,
                pass,
                &mut status,
                &mut counters,
            )
        }?;
    }
    let last = (passes as usize) % 2;
    let [b0, b1] = bufs;
    let [v0, v1] = vbufs;
    let (k, v) = if last == 1 { (b1, v1) } else { (b0, v0) };
    Ok((k, with_vals.then_some(v)))
}

/// The launch of a grid-stride kernel over `len` elements: 256 threads a block, at most 65536
/// blocks.
pub(crate) fn grid_stride_config<'s>(len: usize, stream: &'s Stream) -> LaunchConfig<'s> {
    let grid = len.div_ceil(256).clamp(1, 65_536) as u32;
    LaunchConfig::new(grid, 256u32).stream(stream)
}
