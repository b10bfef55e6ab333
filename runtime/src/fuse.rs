//! What a row-wise `#[fuse]` kernel needs at its call (docs/fusion.md): the broadcast shape of its
//! arrays seen as rows × columns (the last axis), where each array's element of row `r`,
//! column `j` is, and the launch configuration (one block per row).
//!
//! The macro's generated `NAME::call` builds a [`RowPlan`], allocates the output (the plan's
//! shape, or [`RowPlan::per_row_shape`] for a result that is one value per row), makes each
//! array C-contiguous ([`contiguous`]) and launches the kernel with the plan's strides.

use crate::array::Array;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::launch::LaunchConfig;

/// A row kernel's loop: the output shape, its rows and columns, and each operand's strides.
#[derive(Debug, Clone)]
pub struct RowPlan {
    shape: Vec<usize>,
    rows: usize,
    cols: usize,
    /// Per operand: (elements from one row to the next, from one column to the next).
    strides: Vec<(i64, i64)>,
}

impl RowPlan {
    /// The plan of kernel `kernel` over arrays `names` of `shapes` (C-contiguous when
    /// launched), whose reductions run over `axes` (each must be the last axis).
    ///
    /// Errors: shapes that do not broadcast (NumPy's rules), a reduction over another axis than
    /// the last, an operand that broadcasts along some leading axes but not all of them (its rows
    /// are not one stride apart: make it full with a copy, or call the unfused function), more
    /// rows than one launch covers.
    pub fn new(kernel: &str, names: &[&str], shapes: &[&[usize]], axes: &[isize]) -> Result<RowPlan> {
        let shape = crate::array::broadcast_shapes(shapes).map_err(|_| {
            let each: Vec<String> = names.iter().zip(shapes).map(|(n, s)| format!("`{n}` {s:?}")).collect();
            Error::InvalidLaunch {
                kernel: kernel.to_string(),
                detail: format!("one of its arguments does not broadcast with the others ({})", each.join(", ")),
            }
        })?;
        let ndim = shape.len();
        if ndim == 0 {
            return Err(Error::InvalidLaunch { kernel: kernel.to_string(), detail: "it reduces along the last axis: give it arrays of at least one dimension".to_string() });
        }
        for &a in axes {
            let last = a == -1 || (a >= 0 && a as usize == ndim - 1);
            if !last {
                return Err(Error::InvalidLaunch { kernel: kernel.to_string(), detail: format!(
                    "it reduces axis {a} of a {ndim}-dimensional shape {shape:?}; a row-wise `#[fuse]` function reduces the last axis (-1)"
                ) });
            }
        }
        let cols = shape[ndim - 1];
        let rows: usize = shape[..ndim - 1].iter().product();
        let mut strides = Vec::with_capacity(shapes.len());
        for (name, s) in names.iter().zip(shapes) {
            let own_cols = s.last().copied().unwrap_or(1);
            let cs = if own_cols == 1 { 0 } else { 1 };
            // The leading axes, aligned to the output's.
            let lead = &s[..s.len().saturating_sub(1)];
            let out_lead = &shape[ndim - 1 - lead.len()..ndim - 1];
            let rs = if lead.iter().all(|&d| d == 1) {
                0
            } else if lead == out_lead && shape[..ndim - 1 - lead.len()].iter().all(|&d| d == 1) {
                own_cols as i64
            } else {
                return Err(Error::InvalidLaunch { kernel: kernel.to_string(), detail: format!(
                    "`{name}` of shape {s:?} broadcasts along some leading axes of {shape:?} but not all; \
                     give it the full shape or only the last axis (a copy of its broadcast, or the unfused function)"
                ) });
            };
            strides.push((rs, cs));
        }
        if rows > i32::MAX as usize {
            return Err(Error::InvalidLaunch { kernel: kernel.to_string(), detail: format!("{rows} rows; one launch covers at most {}", i32::MAX) });
        }
        // The kernel counts columns in 32 bits.
        if cols > i32::MAX as usize {
            return Err(Error::InvalidLaunch { kernel: kernel.to_string(), detail: format!("rows of {cols} columns; a row kernel takes at most {}", i32::MAX) });
        }
        Ok(RowPlan { shape, rows, cols, strides })
    }

    /// The output shape (the broadcast shape).
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The output shape of a kernel whose result is one value per row (log-sum-exp): the
    /// broadcast shape with its last axis of extent 1 (`keepdims`) or without it, as NumPy shapes
    /// a reduction over the last axis.
    ///
    /// Errors: rows of no columns (while there are rows): the row's value would be a reduction of
    /// nothing, which the unfused function refuses for `max` and `min` (call the unfused function
    /// for empty rows).
    pub fn per_row_shape(&self, kernel: &str, keepdims: bool) -> Result<Vec<usize>> {
        if self.cols == 0 && self.rows != 0 {
            return Err(Error::InvalidLaunch {
                kernel: kernel.to_string(),
                detail: format!(
                    "its result is one value per row of {:?}, whose rows have no columns; call the unfused function for empty rows",
                    self.shape
                ),
            });
        }
        let lead = &self.shape[..self.shape.len() - 1];
        Ok(if keepdims { lead.iter().copied().chain([1]).collect() } else { lead.to_vec() })
    }

    /// The number of columns (the last axis' extent), as the kernel takes it.
    pub fn cols(&self) -> i64 {
        self.cols as i64
    }

    /// Whether there is nothing to compute.
    pub fn is_empty(&self) -> bool {
        self.rows == 0 || self.cols == 0
    }

    /// Operand `k`'s (row stride, column stride) in elements.
    pub fn strides(&self, k: usize) -> (i64, i64) {
        self.strides[k]
    }

    /// The launch: one block per row, and the kernel's `fused_cache` argument.
    ///
    /// With 1, each of `block` threads (the kernel's constant) keeps `regs` columns of the cached
    /// parameter's row (operand `cached`, elements of `cached_bytes` bytes) in registers, all
    /// loaded at once: when the row has from `block` to `block * regs` columns, the elements take
    /// at most 8 bytes and the operand's columns are one element apart. Otherwise 0: every pass
    /// reads memory, about 32 columns per thread (a multiple of 32, at most 256 threads).
    ///
    /// A softmax of (8192, 8192) f32 on an H200 (`benches/experiments/fuse_rows/cache.sh`): 0.96 of
    /// the copy ceiling with the row in registers, 0.63 reading memory in every pass (layer norm
    /// 0.92 and 0.73). Hand-written, blocks of 256 / 512 / 1024 holding 32 / 16 / 8 columns in
    /// registers reached 0.89 / 0.84 / 0.69 (`vec.cu`): hence one block size, the smallest.
    pub fn config(&self, cached: usize, cached_bytes: usize, regs: usize, block: u32) -> (LaunchConfig<'static>, i64) {
        let rows = self.rows as u32;
        let full = self.strides.get(cached).is_some_and(|&(_, cs)| cs == 1);
        let fits = (block as usize..=block as usize * regs).contains(&self.cols);
        if full && fits && cached_bytes <= 8 {
            return (LaunchConfig::new(rows, block), 1);
        }
        let threads = self.cols.div_ceil(32).next_multiple_of(32).clamp(32, 256);
        (LaunchConfig::new(rows, threads as u32), 0)
    }
}

/// `None` when `a` is C-contiguous, else a C-contiguous copy of it (the row kernel indexes its
/// operands as flat slices): `let c = contiguous(x)?; let x = c.as_ref().unwrap_or(x);`.
pub fn contiguous<T: Element>(a: &Array<T>) -> Result<Option<Array<T>>> {
    if a.is_c_contiguous() {
        Ok(None)
    } else {
        a.copy().map(Some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch(shape: &[usize], bytes: usize) -> (u32, i64) {
        let (config, cache) = RowPlan::new("k", &["x"], &[shape], &[-1]).unwrap().config(0, bytes, 32, 256);
        (config.block.x, cache)
    }

    #[test]
    fn rows_that_fit_the_registers_take_the_kernels_block() {
        assert_eq!(launch(&[8192, 8192], 4), (256, 1));
        assert_eq!(launch(&[3, 8192], 8), (256, 1));
        assert_eq!(launch(&[5, 1000], 4), (256, 1));
        assert_eq!(launch(&[5, 256], 2), (256, 1));
    }

    #[test]
    fn other_rows_and_wider_elements_read_memory_in_every_pass() {
        assert_eq!(launch(&[2, 8193], 4), (256, 0));
        assert_eq!(launch(&[2, 20000], 8), (256, 0));
        assert_eq!(launch(&[5, 255], 4), (32, 0));
        assert_eq!(launch(&[5, 7], 4), (32, 0));
        assert_eq!(launch(&[4, 4096], 16), (128, 0));
    }

    #[test]
    fn a_per_row_result_drops_or_keeps_the_last_axis() {
        let plan = RowPlan::new("k", &["x"], &[&[2, 3, 100]], &[-1]).unwrap();
        assert_eq!(plan.per_row_shape("k", true).unwrap(), vec![2, 3, 1]);
        assert_eq!(plan.per_row_shape("k", false).unwrap(), vec![2, 3]);
        let vector = RowPlan::new("k", &["x"], &[&[7]], &[-1]).unwrap();
        assert_eq!(vector.per_row_shape("k", true).unwrap(), vec![1]);
        assert_eq!(vector.per_row_shape("k", false).unwrap(), Vec::<usize>::new());
        let no_rows = RowPlan::new("k", &["x"], &[&[0, 5]], &[-1]).unwrap();
        assert_eq!(no_rows.per_row_shape("k", false).unwrap(), vec![0]);
        let no_columns = RowPlan::new("k", &["x"], &[&[4, 0]], &[-1]).unwrap();
        match no_columns.per_row_shape("k", true) {
            Err(Error::InvalidLaunch { detail, .. }) => assert!(detail.contains("no columns"), "{detail}"),
            other => panic!("expected InvalidLaunch, got {other:?}"),
        }
    }

    #[test]
    fn a_cached_operand_broadcast_along_the_row_reads_memory() {
        let plan = RowPlan::new("k", &["x", "y"], &[&[4, 1], &[4, 300]], &[-1]).unwrap();
        assert_eq!(plan.config(0, 4, 32, 256).1, 0);
        assert_eq!(plan.config(1, 4, 32, 256).1, 1);
    }
}
