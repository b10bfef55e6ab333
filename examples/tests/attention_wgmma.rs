//! The FlashAttention-3 example's kernels (examples/kernels_sm90a/attention_wgmma.rs) end to end,
//! through the checked wrapper of examples/attention_wgmma_lib.rs: on the CPU device (in CI) and
//! on the GPU (`on_both_devices!`; an H100 or H200) at small shapes, every row against the f64
//! reference of examples/attention_lib.rs, bf16 and f16, D 64 and 128, causal and not, with and
//! without ping-pong, sequence lengths that are not multiples of the 128-key tile or the 128-row
//! block (77, 130, 600: five key tiles through a ring of three stages) and B * H > 1; the
//! wrapper's errors; and on the GPU alone, S = 1000 and 2048 on sampled rows.

#[path = "../../runtime/tests/support/mod.rs"]
mod support;

#[allow(dead_code)]
#[path = "../attention_lib.rs"]
mod attention_lib;
#[allow(dead_code)]
#[path = "../attention_wgmma_lib.rs"]
mod attention_wgmma_lib;

use attention_lib::{Report, Shape, check_with};
use attention_wgmma_lib::{SCHEDULE, WgmmaAttentionElement, flash_attention_wgmma, flash_attention_wgmma_tuned, key_of};
use cuprum::runtime::tuning::Source;
use cuprum::prelude::{bf16, f16};
use cuprum::runtime::{Array, Device, Error};

on_both_devices!(
    cuprum::runtime::Device;
    bf16_d64,
    bf16_d128,
    f16_d64,
    f16_d128,
    five_key_tiles_through_three_stages,
    bad_shapes_are_errors_and_write_nothing,
    the_tuned_launch_takes_the_baked_schedule
);

fn check<T: WgmmaAttentionElement>(shape: Shape, causal: bool, pingpong: bool, seed: u64, rows: usize) -> Report {
    check_with::<T>(shape, causal, seed, rows, |q, k, v, o, c| flash_attention_wgmma(q, k, v, o, c, pingpong)).unwrap()
}

/// Every (S, causal, ping-pong) case of the small matrix for one element type and head dimension,
/// every row.
fn small<T: WgmmaAttentionElement>(dim: usize) {
    let mut r = support::Rng::new();
    // S = 77: one partial key tile and a block whose second consumer has no row; S = 130: two
    // blocks (the second of two rows) and a key tail of 2.
    for (batch, heads, seq) in [(2, 1, 77), (1, 2, 130)] {
        for causal in [false, true] {
            for pingpong in [true, false] {
                let shape = Shape { batch, heads, seq, dim };
                let report = check::<T>(shape, causal, pingpong, r.next(), usize::MAX);
                assert_eq!(report.rows, batch * heads * seq);
                eprintln!("{} {:?} causal={causal} pingpong={pingpong}: worst {:.2e} (tolerance {:.2e})", T::NAME, shape.dims(), report.worst, report.tolerance);
            }
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

/// S = 600: five key tiles (the last partial) through the ring of three stages, so the producer
/// reuses stages after both consumers released them; S = 1 (O = V).
fn five_key_tiles_through_three_stages() {
    let mut r = support::Rng::new();
    for causal in [false, true] {
        check::<bf16>(Shape { batch: 1, heads: 1, seq: 600, dim: 64 }, causal, true, r.next(), usize::MAX);
        check::<bf16>(Shape { batch: 1, heads: 2, seq: 1, dim: 128 }, causal, true, r.next(), usize::MAX);
    }
}

fn bad_shapes_are_errors_and_write_nothing() {
    let arr = |dims: &[usize]| Array::from_vec(vec![bf16::from_f32(0.5); dims.iter().product()]).unwrap().reshape(dims.to_vec()).unwrap();
    let (q, v) = (arr(&[1, 2, 10, 64]), arr(&[1, 2, 10, 64]));
    let untouched = |o: &Array<bf16>| assert!(o.to_vec().unwrap().iter().all(|x| x.to_f32() == 0.5), "the output was written");
    let mut o = arr(&[1, 2, 10, 64]);
    let e = flash_attention_wgmma(&q, &arr(&[1, 2, 11, 64]), &v, &mut o, false, true).unwrap_err();
    assert!(matches!(e, Error::ShapeMismatch { .. }), "{e}");
    let mut o3 = arr(&[2, 10, 64]);
    let e = flash_attention_wgmma(&arr(&[2, 10, 64]), &arr(&[2, 10, 64]), &arr(&[2, 10, 64]), &mut o3, false, true).unwrap_err();
    assert!(matches!(e, Error::InvalidShape { .. }), "{e}");
    untouched(&o3);
    let mut o4 = arr(&[1, 1, 10, 96]);
    let e = flash_attention_wgmma(&arr(&[1, 1, 10, 96]), &arr(&[1, 1, 10, 96]), &arr(&[1, 1, 10, 96]), &mut o4, false, true).unwrap_err();
    assert!(e.to_string().contains("D = 64 or 128"), "{e}");
    untouched(&o4);
    // A non-contiguous K of the right shape: its tensor map refuses it.
    let kt = arr(&[1, 2, 64, 10]).swapaxes(2, 3).unwrap();
    assert_eq!(kt.shape(), q.shape());
    assert!(flash_attention_wgmma(&q, &kt, &v, &mut o, false, true).is_err());
    untouched(&o);
    let mut o5 = arr(&[1, 2, 0, 64]);
    flash_attention_wgmma(&arr(&[1, 2, 0, 64]), &arr(&[1, 2, 0, 64]), &arr(&[1, 2, 0, 64]), &mut o5, true, true).unwrap();
}

/// `flash_attention_wgmma_tuned` (the schedule of the tuned site `attention_wgmma_schedule`,
/// docs/tuning.md) against the f64 reference, every key; each launch's choice is counted.
fn the_tuned_launch_takes_the_baked_schedule() {
    let mut r = support::Rng::new();
    for dim in [64, 128] {
        for causal in [false, true] {
            let before = cuprum::runtime::stats::snapshot();
            let shape = Shape { batch: 1, heads: 2, seq: 130, dim };
            check_with::<bf16>(shape, causal, r.next(), usize::MAX, flash_attention_wgmma_tuned).unwrap();
            let after = cuprum::runtime::stats::snapshot();
            assert!(after.tuning_file_choices + after.tuning_default_choices > before.tuning_file_choices + before.tuning_default_choices);
        }
    }
}

#[test]
fn the_schedule_site_agrees_with_its_tuning_files() {
    assert!(SCHEDULE.problems().is_empty(), "{:?}", SCHEDULE.problems());
    assert_eq!(SCHEDULE.candidates(), ["pingpong", "plain"]);
    assert_eq!([(64, false), (64, true), (128, false), (128, true)].map(|(d, c)| key_of(d, c)), [0, 1, 2, 3]);
    for (k, name) in SCHEDULE.keys().iter().enumerate() {
        assert_eq!(attention_wgmma_lib::KEY_SHAPES[k].dim, if name.starts_with("d64") { 64 } else { 128 });
    }
    // The CPU device (no architecture) takes the default, ping-pong.
    assert_eq!(SCHEDULE.choice((0, 0), 2), (0, Source::Default));
}

/// The moderate shapes on the GPU: S = 1000 (a tail in every tiling) and 2048, both element
/// types and head dimensions, causal and not, with ping-pong (and bf16 without), 256 sampled
/// rows each.
#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_moderate_shapes() {
    let _current = Device::get(0).unwrap().use_scoped().unwrap();
    let mut r = support::Rng::new();
    for (batch, heads, seq) in [(2, 3, 1000), (1, 4, 2048)] {
        for dim in [64, 128] {
            for causal in [false, true] {
                let shape = Shape { batch, heads, seq, dim };
                let b = check::<bf16>(shape, causal, true, r.next(), 256);
                let b1 = check::<bf16>(shape, causal, false, r.next(), 256);
                let f = check::<f16>(shape, causal, true, r.next(), 256);
                eprintln!("{:?} causal={causal}: bf16 worst {:.2e} ({:.2e} without ping-pong), f16 worst {:.2e}", shape.dims(), b.worst, b1.worst, f.worst);
            }
        }
    }
}
