//! CuPy's kernel features for CUDA C text kernels on the GPU (issue 18, item 5): the compile log
//! of a compile that warns, multi-index access on `raw` arguments of `ElementwiseKernel` code,
//! cooperative launches of `RawKernel` (`enable_cooperative_groups`), the toolkit's `cuda/std`
//! headers, `translate_cucomplex`, and relocatable device code with a device-side launch
//! (dynamic parallelism). Inputs are fresh random numbers, outputs are poisoned before each
//! launch, and results are compared with a host reference.
//!
//! Every test needs a CUDA GPU, libnvrtc and a CUDA toolkit's headers (`CUDA_PATH`, or
//! /usr/local/cuda): `cargo test -p cuprum-testsuite --test gpu_raw_features -- --include-ignored`.

#[path = "../../runtime/tests/support/mod.rs"]
mod support;
use support::Rng;

use cuprum::runtime::elementwise::ElementwiseKernel;
use cuprum::runtime::{Array, Error, LaunchConfig, RawKernel, RawModule, Slice};
use num_complex::Complex;

const GPU: &str = "needs a CUDA GPU";

/// A tag unique to this run, so that a kernel's source is new to the kernel cache and NVRTC
/// compiles it (the compile log exists only for a compile).
fn fresh_tag() -> u128 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos()
}

fn random_f32(r: &mut Rng, n: usize) -> Vec<f32> {
    (0..n).map(|_| r.range(-4.0, 4.0) as f32).collect()
}

fn random_f64(r: &mut Rng, n: usize) -> Vec<f64> {
    (0..n).map(|_| r.range(-4.0, 4.0)).collect()
}

fn close32(a: f32, b: f32) -> bool {
    (a - b).abs() <= 1e-5 * (1.0 + b.abs())
}

fn close64(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * (1.0 + b.abs())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_log_of_a_compile_that_warns_is_kept() {
    let _ = GPU;
    let mut r = Rng::new();
    let tag = fresh_tag();
    let source = format!(
        "#warning cuprum gpu warning {tag}\n\
         extern \"C\" __global__ void scale(const float* x, float* y, int n) {{\n\
             int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
             if (i < n) y[i] = 3.0f * x[i];\n\
         }}\n"
    );
    let kernel = RawKernel::new(source.clone(), "scale");
    assert_eq!(kernel.compile_log(), None, "nothing is compiled before the first launch");
    let n = 1000;
    let xs = random_f32(&mut r, n);
    let x = Array::from_slice(&xs).unwrap();
    let mut y = Array::from_slice(&vec![f32::NAN; n]).unwrap();
    // SAFETY: scale takes (const float*, float*, int) and touches n elements of each.
    unsafe { kernel.launch(&LaunchConfig::for_elements(n, 128), (&x, &mut y, n as i32)) }.unwrap();
    let want: Vec<f32> = xs.iter().map(|v| 3.0 * v).collect();
    assert_eq!(y.to_vec().unwrap(), want);
    let log = kernel.compile_log().expect("NVRTC compiled the kernel in this process, so its log is kept");
    assert!(log.contains(&format!("cuprum gpu warning {tag}")), "the log: {log:?}");
    // The same source in another module object: served by the module already loaded, with its log.
    let again = RawKernel::new(source, "scale");
    again.compile().unwrap();
    assert!(again.compile_log().is_some_and(|l| l.contains(&tag.to_string())), "{:?}", again.compile_log());
    // A compile without warnings has an empty log.
    let clean = RawKernel::new(format!("extern \"C\" __global__ void k{tag}(float* y) {{ y[0] = 1.0f; }}"), format!("k{tag}"));
    clean.compile().unwrap();
    assert_eq!(clean.compile_log().map(str::trim), Some(""));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn multi_index_on_transposed_and_sliced_raw_arguments() {
    let mut r = Rng::new();
    // A transposed raw argument (4, 6), strides (1, 4): y (6, 4) reads it back transposed, so y
    // equals the base array; a flat index would give the transposed order instead.
    let base_v = random_f64(&mut r, 24);
    let base = Array::from_shape_vec([6, 4], base_v.clone()).unwrap();
    let t = base.transpose();
    let k = ElementwiseKernel::new(
        "raw T x",
        "T y",
        "long long row = (long long)i / 4, col = (long long)i % 4; ptrdiff_t idx[2] = {(ptrdiff_t)col, (ptrdiff_t)row}; y = x[idx]",
        "multi_index_transpose",
    )
    .unwrap();
    let y = Array::from_shape_vec([6, 4], vec![f64::NAN; 24]).unwrap();
    // SAFETY: idx = (i % 4, i / 4) lies inside x's shape (4, 6) for i < 24.
    unsafe { k.call().arg(&t).out(&y).run_raw() }.unwrap();
    assert_eq!(y.to_vec().unwrap(), base_v);

    // A sliced raw argument: every other column of a (5, 8) array, shape (5, 4), strides (8, 2),
    // read through the braced form `x[{r, c}]`, reversed along both axes.
    let wide_v = random_f64(&mut r, 40);
    let wide = Array::from_shape_vec([5, 8], wide_v.clone()).unwrap();
    let cols = wide.slice(1, Slice::new(None, None, 2)).unwrap();
    let k = ElementwiseKernel::new(
        "raw T x",
        "T y",
        "long long row = (long long)i / 4, col = (long long)i % 4; y = x[{4 - row, 3 - col}] * 2",
        "multi_index_slice",
    )
    .unwrap();
    let y = Array::from_shape_vec([5, 4], vec![f64::NAN; 20]).unwrap();
    // SAFETY: (4 - row, 3 - col) lies inside x's shape (5, 4) for i < 20.
    unsafe { k.call().arg(&cols).out(&y).run_raw() }.unwrap();
    let want: Vec<f64> = (0..20).map(|i| wide_v[(4 - i / 4) * 8 + (3 - i % 4) * 2] * 2.0).collect();
    assert_eq!(y.to_vec().unwrap(), want);

    // The flat index still works beside it (C order through the strides).
    let k = ElementwiseKernel::new("raw T x", "T y", "y = x[i]", "flat_index_beside").unwrap();
    let y = Array::from_shape_vec([4, 6], vec![f64::NAN; 24]).unwrap();
    // SAFETY: i < 24, the size of x.
    unsafe { k.call().arg(&t).out(&y).run_raw() }.unwrap();
    assert_eq!(y.to_vec().unwrap(), t.to_vec().unwrap());
}

const GRID_SHIFT: &str = r#"
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
// Phase 1 writes tmp; after the grid barrier every thread reads an element written by another
// block: only a grid-wide barrier makes that read see the write.
extern "C" __global__ void grid_shift(const float* x, float* tmp, float* y, int* valid, int n) {
    cg::grid_group g = cg::this_grid();
    int i = (int)g.thread_rank();
    if (i == 0) valid[0] = g.is_valid() ? 1 : 0;
    for (int round = 0; round < 4; ++round) {
        if (i < n) tmp[i] = (round == 0 ? x[i] : y[i]) * 2.0f + 1.0f;
        g.sync();
        int j = (i + blockDim.x + 1) % n;
        if (i < n) y[i] = tmp[j];
        g.sync();
    }
}
"#;

#[test]
#[ignore = "needs a CUDA GPU"]
fn cooperative_raw_kernel_syncs_the_grid() {
    let mut r = Rng::new();
    let kernel = RawKernel::new(GRID_SHIFT, "grid_shift").enable_cooperative_groups(true);
    let block = 128u32;
    let max = kernel.max_cooperative_blocks(&LaunchConfig::new(1, block)).unwrap();
    assert!(max >= 2, "the device keeps only {max} blocks of {block} threads resident");
    let blocks = max.min(64);
    let n = (blocks * block) as usize;
    let xs = random_f32(&mut r, n);
    let x = Array::from_slice(&xs).unwrap();
    let mut tmp = Array::from_slice(&vec![f32::NAN; n]).unwrap();
    let mut y = Array::from_slice(&vec![f32::NAN; n]).unwrap();
    let mut valid = Array::from_slice(&[-1i32]).unwrap();
    let cfg = LaunchConfig::new(blocks, block);
    // SAFETY: grid_shift takes (const float*, float*, float*, int*, int); it touches n elements of
    // x, tmp and y (the grid has exactly n threads) and valid[0].
    unsafe { kernel.launch(&cfg, (&x, &mut tmp, &mut y, &mut valid, n as i32)) }.unwrap();
    let mut want = xs.clone();
    for _ in 0..4 {
        let t: Vec<f32> = want.iter().map(|v| v * 2.0 + 1.0).collect();
        want = (0..n).map(|i| t[(i + block as usize + 1) % n]).collect();
    }
    assert_eq!(valid.to_vec().unwrap(), [1], "the launch was not cooperative");
    let got = y.to_vec().unwrap();
    for i in 0..n {
        assert!(close32(got[i], want[i]), "y[{i}] = {} but the host computed {}", got[i], want[i]);
    }
    // One block more than the device keeps resident: an error that says so, and nothing runs.
    let mut untouched = Array::from_slice(&[-1i32]).unwrap();
    let over = LaunchConfig::new(max + 1, block);
    // SAFETY: as above (the launch is refused before anything runs).
    let e = unsafe { kernel.launch(&over, (&x, &mut tmp, &mut y, &mut untouched, n as i32)) }.unwrap_err();
    match &e {
        Error::CooperativeGrid { blocks, limit, cooperative_groups, .. } => {
            assert_eq!((*blocks, *limit, *cooperative_groups), (u64::from(max) + 1, u64::from(max), true));
        }
        other => panic!("expected Error::CooperativeGrid, got {other:?}"),
    }
    let m = e.to_string();
    assert!(m.contains("enable_cooperative_groups") && m.contains("RawKernel::max_cooperative_blocks"), "{m}");
    assert_eq!(untouched.to_vec().unwrap(), [-1]);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn cuda_std_headers_in_a_raw_kernel() {
    let mut r = Rng::new();
    let source = r#"
#include <cuda/std/complex>
#include <cuda/std/limits>
#include <cuda/std/type_traits>
#include <cuda/std/cmath>
template <typename T>
__device__ T clamp_to_max(T v) {
    static_assert(cuda::std::is_floating_point<T>::value, "a float");
    return v > cuda::std::numeric_limits<T>::max() ? cuda::std::numeric_limits<T>::max() : v;
}
extern "C" __global__ void cstd(const cuda::std::complex<float>* a, const cuda::std::complex<float>* b,
                                cuda::std::complex<float>* c, float* m, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    c[i] = a[i] * b[i] + cuda::std::conj(a[i]);
    m[i] = clamp_to_max(cuda::std::abs(b[i])) + cuda::std::fmax(a[i].real(), b[i].imag());
}
"#;
    let kernel = RawKernel::new(source, "cstd");
    let n = 777;
    let av: Vec<Complex<f32>> = (0..n).map(|_| Complex::new(r.range(-3.0, 3.0) as f32, r.range(-3.0, 3.0) as f32)).collect();
    let bv: Vec<Complex<f32>> = (0..n).map(|_| Complex::new(r.range(-3.0, 3.0) as f32, r.range(-3.0, 3.0) as f32)).collect();
    let a = Array::from_slice(&av).unwrap();
    let b = Array::from_slice(&bv).unwrap();
    let mut c = Array::from_slice(&vec![Complex::new(f32::NAN, f32::NAN); n]).unwrap();
    let mut m = Array::from_slice(&vec![f32::NAN; n]).unwrap();
    // SAFETY: cstd takes (const complex<float>*, const complex<float>*, complex<float>*, float*,
    // int) and touches n elements of each array.
    unsafe { kernel.launch(&LaunchConfig::for_elements(n, 128), (&a, &b, &mut c, &mut m, n as i32)) }.unwrap();
    let (c, m) = (c.to_vec().unwrap(), m.to_vec().unwrap());
    for i in 0..n {
        let want = av[i] * bv[i] + av[i].conj();
        assert!(close32(c[i].re, want.re) && close32(c[i].im, want.im), "c[{i}] = {} but the host computed {want}", c[i]);
        let want = bv[i].norm() + av[i].re.max(bv[i].im);
        assert!(close32(m[i], want), "m[{i}] = {} but the host computed {want}", m[i]);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn translate_cucomplex_on_complex_arrays() {
    let mut r = Rng::new();
    // `cuCmulf(..) + a[i]` uses cuprum's complex operators: it compiles only when cuFloatComplex
    // is cuprum's complex (the translation), not the toolkit's float2.
    let source = r#"
#include <cuComplex.h>
extern "C" __global__ void cu(const cuFloatComplex* a, const cuFloatComplex* b, cuFloatComplex* c, float* m,
                              const cuDoubleComplex* x, cuDoubleComplex* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    c[i] = cuCaddf(cuCmulf(a[i], b[i]), make_cuFloatComplex(cuCrealf(a[i]), 0.5f)) + a[i];
    m[i] = cuCabsf(cuCsubf(a[i], cuConjf(b[i])));
    y[i] = cuCdiv(cuCmul(x[i], x[i]), make_cuDoubleComplex(1.5, cuCimag(x[i])));
}
"#;
    let plain = RawKernel::new(source, "cu");
    assert!(plain.compile().is_err(), "without the translation, cuFloatComplex has no operator+");
    let kernel = RawKernel::new(source, "cu").translate_cucomplex(true);
    let n = 500;
    let c32 = |r: &mut Rng| Complex::new(r.range(-3.0, 3.0) as f32, r.range(-3.0, 3.0) as f32);
    let av: Vec<Complex<f32>> = (0..n).map(|_| c32(&mut r)).collect();
    let bv: Vec<Complex<f32>> = (0..n).map(|_| c32(&mut r)).collect();
    let xv: Vec<Complex<f64>> = (0..n).map(|_| Complex::new(r.range(-3.0, 3.0), r.range(-3.0, 3.0))).collect();
    let (a, b, x) = (Array::from_slice(&av).unwrap(), Array::from_slice(&bv).unwrap(), Array::from_slice(&xv).unwrap());
    let mut c = Array::from_slice(&vec![Complex::new(f32::NAN, f32::NAN); n]).unwrap();
    let mut m = Array::from_slice(&vec![f32::NAN; n]).unwrap();
    let mut y = Array::from_slice(&vec![Complex::new(f64::NAN, f64::NAN); n]).unwrap();
    // SAFETY: cu takes (const cuFloatComplex*, const cuFloatComplex*, cuFloatComplex*, float*,
    // const cuDoubleComplex*, cuDoubleComplex*, int), cuFloatComplex being Complex<f32> and
    // cuDoubleComplex Complex<f64> under the translation; it touches n elements of each array.
    unsafe { kernel.launch(&LaunchConfig::for_elements(n, 128), (&a, &b, &mut c, &mut m, &x, &mut y, n as i32)) }.unwrap();
    let (c, m, y) = (c.to_vec().unwrap(), m.to_vec().unwrap(), y.to_vec().unwrap());
    for i in 0..n {
        let want = av[i] * bv[i] + Complex::new(av[i].re, 0.5) + av[i];
        assert!(close32(c[i].re, want.re) && close32(c[i].im, want.im), "c[{i}] = {} but the host computed {want}", c[i]);
        let want = (av[i] - bv[i].conj()).norm();
        assert!(close32(m[i], want), "m[{i}] = {} but the host computed {want}", m[i]);
        let want = (xv[i] * xv[i]) / Complex::new(1.5, xv[i].im);
        assert!(close64(y[i].re, want.re) && close64(y[i].im, want.im), "y[{i}] = {} but the host computed {want}", y[i]);
    }
}

/// The kernels of CuPy's `test_raw.py` cuComplex test (`_test_cuComplex`), as CuPy runs them with
/// `translate_cucomplex=True`: every cuComplex.h function in both precisions, the conversions, and
/// the two scalar kernels. `test_addf_scalar` calls the double-precision `cuCadd` on two
/// `cuComplex` values and stores the `cuDoubleComplex` result into a `cuComplex` array: it
/// compiles only because the complex type converts between precisions both ways (as
/// thrust::complex, CuPy's type, does).
const CUPY_CUCOMPLEX: &str = r#"
#include <cuComplex.h>
#define N 100
extern "C" {
#define TID unsigned int tid = blockDim.x * blockIdx.x + threadIdx.x
__global__ void test_add(cuDoubleComplex* a, cuDoubleComplex* b, cuDoubleComplex* out) { TID; if (tid < N) out[tid] = cuCadd(a[tid], b[tid]); }
__global__ void test_sub(cuDoubleComplex* a, cuDoubleComplex* b, cuDoubleComplex* out) { TID; if (tid < N) out[tid] = cuCsub(a[tid], b[tid]); }
__global__ void test_mul(cuDoubleComplex* a, cuDoubleComplex* b, cuDoubleComplex* out) { TID; if (tid < N) out[tid] = cuCmul(a[tid], b[tid]); }
__global__ void test_div(cuDoubleComplex* a, cuDoubleComplex* b, cuDoubleComplex* out) { TID; if (tid < N) out[tid] = cuCdiv(a[tid], b[tid]); }
__global__ void test_conj(cuDoubleComplex* a, cuDoubleComplex* out) { TID; if (tid < N) out[tid] = cuConj(a[tid]); }
__global__ void test_abs(cuDoubleComplex* a, double* out) { TID; if (tid < N) out[tid] = cuCabs(a[tid]); }
__global__ void test_fma(cuDoubleComplex* a, cuDoubleComplex* b, cuDoubleComplex* c, cuDoubleComplex* out) { TID; if (tid < N) out[tid] = cuCfma(a[tid], b[tid], c[tid]); }
__global__ void test_make(cuDoubleComplex* out) {
    TID; cuDoubleComplex z = make_cuDoubleComplex(1.8, 2.9);
    if (tid < N) out[tid] = make_cuDoubleComplex(cuCreal(z), -3. * cuCimag(z));
}
__global__ void test_downcast(cuDoubleComplex* a, cuComplex* out) { TID; if (tid < N) out[tid] = cuComplexDoubleToFloat(a[tid]); }
__global__ void test_add_scalar(cuDoubleComplex* a, cuDoubleComplex s, cuDoubleComplex* out) { TID; if (tid < N) out[tid] = cuCadd(a[tid], s); }
__global__ void test_addf(cuComplex* a, cuComplex* b, cuComplex* out) { TID; if (tid < N) out[tid] = cuCaddf(a[tid], b[tid]); }
__global__ void test_subf(cuComplex* a, cuComplex* b, cuComplex* out) { TID; if (tid < N) out[tid] = cuCsubf(a[tid], b[tid]); }
__global__ void test_mulf(cuComplex* a, cuComplex* b, cuComplex* out) { TID; if (tid < N) out[tid] = cuCmulf(a[tid], b[tid]); }
__global__ void test_divf(cuComplex* a, cuComplex* b, cuComplex* out) { TID; if (tid < N) out[tid] = cuCdivf(a[tid], b[tid]); }
__global__ void test_conjf(cuComplex* a, cuComplex* out) { TID; if (tid < N) out[tid] = cuConjf(a[tid]); }
__global__ void test_absf(cuFloatComplex* a, float* out) { TID; if (tid < N) out[tid] = cuCabsf(a[tid]); }
__global__ void test_fmaf(cuFloatComplex* a, cuFloatComplex* b, cuFloatComplex* c, cuFloatComplex* out) { TID; if (tid < N) out[tid] = cuCfmaf(a[tid], b[tid], c[tid]); }
__global__ void test_makef(cuComplex* out) {
    TID; cuComplex z = make_cuFloatComplex(1.8, 2.9);
    if (tid < N) out[tid] = make_cuFloatComplex(cuCrealf(z), -3. * cuCimagf(z));
}
__global__ void test_upcast(cuComplex* a, cuDoubleComplex* out) { TID; if (tid < N) out[tid] = cuComplexFloatToDouble(a[tid]); }
__global__ void test_addf_scalar(cuComplex* a, cuComplex s, cuComplex* out) { TID; if (tid < N) out[tid] = cuCadd(a[tid], s); }
}
"#;

#[test]
#[ignore = "needs a CUDA GPU"]
fn cupy_test_raw_cucomplex_kernels() {
    type C64 = Complex<f64>;
    type C32 = Complex<f32>;
    const N: usize = 100;
    let mut r = Rng::new();
    let module = RawModule::new(CUPY_CUCOMPLEX).translate_cucomplex(true);
    let cfg = LaunchConfig::new(1, 128);
    let c64s = |r: &mut Rng| -> Vec<C64> { (0..N).map(|_| C64::new(r.range(-3.0, 3.0), r.range(-3.0, 3.0))).collect() };
    let (av, bv, cv) = (c64s(&mut r), c64s(&mut r), c64s(&mut r));
    let to32 = |v: &[C64]| -> Vec<C32> { v.iter().map(|z| C32::new(z.re as f32, z.im as f32)).collect() };
    let (af, bf, cf) = (to32(&av), to32(&bv), to32(&cv));
    let arr64 = |v: &[C64]| Array::from_slice(v).unwrap();
    let arr32 = |v: &[C32]| Array::from_slice(v).unwrap();
    let nan64 = || Array::from_slice(&[C64::new(f64::NAN, f64::NAN); N]).unwrap();
    let nan32 = || Array::from_slice(&[C32::new(f32::NAN, f32::NAN); N]).unwrap();
    let check64 = |name: &str, got: &Array<C64>, want: &dyn Fn(usize) -> C64| {
        let got = got.to_vec().unwrap();
        for (i, g) in got.iter().enumerate() {
            let w = want(i);
            assert!(close64(g.re, w.re) && close64(g.im, w.im), "{name}[{i}] = {g} but the host computed {w}");
        }
    };
    let check32 = |name: &str, got: &Array<C32>, want: &dyn Fn(usize) -> C64| {
        let got = got.to_vec().unwrap();
        for (i, g) in got.iter().enumerate() {
            let w = want(i);
            assert!(close32(g.re, w.re as f32) && close32(g.im, w.im as f32), "{name}[{i}] = {g} but the host computed {w}");
        }
    };
    let (a, b, c) = (arr64(&av), arr64(&bv), arr64(&cv));
    let (a32, b32, c32) = (arr32(&af), arr32(&bf), arr32(&cf));
    let up = |z: C32| C64::new(z.re as f64, z.im as f64);
    // SAFETY (every launch below): each kernel takes the pointer and value types written in
    // CUPY_CUCOMPLEX, cuDoubleComplex being Complex<f64> and cuComplex Complex<f32> under the
    // translation, and touches the first N = 100 elements of arrays of N elements.
    for (name, op) in [("test_add", 0), ("test_sub", 1), ("test_mul", 2), ("test_div", 3)] {
        let mut out = nan64();
        unsafe { module.get_function(name).unwrap().launch(&cfg, (&a, &b, &mut out)) }.unwrap();
        let f = |i: usize| match op { 0 => av[i] + bv[i], 1 => av[i] - bv[i], 2 => av[i] * bv[i], _ => av[i] / bv[i] };
        check64(name, &out, &f);
        let namef = format!("{name}f");
        let mut out = nan32();
        unsafe { module.get_function(&namef).unwrap().launch(&cfg, (&a32, &b32, &mut out)) }.unwrap();
        let f = |i: usize| match op { 0 => up(af[i] + bf[i]), 1 => up(af[i] - bf[i]), 2 => up(af[i] * bf[i]), _ => up(af[i] / bf[i]) };
        check32(&namef, &out, &f);
    }
    let mut out = nan64();
    unsafe { module.get_function("test_conj").unwrap().launch(&cfg, (&a, &mut out)) }.unwrap();
    check64("test_conj", &out, &|i| av[i].conj());
    let mut out = nan32();
    unsafe { module.get_function("test_conjf").unwrap().launch(&cfg, (&a32, &mut out)) }.unwrap();
    check32("test_conjf", &out, &|i| up(af[i]).conj());
    let mut m = Array::from_slice(&[f64::NAN; N]).unwrap();
    unsafe { module.get_function("test_abs").unwrap().launch(&cfg, (&a, &mut m)) }.unwrap();
    for (i, g) in m.to_vec().unwrap().into_iter().enumerate() {
        assert!(close64(g, av[i].norm()), "test_abs[{i}] = {g} but the host computed {}", av[i].norm());
    }
    let mut m = Array::from_slice(&[f32::NAN; N]).unwrap();
    unsafe { module.get_function("test_absf").unwrap().launch(&cfg, (&a32, &mut m)) }.unwrap();
    for (i, g) in m.to_vec().unwrap().into_iter().enumerate() {
        assert!(close32(g, up(af[i]).norm() as f32), "test_absf[{i}] = {g} but the host computed {}", up(af[i]).norm());
    }
    let mut out = nan64();
    unsafe { module.get_function("test_fma").unwrap().launch(&cfg, (&a, &b, &c, &mut out)) }.unwrap();
    check64("test_fma", &out, &|i| av[i] * bv[i] + cv[i]);
    let mut out = nan32();
    unsafe { module.get_function("test_fmaf").unwrap().launch(&cfg, (&a32, &b32, &c32, &mut out)) }.unwrap();
    check32("test_fmaf", &out, &|i| up(af[i]) * up(bf[i]) + up(cf[i]));
    let mut out = nan64();
    unsafe { module.get_function("test_make").unwrap().launch(&cfg, (&mut out,)) }.unwrap();
    check64("test_make", &out, &|_| C64::new(1.8, -3.0 * 2.9));
    let mut out = nan32();
    unsafe { module.get_function("test_makef").unwrap().launch(&cfg, (&mut out,)) }.unwrap();
    check32("test_makef", &out, &|_| C64::new(1.8f32 as f64, (-3.0 * 2.9f32 as f64) as f32 as f64));
    let mut out = nan32();
    unsafe { module.get_function("test_downcast").unwrap().launch(&cfg, (&a, &mut out)) }.unwrap();
    check32("test_downcast", &out, &|i| av[i]);
    let mut out = nan64();
    unsafe { module.get_function("test_upcast").unwrap().launch(&cfg, (&a32, &mut out)) }.unwrap();
    check64("test_upcast", &out, &|i| up(af[i]));
    let s = C64::new(r.range(-3.0, 3.0), r.range(-3.0, 3.0));
    let mut out = nan64();
    unsafe { module.get_function("test_add_scalar").unwrap().launch(&cfg, (&a, s, &mut out)) }.unwrap();
    check64("test_add_scalar", &out, &|i| av[i] + s);
    // The mixed-precision kernel: float parts widened, added in double, narrowed on the store.
    let sf = C32::new(s.re as f32, s.im as f32);
    let mut out = nan32();
    unsafe { module.get_function("test_addf_scalar").unwrap().launch(&cfg, (&a32, sf, &mut out)) }.unwrap();
    check32("test_addf_scalar", &out, &|i| up(af[i]) + up(sf));
}

/// ElementwiseKernel C text that assigns a `complex<float>` to a `complex<double>` and back: the
/// implicit conversion between precisions works in plain C text too, not only through the bridge.
#[test]
#[ignore = "needs a CUDA GPU"]
fn elementwise_c_text_converts_complex_precisions() {
    let mut r = Rng::new();
    let n = 1000;
    let kernel =
        ElementwiseKernel::new("complex64 x, complex128 y", "complex128 z, complex64 w", "z = x; z += y; w = z;", "mixed_complex")
            .unwrap();
    let xv: Vec<Complex<f32>> = (0..n).map(|_| Complex::new(r.range(-3.0, 3.0) as f32, r.range(-3.0, 3.0) as f32)).collect();
    let yv: Vec<Complex<f64>> = (0..n).map(|_| Complex::new(r.range(-3.0, 3.0), r.range(-3.0, 3.0))).collect();
    let (x, y) = (Array::from_slice(&xv).unwrap(), Array::from_slice(&yv).unwrap());
    let z = Array::from_slice(&vec![Complex::new(f64::NAN, f64::NAN); n]).unwrap();
    let w = Array::from_slice(&vec![Complex::new(f32::NAN, f32::NAN); n]).unwrap();
    kernel.call().arg(&x).arg(&y).out(&z).out(&w).run().unwrap();
    let (z, w) = (z.to_vec().unwrap(), w.to_vec().unwrap());
    for i in 0..n {
        let want = Complex::new(xv[i].re as f64, xv[i].im as f64) + yv[i];
        assert!(close64(z[i].re, want.re) && close64(z[i].im, want.im), "z[{i}] = {} but the host computed {want}", z[i]);
        assert!(close32(w[i].re, want.re as f32) && close32(w[i].im, want.im as f32), "w[{i}] = {} but the host computed {want}", w[i]);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn relocatable_code_launches_a_child_kernel() {
    let mut r = Rng::new();
    let source = r#"
extern "C" __global__ void child(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i] + (float)i;
}
extern "C" __global__ void parent(const float* x, float* y, int n) {
    // One child grid per parent block, each over its own quarter of the array.
    int quarter = (n + 3) / 4;
    int start = blockIdx.x * quarter;
    int len = min(quarter, n - start);
    if (threadIdx.x == 0 && len > 0) child<<<(len + 127) / 128, 128>>>(x + start, y + start, len);
}
"#;
    let module = RawModule::new(source).options(["-rdc=true"]);
    let parent = module.get_function("parent").unwrap();
    let n = 4000;
    let xs = random_f32(&mut r, n);
    let x = Array::from_slice(&xs).unwrap();
    let mut y = Array::from_slice(&vec![f32::NAN; n]).unwrap();
    // SAFETY: parent takes (const float*, float*, int); its children touch n elements of x and y.
    unsafe { parent.launch(&LaunchConfig::new(4, 32), (&x, &mut y, n as i32)) }.unwrap();
    let quarter = n.div_ceil(4);
    let want: Vec<f32> = (0..n).map(|i| 2.0 * xs[i] + (i % quarter) as f32).collect();
    assert_eq!(y.to_vec().unwrap(), want);
}
