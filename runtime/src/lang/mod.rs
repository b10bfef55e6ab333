//! The host side of the kernel language (docs/kernel-language.md).
//!
//! A kernel body is ordinary Rust that rustc type-checks: every numeric trait ([`traits`]), every GPU
//! intrinsic ([`intrinsics`]) and every kernel argument type ([`views`]) has a host definition here,
//! so users get rustc's errors and rust-analyzer's completion inside kernels, and elementwise and
//! reduction bodies can be called on the host. The compiler recognises these names and translates
//! them to CUDA; the host definitions model a launch of one thread in one block.
//!
//! Kernel files import everything with `use cuprum::prelude::*;` (the facade re-exports
//! [`prelude`]).

pub mod half_pair;
pub mod hopper;
pub mod intrinsics;
pub use crate::scalar::kernel_ops;
pub mod print;
pub mod special;
pub mod tensor;
pub mod unroll;
pub use crate::scalar::traits;
pub mod views;
pub mod warp;

/// Everything a kernel file needs: the numeric traits, the intrinsics, the argument types, and the
/// scalar types that are not primitive (`f16`, `bf16`, `f8e4m3`, `f8e5m2`, `Complex`).
pub mod prelude {
    pub use super::hopper::{
        mbarrier_arrive, mbarrier_arrive_expect_tx, mbarrier_init, mbarrier_wait, tma_load_2d, warpgroup_reg_alloc, warpgroup_reg_dealloc,
        wgmma_commit, wgmma_fence, wgmma_m64n64k16, wgmma_m64n64k16_unchecked, wgmma_m64n128k16, wgmma_m64n128k16_unchecked, wgmma_m64n256k16,
        wgmma_m64n256k16_unchecked, wgmma_m64n64k32, wgmma_m64n64k32_unchecked, wgmma_m64n128k32, wgmma_m64n128k32_unchecked,
        wgmma_m64n256k32, wgmma_m64n256k32_unchecked, wgmma_wait, MmaFp8, named_barrier_arrive, named_barrier_sync, wgmma_m64n64k16_bt,
        wgmma_m64n64k16_bt_unchecked, wgmma_m64n128k16_bt, wgmma_m64n128k16_bt_unchecked, wgmma_m64n256k16_bt, wgmma_m64n256k16_bt_unchecked,
        wgmma_m64n64k16_rs, wgmma_m64n64k16_rs_unchecked, wgmma_m64n128k16_rs, wgmma_m64n128k16_rs_unchecked, wgmma_m64n256k16_rs,
        wgmma_m64n256k16_rs_unchecked,
    };
    pub use super::half_pair::HalfPair;
    pub use super::intrinsics::*;
    pub use super::tensor::{
        Bits16, MmaHalf, cp_async, cp_async_commit, cp_async_unchecked, cp_async_wait, ldmatrix_x1, ldmatrix_x1_trans,
        ldmatrix_x1_trans_unchecked, ldmatrix_x1_unchecked, ldmatrix_x2, ldmatrix_x2_trans, ldmatrix_x2_trans_unchecked,
        ldmatrix_x2_unchecked, ldmatrix_x4, ldmatrix_x4_trans, ldmatrix_x4_trans_unchecked, ldmatrix_x4_unchecked, mma_m16n8k8_tf32,
        mma_m16n8k16, mma_m16n8k32_i8,
    };
    pub use super::traits::{Float, Int, Number, Real, Scalar};
    pub use super::unroll::Unroll;
    pub use crate::{gpu_print, gpu_println};
    pub use super::special::{erf, erfc, erfcinv, erfinv, normcdf, normcdfinv};
    pub use super::views::{Raw, View, ViewMut};
    // The host type itself (`tensor_map`, a layer below `lang`), named here for kernel
    // signatures (the host definition of `tma_load_2d` takes it).
    pub use crate::tensor_map::TensorMap;
    pub use super::warp::*;
    pub use crate::scalar::fp8::{f8e4m3, f8e5m2};
    pub use half::{bf16, f16};
    pub use num_complex::Complex;
}

#[cfg(test)]
mod tests {
    //! A kernel file's worth of code, written against the prelude alone: checks that the names
    //! resolve together (no ambiguity between the prelude and std) and that the bodies run on the
    //! host.
    use super::prelude::*;

    fn squared_diff<T: Float>(x: T, y: T) -> T {
        let d = x - y;
        d * d
    }

    fn l2norm_map<T: Float>(x: T) -> T {
        x * x
    }

    fn clip<T: Real>(x: T, lo: T, hi: T) -> T {
        x.max(lo).min(hi)
    }

    fn mean_of<T: Number + Real>(xs: &[T]) -> f64 {
        let mut acc = T::zero();
        for &x in xs {
            acc += x;
        }
        acc.to_f64() / T::from_i64(xs.len() as i64).to_f64()
    }

    fn block_sum<T: Number>(x: &[T], out: &mut [T], n: u32) {
        let sh = shared_array::<T, 32>();
        let tid = thread_idx().x;
        let i = block_idx().x * block_dim().x + tid;
        sh[tid as usize] = if i < n { x[i as usize] } else { T::zero() };
        sync_threads();
        if tid == 0 {
            let mut s = T::zero();
            for k in 0..block_dim().x.min(32) {
                s += sh[k as usize];
            }
            atomic_add(out, 0u32, s);
        }
    }

    fn reverse(x: &Raw<i64>) -> i64 {
        x[loop_size() - index() - 1]
    }

    #[test]
    fn kernel_file_compiles_and_runs_on_host() {
        assert_eq!(squared_diff(3.0f32, 1.0), 4.0);
        assert_eq!(
            squared_diff(f16::from_f32(3.0), f16::ONE),
            f16::from_f32(4.0)
        );
        assert_eq!(
            squared_diff(bf16::from_f32(0.5), bf16::ONE),
            bf16::from_f32(0.25)
        );
        let norm: f64 = [3.0f64, 4.0]
            .iter()
            .map(|&x| l2norm_map(x))
            .sum::<f64>()
            .sqrt();
        assert_eq!(norm, 5.0);
        assert_eq!(clip(9u32, 2, 5), 5);
        assert_eq!(clip(-1.5f32, 0.0, 1.0), 0.0);
        assert_eq!(mean_of(&[1u8, 2, 3]), 2.0);
        assert_eq!(mean_of(&[0.5f32, 1.5]), 1.0);

        let mut out = [0i32];
        block_sum(&[5, 6, 7], &mut out, 3);
        assert_eq!(out, [5]);

        let x = Raw::new(vec![1i64, 2, 3]);
        let y: Vec<i64> = (0..3)
            .map(|i| with_elementwise_index(i, 3, || reverse(&x)))
            .collect();
        assert_eq!(y, [3, 2, 1]);
        assert_eq!(x[0] + x[2u32] * x[1i32], 7);
        let tid = thread_idx().x;
        let data = [1.0f32, 2.0, 3.0, 4.0];
        let v = View::new(&data, [2, 2]).unwrap();
        assert_eq!(v[[tid, tid + 1]] * 2.0, 4.0);

        // Concrete types keep their std methods with the prelude in scope.
        let (a, b) = std::hint::black_box((7u32, 3u32));
        assert_eq!((a.min(b), a.max(b), a.clamp(4, 5), a.pow(2)), (3, 7, 5, 49));
        let h = f16::from_f32(2.0);
        assert_eq!(h.max(f16::ONE), h);
        assert_eq!(h.sqrt(), f16::from_f32(std::f32::consts::SQRT_2));
        assert_eq!(f32::from_f64(0.5).to_f64(), 0.5);
        let c = Complex::new(3.0f32, 4.0);
        assert_eq!((c.conj(), c.norm()), (Complex::new(3.0, -4.0), 5.0));
        let d: Dim3 = grid_dim();
        assert_eq!(d.x * d.y * d.z, 1);
        assert_eq!(<Complex<f64> as Scalar>::DTYPE, crate::DType::C64);
    }

    /// An array on the CPU device.
    fn cpu<T: crate::Element + Default>(shape: &[usize]) -> crate::Array<T> {
        let n = shape.iter().product();
        let s = crate::Stream::null(&crate::Device::cpu()).unwrap();
        crate::Array::from_shape_vec_on(shape, &vec![T::default(); n], &s).unwrap()
    }

    #[test]
    fn the_prelude_names_the_type_for_kernel_signatures() {
        // A kernel's signature, as ordinary Rust with the prelude imported.
        fn k(map: &TensorMap<bf16>, rows: u32) -> u32 {
            map.box_shape()[0].min(rows)
        }
        let a = cpu::<bf16>(&[64, 64]);
        assert_eq!(k(&crate::TensorMap::new(&a, [32, 64], crate::Swizzle::B128).unwrap(), 100), 32);
    }
}
