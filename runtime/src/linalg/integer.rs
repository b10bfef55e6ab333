//! Integer matrix products on a GPU, where cuBLAS has no GEMM: the built-in kernel `matmul_int`
//! of `kernels/matmul.rs` (one thread per output element, wrapping arithmetic), compiled by NVRTC
//! at the first product of each integer type.

use crate::array::Array;
use crate::elementwise::{self, Arg, Options};
use crate::error::Result;
use crate::{DType, Number};

/// The built-in integer product kernel.
#[allow(dead_code)]
#[path = "../../kernels/matmul.rs"]
mod kernels;

/// Whether `dtype` is multiplied here (an integer type) rather than by cuBLAS.
pub(super) fn handles(dtype: DType) -> bool {
    dtype.is_int()
}

/// `out = a b` on a GPU for integer `T`, for `a` `[batch.., m, k]` and `b` `[batch.., k, n]` (the
/// same batch shape, broadcast views allowed: the kernel reads them as they lie) and `out` a new
/// C-contiguous `[batch.., m, n]`, none of `m`, `n`, `k` and the batch empty.
pub(super) fn gemm<T: Number>(a: &Array<T>, b: &Array<T>, out: &mut Array<T>) -> Result<()> {
    let nd = out.ndim();
    let (m, n, k) = (out.shape()[nd - 2], out.shape()[nd - 1], a.shape()[nd - 1]);
    let batch: usize = out.shape()[..nd - 2].iter().product();
    let a3 = a.reshape([batch, m, k]).or_else(|_| a.copy()?.reshape([batch, m, k]))?;
    let b3 = b.reshape([batch, k, n]).or_else(|_| b.copy()?.reshape([batch, k, n]))?;
    let mut o3 = out.reshape([batch, m, n])?;
    // The erased launch checks every operand against the kernel's signature and `T`'s dtype
    // against its bound (`Int`), which the caller's `Number` does not state.
    let args = [
        Arg::raw(&a3),
        Arg::raw(&b3),
        Arg::scalar(m as i64),
        Arg::scalar(k as i64),
        Arg::scalar(n as i64),
        Arg::output(&mut o3),
    ];
    elementwise::launch(kernels::matmul_int::kernel(), &[T::DTYPE], &args, &Options::default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::{ElementwiseVariant, KernelKind, Variant, headers, mangle};
    use crate::nvrtc::{self, CodeTarget, Program};

    /// The kernel's own host code on the CPU device (the same body the GPU runs), against the plain
    /// wrapping product, over a broadcast batch and a transposed operand.
    #[test]
    fn the_kernel_computes_the_wrapping_product() {
        let _cpu = crate::Device::cpu().use_scoped().unwrap();
        let (m, k, n) = (3usize, 5usize, 4usize);
        let av: Vec<i32> = (0..m * k).map(|i| (i as i32 + 1).wrapping_mul(0x2345_6789)).collect();
        let bv: Vec<i32> = (0..k * n).map(|i| (i as i32 - 7).wrapping_mul(0x1357_9bdf)).collect();
        let a = Array::from_shape_vec([m, k], av.clone())
            .unwrap()
            .broadcast_to([2, m, k])
            .unwrap();
        let bt: Vec<i32> = (0..n * k).map(|q| bv[(q % k) * n + q / k]).collect();
        let b = Array::from_shape_vec([n, k], bt)
            .unwrap()
            .transpose()
            .broadcast_to([2, k, n])
            .unwrap();
        let mut out = Array::<i32>::empty([2, m, n]).unwrap();
        gemm(&a, &b, &mut out).unwrap();
        let want: Vec<i32> = (0..m * n)
            .map(|q| {
                (0..k).fold(0i32, |s, p| {
                    s.wrapping_add(av[q / n * k + p].wrapping_mul(bv[p * n + q % n]))
                })
            })
            .collect();
        assert_eq!(out.to_vec().unwrap(), [want.clone(), want].concat());
    }

    /// Every integer instance, in every launch variant, compiles with NVRTC from the source the JIT
    /// hands it (none is precompiled).
    #[test]
    fn every_integer_instance_compiles_with_nvrtc() {
        if !nvrtc::is_available() {
            assert_eq!(
                std::env::var("CUPRUM_SKIP_CUDA_COMPILE").as_deref(),
                Ok("1"),
                "libnvrtc is not available: run `source scripts/cuda-env.sh`, or set CUPRUM_SKIP_CUDA_COMPILE=1"
            );
            return;
        }
        let kernel = kernels::matmul_int::kernel();
        let unit = kernel.unit().unwrap();
        let mut lines = String::new();
        for d in [
            DType::I8,
            DType::I16,
            DType::I32,
            DType::I64,
            DType::U8,
            DType::U16,
            DType::U32,
            DType::U64,
        ] {
            lines += &headers::includes_for(&[d]);
            for v in ElementwiseVariant::ALL {
                let v: Variant = v.into();
                let sym = mangle::kernel_symbol(KernelKind::Elementwise, "matmul_int", Some(v), &[d]);
                assert!(!unit.precompiled().contains(&sym.as_str()), "{sym} is precompiled");
                lines += &mangle::instantiate_variant_line("matmul_int", Some(v), &sym, &[d]);
                lines.push('\n');
            }
        }
        let src = unit.instance_source(&lines);
        let target = CodeTarget::Cubin(90);
        let options = nvrtc::effective_options(&[], target, false);
        let program = Program {
            name: "matmul_int",
            file_name: "matmul_int",
            source: &src,
            options: &options,
            name_expressions: &[],
            dump_source_on_error: true,
        };
        if let Err(e) = nvrtc::compile(&program, target) {
            panic!("matmul_int: {e}");
        }
    }
}
