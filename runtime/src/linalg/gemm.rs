//! The batched matrix product both devices share: the checks, the result's allocation, NumPy's
//! results for empty operands (an empty result, or zeros when only the summed extent `k` is 0),
//! and the device's path (`gpu.rs`: cuBLAS, `integer.rs`: the integer kernel on a GPU, `cpu.rs`:
//! matrixmultiply).

use crate::Number;
use crate::array::Array;
use crate::error::{Error, Result};
use crate::stream::Stream;

use super::{cpu, gpu, integer};

/// `a b` for `a` `[batch.., m, k]` and `b` `[batch.., k, n]`, both with the same batch shape (the
/// callers broadcast them: views of stride 0 are read, not copied, where the device allows), as
/// a new C-contiguous `[batch.., m, n]` on the current stream of their device; with `conj`,
/// `conj(a) b`. `op` names the operation for errors.
pub(super) fn gemm<T: Number>(op: &'static str, a: &Array<T>, b: &Array<T>, conj: bool) -> Result<Array<T>> {
    if a.device() != b.device() {
        return Err(Error::DeviceMismatch {
            context: format!("{op} (the second operand's device)"),
            expected: a.device().ordinal(),
            found: b.device().ordinal(),
        });
    }
    if T::DTYPE.is_fp8() {
        // Neither device multiplies 8-bit matrices as arrays (cuBLAS has no such GEMM; cuBLASLt's
        // FP8 one takes scales): the same error on both, before anything is allocated.
        return Err(Error::Unsupported {
            what: format!(
                "{op} of {} arrays: matrix products of 8-bit floats are not implemented; convert with `astype::<bf16>()` \
                 (or f32) first, or write the product with `wgmma_m64nNk32` (examples/gemm_fp8.rs)",
                T::DTYPE
            ),
        });
    }
    let nd = a.ndim();
    debug_assert!(nd >= 2 && b.ndim() == nd && a.shape()[..nd - 2] == b.shape()[..nd - 2]);
    debug_assert_eq!(a.shape()[nd - 1], b.shape()[nd - 2]);
    let device = a.device();
    let on_gpu_int = !device.is_cpu() && integer::handles(T::DTYPE);
    if !device.is_cpu() && !on_gpu_int {
        // The dtype is checked before anything is allocated.
        gpu::types(T::DTYPE)?;
    }
    let k = a.shape()[nd - 1];
    let mut shape = a.shape()[..nd - 1].to_vec();
    shape.push(b.shape()[nd - 1]);
    let stream = Stream::current_for(device)?;
    let mut out = Array::<T>::empty_on(&shape, &stream)?;
    if out.is_empty() {
        return Ok(out);
    }
    if k == 0 {
        out.buffer().zero(&stream)?;
        return Ok(out);
    }
    if device.is_cpu() {
        cpu::gemm(a, b, &out, conj)?;
    } else if on_gpu_int {
        integer::gemm(a, b, &mut out)?;
    } else {
        gpu::gemm(a, b, &out, conj, &stream)?;
    }
    Ok(out)
}
