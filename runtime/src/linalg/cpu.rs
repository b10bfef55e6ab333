//! A batched matrix product on the CPU device: `matrixmultiply`'s SGEMM and DGEMM, which take any
//! row and column strides, so every operand is read where it lies (transposed, strided, reversed
//! and broadcast views alike); f16 and bf16 matrices are converted to f32, multiplied by SGEMM and
//! rounded back (NumPy's float16 product accumulates in f32 too); the integers and complex
//! numbers by a plain triple loop in the element type with the device's arithmetic
//! (`kernel_ops`: integers wrap, as NumPy's integer products do in practice).
//!
//! The launch holds the operands' buffers locked (shared for the inputs, exclusive for the new
//! output) while it reads and writes them, as a CPU kernel launch does.

use num_complex::Complex;

use crate::array::Array;
use crate::error::{Error, Result};
use crate::lang::prelude::{bf16, f16};
use crate::scalar::kernel_ops;
use crate::sync;
use crate::{DType, Number};

/// A matrix in host memory: its first element and its row and column strides in elements.
#[derive(Clone, Copy)]
struct Mat<T> {
    ptr: *const T,
    rs: isize,
    cs: isize,
}

/// `out = a b` (with `conj`, `conj(a) b`) on the CPU device, for `a` `[batch.., m, k]` and `b`
/// `[batch.., k, n]` (the same batch shape, broadcast views allowed) and `out` a new C-contiguous
/// `[batch.., m, n]`, none of `m`, `n` and `k` zero.
pub(super) fn gemm<T: Number>(a: &Array<T>, b: &Array<T>, out: &Array<T>, conj: bool) -> Result<()> {
    let locks = [a.buffer().host_lock(), b.buffer().host_lock(), out.buffer().host_lock()];
    let [Some(la), Some(lb), Some(lo)] = locks else {
        return Err(Error::Unsupported {
            what: "a matrix product on the CPU device of an array of a CUDA device".into(),
        });
    };
    let _ra = sync::read(la);
    let _rb = (!std::ptr::eq(la, lb)).then(|| sync::read(lb));
    let _wo = sync::write(lo);
    let nd = out.ndim();
    let (m, n, k) = (out.shape()[nd - 2], out.shape()[nd - 1], a.shape()[nd - 1]);
    let batch = &out.shape()[..nd - 2];
    let (sa, sb) = (a.strides(), b.strides());
    // The first elements: each array's buffer is a live host allocation of the CPU device (it has
    // a host lock), held locked above, and its offset is within it.
    // SAFETY: as said, for a.
    let base_a = unsafe { (a.buffer().ptr() as *const T).add(a.offset()) };
    // SAFETY: as said, for b.
    let base_b = unsafe { (b.buffer().ptr() as *const T).add(b.offset()) };
    // SAFETY: as said, for the output.
    let base_c = unsafe { (out.buffer().ptr() as *mut T).add(out.offset()) };
    let mut idx = vec![0usize; batch.len()];
    let count: usize = batch.iter().product();
    for q in 0..count {
        let (mut oa, mut ob) = (0isize, 0isize);
        for (ax, &i) in idx.iter().enumerate() {
            oa += i as isize * sa[ax];
            ob += i as isize * sb[ax];
        }
        // SAFETY: `idx` is an index of the batch shape, which both operands have (broadcast axes
        // with stride 0), so the offsets reach the first element of one of their matrices; the
        // output's matrix `q` starts `q m n` elements in (C-contiguous). Every element `matrix`
        // then reads is in its array (the array's own layout), and the matrices written do not
        // overlap each other or the inputs (a new buffer).
        unsafe {
            let ma = Mat {
                ptr: base_a.offset(oa),
                rs: sa[nd - 2],
                cs: sa[nd - 1],
            };
            let mb = Mat {
                ptr: base_b.offset(ob),
                rs: sb[nd - 2],
                cs: sb[nd - 1],
            };
            matrix(m, k, n, ma, mb, base_c.add(q * m * n), conj);
        }
        for ax in (0..idx.len()).rev() {
            idx[ax] += 1;
            if idx[ax] < batch[ax] {
                break;
            }
            idx[ax] = 0;
        }
    }
    Ok(())
}

/// One product `c = a b` (`m x k` by `k x n`), `c` row-major with `n` elements per row.
///
/// # Safety
///
/// `a` and `b` describe matrices of `T` that can be read at every index, `c` `m n` writable
/// elements that overlap neither; `T`'s dtype is `T::DTYPE` (the `Scalar` contract), which the
/// pointer casts below rely on.
unsafe fn matrix<T: Number>(m: usize, k: usize, n: usize, a: Mat<T>, b: Mat<T>, c: *mut T, conj: bool) {
    let cs = n as isize;
    // SAFETY: (every arm) the caller's; each cast names `T` itself (its dtype says which type
    // it is), and matrixmultiply reads a and b at their strides and writes c (row stride n,
    // column stride 1, no aliasing); with beta 0, c need not be initialised.
    unsafe {
        match T::DTYPE {
            DType::F32 => matrixmultiply::sgemm(
                m,
                k,
                n,
                1.0,
                a.ptr.cast(),
                a.rs,
                a.cs,
                b.ptr.cast(),
                b.rs,
                b.cs,
                0.0,
                c.cast(),
                cs,
                1,
            ),
            DType::F64 => matrixmultiply::dgemm(
                m,
                k,
                n,
                1.0,
                a.ptr.cast(),
                a.rs,
                a.cs,
                b.ptr.cast(),
                b.rs,
                b.cs,
                0.0,
                c.cast(),
                cs,
                1,
            ),
            DType::F16 => through_f32::<f16>(m, k, n, cast(a), cast(b), c.cast(), f16::to_f32, f16::from_f32),
            DType::BF16 => through_f32::<bf16>(m, k, n, cast(a), cast(b), c.cast(), bf16::to_f32, bf16::from_f32),
            DType::C32 if conj => naive::<Complex<f32>>(m, k, n, cast(a), cast(b), c.cast(), |x| x.conj()),
            DType::C64 if conj => naive::<Complex<f64>>(m, k, n, cast(a), cast(b), c.cast(), |x| x.conj()),
            _ => naive::<T>(m, k, n, a, b, c, |x| x),
        }
    }
}

/// `m` with its pointer cast to `U`.
fn cast<T, U>(m: Mat<T>) -> Mat<U> {
    Mat {
        ptr: m.ptr.cast(),
        rs: m.rs,
        cs: m.cs,
    }
}

/// Element `(i, j)` of `m`.
///
/// # Safety
///
/// `(i, j)` is an element of the matrix `m` describes.
unsafe fn at<T: Copy>(m: Mat<T>, i: usize, j: usize) -> T {
    // SAFETY: the caller's.
    unsafe { *m.ptr.offset(i as isize * m.rs + j as isize * m.cs) }
}

/// A half-precision product: both operands converted to f32, SGEMM, the result rounded back.
///
/// # Safety
///
/// As [`matrix`]'s, for `H`.
#[allow(clippy::too_many_arguments)]
unsafe fn through_f32<H: Copy>(
    m: usize,
    k: usize,
    n: usize,
    a: Mat<H>,
    b: Mat<H>,
    c: *mut H,
    wide: fn(H) -> f32,
    narrow: fn(f32) -> H,
) {
    // SAFETY: the caller's: every (i, p) of a and (p, j) of b is readable, c holds m n elements.
    unsafe {
        let wa: Vec<f32> = (0..m).flat_map(|i| (0..k).map(move |p| wide(at(a, i, p)))).collect();
        let wb: Vec<f32> = (0..k).flat_map(|p| (0..n).map(move |j| wide(at(b, p, j)))).collect();
        let mut wc = vec![0.0f32; m * n];
        matrixmultiply::sgemm(
            m,
            k,
            n,
            1.0,
            wa.as_ptr(),
            k as isize,
            1,
            wb.as_ptr(),
            n as isize,
            1,
            0.0,
            wc.as_mut_ptr(),
            n as isize,
            1,
        );
        for (i, v) in wc.into_iter().enumerate() {
            c.add(i).write(narrow(v));
        }
    }
}

/// The plain product in `T`'s own arithmetic (integers wrap), `f` applied to each element of `a`
/// (complex conjugation for `vdot`), summed in order of `p`.
///
/// # Safety
///
/// As [`matrix`]'s.
unsafe fn naive<T: Number>(m: usize, k: usize, n: usize, a: Mat<T>, b: Mat<T>, c: *mut T, f: impl Fn(T) -> T) {
    for i in 0..m {
        for j in 0..n {
            let mut acc = T::zero();
            for p in 0..k {
                // SAFETY: (i, p) and (p, j) are elements of a and b (the caller's).
                let (x, y) = unsafe { (f(at(a, i, p)), at(b, p, j)) };
                acc = kernel_ops::add(acc, kernel_ops::mul(x, y));
            }
            // SAFETY: i n + j < m n, an element of c.
            unsafe { c.add(i * n + j).write(acc) };
        }
    }
}
