//! `trace`: the sum of a diagonal (NumPy's `a.trace(offset, axis1, axis2)`), the array
//! reduction `sum` over the diagonal view `Array::diagonal` gives (array/diagonal.rs).

use crate::Number;
use crate::array::Array;
use crate::error::Result;

impl<T: Number> Array<T> {
    /// The sum along the diagonal of axes `axis1` and `axis2`, `offset` above the main one
    /// (NumPy's `trace`; integers wrap). A 2-d array gives a 0-d array (`.item()?` reads it); an
    /// array of more dimensions one sum per index of its other axes. An empty diagonal sums to
    /// 0. Errors as [`Array::diagonal`]'s.
    pub fn trace(&self, offset: isize, axis1: isize, axis2: isize) -> Result<Array<T>> {
        self.diagonal(offset, axis1, axis2)?.sum().axis(-1).run()
    }
}
