//! CuPy's kernel features for CUDA C text that NVRTC alone decides, tested without a GPU (libnvrtc
//! and a CUDA toolkit's headers are enough; `CUDA_PATH` names the toolkit): the log of a compile
//! that warns, the toolkit's headers (`cuda/std`, cooperative groups), the clear error for a
//! header that does not exist, the `cuComplex.h` bridge of `translate_cucomplex`, and
//! relocatable device code with a device-side launch. What needs the GPU (launching, linking with
//! the device runtime) is in `testsuite/tests/gpu_raw_features.rs`.

use crate::error::Error;
use crate::module::cucomplex;
use crate::nvrtc::{self, CodeTarget};

use super::support;

/// libnvrtc's target for an sm_90 GPU, or `None` after saying why `test` is skipped.
#[track_caller]
fn target_or_skip(test: &str) -> Option<CodeTarget> {
    let info = nvrtc::info();
    let missing = info.as_ref().err().map(|e| format!("no libnvrtc ({e})"));
    if support::skip_without(info.is_ok(), test, missing.as_deref().unwrap_or("")) {
        return None;
    }
    let info = info.ok()?;
    Some(nvrtc::choose_target((9, 0), &info.supported_archs, false, info.version).unwrap())
}

/// The toolkit's `-I` options, or `None` after saying why `test` is skipped.
#[track_caller]
fn toolkit_or_skip(test: &str) -> Option<Vec<String>> {
    let found = nvrtc::toolkit().is_some();
    let missing = format!("no CUDA toolkit headers (looked at {})", nvrtc::toolkit::searched());
    if support::skip_without(found, test, &missing) {
        return None;
    }
    Some(nvrtc::toolkit_include_options())
}

fn compile(source: &str, target: CodeTarget, extra: &[String]) -> crate::error::Result<nvrtc::program::Compiled> {
    let mut options = nvrtc::effective_options(&[], target, false);
    options.extend(extra.iter().cloned());
    let program =
        nvrtc::Program { name: "test", file_name: "test", source, options: &options, name_expressions: &[], dump_source_on_error: false };
    nvrtc::compile(&program, target)
}

const KERNEL: &str = "extern \"C\" __global__ void k(float* y) { y[threadIdx.x] = 1.0f; }\n";

#[test]
fn a_compile_that_warns_keeps_its_log() {
    let Some(target) = target_or_skip("a_compile_that_warns_keeps_its_log") else {
        return;
    };
    let warned = compile(&format!("#warning cuprum test warning\n{KERNEL}"), target, &[]).unwrap();
    assert!(warned.log.contains("cuprum test warning"), "NVRTC's log: {:?}", warned.log);
    assert!(!warned.image.image.is_empty());
    let clean = compile(KERNEL, target, &[]).unwrap();
    assert!(clean.log.trim().is_empty(), "NVRTC's log: {:?}", clean.log);
}

#[test]
fn toolkit_headers_cuda_std_and_cooperative_groups() {
    let Some(target) = target_or_skip("toolkit_headers_cuda_std_and_cooperative_groups") else {
        return;
    };
    let Some(includes) = toolkit_or_skip("toolkit_headers_cuda_std_and_cooperative_groups") else {
        return;
    };
    let source = r#"
#include <cuda/std/limits>
#include <cuda/std/complex>
#include <cuda/std/type_traits>
#include <cuda/std/array>
#include <cuda/std/cstdint>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
static_assert(cuda::std::is_same<cuda::std::int32_t, int>::value, "int32_t");
extern "C" __global__ void k(cuda::std::complex<float>* z, float* m, int n) {
    cg::grid_group g = cg::this_grid();
    unsigned long long i = g.thread_rank();
    if (i < (unsigned long long)n) z[i] = z[i] * cuda::std::complex<float>(0.f, 1.f);
    g.sync();
    cuda::std::array<float, 2> a = {cuda::std::numeric_limits<float>::max(), 1.f};
    if (i == 0) m[0] = a[0] + cuda::std::abs(z[0]);
}
"#;
    if let Err(e) = compile(source, target, &includes) {
        panic!("the toolkit's headers do not compile with NVRTC and {includes:?}:\n{e}");
    }
}

/// cuprum's embedded headers include toolkit headers NVRTC has built in (`cuda_fp16.h`, ...): with
/// the toolkit's folders on the include path too, every one still compiles.
#[test]
fn embedded_headers_compile_beside_the_toolkit_headers() {
    let Some(target) = target_or_skip("embedded_headers_compile_beside_the_toolkit_headers") else {
        return;
    };
    let Some(includes) = toolkit_or_skip("embedded_headers_compile_beside_the_toolkit_headers") else {
        return;
    };
    let all: String = nvrtc::program::headers().iter().map(|(name, _)| format!("#include <{name}>\n")).collect();
    let source = format!("{all}#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n#include <cuda/std/complex>\n{KERNEL}");
    if let Err(e) = compile(&source, target, &includes) {
        panic!("cuprum's headers do not compile beside the toolkit's ({includes:?}):\n{e}");
    }
}

#[test]
fn a_missing_header_says_what_to_set() {
    let Some(target) = target_or_skip("a_missing_header_says_what_to_set") else {
        return;
    };
    let e = compile(&format!("#include <cuprum_no_such_header.h>\n{KERNEL}"), target, &nvrtc::toolkit_include_options()).unwrap_err();
    let m = e.to_string();
    assert!(matches!(e, Error::Compile { .. }), "{m}");
    assert!(
        m.contains("cuprum_no_such_header.h")
            && m.contains("a header was not found")
            && m.contains("CUDA_PATH")
            && m.contains("<cuda/std/type_traits>"),
        "{m}"
    );
}

#[test]
fn cucomplex_code_compiles_through_the_bridge() {
    let Some(target) = target_or_skip("cucomplex_code_compiles_through_the_bridge") else {
        return;
    };
    let source = r#"
#include <cuComplex.h>
extern "C" __global__ void k(const cuFloatComplex* a, const cuFloatComplex* b, cuFloatComplex* c,
                             const cuDoubleComplex* x, cuDoubleComplex* y, float* m) {
    int i = threadIdx.x;
    c[i] = cuCaddf(cuCmulf(a[i], b[i]), cuCdivf(a[i], make_cuFloatComplex(1.f, 2.f)));
    y[i] = cuCfma(x[i], cuConj(x[i]), cuCsub(cuComplexFloatToDouble(a[i]), make_cuDoubleComplex(cuCreal(x[i]), 0.0)));
    m[i] = cuCabsf(cuConjf(a[i])) + cuCrealf(b[i]) * cuCimagf(b[i]) + (float)cuCabs(cuCdiv(x[i], cuCmul(x[i], x[i])));
}
// CuPy's test_raw.py `test_addf_scalar`: the double-precision cuCadd on two cuComplex values, its
// cuDoubleComplex result stored into a cuComplex (the precisions convert both ways, as
// thrust::complex's do), and the same conversions in plain C text.
extern "C" __global__ void test_addf_scalar(cuComplex* arr, cuComplex scalar, cuComplex* out) {
    unsigned int tid = blockDim.x * blockIdx.x + threadIdx.x;
    out[tid] = cuCadd(arr[tid], scalar);
    cuprum::complex<double> wide = arr[tid];
    cuprum::complex<float> narrow = wide + cuprum::complex<double>(scalar);
    out[tid] += narrow;
}
"#;
    let translated = cucomplex::translate_cucomplex(source);
    assert!(translated.contains(cucomplex::BRIDGE_INCLUDE) && !translated.contains("<cuComplex.h>"));
    // Untranslated, the types come from the toolkit's cuComplex.h (float2), or from nowhere.
    if let Err(e) = compile(&translated, target, &[]) {
        panic!("cuComplex.h code does not compile against the bridge:\n{e}");
    }
}

#[test]
fn relocatable_code_with_a_device_side_launch_compiles() {
    let Some(target) = target_or_skip("relocatable_code_with_a_device_side_launch_compiles") else {
        return;
    };
    let source = r#"
extern "C" __global__ void child(float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * (float)i;
}
extern "C" __global__ void parent(float* y, int n) {
    if (threadIdx.x == 0 && blockIdx.x == 0) child<<<(n + 127) / 128, 128>>>(y, n);
}
"#;
    let ptx = CodeTarget::Ptx(match target {
        CodeTarget::Cubin(a) | CodeTarget::Ptx(a) => a,
    });
    let out = compile(source, ptx, &["-rdc=true".to_string()]).unwrap();
    let text = String::from_utf8_lossy(&out.image.image);
    // The device-side launch calls into the device runtime (`__cudaCDP2LaunchDeviceV2` in CUDA
    // 13), an external symbol that the driver's linker takes from libcudadevrt.a.
    assert!(text.contains("LaunchDevice") && text.contains(".extern"), "{text}");
    // Without -rdc, NVRTC refuses a device-side launch.
    assert!(compile(source, ptx, &[]).is_err());
}
