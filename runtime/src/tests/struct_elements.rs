//! CPU tests of arrays and launches of `#[device]` struct elements: a struct implements
//! `DeviceRepr` and `Element` (by hand here, as the macro does), arrays, slices, views and
//! elementwise arguments accept it, elementwise planning uses scalar accesses for sizes that are
//! not a power of two and lays out the parameters as C does, and every mismatch is an error that
//! names the Rust types. No GPU needed (`gpu_struct_elements.rs` runs them).

use crate::elementwise::plan::{PlanOperand, Variant};
use crate::elementwise::{self, Arg, ArrayArg, Options, Value};
use crate::launch::signature::{Param, ParamType, Role};
use crate::launch::{DeviceRepr, KernelArg, SliceArg, ViewArg};
use crate::registry::{Kernel, KernelUnit, Signature, UnitRef};
use crate::{Array, DType, ElemType, Element, StructType};

/// Three `f32`: 12 bytes, aligned to 4 (no vector type exists for it).
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
struct Particle {
    x: f32,
    y: f32,
    mass: f32,
}

// SAFETY: `#[repr(C)]` of three `f32`: the layout of the C struct `{ float x, y, mass; }`
// (12 bytes, align 4), no host pointers, every bit pattern valid.
unsafe impl DeviceRepr for Particle {}
// SAFETY: as above, and no padding bytes; `ELEM` states that size and alignment.
unsafe impl Element for Particle {
    const ELEM: ElemType = ElemType::Struct(StructType { name: "Particle", size: 12, align: 4 });
}

/// Two `f32`: 8 bytes, aligned to 4 (a power-of-two size: vector accesses are possible).
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
struct Pair {
    a: f32,
    b: f32,
}

// SAFETY: `#[repr(C)]` of two `f32`, no padding, every bit pattern valid.
unsafe impl DeviceRepr for Pair {}
// SAFETY: as above.
unsafe impl Element for Pair {
    const ELEM: ElemType = ElemType::Struct(StructType { name: "Pair", size: 8, align: 4 });
}

/// 25 `f64`: 200 bytes, a parameter slot larger than the runtime keeps on its stack.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
struct Big {
    v: [f64; 25],
}

// SAFETY: `#[repr(C)]` of an `f64` array, no padding, every bit pattern valid.
unsafe impl DeviceRepr for Big {}
// SAFETY: as above.
unsafe impl Element for Big {
    const ELEM: ElemType = ElemType::Struct(StructType { name: "Big", size: 200, align: 8 });
}

const A: u64 = 0x7f00_0000_0000; // 256-byte aligned, as allocations are

#[test]
fn the_declared_layouts_are_rusts() {
    for (e, size, align) in [
        (Particle::ELEM, size_of::<Particle>(), align_of::<Particle>()),
        (Pair::ELEM, size_of::<Pair>(), align_of::<Pair>()),
        (Big::ELEM, size_of::<Big>(), align_of::<Big>()),
    ] {
        assert_eq!((e.size(), e.align()), (size, align), "{e}");
        assert_eq!(e.dtype(), None);
    }
    assert_eq!(ElemType::from(DType::C64).align(), 16);
    assert_eq!(Particle::ELEM.to_string(), "Particle");
    assert_eq!(<f32 as Element>::ELEM, ElemType::Scalar(DType::F32));
}

fn kernel_arg<A: KernelArg>(_: A) {}

/// Struct arrays are arrays: the structural API and every launch argument form accept them
/// (a compile-time check), and without a GPU creating one is the no-GPU error, not a panic.
#[test]
fn struct_arrays_are_launch_arguments() {
    fn uses(a: &Array<Particle>, b: &mut Array<Particle>) {
        kernel_arg(a);
        kernel_arg(&mut *b);
        let _: SliceArg = SliceArg::of(a);
        let _: Option<ViewArg<2>> = ViewArg::of(a);
        let _: ArrayArg<'_> = ArrayArg::of(a);
        let _ = Arg::input(a);
        let _ = Arg::raw(a);
        let _ = Arg::output(b);
        let _ = crate::rawkernel::slice_arg("k", "p", a, 0);
        let _ = crate::rawkernel::view_arg::<Particle, 2>("k", "p", a, 0);
    }
    let _ = uses;
    if crate::Device::count().is_ok() {
        return;
    }
    let p = Particle { x: 1.5, y: -2.0, mass: 3.25 };
    let errs = [
        Array::<Particle>::from_vec(vec![p; 3]).map(|_| ()).unwrap_err(),
        Array::<Particle>::from_shape_vec([1, 2], vec![p; 2]).map(|_| ()).unwrap_err(),
        Array::<Particle>::zeros([2, 3]).map(|_| ()).unwrap_err(),
        Array::<Particle>::empty([4]).map(|_| ()).unwrap_err(),
    ];
    for e in errs {
        assert!(e.is_no_gpu(), "{e}");
    }
}

// ---- vector width ------------------------------------------------------------------------------

#[test]
fn sizes_that_are_not_powers_of_two_disable_vector_accesses() {
    use elementwise::plan::vec_width;
    // Powers of two: 16 bytes of the widest.
    assert_eq!(vec_width([4]), 4);
    assert_eq!(vec_width([8, 4]), 2);
    assert_eq!(vec_width([1, 2]), 8);
    // A 12-, 6-, 24- or 3-byte element anywhere: scalar accesses.
    assert_eq!(vec_width([12]), 1);
    assert_eq!(vec_width([4, 12]), 1);
    assert_eq!(vec_width([6, 2]), 1);
    assert_eq!(vec_width([1, 3]), 1);
    assert_eq!(vec_width([24]), 1);
    // 16 bytes and wider (a power of two or not): one element per access.
    assert_eq!(vec_width([16, 4]), 1);
    assert_eq!(vec_width([32]), 1);
    assert_eq!(vec_width([200]), 1);
    assert_eq!(vec_width([]), 1);
}

// ---- planning and parameters -------------------------------------------------------------------

fn kernel() -> &'static Kernel {
    let unit: &'static KernelUnit = Box::leak(Box::new(KernelUnit::from_source("test", String::new(), false)));
    // SAFETY: SIG is the signature of `advance` (what the macro generates); cuprum's code.
    Box::leak(Box::new(unsafe { Kernel::new(UnitRef::Embedded(unit), "advance", Signature::Elementwise(&SIG)) }))
}

/// `advance(p: Particle, dt: T) -> Particle`.
const SIG: [Param; 3] = [
    Param::new("p", Role::In, ParamType::Fixed(Particle::ELEM)),
    Param::new("dt", Role::In, ParamType::Generic(0)),
    Param::new("out", Role::Out, ParamType::Fixed(Particle::ELEM)),
];

fn arr<'a>(elem: ElemType, shape: &'a [usize], strides: &'a [isize], ptr: u64) -> ArrayArg<'a> {
    // SAFETY: made-up addresses, never launched (host-side checks only).
    unsafe { ArrayArg::from_raw_parts(ptr, elem, shape, strides, 0) }
}

#[test]
fn struct_operands_plan_scalar_accesses() {
    let s = [64usize, 32];
    let c = [32isize, 1];
    let t = [1isize, 64];
    let op = |strides, elem: ElemType| PlanOperand::Array { shape: &s, strides, ptr: A, elem: elem.size() };
    // Contiguous 12-byte structs next to f32: one element per access (f32 alone would take 4).
    let width = elementwise::plan::vec_width([Particle::ELEM.size(), 4, Particle::ELEM.size()]);
    let p = elementwise::plan::plan(&s, &[op(&c, Particle::ELEM), PlanOperand::Other, op(&c, Particle::ELEM)], width).unwrap();
    assert_eq!((p.variant, p.vec, p.items), (Variant::Contig, 1, 64 * 32));
    // 8-byte structs vectorise like f64: two per 16-byte access.
    let width = elementwise::plan::vec_width([Pair::ELEM.size(), 4]);
    let p = elementwise::plan::plan(&s, &[op(&c, Pair::ELEM), op(&c, Pair::ELEM)], width).unwrap();
    assert_eq!((p.variant, p.vec), (Variant::Contig, 2));
    // A transposed struct input: tiled, strides in elements (not bytes).
    let p = elementwise::plan::plan(&s, &[op(&t, Particle::ELEM), op(&c, Particle::ELEM)], 1).unwrap();
    assert_eq!(p.variant, Variant::T32);
    assert_eq!(p.strides[0], Some(vec![1, 64]));
}

/// The parameter structs of struct operands follow C's layout rules: `In<Particle, contig>` is a
/// pointer and a 12-byte value slot aligned to 4, padded to 8; `In<Big, s64>` is 8 + 64 + 200.
/// (`elementwise_nvrtc.rs` checks these numbers against NVRTC's `sizeof`.)
#[test]
fn struct_parameters_have_c_layouts() {
    let plan = |variant| elementwise::plan::ElementwisePlan { variant, size: 1, vec: 1, dims: vec![1], strides: vec![], bcast: 0, items: 1 };
    let mut p = crate::ArgList::new();
    p.input(&plan(Variant::Contig), Particle::ELEM, A, None, None);
    p.input(&plan(Variant::S32), Particle::ELEM, A, Some(&[3, 1]), None);
    p.input(&plan(Variant::S64), Pair::ELEM, A, Some(&[3, 1]), None);
    p.input(&plan(Variant::S64), Big::ELEM, A, Some(&[5, 1]), None);
    p.input(&plan(Variant::Contig), Big::ELEM, A, None, None);
    assert_eq!(p.sizes(), &[24, 56, 80, 272, 208]);
    let big = p.bytes(3);
    assert_eq!(big[..8], A.to_le_bytes());
    assert_eq!(big[8..16], 5i64.to_le_bytes());
    assert!(big[72..].iter().all(|&b| b == 0), "the unused value slot is zero");
}

#[test]
fn struct_launches_check_element_types_by_name() {
    let k = kernel();
    let x = [2usize, 3];
    let xt = [3isize, 1];
    let parts = arr(Particle::ELEM, &x, &xt, A);
    let floats = arr(DType::F32.into(), &x, &xt, A + 4096);
    let msg = |args: &[Arg<'_>]| elementwise::launch(k, &[DType::F32], args, &Options::default()).unwrap_err().to_string();
    // An f32 array for a struct parameter.
    let m = msg(&[Arg::In(floats), Arg::Scalar(Value::F32(0.5)), Arg::Out(parts)]);
    assert!(m.contains("dtype mismatch") && m.contains("`p`") && m.contains("expected Particle, found f32"), "{m}");
    // Another struct of another type.
    let pairs = arr(Pair::ELEM, &x, &xt, A);
    let m = msg(&[Arg::In(parts), Arg::Scalar(Value::F32(0.5)), Arg::Out(pairs)]);
    assert!(m.contains("`out`") && m.contains("expected Particle, found Pair"), "{m}");
    // A struct array for the generic (dtype) parameter.
    let m = msg(&[Arg::In(parts), Arg::In(parts), Arg::Out(parts)]);
    assert!(m.contains("`dt`") && m.contains("expected f32, found Particle"), "{m}");
    // A scalar for a struct parameter.
    let m = msg(&[Arg::Scalar(Value::F32(1.0)), Arg::Scalar(Value::F32(0.5)), Arg::Out(parts)]);
    assert!(m.contains("struct inputs must be arrays") && m.contains("`p`") && m.contains("&Array<Particle>"), "{m}");
    // The description of a struct array in a kind mismatch names the struct.
    let m = msg(&[Arg::In(parts), Arg::Scalar(Value::F32(0.5)), Arg::In(parts)]);
    assert!(m.contains("an input array of Particle"), "{m}");
}
