//! GPU tests of RawKernel / RawModule / the JIT and its cache, ported from CuPy's behaviour
//! (seed 002: "Raw kernels", "Kernel arguments", "Raw modules", "Kernel Compilation").
//!
//! Every test needs a CUDA GPU and libnvrtc: they are `#[ignore = "needs a CUDA GPU"]`, so CI
//! lists them as ignored; a GPU machine runs them with
//! `cargo test -p cuprum-runtime --lib tests::gpu_rawkernel -- --include-ignored`.
//!
//! Inputs are fresh random numbers (`support::Rng`: `rand`, seeded per run; the seed is printed and
//! `CUPRUM_TEST_SEED` replays it), outputs are poisoned before each launch, and results are
//! compared with a host reference. The process-wide kernel cache of this test process lives in a
//! temporary directory (never the user's cache). Tests about processes and the environment re-run
//! this binary (`child_entry`) with `CUPRUM_GPU_TEST_CHILD` naming what to do and the variables
//! under test set.

use crate::test_support as support;
use support::Rng;

/// This file's draws.
trait Draws {
    fn f32(&mut self) -> f32;
    fn f64(&mut self) -> f64;
    fn i32(&mut self) -> i32;
    fn vec_f32(&mut self, n: usize) -> Vec<f32>;
}

impl Draws for Rng {
    /// Uniform in [-8, 8), never exactly zero.
    fn f32(&mut self) -> f32 {
        let v = self.range(-8.0, 8.0) as f32;
        if v == 0.0 { 0.5 } else { v }
    }
    fn f64(&mut self) -> f64 {
        self.range(-8.0, 8.0)
    }
    fn i32(&mut self) -> i32 {
        self.int(-(1 << 29), (1 << 31) - (1 << 29) - 1) as i32
    }
    fn vec_f32(&mut self, n: usize) -> Vec<f32> {
        (0..n).map(|_| self.f32()).collect()
    }
}

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use crate::cache::{self, CacheConfig};
use crate::raw_kernel::RawKernel;
use crate::launch::{ArgList, DeviceRepr, LaunchConfig};
use crate::module::RawModule;
use crate::stats::{self, Layer};
use crate::{Array, Device, Error, Stream, nvrtc};
use half::{bf16, f16};
use num_complex::Complex;
use tempfile::TempDir;

// ------------------------------------------------------------------------------------------
// Helpers
// ------------------------------------------------------------------------------------------

/// A fresh, empty directory under the system temp dir, removed when dropped.
fn tempdir(tag: &str) -> TempDir {
    tempfile::Builder::new()
        .prefix(&format!("cuprum-gpu-test-{tag}-"))
        .tempdir()
        .unwrap()
}

/// Points this process's kernel cache at a private temporary directory (once) and checks that
/// a GPU and NVRTC are there.
pub(super) fn setup() -> Device {
    // A static is never dropped: the directory is left behind when the process ends.
    static DIR: OnceLock<TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = tempdir("cache");
        cache::set_global(CacheConfig::at(d.path()));
        d
    });
    if let Err(e) = nvrtc::info() {
        panic!("GPU tests need libnvrtc: {e}");
    }
    Device::current().unwrap_or_else(|e| panic!("GPU tests need a CUDA GPU: {e}"))
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * (1.0 + b.abs())
}

fn assert_close_f32(got: &[f32], want: &[f32], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            close(*g as f64, *w as f64, 1e-6),
            "{what}[{i}]: got {g}, want {w}"
        );
    }
}

/// Re-runs this binary's `child_entry` test with `check` and extra environment; returns stdout.
fn run_child(check: &str, env: &[(&str, &Path)], plain_env: &[(&str, &str)]) -> String {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "--exact",
        "tests::gpu_rawkernel::child_entry",
        "--include-ignored",
        "--nocapture",
        "--test-threads=1",
    ])
    .env("CUPRUM_GPU_TEST_CHILD", check);
    for var in [
        "CUPY_CACHE_DIR",
        "CUPY_CACHE_IN_MEMORY",
        "CUPY_CACHE_SAVE_CUDA_SOURCE",
        "CUPY_COMPILE_WITH_PTX",
        "CUPY_CUDA_COMPILE_WITH_DEBUG",
        "CUPY_DUMP_CUDA_SOURCE_ON_ERROR",
    ] {
        cmd.env_remove(var);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    for (k, v) in plain_env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "child `{check}` failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// The `STATS` line a child prints: (nvrtc, disk, memory, loaded, disk_writes, disk_corrupt).
fn child_stats(stdout: &str) -> [u64; 6] {
    let line = stdout
        .lines()
        .find_map(|l| l.find("STATS ").map(|i| &l[i + 6..]))
        .unwrap_or_else(|| panic!("no STATS line in:\n{stdout}"));
    let v: Vec<u64> = line
        .split_whitespace()
        .map(|t| t.split('=').nth(1).unwrap().parse().unwrap())
        .collect();
    [v[0], v[1], v[2], v[3], v[4], v[5]]
}

const ADD: &str = r#"
extern "C" __global__ void my_add(const float* x1, const float* x2, float* y, unsigned int n) {
    unsigned int tid = blockDim.x * blockIdx.x + threadIdx.x;
    if (tid < n) y[tid] = x1[tid] + x2[tid];
}
"#;

/// Runs `my_add` from `source` on random data and checks it.
fn run_add(kernel: &RawKernel, n: usize) {
    let mut rng = Rng::new();
    let (a, b) = (rng.vec_f32(n), rng.vec_f32(n));
    let x1 = Array::from_slice(&a).unwrap();
    let x2 = Array::from_slice(&b).unwrap();
    let mut y = Array::full(n, f32::NAN).unwrap();
    let cfg = LaunchConfig::for_elements(n, 128);
    // SAFETY: my_add(const float*, const float*, float*, unsigned int), bounded by n.
    unsafe { kernel.launch(&cfg, (&x1, &x2, &mut y, n as u32)) }.unwrap();
    let want: Vec<f32> = a.iter().zip(&b).map(|(p, q)| p + q).collect();
    assert_close_f32(&y.to_vec().unwrap(), &want, "my_add");
}

fn print_stats() {
    let s = stats::snapshot();
    println!(
        "STATS nvrtc={} disk={} memory={} loaded={} disk_writes={} disk_corrupt={}",
        s.nvrtc, s.disk, s.memory, s.loaded, s.disk_writes, s.disk_corrupt
    );
}

/// Child processes (does nothing in a normal run).
#[test]
#[ignore = "needs a CUDA GPU"]
fn child_entry() {
    let Ok(check) = std::env::var("CUPRUM_GPU_TEST_CHILD") else {
        return;
    };
    Device::current().expect("GPU");
    match check.as_str() {
        // Compile (or load) ADD through the environment's cache and run it.
        "add" => {
            run_add(&RawKernel::new(ADD, "my_add"), 1000);
            print_stats();
        }
        // Two threads compile one kernel at once, each through its own RawKernel.
        "two-threads" => {
            let barrier = std::sync::Arc::new(std::sync::Barrier::new(2));
            let hs: Vec<_> = (0..2)
                .map(|_| {
                    let b = barrier.clone();
                    std::thread::spawn(move || {
                        let k = RawKernel::new(ADD, "my_add");
                        b.wait();
                        k.compile().unwrap();
                        run_add(&k, 777);
                    })
                })
                .collect();
            for h in hs {
                h.join().unwrap();
            }
            print_stats();
        }
        // A compile error with the numbered source (CUPY_DUMP_CUDA_SOURCE_ON_ERROR=1).
        "dump" => {
            let k = RawKernel::new("// first line\n#error dumped source test\n", "nothing");
            let e = k.compile().unwrap_err().to_string();
            println!("ERROR {e}");
            assert!(
                e.contains("1 // first line") && e.contains("2 #error dumped source test"),
                "{e}"
            );
        }
        // The attributes of ADD (ptx_version / binary_version differ for PTX builds).
        "attrs" => {
            let k = RawKernel::new(ADD, "my_add");
            run_add(&k, 100);
            let a = k.attributes().unwrap();
            println!("ATTRS ptx={} binary={}", a.ptx_version, a.binary_version);
            print_stats();
        }
        other => panic!("unknown child check {other}"),
    }
}

// ------------------------------------------------------------------------------------------
// RawKernel and RawModule
// ------------------------------------------------------------------------------------------

#[test]
#[ignore = "needs a CUDA GPU"]
fn basic_add() {
    setup();
    let k = RawKernel::new(ADD, "my_add");
    for n in [1, 31, 1000, 65_537] {
        run_add(&k, n);
    }
    // 2-D grid and block (CuPy's (5,), (5,) style tuples, here 2-D).
    let src = r#"
extern "C" __global__ void index2d(int* out, int w) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z * blockDim.z + threadIdx.z;
    out[(z * gridDim.y * blockDim.y + y) * w + x] = x + 1000 * y + 1000000 * z;
}"#;
    let k2 = RawKernel::new(src, "index2d");
    let (gx, gy, gz, bx, by, bz) = (3u32, 2u32, 2u32, 8u32, 4u32, 2u32);
    let w = (gx * bx) as usize;
    let h = (gy * by) as usize;
    let d = (gz * bz) as usize;
    let mut out = Array::full(w * h * d, -1i32).unwrap();
    // SAFETY: index2d(int*, int) writes exactly w*h*d elements.
    unsafe {
        k2.launch(
            &LaunchConfig::new((gx, gy, gz), (bx, by, bz)),
            (&mut out, w as i32),
        )
    }
    .unwrap();
    let got = out.to_vec().unwrap();
    for z in 0..d {
        for y in 0..h {
            for x in 0..w {
                assert_eq!(
                    got[(z * h + y) * w + x],
                    (x + 1000 * y + 1_000_000 * z) as i32
                );
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn module_with_two_kernels() {
    setup();
    let src = r#"
extern "C" {
__global__ void test_sum(const float* x1, const float* x2, float* y, unsigned int n) {
    unsigned int tid = blockDim.x * blockIdx.x + threadIdx.x;
    if (tid < n) y[tid] = x1[tid] + x2[tid];
}
__global__ void test_multiply(const float* x1, const float* x2, float* y, unsigned int n) {
    unsigned int tid = blockDim.x * blockIdx.x + threadIdx.x;
    if (tid < n) y[tid] = x1[tid] * x2[tid];
}
}"#;
    let module = RawModule::new(src);
    let sum = module.get_function("test_sum").unwrap();
    let mul = module.get_function("test_multiply").unwrap();
    let n = 100usize;
    let mut rng = Rng::new();
    let (a, b) = (rng.vec_f32(n), rng.vec_f32(n));
    let (x1, x2) = (
        Array::from_slice(&a).unwrap(),
        Array::from_slice(&b).unwrap(),
    );
    let mut y = Array::full(n, f32::NAN).unwrap();
    let cfg = LaunchConfig::new(10, 10);
    // SAFETY: (const float*, const float*, float*, unsigned int), n = 100 = 10 x 10 threads.
    unsafe { sum.launch(&cfg, (&x1, &x2, &mut y, n as u32)) }.unwrap();
    let want: Vec<f32> = a.iter().zip(&b).map(|(p, q)| p + q).collect();
    assert_close_f32(&y.to_vec().unwrap(), &want, "test_sum");
    y.copy_from_slice(&vec![f32::NAN; n]).unwrap();
    // SAFETY: as above.
    unsafe { mul.launch(&cfg, (&x1, &x2, &mut y, n as u32)) }.unwrap();
    let want: Vec<f32> = a.iter().zip(&b).map(|(p, q)| p * q).collect();
    assert_close_f32(&y.to_vec().unwrap(), &want, "test_multiply");
    // Both kernels share one loaded module: one compile (or hit) for the module.
    assert!(module.served_by(&Device::current().unwrap()).is_some());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn define_option_changes_the_kernel() {
    let dev = setup();
    let src = r#"
extern "C" __global__ void scale(const float* x, float* y, unsigned int n) {
    unsigned int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i < n) y[i] = x[i] * FACTOR;
}"#;
    let mut rng = Rng::new();
    let a = rng.vec_f32(300);
    let x = Array::from_slice(&a).unwrap();
    let mut keys = Vec::new();
    for factor in [3, 5] {
        let k = RawKernel::new(src, "scale").options([format!("-DFACTOR={factor}")]);
        let mut y = Array::full(300, f32::NAN).unwrap();
        // SAFETY: scale(const float*, float*, unsigned int), bounded by n.
        unsafe { k.launch(&LaunchConfig::for_elements(300, 64), (&x, &mut y, 300u32)) }.unwrap();
        let want: Vec<f32> = a.iter().map(|v| v * factor as f32).collect();
        assert_close_f32(&y.to_vec().unwrap(), &want, &format!("FACTOR={factor}"));
        keys.push(k.module().cache_key(&dev).unwrap().unwrap());
    }
    assert_ne!(keys[0], keys[1], "options are part of the cache key");
    // Without the define the source does not compile.
    let e = RawKernel::new(src, "scale").compile().unwrap_err();
    assert!(e.to_string().contains("FACTOR"), "{e}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn error_directive_surfaces_in_the_error() {
    setup();
    let k = RawKernel::new(
        "#error this kernel refuses to compile\nextern \"C\" __global__ void k() {}\n",
        "k",
    );
    let e = k.compile().unwrap_err();
    let m = e.to_string();
    assert!(matches!(e, Error::Compile { .. }), "{m}");
    assert!(m.contains("this kernel refuses to compile"), "{m}");
    // A launch reports the same error and launches nothing.
    // SAFETY: never launched (the compile fails).
    let e = unsafe { k.launch(&LaunchConfig::new(1, 1), ()) }.unwrap_err();
    assert!(e.to_string().contains("this kernel refuses to compile"));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn load_cubin_and_ptx_from_files_and_bytes() {
    let dev = setup();
    let info = nvrtc::info().unwrap();
    let tmp = tempdir("images");
    let (major, minor) = dev.compute_capability();
    let arch = major * 10 + minor;
    let mut targets = vec![nvrtc::CodeTarget::Ptx(
        *info
            .supported_archs
            .iter()
            .filter(|&&a| a <= arch)
            .max()
            .unwrap(),
    )];
    if let Ok(t @ nvrtc::CodeTarget::Cubin(_)) =
        nvrtc::choose_target((major, minor), &info.supported_archs, false, info.version)
    {
        targets.push(t);
    }
    for target in targets {
        let opts = nvrtc::effective_options(&[], target, false);
        let out = nvrtc::compile(
            &nvrtc::Program {
                name: "my_add",
                file_name: "my_add",
                source: ADD,
                options: &opts,
                name_expressions: &[],
                dump_source_on_error: false,
            },
            target,
        )
        .unwrap();
        let path = tmp
            .path()
            .join(format!("my_add.{}", out.image.kind.extension()));
        let mut bytes = out.image.image.clone();
        if out.image.kind == cache::ImageKind::Ptx {
            // A PTX file as nvcc writes it: text without the trailing NUL.
            while bytes.last() == Some(&0) {
                bytes.pop();
            }
        }
        std::fs::write(&path, &bytes).unwrap();
        let from_file = RawModule::from_file(&path).unwrap();
        run_add(&from_file.get_function("my_add").unwrap(), 513);
        let from_bytes = RawModule::from_bytes(bytes).unwrap();
        run_add(&from_bytes.get_function("my_add").unwrap(), 77);
        assert_eq!(
            from_file.served_by(&dev),
            None,
            "images are not JIT lookups"
        );
    }
}

/// nvcc's command line where the build finds it (`NVCC`, `$CUDA_PATH/bin/nvcc`, `nvcc` on PATH),
/// if there is one.
fn find_nvcc() -> Option<Vec<std::ffi::OsString>> {
    use cuprum_build::nvcc::{Location, locate};
    match locate(&cuprum_build::env::Env::default()).unwrap_or_else(|e| panic!("{e}")) {
        Location::Found { command, .. } => Some(command).filter(|c| !c.is_empty()),
        Location::Missing(_) => None,
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn load_a_fatbin_built_by_nvcc() {
    let dev = setup();
    let nvcc = find_nvcc();
    if support::skip_without(nvcc.is_some(), "load_a_fatbin_built_by_nvcc", "no nvcc (NVCC, $CUDA_PATH/bin, PATH)") {
        return;
    }
    let nvcc = nvcc.unwrap();
    let tmp = tempdir("fatbin");
    let cu = tmp.path().join("my_add.cu");
    std::fs::write(&cu, ADD).unwrap();
    let (major, minor) = dev.compute_capability();
    let arch = format!("{major}{minor}");
    let fatbin = tmp.path().join("my_add.fatbin");
    let out = Command::new(&nvcc[0])
        .args(&nvcc[1..])
        .arg("-fatbin")
        .arg(format!(
            "-gencode=arch=compute_{arch},code=[sm_{arch},compute_{arch}]"
        ))
        .arg("-o")
        .arg(&fatbin)
        .arg(&cu)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "nvcc failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::read(&fatbin).unwrap();
    assert_eq!(cache::ImageKind::sniff(&bytes), cache::ImageKind::Fatbin);
    run_add(
        &RawModule::from_file(&fatbin)
            .unwrap()
            .get_function("my_add")
            .unwrap(),
        999,
    );
    run_add(
        &RawModule::from_bytes(bytes)
            .unwrap()
            .get_function("my_add")
            .unwrap(),
        64,
    );
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn missing_file_and_missing_function_are_errors() {
    setup();
    let e = RawModule::from_file("no/such/dir/kernel.cubin").unwrap_err();
    assert!(matches!(e, Error::ModuleFile { .. }), "{e}");
    assert!(e.to_string().contains("no/such/dir/kernel.cubin"), "{e}");

    let module = RawModule::new(ADD);
    let e = module.get_function("my_sub").unwrap_err();
    assert!(matches!(e, Error::FunctionNotFound { .. }), "{e}");
    assert!(
        e.to_string().contains("my_sub") && e.to_string().contains("extern \"C\""),
        "{e}"
    );
    // A RawKernel with a wrong name fails at its first launch, cleanly.
    // SAFETY: never launched (the lookup fails).
    let e =
        unsafe { RawKernel::new(ADD, "my_sub").launch(&LaunchConfig::new(1, 1), ()) }.unwrap_err();
    assert!(matches!(e, Error::FunctionNotFound { .. }), "{e}");
    // Garbage bytes are refused before the driver sees them or by the driver, without a crash.
    assert!(RawModule::from_bytes(b"\x7fELF\x02\x01garbage".to_vec()).is_err());
    // Text that is not PTX (no `.version`) is refused when the module is made.
    let e = RawModule::from_bytes(b"this is not ptx".to_vec()).unwrap_err();
    assert!(matches!(e, Error::ModuleLoad { .. }) && e.to_string().contains(".version"), "{e}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn constant_memory_through_get_global() {
    setup();
    let src = r#"
__constant__ float coef[4];
__device__ int counter;
__constant__ float three[3];
extern "C" __global__ void apply(const float* x, float* y, unsigned int n) {
    unsigned int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i < n) { y[i] = x[i] * coef[i % 4] + three[0]; atomicAdd(&counter, 1); }
}"#;
    let module = RawModule::new(src);
    let apply = module.get_function("apply").unwrap();
    let mut rng = Rng::new();
    let c = rng.vec_f32(4);
    let coef = module.get_global::<f32>("coef").unwrap();
    assert_eq!(coef.len(), 4);
    coef.write(&c).unwrap();
    assert_eq!(coef.read().unwrap(), c);
    let three = module.get_global::<f32>("three").unwrap();
    three.write(&[0.0, 0.0, 0.0]).unwrap();
    let counter = module.get_global::<i32>("counter").unwrap();
    counter.write(&[0]).unwrap();

    let n = 1000usize;
    let a = rng.vec_f32(n);
    let x = Array::from_slice(&a).unwrap();
    let mut y = Array::full(n, f32::NAN).unwrap();
    // SAFETY: apply(const float*, float*, unsigned int), bounded by n.
    unsafe { apply.launch(&LaunchConfig::for_elements(n, 256), (&x, &mut y, n as u32)) }.unwrap();
    let want: Vec<f32> = a.iter().enumerate().map(|(i, v)| v * c[i % 4]).collect();
    assert_close_f32(&y.to_vec().unwrap(), &want, "apply");
    assert_eq!(counter.read().unwrap(), vec![n as i32]);

    // Size and name errors.
    let e = module.get_global::<f64>("three").unwrap_err().to_string();
    assert!(e.contains("12 bytes"), "{e}");
    let e = module.get_global::<f32>("nope").unwrap_err().to_string();
    assert!(e.contains("nope"), "{e}");
    assert!(coef.write(&[1.0; 5]).is_err());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn templates_through_name_expressions() {
    setup();
    let src = r#"
#include <cuprum/complex.h>
template <typename T>
__global__ void scale(T* a, T s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = a[i] * s;
}
"#;
    let names = [
        "scale<int>",
        "scale<float>",
        "scale<cuprum::complex<double>>",
    ];
    let module = RawModule::new(src).name_expressions(names);
    let n = 333usize;
    let cfg = LaunchConfig::for_elements(n, 128);
    let mut rng = Rng::new();

    let ki = module.get_function("scale<int>").unwrap();
    let vi: Vec<i32> = (0..n).map(|_| rng.i32() % 1000).collect();
    let si = rng.i32() % 7 + 9;
    let mut ai = Array::from_slice(&vi).unwrap();
    // SAFETY: scale<int>(int*, int, int), bounded by n.
    unsafe { ki.launch(&cfg, (&mut ai, si, n as i32)) }.unwrap();
    assert_eq!(
        ai.to_vec().unwrap(),
        vi.iter().map(|v| v * si).collect::<Vec<_>>()
    );

    let kf = module.get_function("scale<float>").unwrap();
    let vf = rng.vec_f32(n);
    let sf = rng.f32();
    let mut af = Array::from_slice(&vf).unwrap();
    // SAFETY: scale<float>(float*, float, int), bounded by n.
    unsafe { kf.launch(&cfg, (&mut af, sf, n as i32)) }.unwrap();
    assert_close_f32(
        &af.to_vec().unwrap(),
        &vf.iter().map(|v| v * sf).collect::<Vec<_>>(),
        "scale<float>",
    );

    let kc = module
        .get_function("scale<cuprum::complex<double>>")
        .unwrap();
    let vc: Vec<Complex<f64>> = (0..n).map(|_| Complex::new(rng.f64(), rng.f64())).collect();
    let sc = Complex::new(rng.f64(), rng.f64());
    let mut ac = Array::from_slice(&vc).unwrap();
    // SAFETY: scale<complex<double>>(complex<double>*, complex<double>, int); num-complex's
    // Complex<f64> is #[repr(C)] {re, im}, the layout of cuprum::complex<double>.
    unsafe { kc.launch(&cfg, (&mut ac, sc, n as i32)) }.unwrap();
    for (i, (g, v)) in ac.to_vec().unwrap().iter().zip(&vc).enumerate() {
        let w = v * sc;
        assert!(
            close(g.re, w.re, 1e-12) && close(g.im, w.im, 1e-12),
            "complex[{i}]: {g} vs {w}"
        );
    }

    assert_eq!(
        module.lowered_name("scale<float>").unwrap(),
        "_Z5scaleIfEvPT_S0_i"
    );
    let e = module
        .get_function("scale<double>")
        .unwrap_err()
        .to_string();
    assert!(e.contains("name expressions"), "{e}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn scalars_of_every_dtype_and_structs_by_value() {
    setup();
    let src = r#"
struct S { float a; int b; double c; };
extern "C" __global__ void echo(
    unsigned long long* out, bool b, signed char i8v, short i16v, int i32v, long long i64v,
    unsigned char u8v, unsigned short u16v, unsigned int u32v, unsigned long long u64v,
    unsigned short f16bits, unsigned short bf16bits, float f32v, double f64v,
    float2 c32, double2 c64, S s, size_t sz)
{
    out[0] = b; out[1] = (long long)i8v; out[2] = (long long)i16v; out[3] = (long long)i32v;
    out[4] = (unsigned long long)i64v; out[5] = u8v; out[6] = u16v; out[7] = u32v; out[8] = u64v;
    out[9] = f16bits; out[10] = bf16bits;
    out[11] = __float_as_uint(f32v); out[12] = __double_as_longlong(f64v);
    out[13] = __float_as_uint(c32.x); out[14] = __float_as_uint(c32.y);
    out[15] = __double_as_longlong(c64.x); out[16] = __double_as_longlong(c64.y);
    out[17] = __float_as_uint(s.a); out[18] = (long long)s.b; out[19] = __double_as_longlong(s.c);
    out[20] = sz;
}"#;
    #[derive(Clone, Copy)]
    #[repr(C)]
    struct S {
        a: f32,
        b: i32,
        c: f64,
    }
    // SAFETY: #[repr(C)] {f32, i32, f64}: the layout of `struct S` in the kernel (16 bytes).
    unsafe impl DeviceRepr for S {}

    let k = RawKernel::new(src, "echo");
    let mut rng = Rng::new();
    let r = |rng: &mut Rng| rng.next();
    let (i8v, i16v, i32v, i64v) = (
        r(&mut rng) as i8,
        r(&mut rng) as i16,
        r(&mut rng) as i32,
        r(&mut rng) as i64,
    );
    let (u8v, u16v, u32v, u64v) = (
        r(&mut rng) as u8,
        r(&mut rng) as u16,
        r(&mut rng) as u32,
        r(&mut rng),
    );
    let h = f16::from_f32(rng.f32());
    let bh = bf16::from_f32(rng.f32());
    let (f, d) = (rng.f32(), rng.f64());
    let c32 = Complex::new(rng.f32(), rng.f32());
    let c64 = Complex::new(rng.f64(), rng.f64());
    let s = S {
        a: rng.f32(),
        b: rng.i32(),
        c: rng.f64(),
    };
    let sz = r(&mut rng) as usize;
    let want: Vec<u64> = vec![
        1,
        i8v as i64 as u64,
        i16v as i64 as u64,
        i32v as i64 as u64,
        i64v as u64,
        u8v as u64,
        u16v as u64,
        u32v as u64,
        u64v,
        h.to_bits() as u64,
        bh.to_bits() as u64,
        f.to_bits() as u64,
        d.to_bits(),
        c32.re.to_bits() as u64,
        c32.im.to_bits() as u64,
        c64.re.to_bits(),
        c64.im.to_bits(),
        s.a.to_bits() as u64,
        s.b as i64 as u64,
        s.c.to_bits(),
        sz as u64,
    ];
    // Tuple arguments.
    let mut out = Array::full(want.len(), 0xDEAD_BEEF_u64).unwrap();
    let args = (
        &mut out, true, i8v, i16v, i32v, i64v, u8v, u16v, u32v, u64v, h, bh, f, d, c32, c64, s, sz,
    );
    // SAFETY: the argument types match echo's parameters one by one (f16/bf16 as their 16-bit
    // patterns, Complex as float2/double2, S as struct S, usize as size_t).
    unsafe { k.launch(&LaunchConfig::new(1, 1), args) }.unwrap();
    assert_eq!(out.to_vec().unwrap(), want);

    // The same through a run-time argument list.
    let mut out2 = Array::full(want.len(), 0xDEAD_BEEF_u64).unwrap();
    let mut list = ArgList::new();
    list.push(&mut out2)
        .push(true)
        .push(i8v)
        .push(i16v)
        .push(i32v)
        .push(i64v)
        .push(u8v)
        .push(u16v)
        .push(u32v)
        .push(u64v)
        .push(h)
        .push(bh)
        .push(f)
        .push(d)
        .push(c32)
        .push(c64)
        .push(s)
        .push(sz);
    // SAFETY: as above.
    unsafe { k.launch(&LaunchConfig::new(1, 1), &list) }.unwrap();
    assert_eq!(out2.to_vec().unwrap(), want);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn dynamic_shared_memory_and_streams() {
    let dev = setup();
    let src = r#"
extern "C" __global__ void reverse_block(const float* x, float* y) {
    extern __shared__ float buf[];
    unsigned int t = threadIdx.x, base = blockIdx.x * blockDim.x;
    buf[t] = x[base + t];
    __syncthreads();
    y[base + t] = buf[blockDim.x - 1 - t];
}"#;
    let k = RawKernel::new(src, "reverse_block");
    let (blocks, threads) = (7usize, 256usize);
    let mut rng = Rng::new();
    let a = rng.vec_f32(blocks * threads);
    let stream = Stream::new(&dev).unwrap();
    let x = Array::from_slice(&a).unwrap();
    let mut y = Array::full(blocks * threads, f32::NAN).unwrap();
    Stream::current().unwrap().synchronize().unwrap();
    let cfg = LaunchConfig::new(blocks as u32, threads as u32)
        .shared_mem((threads * 4) as u32)
        .stream(&stream);
    // SAFETY: reverse_block(const float*, float*) with blockDim floats of dynamic shared memory,
    // over exactly blocks*threads elements.
    unsafe { k.launch(&cfg, (&x, &mut y)) }.unwrap();
    stream.synchronize().unwrap();
    let want: Vec<f32> = a
        .chunks(threads)
        .flat_map(|c| c.iter().rev().copied())
        .collect();
    assert_close_f32(&y.to_vec().unwrap(), &want, "reverse_block");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn attributes_and_launch_checks() {
    let dev = setup();
    let src = r#"
__constant__ float table[64];
extern "C" __global__ void big(float* y, unsigned int n) {
    __shared__ float tile[512];
    extern __shared__ float dyn[];
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x % 512] = table[threadIdx.x % 64];
    dyn[threadIdx.x] = 1.0f;
    __syncthreads();
    if (i < n) y[i] = tile[(threadIdx.x + 1) % 512] + dyn[0];
}"#;
    let k = RawKernel::new(src, "big");
    let a = k.attributes().unwrap();
    let (major, minor) = dev.compute_capability();
    println!("{a:?}");
    assert!(
        a.max_threads_per_block > 0
            && a.max_threads_per_block <= dev.max_threads_per_block() as i32
    );
    assert!(a.shared_size_bytes >= 2048, "{a:?}");
    assert!(a.const_size_bytes >= 256, "{a:?}");
    assert!(a.num_regs > 0);
    assert!(a.local_size_bytes >= 0);
    assert_eq!(a.binary_version, (major * 10 + minor) as i32);
    assert!(a.ptx_version >= 50 && a.ptx_version <= a.binary_version);
    assert!(a.cache_mode_ca == 0 || a.cache_mode_ca == 1);
    assert!(a.max_dynamic_shared_size_bytes > 0 && a.max_dynamic_shared_size_bytes <= 48 * 1024);
    assert!(a.preferred_shared_memory_carveout >= -1);
    assert_eq!(k.num_regs().unwrap(), a.num_regs);
    assert_eq!(k.max_threads_per_block().unwrap(), a.max_threads_per_block);
    assert_eq!(k.shared_size_bytes().unwrap(), a.shared_size_bytes);
    assert_eq!(k.const_size_bytes().unwrap(), a.const_size_bytes);
    assert_eq!(k.local_size_bytes().unwrap(), a.local_size_bytes);
    assert_eq!(k.ptx_version().unwrap(), a.ptx_version);
    assert_eq!(k.binary_version().unwrap(), a.binary_version);
    assert_eq!(k.cache_mode_ca().unwrap(), a.cache_mode_ca);

    let n = 4096usize;
    let mut y = Array::full(n, f32::NAN).unwrap();
    let default_dyn = a.max_dynamic_shared_size_bytes as u32;
    let want_dyn = 100 * 1024u32;
    let optin = dev.max_shared_memory_per_block_optin() as u32;
    assert!(
        optin >= want_dyn + 2048,
        "this GPU allows only {optin} bytes of shared memory"
    );

    // Too much dynamic shared memory: a clean error that names the attribute; nothing launched.
    let cfg = LaunchConfig::new((n / 256) as u32, 256).shared_mem(want_dyn);
    // SAFETY: big(float*, unsigned int), bounded by n.
    let e = unsafe { k.launch(&cfg, (&mut y, n as u32)) }.unwrap_err();
    assert!(matches!(e, Error::SharedMemory { .. }), "{e}");
    assert!(
        e.to_string().contains("max_dynamic_shared_size_bytes"),
        "{e}"
    );
    assert!(
        y.to_vec().unwrap().iter().all(|v| v.is_nan()),
        "nothing ran"
    );

    // Raise it and the launch works.
    k.set_max_dynamic_shared_size_bytes(want_dyn as i32)
        .unwrap();
    assert_eq!(k.max_dynamic_shared_size_bytes().unwrap(), want_dyn as i32);
    assert!(default_dyn < want_dyn);
    // SAFETY: as above.
    unsafe { k.launch(&cfg, (&mut y, n as u32)) }.unwrap();
    assert!(y.to_vec().unwrap().iter().all(|v| v.is_finite()));
    // Beyond what the device allows: refused, the old value stays.
    assert!(
        k.set_max_dynamic_shared_size_bytes(optin as i32 + 1)
            .is_err()
    );
    assert_eq!(k.max_dynamic_shared_size_bytes().unwrap(), want_dyn as i32);

    k.set_preferred_shared_memory_carveout(50).unwrap();
    assert_eq!(k.preferred_shared_memory_carveout().unwrap(), 50);

    // Bad geometry: errors, not launches.
    let bad = [
        LaunchConfig::new(0, 256),
        LaunchConfig::new(1, (0, 1)),
        LaunchConfig::new(1, 2048),
        LaunchConfig::new(1, (32, 32, 2)),
        LaunchConfig::new(1, (1, 1, 128)),
        LaunchConfig::new((1, 70_000), 32),
    ];
    for cfg in bad {
        // SAFETY: as above (and nothing is launched).
        let e = unsafe { k.launch(&cfg, (&mut y, n as u32)) }.unwrap_err();
        assert!(matches!(e, Error::InvalidLaunch { .. }), "{cfg:?}: {e}");
    }
    // The kernel still works afterwards (no sticky error).
    let mut y2 = Array::full(256, f32::NAN).unwrap();
    // SAFETY: as above with n = 256 and 256 floats of dynamic shared memory.
    unsafe {
        k.launch(
            &LaunchConfig::new(1, 256).shared_mem(1024),
            (&mut y2, 256u32),
        )
    }
    .unwrap();
    assert!(y2.to_vec().unwrap().iter().all(|v| v.is_finite()));
}

// ------------------------------------------------------------------------------------------
// The cache across processes, and the environment
// ------------------------------------------------------------------------------------------

#[test]
#[ignore = "needs a CUDA GPU"]
fn second_process_is_served_from_the_disk_cache() {
    setup();
    let tmp = tempdir("second");
    let first = child_stats(&run_child("add", &[("CUPY_CACHE_DIR", tmp.path())], &[]));
    assert_eq!(
        (first[0], first[4]),
        (1, 1),
        "first process compiles and writes: {first:?}"
    );
    let second = child_stats(&run_child("add", &[("CUPY_CACHE_DIR", tmp.path())], &[]));
    assert_eq!(
        (second[0], second[1]),
        (0, 1),
        "second process: disk hit, no NVRTC: {second:?}"
    );
    assert_eq!(cache::scan::usage(tmp.path()).unwrap().entries, 1);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn corrupted_entry_is_recompiled_and_rewritten() {
    setup();
    let tmp = tempdir("corrupt");
    run_child("add", &[("CUPY_CACHE_DIR", tmp.path())], &[]);
    let entry = find_entries(tmp.path());
    assert_eq!(entry.len(), 1);
    let good = std::fs::read(&entry[0]).unwrap();
    let mut bad = good.clone();
    let mid = bad.len() / 2;
    bad[mid] ^= 0xFF;
    std::fs::write(&entry[0], &bad).unwrap();
    let u = cache::scan::usage(tmp.path()).unwrap();
    assert_eq!((u.entries, u.damaged), (0, 1), "stats count it damaged");
    let s = child_stats(&run_child("add", &[("CUPY_CACHE_DIR", tmp.path())], &[]));
    assert_eq!(
        (s[0], s[5], s[4]),
        (1, 1, 1),
        "corrupt -> miss, compile, rewrite: {s:?}"
    );
    assert_ne!(
        std::fs::read(&entry[0]).unwrap(),
        bad,
        "the damaged entry was rewritten"
    );
    let _ = good;
    let s = child_stats(&run_child("add", &[("CUPY_CACHE_DIR", tmp.path())], &[]));
    assert_eq!((s[0], s[1]), (0, 1));
}

fn find_entries(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for shard in std::fs::read_dir(dir).unwrap().flatten() {
        if shard.path().is_dir() {
            for f in std::fs::read_dir(shard.path()).unwrap().flatten() {
                if f.path().extension().is_some_and(|e| e == "cuprum") {
                    out.push(f.path());
                }
            }
        }
    }
    out
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn two_threads_compiling_one_kernel_leave_one_entry() {
    setup();
    let tmp = tempdir("threads");
    let s = child_stats(&run_child(
        "two-threads",
        &[("CUPY_CACHE_DIR", tmp.path())],
        &[],
    ));
    assert_eq!(s[0], 1, "one NVRTC compile: {s:?}");
    assert_eq!(find_entries(tmp.path()).len(), 1);
    let u = cache::scan::usage(tmp.path()).unwrap();
    assert_eq!((u.entries, u.temporaries), (1, 0));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn cache_in_memory_writes_nothing() {
    setup();
    let tmp = tempdir("inmem");
    let dir = tmp.path().join("cache");
    let s = child_stats(&run_child(
        "add",
        &[("CUPY_CACHE_DIR", &dir)],
        &[("CUPY_CACHE_IN_MEMORY", "1")],
    ));
    assert_eq!((s[0], s[4]), (1, 0));
    assert!(
        !dir.exists(),
        "CUPY_CACHE_IN_MEMORY=1 created {}",
        dir.display()
    );
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn save_source_ptx_and_debug_variables() {
    setup();
    let tmp = tempdir("vars");
    // CUPY_CACHE_SAVE_CUDA_SOURCE=1: the .cu lands next to the entry.
    run_child(
        "add",
        &[("CUPY_CACHE_DIR", tmp.path())],
        &[("CUPY_CACHE_SAVE_CUDA_SOURCE", "1")],
    );
    let u = cache::scan::usage(tmp.path()).unwrap();
    assert_eq!((u.entries, u.sources), (1, 1));

    // CUPY_COMPILE_WITH_PTX=1: another entry (the target is part of the key), holding PTX.
    let out = run_child(
        "attrs",
        &[("CUPY_CACHE_DIR", tmp.path())],
        &[("CUPY_COMPILE_WITH_PTX", "1")],
    );
    assert_eq!(child_stats(&out)[0], 1);
    let entries = find_entries(tmp.path());
    assert_eq!(entries.len(), 2);
    assert!(
        entries.iter().any(|p| {
            let b = std::fs::read(p).unwrap();
            b.windows(14).any(|w| w == b".entry my_add(")
        }),
        "no PTX entry"
    );

    // CUPY_CUDA_COMPILE_WITH_DEBUG=1: a third entry; the kernel still runs.
    let out = run_child(
        "attrs",
        &[("CUPY_CACHE_DIR", tmp.path())],
        &[("CUPY_CUDA_COMPILE_WITH_DEBUG", "1")],
    );
    assert_eq!(child_stats(&out)[0], 1);
    assert_eq!(find_entries(tmp.path()).len(), 3);

    // CUPY_DUMP_CUDA_SOURCE_ON_ERROR=1: the error carries the numbered source.
    let out = run_child(
        "dump",
        &[("CUPY_CACHE_DIR", tmp.path())],
        &[("CUPY_DUMP_CUDA_SOURCE_ON_ERROR", "1")],
    );
    assert!(out.contains("2 #error dumped source test"), "{out}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn same_source_in_one_process_is_served_by_the_loaded_layer() {
    let dev = setup();
    let src = format!("{ADD}\n// unique {}\n", Rng::new().next());
    let k1 = RawKernel::new(src.clone(), "my_add");
    k1.compile().unwrap();
    assert_eq!(k1.module().served_by(&dev), Some(Layer::Nvrtc));
    let k2 = RawKernel::new(src, "my_add");
    k2.compile().unwrap();
    assert_eq!(k2.module().served_by(&dev), Some(Layer::Loaded));
    run_add(&k2, 4000);
}
