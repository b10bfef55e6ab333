//! An array's values for people: [`Array::item`] (NumPy's `x.item()`, the value of a one-element
//! array) and `Display` (`println!("{x}")`), laid out as NumPy's `repr` lays them out:
//!
//! ```text
//! array([[0, 1, 2],
//!        [3, 4, 5]], dtype=i32)
//! ```
//!
//! Arrays of more than [`THRESHOLD`] elements are abbreviated as NumPy abbreviates them: each axis
//! longer than `2 * EDGE` shows its first and last [`EDGE`] entries around `...`. Only the shown
//! elements are read from the device (one copy per combination of the axes' leading and trailing
//! parts), so printing a large array costs little. Values are right-aligned to the widest; the
//! dtype is the Rust name of the element type.

use std::fmt;

use super::{Array, Slice};
use crate::element::Element;
use crate::error::{Error, Result};

/// Above this many elements an array is shown abbreviated (NumPy's `threshold`).
pub const THRESHOLD: usize = 1000;
/// How many entries an abbreviated axis shows at each end (NumPy's `edgeitems`).
pub const EDGE: usize = 3;

impl<T: Element> Array<T> {
    /// The value of a one-element array of any number of dimensions (NumPy's `x.item()`): a 0-d
    /// result of a reduction, `x.sum()?.item()?`. Copies it to the host (synchronising with the
    /// array's stream). An array of another size is [`Error::InvalidShape`].
    ///
    /// ```no_run
    /// # use cuprum_runtime::{Array, Reductions};
    /// let x = Array::<f32>::arange(4)?;
    /// assert_eq!(x.sum().run()?.item()?, 6.0);                 // a 0-d result
    /// println!("{}", x.reshape([2, 2])?);                      // array([[0, 1],\n       [2, 3]], dtype=f32)
    /// assert!(x.item().is_err());                              // 4 elements: no item
    /// # Ok::<(), cuprum_runtime::Error>(())
    /// ```
    pub fn item(&self) -> Result<T> {
        if self.len() != 1 {
            return Err(Error::InvalidShape {
                op: "item",
                detail: format!(
                    "only an array of one element has an item, this one has shape {:?} ({} elements): \
                     index an element first (`index_axis`), or reduce the array (`sum`, `max`, ...)",
                    self.shape(),
                    self.len()
                ),
            });
        }
        let v = self.to_vec()?;
        Ok(v.into_iter().next().expect("one element was read"))
    }
}

/// The entries an axis of `n` shows: `(index, part)` by position, `None` for the `...` gap; and
/// the axis's parts (index ranges read as one view each).
fn axis_plan(n: usize, abbreviate: bool) -> (Vec<Option<(usize, usize)>>, Vec<std::ops::Range<usize>>) {
    if abbreviate && n > 2 * EDGE {
        let mut shown: Vec<Option<(usize, usize)>> = (0..EDGE).map(|i| Some((i, 0))).collect();
        shown.push(None);
        shown.extend((0..EDGE).map(|i| Some((i, 1))));
        (shown, vec![0..EDGE, n - EDGE..n])
    } else {
        ((0..n).map(|i| Some((i, 0))).collect(), vec![0..n])
    }
}

/// The shown values of `a`, read part by part: `values[combination]` is the C-order content of
/// the view selecting one part per axis (combination numbered in C order over the axes' parts).
fn read_parts<T: Element>(a: &Array<T>, parts: &[Vec<std::ops::Range<usize>>]) -> Result<Vec<Vec<T>>> {
    let combos: usize = parts.iter().map(Vec::len).product();
    let mut out = Vec::with_capacity(combos);
    for c in 0..combos {
        let mut rest = c;
        let mut pick = vec![0usize; parts.len()];
        for k in (0..parts.len()).rev() {
            pick[k] = rest % parts[k].len();
            rest /= parts[k].len();
        }
        let mut view = a.clone();
        for (k, p) in pick.iter().enumerate() {
            let r = &parts[k][*p];
            view = view.slice(k, Slice::from(r.start as isize..r.end as isize))?;
        }
        out.push(view.to_vec()?);
    }
    Ok(out)
}

impl<T: Element + fmt::Display> fmt::Display for Array<T> {
    /// NumPy's `repr`: `array([[0, 1],\n       [2, 3]], dtype=i32)` ([`Array::array_repr`]).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&render(self, true))
    }
}

impl<T: Element + fmt::Display> Array<T> {
    /// NumPy's `array_repr` (and `repr(a)`): `array([[0, 1],\n       [2, 3]], dtype=i32)`, the
    /// text `Display` writes. Copies the shown elements to the host.
    pub fn array_repr(&self) -> String {
        render(self, true)
    }

    /// NumPy's `array_str` (and `str(a)`): the elements alone, without commas, dtype or
    /// `array(...)`: `[[0 1]\n [2 3]]`; a 0-d array is its value. Large arrays are abbreviated
    /// as in [`array_repr`](Self::array_repr).
    pub fn array_str(&self) -> String {
        render(self, false)
    }
}

/// The text of `a`: NumPy's `repr` when `repr`, else its `str`.
fn render<T: Element + fmt::Display>(a: &Array<T>, repr: bool) -> String {
    let dtype = T::ELEM.rust_name();
    let shape = a.shape().to_vec();
    if shape.is_empty() {
        return match (a.to_vec(), repr) {
            (Ok(v), true) => format!("array({}, dtype={dtype})", v[0]),
            (Ok(v), false) => v[0].to_string(),
            (Err(e), true) => format!("array(<not readable: {e}>, dtype={dtype})"),
            (Err(e), false) => format!("<not readable: {e}>"),
        };
    }
    if a.is_empty() {
        return if repr { format!("array([], shape={shape:?}, dtype={dtype})") } else { "[]".to_string() };
    }
    let abbreviate = a.len() > THRESHOLD;
    let plans: Vec<_> = shape.iter().map(|&n| axis_plan(n, abbreviate)).collect();
    let parts: Vec<_> = plans.iter().map(|p| p.1.clone()).collect();
    let values = match read_parts(a, &parts) {
        Ok(v) => v,
        Err(e) if repr => return format!("array(<not readable: {e}>, shape={shape:?}, dtype={dtype})"),
        Err(e) => return format!("<not readable: {e}>"),
    };
    // Every shown value as text, keyed by its per-axis (index, part); right-aligned to the widest.
    let text = |at: &[(usize, usize)]| -> String {
        let (mut combo, mut offset) = (0usize, 0usize);
        for (k, &(i, p)) in at.iter().enumerate() {
            combo = combo * parts[k].len() + p;
            let extent = |q: usize| parts[k][q].len();
            offset = offset * extent(p) + i;
        }
        values[combo][offset].to_string()
    };
    let mut all = Vec::new();
    collect(&plans, &mut Vec::new(), &mut |at| all.push(text(at)));
    let width = all.iter().map(String::len).max().unwrap_or(0);
    let mut items = all.into_iter();
    let prefix = if repr { "array(" } else { "" };
    let mut s = String::from(prefix);
    write_nested(&plans, 0, prefix.len() + 1, width, repr, &mut items, &mut s);
    if repr {
        s.push_str(&format!(", dtype={dtype})"));
    }
    s
}

/// Calls `each` with every shown element's per-axis (index, part), in display order.
fn collect(plans: &[(Vec<Option<(usize, usize)>>, Vec<std::ops::Range<usize>>)], at: &mut Vec<(usize, usize)>, each: &mut impl FnMut(&[(usize, usize)])) {
    let Some((shown, _)) = plans.get(at.len()) else {
        each(at);
        return;
    };
    for e in shown.iter().flatten() {
        at.push(*e);
        collect(plans, at, each);
        at.pop();
    }
}

/// Writes axis `axis` and below as NumPy does: `[a, b, c]` for the last axis, rows separated by
/// `,` and a new line indented to the bracket (a blank line between blocks of 3-d and higher);
/// without the commas for `str` (`commas` false).
fn write_nested(
    plans: &[(Vec<Option<(usize, usize)>>, Vec<std::ops::Range<usize>>)],
    axis: usize,
    indent: usize,
    width: usize,
    commas: bool,
    items: &mut impl Iterator<Item = String>,
    s: &mut String,
) {
    let last = axis + 1 == plans.len();
    let comma = if commas { "," } else { "" };
    let sep = if last {
        format!("{comma} ")
    } else {
        format!("{comma}{}{}", "\n".repeat(plans.len() - axis - 1), " ".repeat(indent))
    };
    s.push('[');
    for (n, e) in plans[axis].0.iter().enumerate() {
        if n > 0 {
            s.push_str(&sep);
        }
        match (e, last) {
            (None, _) => s.push_str("..."),
            (Some(_), true) => s.push_str(&format!("{:>width$}", items.next().unwrap_or_default())),
            (Some(_), false) => write_nested(plans, axis + 1, indent + 1, width, commas, items, s),
        }
    }
    s.push(']');
}

#[cfg(test)]
mod tests {
    use crate::array::Array;
    use crate::device::Device;

    #[test]
    fn item_reads_the_one_element_and_refuses_others() {
        let _cpu = Device::cpu().use_scoped().unwrap();
        let a = Array::from_vec(vec![7.5f32]).unwrap().reshape([1, 1]).unwrap();
        assert_eq!(a.item().unwrap(), 7.5);
        let e = Array::<f32>::arange(4).unwrap().item().unwrap_err();
        assert!(e.to_string().contains("shape [4] (4 elements)"), "{e}");
    }

    #[test]
    fn display_lays_values_out_as_numpy_does() {
        let _cpu = Device::cpu().use_scoped().unwrap();
        let a = Array::from_vec((0..6).collect::<Vec<i32>>()).unwrap().reshape([2, 3]).unwrap();
        assert_eq!(a.to_string(), "array([[0, 1, 2],\n       [3, 4, 5]], dtype=i32)");
        let t = a.transpose();
        assert_eq!(t.to_string(), "array([[0, 3],\n       [1, 4],\n       [2, 5]], dtype=i32)");
        let c = Array::from_vec((0..8).map(|v| v as f64 * 1.5).collect()).unwrap().reshape([2, 2, 2]).unwrap();
        assert_eq!(
            c.to_string(),
            "array([[[   0,  1.5],\n        [   3,  4.5]],\n\n       [[   6,  7.5],\n        [   9, 10.5]]], dtype=f64)"
        );
        assert_eq!(Array::from_vec(vec![2u8]).unwrap().reshape(Vec::<usize>::new()).unwrap().to_string(), "array(2, dtype=u8)");
        assert_eq!(Array::<f32>::zeros([0, 3]).unwrap().to_string(), "array([], shape=[0, 3], dtype=f32)");
    }

    #[test]
    fn array_str_and_repr_are_numpys() {
        let _cpu = Device::cpu().use_scoped().unwrap();
        let a = Array::from_vec((0..6).collect::<Vec<i32>>()).unwrap().reshape([2, 3]).unwrap();
        assert_eq!(a.array_repr(), a.to_string());
        assert_eq!(a.array_str(), "[[0 1 2]\n [3 4 5]]");
        let c = Array::from_vec((0..8).map(|v| v as f64 * 1.5).collect()).unwrap().reshape([2, 2, 2]).unwrap();
        assert_eq!(c.array_str(), "[[[   0  1.5]\n  [   3  4.5]]\n\n [[   6  7.5]\n  [   9 10.5]]]");
        assert_eq!(Array::from_vec(vec![2u8]).unwrap().reshape(Vec::<usize>::new()).unwrap().array_str(), "2");
        assert_eq!(Array::<f32>::zeros([0, 3]).unwrap().array_str(), "[]");
        let big = Array::from_vec((0..2000).collect::<Vec<i64>>()).unwrap();
        assert_eq!(big.array_str(), "[   0    1    2 ... 1997 1998 1999]");
    }

    #[test]
    fn large_arrays_are_abbreviated() {
        let _cpu = Device::cpu().use_scoped().unwrap();
        let a = Array::from_vec((0..2000).collect::<Vec<i64>>()).unwrap().reshape([40, 50]).unwrap();
        let s = a.to_string();
        let want = "array([[   0,    1,    2, ...,   47,   48,   49],\n       [  50,   51,   52, ...,   97,   98,   99],\n       [ 100,  101,  102, ...,  147,  148,  149],\n       ...,\n       [1850, 1851, 1852, ..., 1897, 1898, 1899],\n       [1900, 1901, 1902, ..., 1947, 1948, 1949],\n       [1950, 1951, 1952, ..., 1997, 1998, 1999]], dtype=i64)";
        assert_eq!(s, want);
        // at the threshold, everything is shown
        let b = Array::from_vec((0..1000).collect::<Vec<i32>>()).unwrap();
        assert!(!b.to_string().contains("..."));
    }
}
