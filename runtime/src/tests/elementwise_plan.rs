//! CPU tests of elementwise launch planning and of the checks a launch makes before it touches a
//! device (CuPy's behaviour: broadcasting, the size rules, output shapes, block size 0), and of
//! `ElementwiseKernel`'s grammar. No GPU needed.

use crate::elementwise::plan::{PlanOperand, Variant};
use crate::elementwise::{self, Arg, ArrayArg, ElementwiseKernel, Options, Value};
use crate::launch::signature::{Param, ParamType, Role};
use crate::registry::{Kernel, KernelUnit, Signature, UnitRef};
use crate::{DType, Error};

fn arr<'a>(dtype: DType, shape: &'a [usize], strides: &'a [isize], ptr: u64) -> ArrayArg<'a> {
    arr_on(dtype, shape, strides, ptr, 0)
}

fn arr_on<'a>(dtype: DType, shape: &'a [usize], strides: &'a [isize], ptr: u64, device: usize) -> ArrayArg<'a> {
    // SAFETY: made-up addresses, never launched: these tests stop at the host-side checks.
    unsafe { ArrayArg::from_raw_parts(ptr, dtype.into(), shape, strides, device) }
}

fn op<'a>(shape: &'a [usize], strides: &'a [isize], ptr: u64, elem: usize) -> PlanOperand<'a> {
    PlanOperand::Array { shape, strides, ptr, elem }
}

const A: u64 = 0x7f00_0000_0000; // 256-byte aligned, as allocations are

// ---- planning ------------------------------------------------------------------------------

#[test]
fn contiguous_operands_make_a_vectorized_1d_loop() {
    let s = [64usize, 33];
    let t = [33isize, 1];
    let p = elementwise::plan::plan(&s, &[op(&s, &t, A, 4), PlanOperand::Other, op(&s, &t, A + 4096, 4)], 4).unwrap();
    assert_eq!((p.variant, p.size, p.vec, p.items), (Variant::Contig, 64 * 33, 4, 64 * 33 / 4));
    // A pointer off the 16-byte boundary: scalar accesses, same variant.
    let p = elementwise::plan::plan(&s, &[op(&s, &t, A + 4, 4), op(&s, &t, A, 4)], 4).unwrap();
    assert_eq!((p.variant, p.vec), (Variant::Contig, 1));
    // f16 and f64 operands together: 16 bytes of the f64, two elements per vector.
    assert_eq!(elementwise::plan::vec_width([2, 8]), 2);
    assert_eq!(elementwise::plan::vec_width([2]), 8);
    assert_eq!(elementwise::plan::vec_width([16]), 1);
    assert_eq!(elementwise::plan::vec_width([]), 1);
}

#[test]
fn extent_one_axes_are_dropped_and_compatible_axes_merged() {
    // (4, 1, 6) with a step-2 slice of a (4, 1, 12) array: uniformly strided, so the unit axis
    // goes and the other two merge into one axis of stride 2.
    let s = [4usize, 1, 6];
    let c = [6isize, 6, 1];
    let sl = [12isize, 12, 2];
    let p = elementwise::plan::plan(&s, &[op(&s, &c, A, 4), op(&s, &sl, A, 4)], 4).unwrap();
    assert_eq!((p.variant, p.dims.clone(), p.vec), (Variant::S32, vec![24], 1));
    assert_eq!(p.strides[1], Some(vec![2]));
    // The first 6 columns of a (4, 1, 12) array: rows 12 apart, so two axes stay; 6 is not a
    // multiple of 4 f32 per vector, so scalar items.
    let half = [12isize, 12, 1];
    let p = elementwise::plan::plan(&s, &[op(&s, &c, A, 4), op(&s, &half, A, 4)], 4).unwrap();
    assert_eq!((p.variant, p.dims.clone(), p.vec), (Variant::S32, vec![4, 6], 1));
    assert_eq!(p.strides[1], Some(vec![12, 1]));
    // With f64 (2 per vector) the rows split into vector items.
    let p = elementwise::plan::plan(&s, &[op(&s, &c, A, 8), op(&s, &half, A, 8)], 2).unwrap();
    assert_eq!((p.dims.clone(), p.vec, p.strides[1].clone()), (vec![4, 3], 2, Some(vec![12, 2])));
    // A (2, 3, 4) array whose last two axes are contiguous and the first strided: 2 axes.
    let s = [2usize, 3, 4];
    let t = [100isize, 4, 1];
    let c = [12isize, 4, 1];
    let p = elementwise::plan::plan(&s, &[op(&s, &t, A, 4), op(&s, &c, A, 4)], 4).unwrap();
    assert_eq!((p.variant, p.dims.clone()), (Variant::S32, vec![2, 12 / 4]));
    assert_eq!((p.strides[0].clone().unwrap(), p.strides[1].clone().unwrap()), (vec![100, 4], vec![12, 4]));
    // A 0-d loop is one element.
    let p = elementwise::plan::plan(&[], &[op(&[], &[], A, 4)], 4).unwrap();
    assert_eq!((p.variant, p.size), (Variant::Contig, 1));
}

#[test]
fn broadcast_rows_use_vector_items_and_a_broadcast_bit() {
    // (2^14, 2^14) - (2^14,): the bench's broadcast case.
    let n = 1usize << 14;
    let s = [n, n];
    let c = [n as isize, 1];
    let y = [n];
    let yt = [1isize];
    let p = elementwise::plan::plan(&s, &[op(&s, &c, A, 4), op(&y, &yt, A, 4), op(&s, &c, A, 4)], 4).unwrap();
    assert_eq!((p.variant, p.vec, p.dims.clone()), (Variant::S32, 4, vec![n as u64, (n / 4) as u64]));
    assert_eq!(p.strides[1], Some(vec![0, 4]));
    // A column broadcast: y has stride 0 along the inner axis: bit 1.
    let col = [n, 1];
    let colt = [1isize, 1];
    let p = elementwise::plan::plan(&s, &[op(&s, &c, A, 4), op(&col, &colt, A, 4), op(&s, &c, A, 4)], 4).unwrap();
    assert_eq!((p.vec, p.bcast), (4, 0b010));
    assert_eq!(p.grid(256), ((n * n / 4) as u64).div_ceil(4 * 256) as u32);
}

#[test]
fn transposed_input_is_strided_without_vectors() {
    let n = 1usize << 14;
    let s = [n, n];
    let c = [n as isize, 1];
    let tr = [1isize, n as isize];
    let p = elementwise::plan::plan(&s, &[op(&s, &tr, A, 4), op(&s, &c, A, 4), op(&s, &c, A, 4)], 4).unwrap();
    // ... visited by tiles, the transposed operand marked (bit 0); a plain broadcast is not.
    assert_eq!((p.variant, p.vec, p.dims.len(), p.bcast), (Variant::T32, 1, 2, 0b001));
    // A transposed output: bit 2.
    let p = elementwise::plan::plan(&s, &[op(&s, &c, A, 4), op(&s, &c, A, 4), op(&s, &tr, A, 4)], 4).unwrap();
    assert_eq!((p.variant, p.bcast), (Variant::T32, 0b100));
    let row = [0isize, 1];
    let p = elementwise::plan::plan(&s, &[op(&s, &c, A, 4), op(&s, &row, A, 4), op(&s, &c, A, 4)], 4).unwrap();
    assert_eq!(p.variant, Variant::S32);
}

#[test]
fn index_width_follows_the_32_bit_boundary() {
    // int8, a contiguous array and a broadcast scalar-array (stride 0): strided, so the loop
    // size picks the variant.
    let one = [1usize];
    let z = [0isize];
    for (n, want) in [
        ((1usize << 31) - 1024, Variant::S32),
        ((1usize << 31) - 16, Variant::S32),
        (1usize << 31, Variant::S64),
        ((1usize << 31) + 1024, Variant::S64),
        ((1usize << 32) - 1024, Variant::S64),
        ((1usize << 32) + 1024, Variant::S64),
    ] {
        let s = [n];
        let t = [1isize];
        let p = elementwise::plan::plan(&s, &[op(&s, &t, A, 1), op(&one, &z, A, 1), op(&s, &t, A, 1)], 16).unwrap();
        assert_eq!(p.variant, want, "{n}");
        // Vector items even across the boundary (the inner extent is a multiple of 16).
        assert_eq!(p.vec, 16, "{n}");
    }
    // Contiguous operands use the contig variant (64-bit loop) at any size.
    let s = [(1usize << 32) + 1024];
    let t = [1isize];
    assert_eq!(elementwise::plan::plan(&s, &[op(&s, &t, A, 1)], 16).unwrap().variant, Variant::Contig);
    // A small loop whose operand reaches past 2^31 elements: 64-bit offsets.
    let s = [4usize, 2];
    let far = [1isize << 30, 1];
    let c = [2isize, 1];
    let p = elementwise::plan::plan(&s, &[op(&s, &far, A, 1), op(&s, &c, A, 1)], 16).unwrap();
    assert_eq!(p.variant, Variant::S64);
    // Negative strides (a reversed view) count too.
    let s = [3usize];
    let rev = [-((1isize << 30) + 7)];
    let p = elementwise::plan::plan(&s, &[op(&s, &rev, A, 1), op(&s, &[1], A, 1)], 16).unwrap();
    assert_eq!(p.variant, Variant::S64);
}

#[test]
fn too_many_dimensions_after_collapsing_is_an_error() {
    let s = [2usize; 9];
    let t: Vec<isize> = (0..9).map(|k| 1isize << (2 * (8 - k) + 1)).collect();
    let e = elementwise::plan::plan(&s, &[op(&s, &t, A, 1)], 16).unwrap_err();
    assert!(e.to_string().contains("at most 8"), "{e}");
}

// ---- the size rules and the checks of a launch -------------------------------------------

#[test]
fn size_rules() {
    let x = [2usize, 3];
    let xt = [3isize, 1];
    let y = [3usize];
    let yt = [1isize];
    let a = arr(DType::F32, &x, &xt, A);
    let b = arr(DType::F32, &y, &yt, A);
    // Inputs and given outputs broadcast together.
    assert_eq!(elementwise::broadcast_shape("k", &[Arg::In(a), Arg::In(b)], None).unwrap(), vec![2, 3]);
    assert_eq!(elementwise::broadcast_shape("k", &[Arg::In(b), Arg::Out(a)], None).unwrap(), vec![2, 3]);
    // Raw arrays do not take part.
    assert_eq!(elementwise::broadcast_shape("k", &[Arg::Raw(a), Arg::In(b)], None).unwrap(), vec![3]);
    // All raw: the size is required ...
    let e = elementwise::broadcast_shape("k", &[Arg::Raw(a)], None).unwrap_err();
    assert!(e.to_string().contains("every array argument is raw"), "{e}");
    // ... and then sets the loop.
    assert_eq!(elementwise::broadcast_shape("k", &[Arg::Raw(a)], Some(7)).unwrap(), vec![7]);
    // A size next to a non-raw array is an error (also a given output).
    let e = elementwise::broadcast_shape("k", &[Arg::In(a)], Some(6)).unwrap_err();
    assert!(e.to_string().contains("only when every array argument is raw"), "{e}");
    let e = elementwise::broadcast_shape("k", &[Arg::Raw(a), Arg::Out(a)], Some(6)).unwrap_err();
    assert!(e.to_string().contains("only when every array argument is raw"), "{e}");
    // The size taken from a given output, with raw inputs.
    assert_eq!(elementwise::broadcast_shape("k", &[Arg::Raw(b), Arg::Out(a)], None).unwrap(), vec![2, 3]);
    // No input at all: undecided without an output or a size.
    let e = elementwise::broadcast_shape("k", &[], None).unwrap_err();
    assert!(e.to_string().contains("undecided"), "{e}");
    assert_eq!(elementwise::broadcast_shape("k", &[], Some(5)).unwrap(), vec![5]);
    // Scalars only: one element.
    assert_eq!(elementwise::broadcast_shape("k", &[Arg::Scalar(Value::F32(1.0))], None).unwrap(), Vec::<usize>::new());
    // Shapes that do not broadcast.
    let z = [4usize];
    let e = elementwise::broadcast_shape("k", &[Arg::In(a), Arg::In(arr(DType::F32, &z, &yt, A))], None).unwrap_err();
    assert!(matches!(e, Error::Broadcast { .. }), "{e}");
}

fn kernel() -> &'static Kernel {
    let unit: &'static KernelUnit = Box::leak(Box::new(KernelUnit::from_source("test", String::new(), false)));
    // SAFETY: SIG is `squared_diff`'s signature; the unit is empty and nothing is launched.
    Box::leak(Box::new(unsafe { Kernel::new(UnitRef::Embedded(unit), "squared_diff", Signature::Elementwise(&SIG)) }))
}

const SIG: [Param; 3] = [
    Param::new("x", Role::In, ParamType::Generic(0)),
    Param::new("y", Role::In, ParamType::Generic(0)),
    Param::new("z", Role::Out, ParamType::Generic(0)),
];

#[test]
fn launch_checks_before_touching_a_device() {
    let k = kernel();
    let x = [2usize, 3];
    let xt = [3isize, 1];
    let a = arr(DType::F32, &x, &xt, A);
    let msg = |args: &[Arg<'_>], opts: Options<'_>| {
        elementwise::launch(k, &[DType::F32], args, &opts).unwrap_err().to_string()
    };
    // Block size 0.
    let m = msg(&[Arg::In(a), Arg::In(a), Arg::Out(a)], Options { block_size: Some(0), ..Default::default() });
    assert!(m.contains("block size is 0"), "{m}");
    // Output shape mismatch.
    let w = [3usize];
    let wt = [1isize];
    let m = msg(&[Arg::In(a), Arg::Scalar(Value::F32(1.0)), Arg::Out(arr(DType::F32, &w, &wt, A))], Options::default());
    assert!(m.contains("shape mismatch") && m.contains("broadcast shape"), "{m}");
    // An output that broadcasts with the inputs but is not their broadcast shape: (1, 3) against
    // (2, 3) inputs.
    let row = [1usize, 3];
    let rowt = [3isize, 1];
    let m = msg(&[Arg::In(a), Arg::In(a), Arg::Out(arr(DType::F32, &row, &rowt, A))], Options::default());
    assert!(m.contains("shape mismatch"), "{m}");
    // A broadcast view as output.
    let bt = [0isize, 1];
    let m = msg(&[Arg::In(a), Arg::In(a), Arg::Out(arr(DType::F32, &x, &bt, A))], Options::default());
    assert!(m.contains("broadcast view"), "{m}");
    // Wrong dtype, wrong count, wrong kind.
    let m = msg(&[Arg::In(arr(DType::F64, &x, &xt, A)), Arg::In(a), Arg::Out(a)], Options::default());
    assert!(m.contains("dtype mismatch") && m.contains("`x`"), "{m}");
    let m = msg(&[Arg::In(a), Arg::Out(a)], Options::default());
    assert!(m.contains("2 arguments") && m.contains("3 parameters"), "{m}");
    let m = msg(&[Arg::In(a), Arg::In(a), Arg::Scalar(Value::F32(0.0))], Options::default());
    assert!(m.contains("must be an output array"), "{m}");
    // A size with non-raw arrays.
    let m = msg(&[Arg::In(a), Arg::In(a), Arg::Out(a)], Options { size: Some(6), ..Default::default() });
    assert!(m.contains("only when every array argument is raw"), "{m}");
    // Arrays on two devices.
    let other = arr_on(DType::F32, &x, &xt, A, 1);
    let m = msg(&[Arg::In(a), Arg::In(other), Arg::Out(a)], Options::default());
    assert!(m.contains("device mismatch"), "{m}");
}

// ---- ElementwiseKernel's grammar ---------------------------------------------------------

fn def_err(i: &str, o: &str, name: &str) -> String {
    ElementwiseKernel::new(i, o, "z = x", name).unwrap_err().to_string()
}

#[test]
fn elementwise_kernel_grammar_errors() {
    assert!(def_err("T x", "T z", "1bad").contains("invalid kernel name `1bad`"));
    assert!(def_err("T x", "T z", "has space").contains("invalid kernel name"));
    assert!(def_err("T i", "T z", "k").contains("`i` is reserved"));
    assert!(def_err("T x", "T n", "k").contains("`n` is reserved"));
    assert!(def_err("T _x", "T z", "k").contains("`_x` is reserved"));
    assert!(def_err("T x, T x", "T z", "k").contains("used twice"));
    assert!(def_err("T x", "T x", "k").contains("used twice"));
    assert!(def_err("float x", "T z", "k").contains("unknown type `float`"));
    assert!(def_err("T", "T z", "k").contains("syntax error"));
    assert!(def_err("const T x", "T z", "k").contains("unknown keyword `const`"));
    assert!(def_err("T x", "T int", "k").contains("invalid parameter name `int`"));
}

#[test]
fn elementwise_kernel_definitions_are_shared() {
    let a = ElementwiseKernel::new("T x, raw T y", "T z", "z = x + y[_ind.size() - i - 1]", "add_reverse").unwrap();
    let b = ElementwiseKernel::new("T x, raw T y", "T z", "z = x + y[_ind.size() - i - 1]", "add_reverse").unwrap();
    assert!(std::ptr::eq(a.kernel(), b.kernel()));
    let src = a.source();
    assert!(src.contains("#include <cuprum/elementwise.h>"), "{src}");
    assert!(src.contains("cuprum::ew::CArray<T> y"), "{src}");
    assert!(src.contains("z = x + y[_ind.size() - i - 1];"), "{src}");
    assert!(src.contains("#define CUPRUM_INSTANTIATE_add_reverse(NAME, VARIANT, T)"), "{src}");
    let c = ElementwiseKernel::build("float32 x", "float64 z", "z = x * K", "scaled").preamble("#define K 2.0").finish().unwrap();
    assert!(c.source().contains("#define K 2.0"));
    assert!(!std::ptr::eq(a.kernel(), c.kernel()));
}
