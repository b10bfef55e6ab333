//! Reduction planning on the CPU: NumPy's axis rules, output shapes, collapsing of transposed and
//! permuted layouts, the strategy and index width chosen, and the errors.

use crate::abi::ReductionVariant;
use crate::array::shape::c_strides;
use crate::reduction::plan::{self, Axes, DeviceShape, PlanSummary, Strategy};

const H200: DeviceShape = DeviceShape { multiprocessors: 132, blocks_per_sm: 0, cc: (0, 0) };

fn mask(ndim: usize, axes: impl Into<Axes>) -> Vec<bool> {
    plan::reduced_mask(ndim, &axes.into()).unwrap()
}

/// Plans a reduction of one C-contiguous (or given-strides) input into a C-contiguous output.
fn plan_of(shape: &[usize], strides: &[isize], axes: impl Into<Axes>, reorder: bool) -> PlanSummary {
    let m = mask(shape.len(), axes);
    let out_shape = plan::output_shape(shape, &m, false);
    let out_strides = c_strides(&out_shape);
    plan::plan("test", shape, &[strides], &m, &out_strides, reorder, true, H200).unwrap()
}

fn permuted(shape: &[usize], perm: &[usize]) -> (Vec<usize>, Vec<isize>) {
    let s = c_strides(shape);
    (perm.iter().map(|&p| shape[p]).collect(), perm.iter().map(|&p| s[p]).collect())
}

#[test]
fn axes_follow_numpy() {
    assert_eq!(mask(3, Axes::All), vec![true, true, true]);
    assert_eq!(mask(3, 1), vec![false, true, false]);
    assert_eq!(mask(3, -1), vec![false, false, true]);
    assert_eq!(mask(3, [0, -1]), vec![true, false, true]);
    assert_eq!(mask(0, Axes::All), Vec::<bool>::new());
    assert_eq!(mask(2, Axes::from(None)), vec![true, true]);
    let shape = [4, 3, 2, 4, 3, 2, 2];
    let m = mask(7, [1, 4, 3, 6]);
    assert_eq!(plan::output_shape(&shape, &m, true), vec![4, 1, 2, 1, 1, 2, 1]);
    assert_eq!(plan::output_shape(&shape, &m, false), vec![4, 2, 2]);
    assert_eq!(plan::output_shape(&[0, 4, 3], &mask(3, Axes::All), false), Vec::<usize>::new());
    assert_eq!(plan::output_shape(&[0, 4, 3], &mask(3, 1), false), vec![0, 3]);
}

#[test]
fn invalid_axes_are_errors() {
    let e = plan::reduced_mask(2, &Axes::One(2)).unwrap_err().to_string();
    assert!(e.contains("axis 2 is out of range") && e.contains("2 dimension"), "{e}");
    let e = plan::reduced_mask(2, &Axes::One(-3)).unwrap_err().to_string();
    assert!(e.contains("axis -3"), "{e}");
    let e = plan::reduced_mask(3, &Axes::from([0, 1, -3])).unwrap_err().to_string();
    assert!(e.contains("repeated") && e.contains("-3"), "{e}");
    assert!(plan::reduced_mask(0, &Axes::One(0)).is_err());
}

#[test]
fn zero_size_without_identity_is_an_error() {
    let shape = [0, 4, 3];
    let m = mask(3, 0);
    let out = c_strides(&[4, 3]);
    let e = plan::plan("argmax", &shape, &[&c_strides(&shape)], &m, &out, true, false, H200).unwrap_err();
    let t = e.to_string();
    assert!(t.contains("argmax") && t.contains("identity"), "{t}");
    // With an identity: outputs get post(identity), nothing reduced.
    let p = plan::plan("sum", &shape, &[&c_strides(&shape)], &m, &out, true, true, H200).unwrap();
    assert_eq!((p.outs, p.red), (12, 0));
}

#[test]
fn full_reduction_spreads_over_the_grid() {
    let p = plan_of(&[1 << 28], &[1], Axes::All, true);
    assert_eq!((p.strategy, p.outs, p.red), (Strategy::Rows, 1, 1 << 28));
    assert!(p.contiguous && !p.wide);
    // Four whole waves of resident blocks (8 per SM assumed here).
    assert_eq!(p.grid, (4 * 132 * 8, 1));
    assert_eq!(p.splits, 4 * 132 * 8);
    assert_eq!(p.variant(), ReductionVariant::Rows);
    assert_eq!(p.scratch(), (4 * 132 * 8, 1));
    // 256^3: one row of 2^24 in 1024 parts of 16K elements (fewer than a wave of 1056 here; with
    // the real occupancy of 6 blocks per SM it is one wave of 792).
    let p = plan_of(&[256, 256, 256], &c_strides(&[256, 256, 256]), Axes::All, true);
    assert_eq!((p.rdims.clone(), p.splits), (vec![1 << 24], 1024));
    // A tiny one: one block.
    let p = plan_of(&[5], &[1], Axes::All, true);
    assert_eq!((p.strategy, p.grid), (Strategy::Rows, (1, 1)));
}

/// Each candidate of the tuned site `reduce_full` (docs/tuning.md), forced on this thread as the
/// tuner forces it: its block size, and its waves and part size in the split (8 resident blocks
/// per SM assumed here: a wave is 1056 blocks).
#[test]
fn a_full_reduction_takes_the_tuned_geometry() {
    use crate::reduction::full::SITE;
    // (candidate, block, splits of 2^28, splits of 2^24)
    let cases = [
        ("b256_w4_p16k", 256, 4 * 1056, 1024),
        ("b256_w1_p16k", 256, 1056, 1024),
        ("b256_w2_p16k", 256, 2 * 1056, 1024),
        ("b256_w8_p16k", 256, 8 * 1056, 1024),
        ("b128_w4_p16k", 128, 4 * 1056, 1024),
        ("b128_w8_p16k", 128, 8 * 1056, 1024),
        ("b256_w4_p4k", 256, 4 * 1056, 3 * 1056),
        ("b256_w4_p64k", 256, 3 * 1056, 256),
    ];
    assert_eq!(cases.map(|c| c.0), SITE.candidates());
    for (k, (name, block, big, mid)) in cases.into_iter().enumerate() {
        SITE.force(Some(k));
        let p = plan_of(&[1 << 28], &[1], Axes::All, true);
        let q = plan_of(&[256, 256, 256], &c_strides(&[256, 256, 256]), Axes::All, true);
        // Reductions to more than one output keep their plan.
        let rows = plan_of(&[4, 1 << 24], &c_strides(&[4, 1 << 24]), -1, true);
        SITE.force(None);
        assert_eq!((p.block, p.splits, p.grid), (block, big, (big, 1)), "{name}, 2^28");
        assert_eq!((q.block, q.splits), (block, mid), "{name}, 256^3");
        assert_eq!(rows.block, plan::THREADS, "{name}, 4 rows");
        assert_eq!(p.scratch(), (u64::from(big), 1), "{name}");
    }
    // Not forced: the default, as `full_reduction_spreads_over_the_grid` plans.
    assert_eq!(plan_of(&[1 << 28], &[1], Axes::All, true).splits, 4 * 1056);
}

#[test]
fn contiguous_axis_uses_a_block_or_a_warp_per_row() {
    let n = 1 << 14;
    let p = plan_of(&[n, n], &c_strides(&[n, n]), 1, true);
    assert_eq!((p.strategy, p.splits, p.grid), (Strategy::Rows, 1, (1, n as u32)));
    assert!(p.contiguous);
    // Rows of 1000: a warp each.
    let p = plan_of(&[511, 1000], &c_strides(&[511, 1000]), 1, true);
    assert_eq!(p.strategy, Strategy::Warps);
    assert_eq!(p.variant(), ReductionVariant::Warps);
    // Few long rows: each row split over blocks, combined by the last.
    let p = plan_of(&[4, 1 << 24], &c_strides(&[4, 1 << 24]), -1, true);
    assert_eq!(p.strategy, Strategy::Rows);
    assert_eq!(p.splits, 132 * 8 / 4);
    assert_eq!(p.scratch(), (4 * 264, 4));
}

#[test]
fn an_input_constant_along_the_reduced_axis_keeps_vector_loads() {
    // `var`'s shift: x (n, m) and k (n, 1) broadcast along the reduced axis 1; read as vectors,
    // k one value repeated (bit 1 of `broadcast`).
    let (n, m) = (1 << 10, 1 << 12);
    let mk = mask(2, 1);
    let x = c_strides(&[n, m]);
    let k: &[isize] = &[1, 0];
    let p = plan::plan("test", &[n, m], &[&x, k], &mk, &[1], true, true, H200).unwrap();
    assert!(p.contiguous);
    assert_eq!(p.broadcast, 0b10);
    let p = plan::plan("test", &[n, m], &[k, &x], &mk, &[1], true, true, H200).unwrap();
    assert_eq!((p.contiguous, p.broadcast), (true, 0b01));
    // A full reduction with a one-element shift: every axis merged into one, k of stride 0.
    let p = plan::plan("test", &[n, m], &[&x, &[0, 0]], &mask(2, Axes::All), &[], true, true, H200).unwrap();
    assert_eq!((p.contiguous, p.broadcast), (true, 0b10));
    // Stride 2 along the axis: no vector loads, and no broadcast bits.
    let p = plan::plan("test", &[n, m], &[&[2 * m as isize, 2], k], &mk, &[1], true, true, H200).unwrap();
    assert_eq!((p.contiguous, p.broadcast), (false, 0));
}

#[test]
fn strided_axis_is_coalesced_across_outputs_and_split_when_few() {
    let n = 1 << 14;
    let p = plan_of(&[n, n], &c_strides(&[n, n]), 0, true);
    assert_eq!(p.strategy, Strategy::Cols);
    assert!(!p.contiguous);
    assert_eq!(p.grid, (64, 16));
    assert_eq!(p.splits, 16);
    assert_eq!(p.inputs[0].rstrides[0], n as i64);
    assert_eq!(p.inputs[0].ostrides[0], 1);
    // Many outputs: no split.
    let p = plan_of(&[8, 1 << 20], &c_strides(&[8, 1 << 20]), 0, true);
    assert_eq!((p.strategy, p.splits), (Strategy::Cols, 1));
    // Tiny rows along the contiguous axis are a thread per output too.
    let p = plan_of(&[1 << 20, 3], &c_strides(&[1 << 20, 3]), 1, true);
    assert_eq!(p.strategy, Strategy::Cols);
    // Fewer outputs than a warp along a long strided axis: a block per output, split.
    let p = plan_of(&[1 << 23, 2], &c_strides(&[1 << 23, 2]), 0, true);
    assert_eq!((p.strategy, p.outs, p.contiguous), (Strategy::Rows, 2, false));
    assert!(p.splits > 1 && p.grid == (p.splits, 2), "{:?}", (p.splits, p.grid));
    // ... but short ones stay a thread per output.
    let p = plan_of(&[1000, 2], &c_strides(&[1000, 2]), 0, true);
    assert_eq!(p.strategy, Strategy::Cols);
}

#[test]
fn transposed_and_permuted_inputs_collapse_like_the_original() {
    // A full reduction of a transposed matrix is one contiguous row.
    let (shape, strides) = permuted(&[300, 700], &[1, 0]);
    let p = plan_of(&shape, &strides, Axes::All, true);
    assert_eq!((p.rdims.clone(), p.contiguous), (vec![300 * 700], true));
    // Reducing axis 0 of the transpose (700, 300) = the original's contiguous axis.
    let p = plan_of(&shape, &strides, 0, true);
    assert_eq!((p.odims.clone(), p.rdims.clone(), p.contiguous), (vec![300], vec![700], true));
    assert_eq!(p.out.ostrides[0], 1);
    // A permuted 4-d array reduced over two axes that are adjacent in memory.
    let base = [6, 5, 4, 3];
    let (shape, strides) = permuted(&base, &[2, 0, 3, 1]); // shape [4, 6, 3, 5]
    let p = plan_of(&shape, &strides, [0, 2], true); // base axes 2 and 3: contiguous 12
    assert_eq!(p.rdims, vec![12]);
    assert!(p.contiguous);
    assert_eq!(p.odims, vec![30]);
    // Without reordering (raw arguments), the axes keep their order, so a transposed matrix
    // stays two axes.
    let (shape, strides) = permuted(&[300, 700], &[1, 0]);
    let p = plan_of(&shape, &strides, Axes::All, false);
    assert_eq!(p.rdims, vec![700, 300]);
    assert!(!p.contiguous);
}

#[test]
fn keepdims_output_strides_and_extent_one_axes() {
    let shape = [4, 3, 2, 4, 3, 2, 2];
    let m = mask(7, [1, 4, 3, 6]);
    let out_shape = plan::output_shape(&shape, &m, false);
    let p = plan::plan("t", &shape, &[&c_strides(&shape)], &m, &c_strides(&out_shape), true, true, H200).unwrap();
    assert_eq!((p.outs, p.red), (16, 36 * 2));
    // (4,3,2,4,3,2,2): kept axes 0,2,5 (4,2,2) and reduced axes 1,3,4,6 (3,4,3,2).
    assert_eq!(p.rdims.iter().product::<u64>(), 72);
    assert_eq!(p.odims.iter().product::<u64>(), 16);
    // Extent-1 axes vanish.
    let p = plan_of(&[1, 5, 1, 7], &c_strides(&[1, 5, 1, 7]), [0, 3], true);
    assert_eq!((p.odims.clone(), p.rdims.clone()), (vec![5], vec![7]));
}

#[test]
fn broadcast_inputs_have_zero_strides() {
    // x (3, 4) and y (4,) broadcast to (3, 4); reduce axis 0.
    let shape = [3, 4];
    let x = c_strides(&shape);
    let y = [0isize, 1];
    let m = mask(2, 0);
    let p = plan::plan("t", &shape, &[&x, &y], &m, &[1], true, true, H200).unwrap();
    assert_eq!(p.inputs[1].rstrides[0], 0);
    assert_eq!(p.inputs[1].ostrides[0], 1);
    assert!(!p.contiguous);
}

#[test]
fn index_width_is_64_bit_only_when_needed() {
    let p = plan_of(&[1 << 30], &[1], Axes::All, true);
    assert!(!p.wide);
    let p = plan_of(&[1 << 31], &[1], Axes::All, true);
    assert!(p.wide);
    assert_eq!(p.variant(), ReductionVariant::Rows64);
    // The ((2 << 32) // 512, 1) input of CuPy's tests: 2^24 elements, 32-bit.
    let p = plan_of(&[(2usize << 32) / 512, 1], &[1, 1], Axes::All, true);
    assert!(!p.wide);
    // Few elements but a huge stride.
    let p = plan_of(&[2, 4], &[1 << 31, 1], 1, true);
    assert!(p.wide);
}

#[test]
fn too_many_axes_after_collapsing_is_an_error() {
    // 9 reduced axes that cannot merge (every other element along each).
    let shape = vec![2usize; 9];
    let strides: Vec<isize> = (0..9).map(|k| 1isize << (2 * (8 - k) + 1)).collect();
    let m = mask(9, Axes::All);
    let e = plan::plan("t", &shape, &[&strides], &m, &[], true, true, H200).unwrap_err().to_string();
    assert!(e.contains("at most 8"), "{e}");
}
