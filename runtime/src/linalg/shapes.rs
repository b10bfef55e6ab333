//! NumPy's shape rules of the matrix products, as pure functions of the shapes: what `matmul`
//! multiplies and returns, and how `tensordot` groups the axes it sums over.

use crate::array::shape::broadcast_shapes;
use crate::error::{Error, Result};

/// What `matmul(a, b)` computes: `batch` products of an `m x k` by a `k x n` matrix, each
/// operand broadcast to `batch` (its own batch axes aligned at the last), and the shape of the
/// result (`batch`, then `m` unless `a` is 1-d, then `n` unless `b` is 1-d).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Matmul {
    /// The broadcast batch shape.
    pub batch: Vec<usize>,
    /// Rows of each product.
    pub m: usize,
    /// The extent summed over.
    pub k: usize,
    /// Columns of each product.
    pub n: usize,
    /// The first operand's shape as a stack of matrices (a 1-d `[k]` is `[1, k]`).
    pub a: Vec<usize>,
    /// The second operand's shape as a stack of matrices (a 1-d `[k]` is `[k, 1]`).
    pub b: Vec<usize>,
    /// The shape of the result.
    pub out: Vec<usize>,
}

/// NumPy's `matmul` rules for shapes `a` and `b`: a 1-d first operand is a row (its axis removed
/// from the result), a 1-d second operand a column (likewise), the batch axes (all but the last
/// two) broadcast. An error for a 0-d operand, different inner extents (naming both shapes) and
/// batch axes that do not broadcast.
pub(super) fn matmul(op: &'static str, a: &[usize], b: &[usize]) -> Result<Matmul> {
    for (i, s) in [a, b].iter().enumerate() {
        if s.is_empty() {
            return Err(Error::InvalidShape {
                op,
                detail: format!(
                    "operand {i} is 0-d (shape []): {op} needs at least one axis on each side; \
                     multiply by a scalar with `*` instead"
                ),
            });
        }
    }
    let a2 = if a.len() == 1 { vec![1, a[0]] } else { a.to_vec() };
    let b2 = if b.len() == 1 { vec![b[0], 1] } else { b.to_vec() };
    let (m, ka) = (a2[a2.len() - 2], a2[a2.len() - 1]);
    let (kb, n) = (b2[b2.len() - 2], b2[b2.len() - 1]);
    if ka != kb {
        let which = if b.len() == 1 {
            "its only axis"
        } else {
            "its second-to-last axis"
        };
        return Err(Error::InvalidShape {
            op,
            detail: format!(
                "shapes {a:?} and {b:?} do not match: the last axis of the first ({ka}) must equal \
                 {which} of the second ({kb})"
            ),
        });
    }
    let (ba, bb) = (&a2[..a2.len() - 2], &b2[..b2.len() - 2]);
    let batch = broadcast_shapes(&[ba, bb]).map_err(|_| Error::InvalidShape {
        op,
        detail: format!(
            "shapes {a:?} and {b:?}: their batch axes {ba:?} and {bb:?} (all but the last two) \
             cannot be broadcast together"
        ),
    })?;
    let mut out = batch.clone();
    if a.len() > 1 {
        out.push(m);
    }
    if b.len() > 1 {
        out.push(n);
    }
    Ok(Matmul {
        batch,
        m,
        k: ka,
        n,
        a: a2,
        b: b2,
        out,
    })
}

/// How `tensordot` sees its operands: `a` permuted to its free axes then the summed ones, `b` to
/// the summed axes (in the pairs' order) then its free ones; the product of the free extents of
/// `a` (`m`), of the summed ones (`k`) and of `b`'s free ones (`n`), and the result's shape (`a`'s
/// free extents, then `b`'s).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Tensordot {
    /// The permutation of `a`'s axes.
    pub perm_a: Vec<usize>,
    /// The permutation of `b`'s axes.
    pub perm_b: Vec<usize>,
    /// Product of `a`'s free extents.
    pub m: usize,
    /// Product of the summed extents.
    pub k: usize,
    /// Product of `b`'s free extents.
    pub n: usize,
    /// The result's shape.
    pub out: Vec<usize>,
}

/// The axes `axes` of an operand of `ndim` axes, each negative one counted from the end; an
/// error for one out of range or given twice.
fn normalise(op: &'static str, which: &str, axes: &[isize], ndim: usize) -> Result<Vec<usize>> {
    let mut out = Vec::with_capacity(axes.len());
    for &ax in axes {
        let a = if ax < 0 { ax + ndim as isize } else { ax };
        if a < 0 || a >= ndim as isize {
            return Err(Error::InvalidAxis { axis: ax, ndim });
        }
        if out.contains(&(a as usize)) {
            return Err(Error::InvalidShape {
                op,
                detail: format!("axis {ax} of the {which} operand is given twice in {axes:?}"),
            });
        }
        out.push(a as usize);
    }
    Ok(out)
}

/// NumPy's `tensordot(a, b, axes=(axes_a, axes_b))` for shapes `a` and `b`: `axes_a[i]` of `a`
/// is summed against `axes_b[i]` of `b` (negative axes count from the end). An error when the
/// lists differ in length, an axis is out of range or repeated, or paired extents differ
/// (naming both shapes).
pub(super) fn tensordot(
    op: &'static str,
    a: &[usize],
    b: &[usize],
    axes_a: &[isize],
    axes_b: &[isize],
) -> Result<Tensordot> {
    if axes_a.len() != axes_b.len() {
        return Err(Error::InvalidShape {
            op,
            detail: format!(
                "{} axes of the first operand ({axes_a:?}) are paired with {} of the second \
                 ({axes_b:?}): give as many of each",
                axes_a.len(),
                axes_b.len()
            ),
        });
    }
    let sa = normalise(op, "first", axes_a, a.len())?;
    let sb = normalise(op, "second", axes_b, b.len())?;
    for (&x, &y) in sa.iter().zip(&sb) {
        if a[x] != b[y] {
            return Err(Error::InvalidShape {
                op,
                detail: format!(
                    "shapes {a:?} and {b:?} do not match: axis {x} of the first ({}) is summed \
                     against axis {y} of the second ({})",
                    a[x], b[y]
                ),
            });
        }
    }
    let free_a: Vec<usize> = (0..a.len()).filter(|i| !sa.contains(i)).collect();
    let free_b: Vec<usize> = (0..b.len()).filter(|i| !sb.contains(i)).collect();
    let prod = |s: &[usize], axes: &[usize]| axes.iter().map(|&i| s[i]).product::<usize>();
    let out: Vec<usize> = free_a
        .iter()
        .map(|&i| a[i])
        .chain(free_b.iter().map(|&i| b[i]))
        .collect();
    Ok(Tensordot {
        m: prod(a, &free_a),
        k: prod(a, &sa),
        n: prod(b, &free_b),
        perm_a: free_a.into_iter().chain(sa).collect(),
        perm_b: sb.into_iter().chain(free_b).collect(),
        out,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matmul_promotes_vectors_and_broadcasts_batches() {
        let r = matmul("matmul", &[3], &[3]).unwrap();
        assert_eq!((r.m, r.k, r.n, r.out.clone()), (1, 3, 1, vec![]));
        let r = matmul("matmul", &[3], &[3, 4]).unwrap();
        assert_eq!((r.m, r.k, r.n, r.out.clone()), (1, 3, 4, vec![4]));
        let r = matmul("matmul", &[2, 3], &[3]).unwrap();
        assert_eq!((r.m, r.k, r.n, r.out.clone()), (2, 3, 1, vec![2]));
        let r = matmul("matmul", &[5, 1, 2, 3], &[4, 3, 6]).unwrap();
        assert_eq!((r.batch.clone(), r.out.clone()), (vec![5, 4], vec![5, 4, 2, 6]));
        let r = matmul("matmul", &[7, 2, 3], &[3]).unwrap();
        assert_eq!(r.out, vec![7, 2]);
        let r = matmul("matmul", &[3], &[7, 3, 2]).unwrap();
        assert_eq!(r.out, vec![7, 2]);
    }

    #[test]
    fn matmul_errors_name_the_shapes() {
        let e = matmul("matmul", &[2, 3], &[4, 5]).unwrap_err().to_string();
        assert!(e.contains("[2, 3]") && e.contains("[4, 5]"), "{e}");
        let e = matmul("matmul", &[], &[4]).unwrap_err().to_string();
        assert!(e.contains("0-d"), "{e}");
        let e = matmul("matmul", &[2, 2, 3], &[3, 3, 1]).unwrap_err().to_string();
        assert!(e.contains("batch"), "{e}");
    }

    #[test]
    fn tensordot_groups_axes() {
        let t = tensordot("tensordot", &[2, 3, 4], &[4, 3, 5], &[1, 2], &[1, 0]).unwrap();
        assert_eq!((t.m, t.k, t.n), (2, 12, 5));
        assert_eq!(t.perm_a, vec![0, 1, 2]);
        assert_eq!(t.perm_b, vec![1, 0, 2]);
        assert_eq!(t.out, vec![2, 5]);
        let t = tensordot("tensordot", &[2, 3], &[4], &[], &[]).unwrap();
        assert_eq!((t.m, t.k, t.n, t.out.clone()), (6, 1, 4, vec![2, 3, 4]));
        assert!(tensordot("tensordot", &[2, 3], &[4, 3], &[1], &[0]).is_err());
        assert!(tensordot("tensordot", &[2, 3], &[3, 3], &[1, 1], &[0, 1]).is_err());
        assert!(tensordot("tensordot", &[2, 3], &[3], &[2], &[0]).is_err());
        assert!(tensordot("tensordot", &[2, 3], &[3], &[1], &[]).is_err());
    }
}
