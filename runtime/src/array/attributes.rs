//! NumPy's ndarray attributes that `Array` lacked: `itemsize`, `size`, `flags` (and what stands
//! for `base`), `view` (the bytes as another element type), `tolist` and `tofile`.
//!
//! `shape()`, `strides()` (in elements; NumPy's byte strides are `byte_strides()`), `ndim()` and
//! `nbytes()` are in `mod.rs`.

use std::fmt;
use std::io::Write as _;
use std::path::Path;
use std::sync::Arc;

use super::{Array, as_bytes};
use crate::element::Element;
use crate::error::{Error, Result};

/// NumPy's `ndarray.flags`, as far as they mean something for a device array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Flags {
    /// The elements are in row-major order with no gaps (`C_CONTIGUOUS`).
    pub c_contiguous: bool,
    /// The elements are in column-major order with no gaps (`F_CONTIGUOUS`).
    pub f_contiguous: bool,
    /// The buffer is cuprum's (not another library's memory, as DLPack imports and
    /// `from_raw_parts` are) and no other array or view shares it at the time of the call
    /// (NumPy's `OWNDATA` and `base is None`; a view made by `clone()`, `reshape`, `slice`...
    /// shares it while it lives, so the flag is true again once every other view is dropped).
    pub owndata: bool,
    /// The array can be written by a kernel or `fill`/`assign`: false for a broadcast view
    /// (stride 0 on an axis of extent > 1), whose elements alias each other (`WRITEABLE`).
    pub writeable: bool,
}

impl<T: Element> Array<T> {
    /// The size of one element in bytes (NumPy's `itemsize`).
    pub fn itemsize(&self) -> usize {
        std::mem::size_of::<T>()
    }

    /// The number of elements (NumPy's `size`; the same as [`len`](Self::len)).
    pub fn size(&self) -> usize {
        self.len()
    }

    /// The layout flags (NumPy's `flags`): contiguity, whether the buffer is shared, whether the
    /// array can be written.
    pub fn flags(&self) -> Flags {
        let l = &self.layout;
        Flags {
            c_contiguous: l.is_c_contiguous(),
            f_contiguous: l.is_f_contiguous(),
            owndata: !self.buf.is_foreign() && Arc::strong_count(&self.buf) == 1,
            writeable: !l
                .shape
                .iter()
                .zip(&l.strides)
                .any(|(&d, &s)| d > 1 && s == 0),
        }
    }

    /// Whether this array and `other` view the same allocation (NumPy's `may_share_memory`,
    /// and the test `a.base is b` stands for: a view shares its source's buffer).
    pub fn shares_buffer<U: Element>(&self, other: &Array<U>) -> bool {
        Arc::ptr_eq(&self.buf, &other.buf)
    }

    /// The same bytes viewed as elements of type `U` (NumPy's `a.view(dtype)`; no copy). When
    /// `U` has `T`'s size the shape and strides stay; otherwise the last axis must be contiguous
    /// (stride 1), its bytes a multiple of `U`'s size, and every other stride and the offset a
    /// whole number of `U`s: the last extent is scaled by `size_of::<T>() / size_of::<U>()`.
    /// An error names the rule broken. Viewing bytes as `bool` is refused (a byte other than
    /// 0 or 1 is not a valid `bool` on the host).
    pub fn view<U: Element>(&self) -> Result<Array<U>> {
        let (from, to) = (std::mem::size_of::<T>(), std::mem::size_of::<U>());
        let bad = |detail: String| Error::InvalidShape { op: "view", detail };
        if U::ELEM == crate::element::ElemType::Scalar(crate::DType::Bool) && T::ELEM != U::ELEM {
            return Err(bad(format!(
                "{} bytes viewed as bool: a byte other than 0 or 1 is not a bool; compare with \
                 zero instead (`ne(0)`)",
                T::ELEM.rust_name()
            )));
        }
        let l = &self.layout;
        let mut shape = l.shape.clone();
        let mut strides = l.strides.clone();
        let offset_bytes = l.offset * from;
        if from != to {
            let Some(last) = shape.len().checked_sub(1) else {
                return Err(bad(format!(
                    "a 0-d array of {} ({from} bytes) cannot be viewed as {} ({to} bytes): \
                     reshape it to 1-d first",
                    T::ELEM.rust_name(),
                    U::ELEM.rust_name()
                )));
            };
            if shape[last] != 1 && strides[last] != 1 {
                return Err(bad(format!(
                    "the last axis has stride {} (elements); changing the element size needs it \
                     contiguous: call `.copy()` first",
                    strides[last]
                )));
            }
            let last_bytes = shape[last] * from;
            if !last_bytes.is_multiple_of(to) {
                return Err(bad(format!(
                    "the last axis holds {last_bytes} bytes, not a multiple of {}'s {to} bytes",
                    U::ELEM.rust_name()
                )));
            }
            for (ax, s) in strides.iter_mut().enumerate() {
                if ax == last {
                    *s = 1;
                    continue;
                }
                let b = *s * from as isize;
                if b % to as isize != 0 {
                    return Err(bad(format!(
                        "axis {ax} has a stride of {b} bytes, not a multiple of {}'s {to} bytes",
                        U::ELEM.rust_name()
                    )));
                }
                *s = b / to as isize;
            }
            shape[last] = last_bytes / to;
        }
        if !offset_bytes.is_multiple_of(to) {
            return Err(bad(format!(
                "the array starts {offset_bytes} bytes into its buffer, not a multiple of {}'s \
                 {to} bytes",
                U::ELEM.rust_name()
            )));
        }
        Array::<U>::from_parts(self.buf.clone(), shape, strides, offset_bytes / to)
    }

    /// The elements as nested lists, one level per axis (NumPy's `tolist`): a 0-d array is a
    /// [`List::Item`], any other a [`List::List`] of its sub-arrays. Copies to the host. For the
    /// flat elements with the shape use [`to_vec`](Self::to_vec) and
    /// [`shape`](Self::shape), which need no allocation per element.
    pub fn tolist(&self) -> Result<List<T>> {
        let data = self.to_vec()?;
        Ok(List::from_flat(&data, self.shape()))
    }

    /// Writes the elements in C order to the file `path` as raw bytes in the machine's byte
    /// order, with no header (NumPy's `tofile` with its default `sep=""`; read it back with
    /// `from_shape_vec` after reading the bytes, or use [`save`](crate::array::save) for a file
    /// that keeps the shape and dtype). Copies to the host first.
    pub fn tofile(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        let data = self.to_vec()?;
        let io = |e: std::io::Error| Error::ArrayFile {
            path: path.to_path_buf(),
            what: "cannot write the elements".into(),
            source: e,
        };
        let mut f = std::fs::File::create(path).map_err(io)?;
        f.write_all(as_bytes(&data)).map_err(io)?;
        f.flush().map_err(io)
    }
}

/// An array's elements as nested lists ([`Array::tolist`]): Python's nested lists in Rust.
#[derive(Clone, PartialEq)]
pub enum List<T> {
    /// A single element (a 0-d array, or the innermost level).
    Item(T),
    /// One entry per index along an axis.
    List(Vec<List<T>>),
}

impl<T: Copy> List<T> {
    /// The nested lists of the C-order elements `data` of `shape`.
    pub fn from_flat(data: &[T], shape: &[usize]) -> List<T> {
        match shape.split_first() {
            None => List::Item(data[0]),
            Some((&n, rest)) => {
                let inner: usize = rest.iter().product();
                List::List(
                    (0..n)
                        .map(|i| List::from_flat(&data[i * inner..(i + 1) * inner], rest))
                        .collect(),
                )
            }
        }
    }

    /// The element of a [`List::Item`], `None` for a list.
    pub fn item(&self) -> Option<T> {
        match self {
            List::Item(v) => Some(*v),
            List::List(_) => None,
        }
    }

    /// The entries of a [`List::List`], `None` for an item.
    pub fn entries(&self) -> Option<&[List<T>]> {
        match self {
            List::Item(_) => None,
            List::List(v) => Some(v),
        }
    }
}

/// Python's notation: `[[1, 2], [3, 4]]`, an item alone as itself.
impl<T: fmt::Debug> fmt::Debug for List<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            List::Item(v) => write!(f, "{v:?}"),
            List::List(v) => {
                f.write_str("[")?;
                for (i, e) in v.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{e:?}")?;
                }
                f.write_str("]")
            }
        }
    }
}
