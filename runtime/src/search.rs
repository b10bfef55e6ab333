//! `searchsorted` (NumPy's) through the built-in binary search of `kernels/search.rs`: one
//! search per value (a grid-stride loop over the values), each reading the sorted array through
//! the cache.

use crate::error::{Error, Result};
use crate::launch::LaunchConfig;
use crate::stream::Stream;
use crate::{Array, Real};

/// The built-in search (`kernels/search.rs`, precompiled by the runtime's build.rs).
#[path = "../kernels/search.rs"]
#[allow(missing_docs)]
mod kernels;

/// Which of equal elements an inserted value goes before or after (NumPy's `side`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Side {
    /// Before the equal elements: the first index `i` with `v <= a[i]` (NumPy's `'left'`).
    #[default]
    Left,
    /// After them: the first index `i` with `v < a[i]` (NumPy's `'right'`).
    Right,
}

impl<T: Real> Array<T> {
    /// Where each value of `v` would be inserted into this sorted 1-d array to keep it sorted
    /// (NumPy's `searchsorted`): an `i64` array of `v`'s shape. NaN sorts after every number, as
    /// in NumPy. The array is not checked to be sorted (as in NumPy, the result is then
    /// meaningless, but always in `0..=len`).
    ///
    /// ```
    /// use cuprum_runtime::{Array, Device, Side};
    /// let _cpu = Device::cpu().use_scoped()?;
    /// let a = Array::<f64>::from_vec(vec![1.0, 2.0, 2.0, 3.0])?;
    /// let v = Array::<f64>::from_vec(vec![2.0, 0.5, 9.0])?;
    /// assert_eq!(a.searchsorted(&v, Side::Left)?.to_vec()?, [1, 0, 4]);
    /// assert_eq!(a.searchsorted(&v, Side::Right)?.to_vec()?, [3, 0, 4]);
    /// # Ok::<(), cuprum_runtime::Error>(())
    /// ```
    pub fn searchsorted(&self, v: &Array<T>, side: Side) -> Result<Array<i64>> {
        if self.ndim() != 1 {
            return Err(Error::InvalidShape {
                op: "searchsorted",
                detail: format!("the sorted array must be 1-d, got shape {:?}", self.shape()),
            });
        }
        let a = if self.is_c_contiguous() { self.clone() } else { self.copy()? };
        let values = if v.is_c_contiguous() { v.clone() } else { v.copy()? };
        let stream = Stream::current_for(v.device())?;
        let out = Array::<i64>::empty_on(v.shape(), &stream)?;
        if !values.is_empty() {
            let n = values.len();
            let flat_v = values.reshape(n)?;
            let mut flat_out = out.reshape(n)?;
            let sms = v.device().multiprocessor_count().max(1) as usize;
            let blocks = (sms * 8).min(n.div_ceil(256)).max(1) as u32;
            let cfg = LaunchConfig::new(blocks, 256u32).stream(&stream);
            let right = u32::from(side == Side::Right);
            kernels::search_sorted::launch(&cfg, &a, &flat_v, &mut flat_out, right)?;
        }
        Ok(out)
    }
}
