//! GPU tests of `#[device]` struct elements through device kernels: copies by the runtime's
//! built-in copy kernel (`kernels/elementwise.rs`'s `copy`), and elementwise
//! launches whose operands are structs (`kernels/struct_elementwise.cu`). Run on a GPU machine
//! with `cargo test -p cuprum-runtime --lib tests::gpu_struct_elements -- --include-ignored`.

use crate::test_support as support;
use support::Rng;
use super::structs;
use structs::{Bytes2, Pair, Particle, Quad, random_structs, transposed};

use std::sync::OnceLock;

use crate::abi::{headers, mangle, ElementwiseVariant, KernelKind};
use crate::elementwise::{self, Arg, Options, Value};
use crate::launch::signature::{Param, ParamType, Role};
use crate::registry::{self, Kernel, KernelUnit, Signature, UnitRef};
use crate::{Array, DType, ElemType, Element};

// ---- the runtime's built-in copy kernel -----------------------------------------------------

/// The runtime's built-in copy kernel, as the unit table lists it.
fn copy_entry() -> &'static registry::KernelEntry {
    registry::kernels()
        .find(|e| e.name() == "copy" && e.file().ends_with("kernels/elementwise.rs"))
        .expect("the runtime lists its built-in copy kernel")
}

/// Whether an instance of the copy kernel for `dtype` has been loaded (the device path ran).
fn copy_ran_as(dtype: DType) -> bool {
    let suffix = format!("__{}", dtype.short_name());
    registry::served().iter().any(|s| s.kernel == "copy" && s.symbol.ends_with(&suffix))
}

/// A transposed `rows x cols` struct array: `to_vec`, `copy` and `ravel` give the transpose.
fn check_transposed_copy<T: Element + PartialEq>(host: Vec<T>, rows: usize, cols: usize) {
    let a = Array::from_shape_vec([rows, cols], host.clone()).unwrap();
    let t = a.transpose();
    let want = transposed(&host, rows, cols);
    assert_eq!(t.to_vec().unwrap(), want, "{}", T::ELEM);
    let c = t.copy().unwrap();
    assert!(c.is_c_contiguous());
    assert_eq!(c.to_vec().unwrap(), want, "{}", T::ELEM);
    assert_eq!(t.ravel().unwrap().to_vec().unwrap(), want, "{}", T::ELEM);
    // A contiguous copy at an offset (a slice of rows), through the contiguous variant.
    let tail = a.slice(0, 1..).unwrap().copy().unwrap();
    assert_eq!(tail.to_vec().unwrap(), host[cols..].to_vec(), "{}", T::ELEM);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn struct_copies_run_the_copy_kernel_of_their_size() {
    let mut r = Rng::new();
    let (rows, cols) = (129usize, 67usize);
    check_transposed_copy(random_structs(&mut r, rows * cols, Pair::random), rows, cols);
    assert!(copy_ran_as(DType::I64), "an 8-byte struct is copied as i64: {:?}", registry::served());
    check_transposed_copy(random_structs(&mut r, rows * cols, Quad::random), rows, cols);
    assert!(copy_ran_as(DType::C64), "a 16-byte struct is copied as Complex<f64>");
    check_transposed_copy(random_structs(&mut r, rows * cols, Bytes2::random), rows, cols);
    assert!(copy_ran_as(DType::U16), "a 2-byte struct is copied as u16");
    // 12 bytes: no integer of that size, gathered on the host (same results).
    check_transposed_copy(random_structs(&mut r, rows * cols, Particle::random), rows, cols);
}

// ---- elementwise launches over structs ------------------------------------------------------

fn struct_kernel(name: &'static str, sig: &'static [Param]) -> &'static Kernel {
    static UNIT: OnceLock<&'static KernelUnit> = OnceLock::new();
    let unit = *UNIT.get_or_init(|| {
        let source = include_str!("../../tests/kernels/struct_elementwise.cu").to_string();
        Box::leak(Box::new(KernelUnit::from_source("struct_elementwise", source, false)))
    });
    // SAFETY: `sig` is the signature of kernel `name` of struct_elementwise.cu (no raw parameters).
    Box::leak(Box::new(unsafe { Kernel::new(UnitRef::Embedded(unit), name, Signature::Elementwise(sig)) }))
}

/// `advance(p: Particle, dt: f32) -> Particle`.
const ADVANCE: [Param; 3] = [
    Param::new("p", Role::In, ParamType::Fixed(Particle::ELEM)),
    Param::new("dt", Role::In, ParamType::Fixed(ElemType::Scalar(DType::F32))),
    Param::new("out0", Role::Out, ParamType::Fixed(Particle::ELEM)),
];

/// `swap(p: Pair) -> (Pair, f32)`.
const SWAP: [Param; 3] = [
    Param::new("p", Role::In, ParamType::Fixed(Pair::ELEM)),
    Param::new("out0", Role::Out, ParamType::Fixed(Pair::ELEM)),
    Param::new("out1", Role::Out, ParamType::Fixed(ElemType::Scalar(DType::F32))),
];

fn advance_ref(p: &Particle, dt: f32) -> (f64, f64, f64) {
    (p.x as f64 + p.y as f64 * dt as f64, p.y as f64, p.mass as f64 * 2.0)
}

fn check_advanced(got: &[Particle], inputs: &[Particle], dts: &[f32]) {
    assert_eq!(got.len(), inputs.len());
    for (i, ((g, p), &dt)) in got.iter().zip(inputs).zip(dts).enumerate() {
        let (x, y, m) = advance_ref(p, dt);
        let ok = (g.x as f64 - x).abs() <= 1e-6 * x.abs().max(1.0) && g.y as f64 == y && g.mass as f64 == m;
        assert!(ok, "element {i}: {g:?}, want ({x}, {y}, {m}) from {p:?} and dt {dt}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn elementwise_kernels_read_and_write_struct_arrays() {
    let k = struct_kernel("advance", &ADVANCE);
    let mut r = Rng::new();
    // Contiguous, with a scalar dt.
    let n = 100_003usize;
    let host = random_structs(&mut r, n, Particle::random);
    let x = Array::from_vec(host.clone()).unwrap();
    let mut out = Array::from_vec(vec![Particle::POISON; n]).unwrap();
    let dt = r.range(0.1, 1.0) as f32;
    elementwise::launch(k, &[], &[Arg::input(&x), Arg::scalar(dt), Arg::output(&mut out)], &Options::default()).unwrap();
    check_advanced(&out.to_vec().unwrap(), &host, &vec![dt; n]);

    // A transposed input and a dt per row broadcast along the columns (strided variant).
    let (rows, cols) = (61usize, 45usize);
    let host = random_structs(&mut r, rows * cols, Particle::random);
    let x = Array::from_shape_vec([rows, cols], host.clone()).unwrap().transpose();
    let dts: Vec<f32> = (0..cols).map(|_| r.range(0.1, 1.0) as f32).collect();
    let d = Array::from_shape_vec([cols, 1], dts.clone()).unwrap();
    let mut out = Array::from_shape_vec([cols, rows], vec![Particle::POISON; rows * cols]).unwrap();
    elementwise::launch(k, &[], &[Arg::input(&x), Arg::input(&d), Arg::output(&mut out)], &Options::default()).unwrap();
    let want_in = transposed(&host, rows, cols);
    let want_dt: Vec<f32> = (0..cols).flat_map(|j| std::iter::repeat_n(dts[j], rows)).collect();
    check_advanced(&out.to_vec().unwrap(), &want_in, &want_dt);

    // A scalar for the struct parameter is an error, before anything runs.
    let e = elementwise::launch(k, &[], &[Arg::Scalar(Value::F32(1.0)), Arg::scalar(dt), Arg::output(&mut out)], &Options::default())
        .unwrap_err();
    assert!(e.to_string().contains("struct inputs must be arrays"), "{e}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn eight_byte_structs_take_vector_accesses_and_scalar_ones_off_alignment() {
    let k = struct_kernel("swap", &SWAP);
    let mut r = Rng::new();
    let n = 4 * 4099usize;
    let host = random_structs(&mut r, n, Pair::random);
    let x = Array::from_vec(host.clone()).unwrap();
    // Whole arrays (vector accesses: two pairs per 16 bytes), then views starting at element 1
    // (8 bytes off the 16-byte boundary: one element per access).
    for start in [0usize, 1] {
        let xv = x.slice(0, start as isize..).unwrap();
        let m = n - start;
        let mut o0 = Array::from_vec(vec![Pair::POISON; n]).unwrap().slice(0, start as isize..).unwrap();
        let mut o1 = Array::from_vec(vec![f32::NAN; m]).unwrap();
        elementwise::launch(k, &[], &[Arg::input(&xv), Arg::output(&mut o0), Arg::output(&mut o1)], &Options::default()).unwrap();
        let want0: Vec<Pair> = host[start..].iter().map(|p| Pair { a: p.b, b: p.a }).collect();
        let want1: Vec<f32> = host[start..].iter().map(|p| p.a + p.b).collect();
        assert_eq!(o0.to_vec().unwrap(), want0, "start {start}");
        assert_eq!(o1.to_vec().unwrap(), want1, "start {start}");
    }
}

/// No GPU needed: the built-in copy kernel is in the unit table, and its instances for the
/// dtypes that struct copies use compile with NVRTC, so the GPU tests above fail only for what
/// they test. Needs libnvrtc: fails without it unless `CUPRUM_SKIP_CUDA_COMPILE=1`.
#[test]
fn the_builtin_copy_kernel_compiles() {
    let unit = copy_entry().unit().unwrap();
    assert!(unit.source().contains("copy"), "{}", unit.source());
    let nvrtc = crate::nvrtc::is_available();
    if support::skip_without(nvrtc, "the_builtin_copy_kernel_compiles (its NVRTC part)", "no libnvrtc") {
        return;
    }
    for d in [DType::U8, DType::U16, DType::I32, DType::I64, DType::C64] {
        for v in ElementwiseVariant::ALL.map(Into::into) {
            let sym = mangle::kernel_symbol(KernelKind::Elementwise, "copy", Some(v), &[d]);
            let line = format!(
                "{}{}",
                headers::includes_for(&[d]),
                mangle::instantiate_variant_line("copy", Some(v), &sym, &[d])
            );
            let src = unit.instance_source(&line);
            let target = crate::nvrtc::CodeTarget::Cubin(90);
            let options = crate::nvrtc::effective_options(&[], target, false);
            let program = crate::nvrtc::Program { name: &sym, file_name: &sym, source: &src, options: &options, name_expressions: &[], dump_source_on_error: true };
            if let Err(e) = crate::nvrtc::compile(&program, target) {
                panic!("{sym}: {e}");
            }
        }
    }
}
