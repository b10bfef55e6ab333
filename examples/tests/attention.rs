//! The flash attention example's kernels (examples/kernels/attention.rs) end to end, through the
//! checked wrapper of examples/attention_lib.rs: on the CPU device (in CI) and on the GPU
//! (`on_both_devices!`) at small shapes, every row against the f64 reference, bf16 and f16, D 64
//! and 128, causal and not, sequence lengths that are not multiples of the key tile (77, 130) and
//! B * H > 1; the wrapper's errors; and on the GPU alone, S = 1000 and 2048 on sampled rows.

#[path = "../../runtime/tests/support/mod.rs"]
mod support;

#[allow(dead_code)]
#[path = "../attention_lib.rs"]
mod attention_lib;

use attention_lib::{AttentionElement, Shape, check, flash_attention};
use cuprum::prelude::{bf16, f16};
use cuprum::runtime::{Array, Device, Error};

on_both_devices!(
    cuprum::runtime::Device;
    bf16_d64,
    bf16_d128,
    f16_d64,
    f16_d128,
    one_row_and_one_block,
    bad_shapes_are_errors_and_write_nothing
);

/// Every (S, causal) pair of the small matrix for one element type and head dimension, every row.
fn small<T: AttentionElement>(dim: usize) {
    let mut r = support::Rng::new();
    // S = 77: a partial key tile (64-key tiles for D = 64, 32 for D = 128) and a partial block of
    // 64 queries; S = 130: three query blocks, the last of two rows, and a tail of 2 keys.
    for (batch, heads, seq) in [(2, 1, 77), (1, 2, 130)] {
        for causal in [false, true] {
            let shape = Shape { batch, heads, seq, dim };
            let report = check::<T>(shape, causal, r.next(), usize::MAX).unwrap();
            assert_eq!(report.rows, batch * heads * seq);
            eprintln!("{} {:?} causal={causal}: worst {:.2e} (tolerance {:.2e})", T::NAME, shape.dims(), report.worst, report.tolerance);
        }
    }
}

fn bf16_d64() {
    small::<bf16>(64);
}

fn bf16_d128() {
    small::<bf16>(128);
}

fn f16_d64() {
    small::<f16>(64);
}

fn f16_d128() {
    small::<f16>(128);
}

/// S = 1 (one key, so O = V) and S = 64 (exactly one block and one key tile, no tail).
fn one_row_and_one_block() {
    let mut r = support::Rng::new();
    for seq in [1, 64] {
        for causal in [false, true] {
            check::<bf16>(Shape { batch: 1, heads: 3, seq, dim: 128 }, causal, r.next(), usize::MAX).unwrap();
        }
    }
}

fn bad_shapes_are_errors_and_write_nothing() {
    let arr = |dims: &[usize]| Array::from_vec(vec![bf16::from_f32(0.5); dims.iter().product()]).unwrap().reshape(dims.to_vec()).unwrap();
    let (q, k, v) = (arr(&[1, 2, 10, 64]), arr(&[1, 2, 10, 64]), arr(&[1, 2, 10, 64]));
    let untouched = |o: &Array<bf16>| assert!(o.to_vec().unwrap().iter().all(|x| x.to_f32() == 0.5), "the output was written");
    let mut o = arr(&[1, 2, 10, 64]);
    // A K of another length.
    let e = flash_attention(&q, &arr(&[1, 2, 11, 64]), &v, &mut o, false).unwrap_err();
    assert!(matches!(e, Error::ShapeMismatch { .. }), "{e}");
    // An O of another shape.
    let mut o2 = arr(&[1, 2, 64, 10]);
    let e = flash_attention(&q, &k, &v, &mut o2, true).unwrap_err();
    assert!(matches!(e, Error::ShapeMismatch { .. }), "{e}");
    // Three dimensions.
    let mut o3 = arr(&[2, 10, 64]);
    let e = flash_attention(&arr(&[2, 10, 64]), &arr(&[2, 10, 64]), &arr(&[2, 10, 64]), &mut o3, false).unwrap_err();
    assert!(matches!(e, Error::InvalidShape { .. }), "{e}");
    untouched(&o3);
    // D = 96.
    let mut o4 = arr(&[1, 1, 10, 96]);
    let e = flash_attention(&arr(&[1, 1, 10, 96]), &arr(&[1, 1, 10, 96]), &arr(&[1, 1, 10, 96]), &mut o4, false).unwrap_err();
    assert!(e.to_string().contains("D = 64 or 128"), "{e}");
    untouched(&o4);
    // A K that is a non-contiguous view of the right shape: the launch refuses it (no silent copy).
    let kt = arr(&[1, 2, 64, 10]).swapaxes(2, 3).unwrap();
    assert_eq!(kt.shape(), q.shape());
    let e = flash_attention(&q, &kt, &v, &mut o, false).unwrap_err();
    assert!(e.to_string().contains("not C-contiguous"), "{e}");
    untouched(&o);
    untouched(&o2);
    // Empty: nothing to do.
    let mut o5 = arr(&[1, 2, 0, 64]);
    flash_attention(&arr(&[1, 2, 0, 64]), &arr(&[1, 2, 0, 64]), &arr(&[1, 2, 0, 64]), &mut o5, true).unwrap();
}

/// The moderate shapes on the GPU: S = 1000 (a tail in every tiling) and 2048, both element
/// types and head dimensions, causal and not, 256 sampled rows each.
#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_moderate_shapes() {
    let _current = Device::get(0).unwrap().use_scoped().unwrap();
    let mut r = support::Rng::new();
    for (batch, heads, seq) in [(2, 3, 1000), (1, 4, 2048)] {
        for dim in [64, 128] {
            for causal in [false, true] {
                let shape = Shape { batch, heads, seq, dim };
                let b = check::<bf16>(shape, causal, r.next(), 256).unwrap();
                let f = check::<f16>(shape, causal, r.next(), 256).unwrap();
                eprintln!("{:?} causal={causal}: bf16 worst {:.2e}, f16 worst {:.2e}", shape.dims(), b.worst, f.worst);
            }
        }
    }
}
