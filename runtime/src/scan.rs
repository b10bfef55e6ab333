//! `cumsum` and `cumprod` (NumPy's, along any axis or over the flattened array) through one
//! built-in kernel, `kernels/scan.rs`: a single-pass scan with decoupled look-back, which reads
//! each element once and writes it once.
//!
//! The scanned axis is made the last and contiguous first (a copy unless it already is), so that
//! the kernel scans contiguous rows; the result is C-contiguous, as NumPy's. Differences from
//! NumPy: the result keeps the element type (NumPy sums small integers in the platform integer:
//! convert with `astype::<i64>()` first for that), integers wrap, and floats are combined in
//! another order than a sequential loop (last-bit differences, as CuPy's). Element types: `i32`,
//! `u32`, `i64`, `u64`, `f32`, `f64` (the kernel's atomics); others are refused with a clear error.

use crate::error::{Error, Result};
use crate::launch::LaunchConfig;
use crate::stream::Stream;
use crate::{Array, DType, Real};

/// The built-in scan kernel (`kernels/scan.rs`, precompiled by the runtime's build.rs).
#[path = "../kernels/scan.rs"]
#[allow(missing_docs)]
mod kernels;

/// Elements per tile.
const TILE: usize = kernels::TILE;

/// Which scan.
#[derive(Clone, Copy)]
enum Op {
    Sum,
    Prod,
}

impl Op {
    fn name(self) -> &'static str {
        match self {
            Op::Sum => "cumsum",
            Op::Prod => "cumprod",
        }
    }
}

impl<T: Real> Array<T> {
    /// The cumulative sum along `axis` (negative counts from the end), or over the flattened
    /// array with `None` (NumPy's `cumsum`): a C-contiguous array of the input's shape (1-d for
    /// `None`). Integers wrap. Element types: `i32 u32 i64 u64 f32 f64` (others are refused with
    /// a clear error); the result keeps the element type (NumPy sums small integers in `int64`:
    /// `astype::<i64>()` first), and floats are added in another order than a sequential loop
    /// (last-bit differences, as CuPy's).
    ///
    /// ```
    /// use cuprum_runtime::{Array, Device};
    /// let _cpu = Device::cpu().use_scoped()?;
    /// let x = Array::<i64>::from_shape_vec([2, 3], vec![1, 2, 3, 4, 5, 6])?;
    /// assert_eq!(x.cumsum(Some(1))?.to_vec()?, [1, 3, 6, 4, 9, 15]);
    /// assert_eq!(x.cumsum(Some(0))?.to_vec()?, [1, 2, 3, 5, 7, 9]);
    /// assert_eq!(x.cumsum(None)?.to_vec()?, [1, 3, 6, 10, 15, 21]);
    /// # Ok::<(), cuprum_runtime::Error>(())
    /// ```
    pub fn cumsum(&self, axis: Option<isize>) -> Result<Array<T>> {
        scan(self, axis, Op::Sum)
    }

    /// The cumulative product along `axis`, or over the flattened array with `None` (NumPy's
    /// `cumprod`); as [`cumsum`](Array::cumsum) otherwise.
    ///
    /// ```
    /// use cuprum_runtime::{Array, Device};
    /// let _cpu = Device::cpu().use_scoped()?;
    /// let x = Array::<f64>::from_vec(vec![1.0, 2.0, 3.0, 4.0])?;
    /// assert_eq!(x.cumprod(None)?.to_vec()?, [1.0, 2.0, 6.0, 24.0]);
    /// # Ok::<(), cuprum_runtime::Error>(())
    /// ```
    pub fn cumprod(&self, axis: Option<isize>) -> Result<Array<T>> {
        scan(self, axis, Op::Prod)
    }
}

fn scan<T: Real>(x: &Array<T>, axis: Option<isize>, op: Op) -> Result<Array<T>> {
    if !matches!(T::DTYPE, DType::I32 | DType::U32 | DType::I64 | DType::U64 | DType::F32 | DType::F64) {
        return Err(Error::Unsupported {
            what: format!(
                "{} of {} arrays (it takes i32, u32, i64, u64, f32 and f64: convert first, e.g. x.astype::<i64>() or x.astype::<f32>())",
                op.name(),
                T::DTYPE.rust_name()
            ),
        });
    }
    // The scanned axis last and contiguous: rows of `n` elements.
    let (rows_view, moved) = x.rows_along(axis)?;
    let stream = Stream::current_for(x.device())?;
    let y = Array::<T>::empty_on(rows_view.shape(), &stream)?;
    let total = rows_view.len();
    if total > 0 {
        let n = *rows_view.shape().last().unwrap_or(&1);
        if x.device().is_cpu() && crate::cpu::host_routines() {
            // The host's loop: the kernel runs each CUDA thread on the host (runtime/src/cpu/scan.rs).
            crate::cpu::scan::scan_rows(&rows_view.reshape(total)?, &y, n, matches!(op, Op::Prod))?;
            return y.from_rows(moved);
        }
        let rows = total / n;
        let tiles_per_row = n.div_ceil(TILE);
        let tiles = rows.checked_mul(tiles_per_row).filter(|&t| t <= u32::MAX as usize).ok_or_else(|| Error::InvalidShape {
            op: op.name(),
            detail: format!("{rows} rows of {n} elements need more than 2^32 tiles of {TILE}"),
        })?;
        let mut status = Array::<u64>::empty_on(tiles, &stream)?;
        status.buffer().zero(&stream)?;
        let mut counter = Array::<u32>::empty_on(1usize, &stream)?;
        counter.buffer().zero(&stream)?;
        let flat_in = rows_view.reshape(total)?;
        let mut flat_out = y.reshape(total)?;
        let prod = match op {
            Op::Sum => 0u32,
            Op::Prod => 1,
        };
        let smem = (kernels::PADDED * std::mem::size_of::<T>()) as u32;
        let cfg = LaunchConfig::new(tiles as u32, kernels::THREADS as u32).shared_mem(smem).stream(&stream);
        // 4-byte types pack a tile's value with its flag in its status word (one atomic store,
        // no fence) and leave `agg` and `inc` empty; 8-byte types keep their values there.
        let packed = std::mem::size_of::<T>() == 4;
        let values = if packed { 0 } else { tiles };
        let mut agg = Array::<T>::empty_on(values, &stream)?;
        let mut inc = Array::<T>::empty_on(values, &stream)?;
        let launch = if packed { kernels::scan_rows_4::launch::<T> } else { kernels::scan_rows_8::launch::<T> };
        // SAFETY: both kernels are unchecked; one block of 256 threads per tile: tile `t` reads
        // and writes elements `row * n + tr * TILE ..` below the end of its row (`row < rows`,
        // so within the `rows * n` elements of `flat_in` and `flat_out`), its own and earlier
        // tiles' entries of `status` (and of `agg` and `inc`, 8-byte types), `tiles` each,
        // `counter[0]`, and shared slots below `PADDED` (`smem` gives `PADDED` elements of
        // dynamic shared memory; 8 warps).
        unsafe {
            launch(
                &cfg,
                &flat_in,
                &mut flat_out,
                n as u64,
                tiles_per_row as u64,
                prod,
                &mut status,
                &mut agg,
                &mut inc,
                &mut counter,
            )
        }?;
    }
    y.from_rows(moved)
}
