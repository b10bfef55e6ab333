//! Reductions on the GPU, ported from CuPy's behaviour (issue 7, item 5), through the real
//! generated code: the kernels below are Rust source compiled by `cuprum_compiler` and loaded
//! with `registry::KernelUnit::from_source`, and `l2norm` is called through a hand-written copy
//! of the typed builder the `#[reduction]` macro will generate (module `generated`).
//!
//! GPU tests are `#[ignore = "needs a CUDA GPU"]`; run them with
//! `cargo test -p cuprum-runtime --lib tests::reduction_gpu -- --include-ignored`.
//! Inputs are fresh random numbers; outputs are poisoned before each launch; results are
//! compared with a host reference (integers exactly, floats against f64 sums).
//! The argument checks run before any device work, so they are tested on the CPU too.

use crate::test_support as support;
use support::Rng;

/// This file's draws.
trait Draws {
    fn i8(&mut self) -> i8;
    fn f32(&mut self) -> f32;
    fn f64(&mut self) -> f64;
}

impl Draws for Rng {
    /// Any int8 but 0.
    fn i8(&mut self) -> i8 {
        let v = (self.next() >> 56) as i8;
        if v == 0 { 1 } else { v }
    }
    /// Uniform in [-4, 4), never 0.
    fn f32(&mut self) -> f32 {
        let v = self.range(-4.0, 4.0) as f32;
        if v == 0.0 { 0.5 } else { v }
    }
    fn f64(&mut self) -> f64 {
        self.range(-4.0, 4.0)
    }
}

use std::sync::OnceLock;

use crate::ElemType;
use crate::abi::{KernelKind, ReductionVariant, mangle};
use crate::launch::signature::{Param, ParamType, ReductionSignature, Role, Signature};
use crate::launch::operand::ArrayArg;
use crate::reduction::{self, Arg, Axes, Options, ReductionKernel};
use crate::registry::{Kernel, KernelUnit, UnitRef};
use crate::{Array, DType, Device, Scalar};

const SOURCE: &str = r#"
use cuprum::prelude::*;

#[reduction(identity = T::zero(), reduce = |a, b| a + b, post = |a| a.sqrt())]
pub fn l2norm<T: Float>(x: T) -> T {
    x * x
}

/// NumPy's int8 sum (accumulates in int64).
#[reduction(identity = 0, reduce = |a, b| a.wrapping_add(b))]
pub fn sum_i8_i64(x: i8) -> i64 {
    x as i64
}

/// An int8 sum kept in int8: wraps like NumPy's `sum(dtype=int8)`.
#[reduction(identity = 0, reduce = |a, b| a.wrapping_add(b))]
pub fn sum_i8_wrap(x: i8) -> i8 {
    x
}

#[reduction(identity = 0.0, reduce = |a, b| a + b)]
pub fn sum_f32(x: f32) -> f32 {
    x
}

/// No identity: correct on every non-empty input, an error on an empty one.
#[reduction(reduce = |a, b| a.max(b))]
pub fn max_f64(x: f64) -> f64 {
    x
}

/// A raw argument indexed with the loop index.
#[reduction(identity = 0.0, reduce = |a, b| a + b, acc = f64)]
pub fn weighted_sum(x: f32, w: Raw<f32>) -> f64 {
    let k = index() % w.len();
    (x * w[k]) as f64
}

/// Two broadcast inputs.
#[reduction(identity = 0.0, reduce = |a, b| a + b)]
pub fn dot(x: f64, y: f64) -> f64 {
    x * y
}
"#;

/// The kernels of `SOURCE`, compiled once per process.
fn kernel(name: &'static str) -> &'static Kernel {
    static UNIT: OnceLock<&'static KernelUnit> = OnceLock::new();
    let unit = UNIT.get_or_init(|| {
        let c = cuprum_compiler::compile_source(SOURCE).expect("the test kernels compile");
        Box::leak(Box::new(KernelUnit::from_source(
            "reduction_gpu.rs",
            c.unit.source,
            c.unit.fast_math,
        )))
    });
    let fixed = |d: DType| ParamType::Fixed(ElemType::Scalar(d));
    let (params, out, acc, has_identity): (Vec<Param>, ParamType, ParamType, bool) = match name {
        "l2norm" => (
            vec![Param::new("x", Role::In, ParamType::Generic(0))],
            ParamType::Generic(0),
            ParamType::Generic(0),
            true,
        ),
        "sum_i8_i64" => (
            vec![Param::new("x", Role::In, fixed(DType::I8))],
            fixed(DType::I64),
            fixed(DType::I64),
            true,
        ),
        "sum_i8_wrap" => (
            vec![Param::new("x", Role::In, fixed(DType::I8))],
            fixed(DType::I8),
            fixed(DType::I8),
            true,
        ),
        "sum_f32" => (
            vec![Param::new("x", Role::In, fixed(DType::F32))],
            fixed(DType::F32),
            fixed(DType::F32),
            true,
        ),
        "max_f64" => (
            vec![Param::new("x", Role::In, fixed(DType::F64))],
            fixed(DType::F64),
            fixed(DType::F64),
            false,
        ),
        "weighted_sum" => (
            vec![
                Param::new("x", Role::In, fixed(DType::F32)),
                Param::new("w", Role::Raw, fixed(DType::F32)),
            ],
            fixed(DType::F64),
            fixed(DType::F64),
            true,
        ),
        "dot" => (
            vec![
                Param::new("x", Role::In, fixed(DType::F64)),
                Param::new("y", Role::In, fixed(DType::F64)),
            ],
            fixed(DType::F64),
            fixed(DType::F64),
            true,
        ),
        other => panic!("no kernel {other} in SOURCE"),
    };
    let sig: &'static ReductionSignature = Box::leak(Box::new(ReductionSignature {
        params: Box::leak(params.into_boxed_slice()),
        out,
        acc,
        has_identity,
        positional: true,
    }));
    // SAFETY: the signatures above are those of SOURCE's reductions (what the macro would
    // generate), and their code is cuprum's (indexing checked).
    Box::leak(Box::new(unsafe {
        Kernel::new(UnitRef::Embedded(unit), name, Signature::Reduction(sig))
    }))
}

fn kernels() -> &'static std::collections::HashMap<&'static str, &'static Kernel> {
    static K: OnceLock<std::collections::HashMap<&'static str, &'static Kernel>> = OnceLock::new();
    K.get_or_init(|| {
        [
            "l2norm",
            "sum_i8_i64",
            "sum_i8_wrap",
            "sum_f32",
            "max_f64",
            "weighted_sum",
            "dot",
        ]
        .into_iter()
        .map(|n| (n, kernel(n)))
        .collect()
    })
}

/// What the `#[reduction]` macro generates for `l2norm`, written by hand: a call of the one
/// reduction builder with the kernel, the instance and the operands.
mod generated {
    use crate::reduction::Arg;
    use crate::{Array, Float, ReductionCall};

    /// `l2norm(&x).axis(1).keepdims(true).run()?`
    pub fn l2norm<T: Float>(x: &Array<T>) -> ReductionCall<'_, T> {
        ReductionCall::new(super::kernels()["l2norm"], &[T::DTYPE], vec![Arg::input(x)])
    }
}

// ------------------------------------------------------------------------------------------
// Helpers
// ------------------------------------------------------------------------------------------

fn setup() -> Device {
    Device::current().unwrap_or_else(|e| panic!("GPU tests need a CUDA GPU: {e}"))
}

/// The host reference: folds each output's elements (C order of `shape`, `mask` = reduced axes)
/// into `init` with `f`; outputs in C order of the kept axes.
fn host_reduce<T: Copy, A: Copy>(
    data: &[T],
    shape: &[usize],
    mask: &[bool],
    init: A,
    f: impl Fn(A, T) -> A,
) -> Vec<A> {
    let kept: Vec<usize> = (0..shape.len()).filter(|&k| !mask[k]).collect();
    let outs: usize = kept.iter().map(|&k| shape[k]).product();
    let mut acc = vec![init; outs];
    let mut idx = vec![0usize; shape.len()];
    for &v in data {
        let mut o = 0;
        for &k in &kept {
            o = o * shape[k] + idx[k];
        }
        acc[o] = f(acc[o], v);
        for k in (0..shape.len()).rev() {
            idx[k] += 1;
            if idx[k] < shape[k] {
                break;
            }
            idx[k] = 0;
        }
    }
    acc
}

fn mask_of(ndim: usize, axes: &Axes) -> Vec<bool> {
    reduction::plan::reduced_mask(ndim, axes).unwrap()
}

/// Runs kernel `name` (no generics) of one array input into a poisoned output of `O`.
fn run1<I: Scalar, O: Scalar>(
    name: &str,
    x: &Array<I>,
    axes: &Axes,
    keepdims: bool,
    poison: O,
) -> Vec<O> {
    let inputs = [Arg::input(x)];
    let shape = reduction::output_shape(&inputs, axes, keepdims).unwrap();
    let mut out = Array::<O>::full(shape, poison).unwrap();
    reduction::launch(
        kernels()[name],
        &[],
        &inputs,
        Arg::output(&mut out),
        axes,
        keepdims,
        &Options::default(),
    )
    .unwrap_or_else(|e| panic!("{name} over {axes:?}: {e}"));
    out.to_vec().unwrap()
}

fn i8_array(rng: &mut Rng, shape: &[usize]) -> (Array<i8>, Vec<i8>) {
    let n = shape.iter().product();
    let host: Vec<i8> = (0..n).map(|_| rng.i8()).collect();
    (
        Array::from_shape_vec(shape.to_vec(), host.clone()).unwrap(),
        host,
    )
}

fn check_i8_sums(x: &Array<i8>, host: &[i8], axes: &Axes) {
    let shape = x.shape().to_vec();
    let m = mask_of(shape.len(), axes);
    let want64 = host_reduce(host, &shape, &m, 0i64, |a, v| a + v as i64);
    let got64 = run1::<i8, i64>("sum_i8_i64", x, axes, false, i64::MIN);
    assert_eq!(
        got64, want64,
        "int8 -> int64 sum of {shape:?} over {axes:?}"
    );
    let want8 = host_reduce(host, &shape, &m, 0i8, |a, v| a.wrapping_add(v));
    let got8 = run1::<i8, i8>("sum_i8_wrap", x, axes, false, 0x5a);
    assert_eq!(got8, want8, "wrapping int8 sum of {shape:?} over {axes:?}");
}

fn lengths() -> Vec<usize> {
    (1..=9)
        .flat_map(|i| [(1usize << i) - 1, 1 << i, (1 << i) + 1])
        .collect()
}

// ------------------------------------------------------------------------------------------
// CPU: argument checks before any device work
// ------------------------------------------------------------------------------------------

fn fake<'a>(shape: &'a [usize], strides: &'a [isize], dtype: DType) -> ArrayArg<'a> {
    // SAFETY: never launched: the checks these fakes are for fail first.
    unsafe { ArrayArg::from_raw_parts(0, ElemType::Scalar(dtype), shape, strides, 0) }
}

/// The source `ReductionKernel` generates, with an instance of every variant, compiles (NVRTC's
/// compile is checked by the GPU tests; here nvcc: `source scripts/cuda-env.sh`). Fails without
/// nvcc unless `CUPRUM_SKIP_CUDA_COMPILE=1`.
#[test]
fn reduction_kernel_source_compiles_with_nvcc() {
    use cuprum_build::nvcc::{Location, locate};
    use std::process::Command;
    // nvcc where the build finds it (`NVCC`, `$CUDA_PATH/bin/nvcc`, `nvcc` on PATH), if it runs.
    let nvcc = match locate(&cuprum_build::env::Env::default()).unwrap_or_else(|e| panic!("{e}")) {
        Location::Found { command, .. } => command,
        Location::Missing(_) => Vec::new(),
    };
    let works = !nvcc.is_empty()
        && Command::new(&nvcc[0])
            .args(&nvcc[1..])
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
    if support::skip_without(
        works,
        "reduction_kernel_source_compiles_with_nvcc",
        "no working nvcc (NVCC, $CUDA_PATH/bin, PATH)",
    ) {
        return;
    }
    let k = ReductionKernel::new(
        "T x, raw float32 w",
        "float64 y",
        "x * w[i % w.size]",
        "a + b",
        "y = a",
        Some("0"),
        "wsum",
    )
    .unwrap()
    .reduce_type("float64")
    .unwrap();
    let mut src = k.source().to_string();
    for v in ReductionVariant::ALL.map(Into::into) {
        let sym = mangle::kernel_symbol(KernelKind::Reduction, "wsum", Some(v), &[DType::F32]);
        src.push_str(&mangle::instantiate_variant_line(
            "wsum",
            Some(v),
            &sym,
            &[DType::F32],
        ));
        src.push('\n');
    }
    let tmp = tempfile::Builder::new().prefix("cuprum-reduction-kernel-").tempdir().unwrap();
    let dir = tmp.path();
    let cu = dir.join("wsum.cu");
    std::fs::write(&cu, &src).unwrap();
    // The embedded headers, written next to the source.
    let include = dir.join("include");
    for (name, text) in crate::abi::headers::HEADERS {
        let p = include.join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let out = Command::new(&nvcc[0])
        .args(&nvcc[1..])
        .args(["-arch=sm_90", "-cubin", "-o"])
        .arg(dir.join("wsum.cubin"))
        .arg("-I")
        .arg(&include)
        .arg(&cu)
        .output()
        .unwrap();
    drop(tmp);
    assert!(
        out.status.success(),
        "{}\n{src}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn invalid_axes_and_output_shapes_are_errors_before_any_launch() {
    let (shape, strides) = ([3usize, 4], [4isize, 1]);
    let x = fake(&shape, &strides, DType::F32);
    let inputs = [Arg::In(x)];
    assert_eq!(
        reduction::output_shape(&inputs, &Axes::One(-1), false).unwrap(),
        vec![3]
    );
    assert_eq!(
        reduction::output_shape(&inputs, &Axes::One(0), true).unwrap(),
        vec![1, 4]
    );
    let e = reduction::output_shape(&inputs, &Axes::One(2), false)
        .unwrap_err()
        .to_string();
    assert!(e.contains("out of range"), "{e}");
    let e = reduction::output_shape(&inputs, &Axes::from([1, -1]), false)
        .unwrap_err()
        .to_string();
    assert!(e.contains("repeated"), "{e}");
    let launch =
        |out_shape: &[usize], axes: Axes, kernel: &str, dtype: DType, in_shape: &[usize]| {
            let in_strides = crate::array::shape::c_strides(in_shape);
            let out_strides = crate::array::shape::c_strides(out_shape);
            let x = fake(in_shape, &in_strides, dtype);
            let out = fake(out_shape, &out_strides, dtype);
            reduction::launch(
                kernels()[kernel],
                &[],
                &[Arg::In(x)],
                Arg::Out(out),
                &axes,
                false,
                &Options::default(),
            )
            .unwrap_err()
            .to_string()
        };
    let e = launch(&[4], Axes::One(1), "sum_f32", DType::F32, &[3, 4]);
    assert!(
        e.contains("shape mismatch") && e.contains("[3]") && e.contains("[4]"),
        "{e}"
    );
    let e = launch(&[3], Axes::One(5), "sum_f32", DType::F32, &[3, 4]);
    assert!(e.contains("axis 5"), "{e}");
    let e = launch(&[4, 3], Axes::One(0), "max_f64", DType::F64, &[0, 4, 3]);
    assert!(e.contains("no identity"), "{e}");
    let e = reduction::output_shape(&[Arg::Raw(x)], &Axes::All, false)
        .unwrap_err()
        .to_string();
    assert!(e.contains("raw"), "{e}");
}

/// The operands are checked against the kernel's signature before anything is loaded.
#[test]
fn operands_are_checked_against_the_signature() {
    let (shape, strides) = ([3usize, 4], [4isize, 1]);
    let (oshape, ostrides) = ([3usize], [1isize]);
    let out = |d| fake(&oshape, &ostrides, d);
    let run = |inputs: &[Arg<'_>], out: Arg<'_>| {
        reduction::launch(
            kernels()["weighted_sum"],
            &[],
            inputs,
            out,
            &Axes::One(1),
            false,
            &Options::default(),
        )
        .unwrap_err()
        .to_string()
    };
    let (x, w) = (
        fake(&shape, &strides, DType::F32),
        fake(&oshape, &ostrides, DType::F32),
    );
    let e = run(&[Arg::In(x)], Arg::Out(out(DType::F64)));
    assert!(
        e.contains("1 arguments were given") && e.contains("2 parameters"),
        "{e}"
    );
    let e = run(&[Arg::In(x), Arg::In(w)], Arg::Out(out(DType::F64)));
    assert!(e.contains("`w`") && e.contains("raw array"), "{e}");
    let e = run(
        &[Arg::In(fake(&shape, &strides, DType::F64)), Arg::Raw(w)],
        Arg::Out(out(DType::F64)),
    );
    assert!(e.contains("dtype mismatch") && e.contains("`x`"), "{e}");
    let e = run(&[Arg::In(x), Arg::Raw(w)], Arg::Out(out(DType::F32)));
    assert!(e.contains("dtype mismatch") && e.contains("output"), "{e}");
    let e = run(&[Arg::In(x), Arg::Raw(w)], Arg::In(out(DType::F64)));
    assert!(e.contains("output array"), "{e}");
}

// ------------------------------------------------------------------------------------------
// GPU
// ------------------------------------------------------------------------------------------

#[test]
#[ignore = "needs a CUDA GPU"]
fn int8_sums_of_lengths_around_powers_of_two() {
    setup();
    let mut rng = Rng::new();
    for n in lengths() {
        let (x, host) = i8_array(&mut rng, &[n]);
        check_i8_sums(&x, &host, &Axes::All);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn int8_sums_full_and_along_each_axis_of_n_by_1000() {
    setup();
    let mut rng = Rng::new();
    for n in lengths() {
        let (x, host) = i8_array(&mut rng, &[n, 1000]);
        for axes in [Axes::All, Axes::One(0), Axes::One(1), Axes::One(-1)] {
            check_i8_sums(&x, &host, &axes);
        }
    }
}

/// f32 sums against f64 sums of the same values: the error bound of a sum of n terms.
fn check_f32_sum(x: &Array<f32>, host: &[f32], axes: &Axes) {
    let shape = x.shape().to_vec();
    let m = mask_of(shape.len(), axes);
    let want = host_reduce(host, &shape, &m, 0f64, |a, v| a + v as f64);
    let abs = host_reduce(host, &shape, &m, 0f64, |a, v| a + (v as f64).abs());
    let got = run1::<f32, f32>("sum_f32", x, axes, false, f32::NAN);
    assert_eq!(got.len(), want.len());
    for (i, ((g, w), s)) in got.iter().zip(&want).zip(&abs).enumerate() {
        let tol = 2e-6 * s + 1e-6;
        assert!(
            ((*g as f64) - w).abs() <= tol,
            "sum of {shape:?} over {axes:?}, output {i}: got {g}, want {w} (tolerance {tol})"
        );
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn large_shapes_along_both_axes() {
    setup();
    let mut rng = Rng::new();
    for shape in [[512usize, 65536], [513, 65537]] {
        let host: Vec<f32> = (0..shape[0] * shape[1]).map(|_| rng.f32()).collect();
        let x = Array::from_shape_vec(shape, host.clone()).unwrap();
        for axes in [Axes::One(0), Axes::One(1), Axes::All] {
            check_f32_sum(&x, &host, &axes);
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn split_rows_and_split_columns_combine_across_blocks_twice_in_a_row() {
    setup();
    let mut rng = Rng::new();
    for (shape, axis) in [
        ([3usize, 1 << 21], 1isize),
        ([1 << 20, 5], 0),
        ([1, 1 << 22], 1),
        ([7, 1 << 16], 0),
    ] {
        let host: Vec<f32> = (0..shape[0] * shape[1]).map(|_| rng.f32()).collect();
        let x = Array::from_shape_vec(shape, host.clone()).unwrap();
        // Twice: the counters must be back at zero after each launch.
        check_f32_sum(&x, &host, &Axes::One(axis));
        check_f32_sum(&x, &host, &Axes::One(axis));
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn transposed_and_permuted_inputs_with_several_axes() {
    setup();
    let mut rng = Rng::new();
    let base = [6usize, 5, 40, 33];
    let host: Vec<f32> = (0..base.iter().product()).map(|_| rng.f32()).collect();
    let a = Array::from_shape_vec(base, host).unwrap();
    for view in [
        a.transpose(),
        a.permute(&[2, 0, 3, 1]).unwrap(),
        a.slice(2, crate::Slice::new(None, None, 3))
            .unwrap(),
    ] {
        let logical = view.to_vec().unwrap();
        for axes in [
            Axes::All,
            Axes::from([0, 2]),
            Axes::from([1, 3]),
            Axes::from([-1, 0, 1]),
            Axes::One(2),
        ] {
            check_f32_sum(&view, &logical, &axes);
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn empty_input_gives_the_identity_or_nothing() {
    setup();
    let x = Array::<i8>::zeros([0usize, 4, 3]).unwrap();
    assert_eq!(
        run1::<i8, i64>("sum_i8_i64", &x, &Axes::One(0), false, 77),
        vec![0i64; 12]
    );
    assert_eq!(
        run1::<i8, i64>("sum_i8_i64", &x, &Axes::All, false, 77),
        vec![0i64]
    );
    assert!(run1::<i8, i64>("sum_i8_i64", &x, &Axes::One(1), false, 77).is_empty());
    // Without identity: an error, whatever the output.
    let y = Array::<f64>::zeros([0usize, 4, 3]).unwrap();
    let inputs = [Arg::input(&y)];
    let mut out = Array::<f64>::full([4usize, 3], 1.0).unwrap();
    let e = reduction::launch(
        kernels()["max_f64"],
        &[],
        &inputs,
        Arg::output(&mut out),
        &Axes::One(0),
        false,
        &Options::default(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("identity"), "{e}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn seven_dims_over_four_axes_with_keepdims() {
    setup();
    let mut rng = Rng::new();
    let shape = [4usize, 3, 2, 4, 3, 2, 2];
    let (x, host) = i8_array(&mut rng, &shape);
    let axes = Axes::from([1, 4, 3, 6]);
    let m = mask_of(7, &axes);
    let want = host_reduce(&host, &shape, &m, 0i64, |a, v| a + v as i64);
    let got = run1::<i8, i64>("sum_i8_i64", &x, &axes, true, -1);
    assert_eq!(got, want);
    let out_shape = reduction::output_shape(&[Arg::input(&x)], &axes, true).unwrap();
    assert_eq!(out_shape, vec![4, 1, 2, 1, 1, 2, 1]);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_long_column_input() {
    setup();
    let n = (2usize << 32) / 512;
    let mut rng = Rng::new();
    let host: Vec<f32> = (0..n).map(|_| rng.f32()).collect();
    let x = match Array::from_shape_vec([n, 1], host.clone()) {
        Ok(x) => x,
        Err(e) if e.is_out_of_memory() => {
            eprintln!("skipped: {e}");
            return;
        }
        Err(e) => panic!("{e}"),
    };
    for axes in [Axes::All, Axes::One(0), Axes::One(1)] {
        check_f32_sum(&x, &host, &axes);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn no_identity_reduction_is_correct_everywhere() {
    setup();
    let mut rng = Rng::new();
    for shape in [[1usize, 1], [3, 1000], [1000, 3], [257, 4099], [2, 1 << 20]] {
        let host: Vec<f64> = (0..shape[0] * shape[1]).map(|_| rng.f64()).collect();
        let x = Array::from_shape_vec(shape, host.clone()).unwrap();
        for axes in [Axes::All, Axes::One(0), Axes::One(1)] {
            let m = mask_of(2, &axes);
            let want = host_reduce(&host, &shape, &m, f64::NEG_INFINITY, f64::max);
            let got = run1::<f64, f64>("max_f64", &x, &axes, false, f64::NAN);
            assert_eq!(got, want, "max of {shape:?} over {axes:?}");
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn typed_wrapper_l2norm_with_axes_keepdims_and_out() {
    setup();
    let mut rng = Rng::new();
    let shape = [37usize, 129, 5];
    let host: Vec<f32> = (0..shape.iter().product()).map(|_| rng.f32()).collect();
    let x = Array::from_shape_vec(shape, host.clone()).unwrap();
    for (axes, keepdims) in [
        (Axes::One(1), true),
        (Axes::from([0, 2]), false),
        (Axes::All, false),
        (Axes::One(-1), false),
    ] {
        let m = mask_of(3, &axes);
        let want: Vec<f64> =
            host_reduce(&host, &shape, &m, 0f64, |a, v| a + (v as f64) * (v as f64))
                .iter()
                .map(|s| s.sqrt())
                .collect();
        let got = generated::l2norm(&x)
            .axes(axes.clone())
            .keepdims(keepdims)
            .run()
            .unwrap();
        assert_eq!(
            got.shape(),
            reduction::output_shape(&[Arg::input(&x)], &axes, keepdims)
                .unwrap()
                .as_slice()
        );
        for (g, w) in got.to_vec().unwrap().iter().zip(&want) {
            assert!(
                ((*g as f64) - w).abs() <= 1e-5 * w,
                "l2norm over {axes:?}: got {g}, want {w}"
            );
        }
    }
    // An explicit output (poisoned) of the right shape, and one of the wrong shape.
    let mut out = Array::<f32>::full([37usize, 5], f32::NAN).unwrap();
    generated::l2norm(&x).axis(1).out(&mut out).run().unwrap();
    assert!(
        out.to_vec()
            .unwrap()
            .iter()
            .all(|v| v.is_finite() && *v > 0.0)
    );
    let mut bad = Array::<f32>::zeros([5usize, 37]).unwrap();
    let e = generated::l2norm(&x)
        .axis(1)
        .out(&mut bad)
        .run()
        .unwrap_err();
    assert!(e.to_string().contains("shape mismatch"), "{e}");
    // On another stream.
    let stream = crate::Stream::new(x.device()).unwrap();
    let on_stream = generated::l2norm(&x).axis(0).stream(&stream).run().unwrap();
    stream.synchronize().unwrap();
    let direct = generated::l2norm(&x).axis(0).run().unwrap();
    assert_eq!(on_stream.to_vec().unwrap(), direct.to_vec().unwrap());
    // f64 instance.
    let y = Array::<f64>::from_vec(vec![3.0, 4.0]).unwrap();
    assert_eq!(
        generated::l2norm(&y).run().unwrap().to_vec().unwrap(),
        vec![5.0]
    );
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn raw_and_broadcast_arguments() {
    setup();
    let mut rng = Rng::new();
    // weighted_sum: x (4, 300), w raw (7,): out[o] = sum_r x[o, r] * w[(o * 300 + r) % 7].
    let (rows, cols) = (4usize, 300usize);
    let xs: Vec<f32> = (0..rows * cols).map(|_| rng.f32()).collect();
    let ws: Vec<f32> = (0..7).map(|_| rng.f32()).collect();
    let x = Array::from_shape_vec([rows, cols], xs.clone()).unwrap();
    let w = Array::from_vec(ws.clone()).unwrap();
    let inputs = [Arg::input(&x), Arg::raw(&w)];
    let mut out = Array::<f64>::full([rows], f64::NAN).unwrap();
    // SAFETY: weighted_sum(x: f32, w: Raw<f32>) -> f64 (acc f64).
    reduction::launch(
        kernels()["weighted_sum"],
        &[],
        &inputs,
        Arg::output(&mut out),
        &Axes::One(1),
        false,
        &Options::default(),
    )
    .unwrap();
    let got = out.to_vec().unwrap();
    for o in 0..rows {
        let want: f64 = (0..cols)
            .map(|r| (xs[o * cols + r] * ws[(o * cols + r) % 7]) as f64)
            .sum();
        assert!(
            (got[o] - want).abs() <= 1e-4 * (1.0 + want.abs()),
            "row {o}: {} vs {want}",
            got[o]
        );
    }
    // dot: x (50, 64) with y (64,) broadcast, over axis 1.
    let xs: Vec<f64> = (0..50 * 64).map(|_| rng.f64()).collect();
    let ys: Vec<f64> = (0..64).map(|_| rng.f64()).collect();
    let x = Array::from_shape_vec([50usize, 64], xs.clone()).unwrap();
    let y = Array::from_vec(ys.clone()).unwrap();
    let mut out = Array::<f64>::full([50usize], f64::NAN).unwrap();
    // SAFETY: dot(x: f64, y: f64) -> f64.
    reduction::launch(
        kernels()["dot"],
        &[],
        &[Arg::input(&x), Arg::input(&y)],
        Arg::output(&mut out),
        &Axes::One(1),
        false,
        &Options::default(),
    )
    .unwrap();
    for (o, g) in out.to_vec().unwrap().iter().enumerate() {
        let want: f64 = (0..64).map(|r| xs[o * 64 + r] * ys[r]).sum();
        assert!(
            (g - want).abs() <= 1e-12 * 64.0 * 16.0,
            "dot row {o}: {g} vs {want}"
        );
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn reduction_kernel_from_cupy_text() {
    setup();
    let l2norm = ReductionKernel::new(
        "T x",
        "T y",
        "x * x",
        "a + b",
        "y = sqrt(a)",
        Some("0"),
        "l2norm",
    )
    .unwrap();
    let x = Array::<f32>::arange(10).unwrap().reshape([2, 5]).unwrap();
    let got: Vec<f32> = l2norm
        .call(&[Arg::input(&x)])
        .axis(1)
        .run()
        .unwrap()
        .to_vec()
        .unwrap();
    let want = [5.477226f32, 15.9687195];
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() <= 1e-6 * w, "{got:?}");
    }
    // reduce_type and a raw argument, keepdims, an explicit output.
    let mut rng = Rng::new();
    let xs: Vec<f32> = (0..3 * 1000).map(|_| rng.f32()).collect();
    let x = Array::from_shape_vec([3usize, 1000], xs.clone()).unwrap();
    let k = ReductionKernel::new(
        "float32 x, raw float32 w",
        "float64 y",
        "x * w[i % w.size]",
        "a + b",
        "y = a",
        Some("0"),
        "wsum",
    )
    .unwrap()
    .reduce_type("float64")
    .unwrap();
    let w = Array::from_vec(vec![0.5f32, -2.0, 3.0]).unwrap();
    let mut out = Array::<f64>::full([3usize, 1], f64::NAN).unwrap();
    let call = k
        .call(&[Arg::input(&x), Arg::raw(&w)])
        .axis(1)
        .keepdims(true)
        .out(&mut out);
    // SAFETY: `w[i % w.size]` stays inside `w`.
    unsafe { call.run_raw() }.unwrap();
    let ws = [0.5f32, -2.0, 3.0];
    for (o, g) in out.to_vec().unwrap().iter().enumerate() {
        let want: f64 = (0..1000)
            .map(|r| (xs[o * 1000 + r] * ws[(o * 1000 + r) % 3]) as f64)
            .sum();
        assert!(
            (g - want).abs() <= 1e-9 * 1000.0 * 16.0,
            "wsum row {o}: {g} vs {want}"
        );
    }
    // Type errors at the call.
    let xi = Array::<i32>::zeros([3usize]).unwrap();
    // SAFETY: not launched (the dtype check fails first).
    let e = unsafe { k.call::<f64>(&[Arg::input(&xi), Arg::raw(&w)]).run_raw() }.unwrap_err();
    assert!(e.to_string().contains("dtype mismatch"), "{e}");
    // Text that indexes a raw argument launches only through the unsafe `run_raw`.
    let e = k
        .call::<f64>(&[Arg::input(&x), Arg::raw(&w)])
        .run()
        .unwrap_err();
    assert!(e.to_string().contains("run_raw"), "{e}");
}
