//! The matrix products of NumPy's linear algebra as [`Array`] methods: `matmul`, `dot`, `vdot`,
//! `inner`, `outer` and `tensordot` (NumPy's shape rules, `shapes.rs`), each on the batched
//! product of `gemm.rs`.

use crate::Number;
use crate::array::Array;
use crate::error::{Error, Result};

use super::gemm::gemm;
use super::shapes;

/// `x` with shape `shape` (the same elements in C order): a view where the layout allows, else
/// a view of a C-contiguous copy.
fn reshaped<T: Number>(x: &Array<T>, shape: &[usize]) -> Result<Array<T>> {
    match x.reshape(shape) {
        Ok(v) => Ok(v),
        Err(_) => x.copy()?.reshape(shape),
    }
}

/// [`Array::matmul`] with `op` naming the operation in errors.
fn matmul<T: Number>(op: &'static str, a: &Array<T>, b: &Array<T>) -> Result<Array<T>> {
    let s = shapes::matmul(op, a.shape(), b.shape())?;
    let a2 = if a.ndim() == 1 { a.expand_dims(0)? } else { a.clone() };
    let b2 = if b.ndim() == 1 { b.expand_dims(1)? } else { b.clone() };
    let with = |tail: [usize; 2]| -> Vec<usize> { s.batch.iter().copied().chain(tail).collect() };
    let a2 = a2.broadcast_to(with([s.m, s.k]))?;
    let b2 = b2.broadcast_to(with([s.k, s.n]))?;
    gemm(op, &a2, &b2, false)?.reshape(&s.out)
}

/// [`Array::tensordot`] with `op` naming the operation in errors.
fn tensordot<T: Number>(
    op: &'static str,
    a: &Array<T>,
    b: &Array<T>,
    axes_a: &[isize],
    axes_b: &[isize],
) -> Result<Array<T>> {
    let t = shapes::tensordot(op, a.shape(), b.shape(), axes_a, axes_b)?;
    let a2 = reshaped(&a.permute(&t.perm_a)?, &[t.m, t.k])?;
    let b2 = reshaped(&b.permute(&t.perm_b)?, &[t.k, t.n])?;
    gemm(op, &a2, &b2, false)?.reshape(&t.out)
}

impl<T: Number> Array<T> {
    /// The matrix product (NumPy's `matmul`, Python's `@`): the last two axes of each operand are
    /// its matrices and the others a batch, broadcast between the two (`[5, 1, 2, 3] @ [4, 3, 6]`
    /// is `[5, 4, 2, 6]`). A 1-d first operand is a row vector and a 1-d second one a column
    /// vector, whose axis is then removed from the result (`[3] @ [3]` is 0-d, `[2, 3] @ [3]` is
    /// `[2]`). The result is a new C-contiguous array of the same element type on the operands'
    /// device.
    ///
    /// On a GPU through cuBLAS (f16, bf16, f32, f64, complex; f16 and bf16 accumulate in f32, f32
    /// uses TF32 tensor cores only with `CUPY_TF32=1`), integers through a built-in kernel
    /// compiled at first use; on the CPU device through matrixmultiply and plain loops. Integers
    /// wrap on both. An error for a 0-d operand, inner extents
    /// that differ (naming both shapes), batch axes that do not broadcast, operands on different
    /// devices, or no libcublas ([`Error::NoCublas`]). docs/runtime.md, Matrix products.
    ///
    /// ```
    /// use cuprum_runtime::{Array, Device};
    /// let _cpu = Device::cpu().use_scoped()?;
    /// let a = Array::from_shape_vec([2, 3], vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
    /// let v = Array::from_vec(vec![1.0f32, 0.0, -1.0])?;
    /// assert_eq!(a.matmul(&v)?.to_vec()?, [-2.0, -2.0]);
    /// let batch = Array::<f32>::ones([4, 3, 2])?;
    /// let c = a.matmul(&batch)?; // [2, 3] broadcast against 4 matrices of [3, 2]
    /// assert_eq!(c.shape(), [4, 2, 2]);
    /// assert_eq!(c.to_vec()?[..4], [6.0, 6.0, 15.0, 15.0]);
    /// # Ok::<(), cuprum_runtime::Error>(())
    /// ```
    pub fn matmul(&self, other: &Array<T>) -> Result<Array<T>> {
        matmul("matmul", self, other)
    }

    /// NumPy's `dot`: for 1-d and 2-d operands the inner product or matrix product (as
    /// [`matmul`](Self::matmul)); a 0-d operand multiplies elementwise; an N-d array with a 1-d one
    /// sums over the last axis of the first and the only axis of the second (`matmul` too); for
    /// N-d and M-d (M >= 2, one of them > 2) the sum over the last axis of the first and the
    /// second-to-last of the second, the result `a.shape[:-1] + b.shape[:-2] + b.shape[-1:]` (not
    /// batched: every pair of matrices).
    pub fn dot(&self, other: &Array<T>) -> Result<Array<T>> {
        let (na, nb) = (self.ndim(), other.ndim());
        if na == 0 || nb == 0 {
            return self * other;
        }
        if (na <= 2 && nb <= 2) || na == 1 || nb == 1 {
            return matmul("dot", self, other);
        }
        tensordot("dot", self, other, &[-1], &[-2])
    }

    /// NumPy's `vdot`: the sum of the products of the elements of both arrays, each flattened in C
    /// order, with the first conjugated for complex arrays; a 0-d array. An error when the two
    /// have different element counts.
    pub fn vdot(&self, other: &Array<T>) -> Result<Array<T>> {
        if self.len() != other.len() {
            return Err(Error::InvalidShape {
                op: "vdot",
                detail: format!(
                    "shapes {:?} and {:?} have {} and {} elements: vdot needs as many in each",
                    self.shape(),
                    other.shape(),
                    self.len(),
                    other.len()
                ),
            });
        }
        let n = self.len();
        let a = self.ravel()?.reshape([1, n])?;
        let b = other.ravel()?.reshape([n, 1])?;
        gemm("vdot", &a, &b, true)?.reshape([0usize; 0])
    }

    /// NumPy's `inner`: the sum of products over the last axes of both operands, the result
    /// `a.shape[:-1] + b.shape[:-1]` (for 1-d operands the 0-d inner product); a 0-d operand
    /// multiplies elementwise. An error when the last extents differ.
    pub fn inner(&self, other: &Array<T>) -> Result<Array<T>> {
        if self.ndim() == 0 || other.ndim() == 0 {
            return self * other;
        }
        tensordot("inner", self, other, &[-1], &[-1])
    }

    /// NumPy's `outer`: both operands flattened (C order), the `[M, N]` array of every product
    /// `a[i] * b[j]` (elementwise: exact as the element type's multiplication is).
    pub fn outer(&self, other: &Array<T>) -> Result<Array<T>> {
        let a = self.ravel()?;
        let b = other.ravel()?;
        let (m, n) = (a.len(), b.len());
        &a.reshape([m, 1])? * &b.reshape([1, n])?
    }

    /// NumPy's `tensordot(a, b, axes=(axes_a, axes_b))`: axis `axes_a[i]` of this array summed
    /// against axis `axes_b[i]` of `other` (negative axes count from the end), the result this
    /// array's other axes followed by `other`'s. An error when the lists differ in length, an axis
    /// is out of range or repeated, or paired extents differ.
    pub fn tensordot(&self, other: &Array<T>, axes_a: &[isize], axes_b: &[isize]) -> Result<Array<T>> {
        tensordot("tensordot", self, other, axes_a, axes_b)
    }

    /// NumPy's `tensordot(a, b, axes=n)`: the last `n` axes of this array summed against the first
    /// `n` of `other`, in order (`n = 0` is the outer product keeping both shapes, `n = 1` with
    /// 2-d operands the matrix product).
    pub fn tensordot_n(&self, other: &Array<T>, n: usize) -> Result<Array<T>> {
        if n > self.ndim() || n > other.ndim() {
            return Err(Error::InvalidShape {
                op: "tensordot",
                detail: format!(
                    "axes={n}: shapes {:?} and {:?} do not both have {n} axes",
                    self.shape(),
                    other.shape()
                ),
            });
        }
        let na = self.ndim() as isize;
        let axes_a: Vec<isize> = (na - n as isize..na).collect();
        let axes_b: Vec<isize> = (0..n as isize).collect();
        tensordot("tensordot", self, other, &axes_a, &axes_b)
    }
}
