//! NVRTC (no GPU needed) checks of the elementwise machinery: the runtime's parameter layouts equal
//! the C structs of `elementwise.h`, and `ElementwiseKernel` sources compile for every variant.
//!
//! Needs libnvrtc (`source scripts/cuda-env.sh`); fails without it unless
//! `CUPRUM_SKIP_CUDA_COMPILE=1`, like the compiler's `cuda_compile` test.

use crate::abi::{mangle, ElementwiseVariant, KernelKind};
use crate::ArgList as Params;
use crate::elementwise::ElementwiseKernel;
use crate::elementwise::plan::{ElementwisePlan, Variant};
use crate::nvrtc::{self, CodeTarget, Program};
use crate::{DType, ElemType, StructType};

fn skip() -> bool {
    if nvrtc::is_available() {
        return false;
    }
    if std::env::var("CUPRUM_SKIP_CUDA_COMPILE").as_deref() == Ok("1") {
        eprintln!("skipped: no libnvrtc and CUPRUM_SKIP_CUDA_COMPILE=1");
        return true;
    }
    panic!("libnvrtc is not available: run `source scripts/cuda-env.sh`, or set CUPRUM_SKIP_CUDA_COMPILE=1");
}

fn compile(name: &str, source: &str) {
    let target = CodeTarget::Cubin(90);
    let options = nvrtc::effective_options(&[], target, false);
    let program = Program { name, file_name: name, source, options: &options, name_expressions: &[], dump_source_on_error: true };
    if let Err(e) = nvrtc::compile(&program, target) {
        panic!("{e}");
    }
}

fn plan(variant: Variant) -> ElementwisePlan {
    ElementwisePlan { variant, size: 1, vec: 1, dims: vec![1], strides: vec![], bcast: 0, items: 1 }
}

#[test]
fn parameter_layouts_match_the_headers() {
    if skip() {
        return;
    }
    let mut src = String::from(
        "#include <cuprum/types.h>\n#include <cuprum/half.h>\n#include <cuprum/complex.h>\n#include <cuprum/elementwise.h>\nusing namespace cuprum::ew;\n",
    );
    for v in [Variant::Contig, Variant::S32, Variant::S64, Variant::T32] {
        let tag = v.name();
        for d in DType::ALL {
            let t = d.short_name();
            let mut p = Params::new();
            p.input(&plan(v), d, 0, None, None);
            p.output(&plan(v), 0, &[]);
            p.loop_shape(&plan(v));
            let s = p.sizes();
            src += &format!("static_assert(sizeof(In<{t}, {tag}>) == {}, \"In<{t}, {tag}>\");\n", s[0]);
            src += &format!("static_assert(sizeof(Out<{t}, {tag}>) == {}, \"Out<{t}, {tag}>\");\n", s[1]);
            src += &format!("static_assert(sizeof(InOut<{t}, {tag}>) == {}, \"InOut<{t}, {tag}>\");\n", s[1]);
            src += &format!("static_assert(sizeof(Loop<{tag}>) == {}, \"Loop<{tag}>\");\n", s[2]);
            // With the sizes, the alignment fixes where the scalar sits (C's layout rules, which
            // params.rs follows).
            let align = crate::elementwise::params::align_of(d);
            src += &format!("static_assert(alignof({t}) == {align}, \"alignof({t})\");\n");
        }
        let mut p = Params::new();
        p.raw(0, &[2, 3], &[3, 1]).unwrap();
        src += &format!("static_assert(sizeof(cuprum::Raw<f32>) == {0} && sizeof(CArray<c64>) == {0}, \"Raw\");\n", p.sizes()[0]);
    }
    // Field order of the loops (aggregate initialisation follows declaration order).
    src += "constexpr Loop<s32> l32{1, 2, 3, 4, 5, {}};\nstatic_assert(l32.size == 1 && l32.items == 2 && l32.ndim == 3 && l32.vec == 4 && l32.bcast == 5, \"Loop<s32> fields\");\n";
    src += "constexpr Loop<s64> l64{1, 2, 3, 4, 5, {}};\nstatic_assert(l64.size == 1 && l64.items == 2 && l64.ndim == 3 && l64.vec == 4 && l64.bcast == 5, \"Loop<s64> fields\");\n";
    src += "static_assert(vec_width<In<f16, contig>, Out<f64, contig> >() == 2 && vec_width<In<u8, s32> >() == 16 && vec_width<cuprum::Raw<f32> >() == 1, \"vec\");\n";
    compile("layouts", &src);
}

fn instantiate(k: &ElementwiseKernel, instances: &[&[DType]]) -> String {
    let mut src = k.source().to_string();
    for inst in instances {
        for v in ElementwiseVariant::ALL.map(Into::into) {
            let sym = mangle::kernel_symbol(KernelKind::Elementwise, k.name(), Some(v), inst);
            src += &mangle::instantiate_variant_line(k.name(), Some(v), &sym, inst);
            src.push('\n');
        }
    }
    src
}

#[test]
fn elementwise_kernel_sources_compile() {
    if skip() {
        return;
    }
    let k = ElementwiseKernel::new("T x, T y", "T z", "z = (x - y) * (x - y)", "squared_diff_ek").unwrap();
    compile("squared_diff_ek", &instantiate(&k, &[&[DType::F32], &[DType::F16], &[DType::C64], &[DType::I8]]));
    let k = ElementwiseKernel::new("T x, raw T y", "T z", "z = x + y[_ind.size() - i - 1]", "add_reverse_ek").unwrap();
    compile("add_reverse_ek", &instantiate(&k, &[&[DType::F64], &[DType::U16]]));
    // CuPy's multi-index on a raw argument (an index array, or a braced list), beside the flat one.
    let k = ElementwiseKernel::new(
        "raw T x",
        "T y",
        "ptrdiff_t idx[2] = {(ptrdiff_t)(i % 4), (ptrdiff_t)(i / 4)}; const int c[2] = {0, 1}; y = x[idx] + x[{(long long)i / 4, 0LL}] + x[c] + x[i]",
        "multi_index_ek",
    )
    .unwrap();
    compile("multi_index_ek", &instantiate(&k, &[&[DType::F32], &[DType::C64], &[DType::I64]]));
    let k = ElementwiseKernel::build("X x, float32 w", "Z z, raw int64 count", "T2 v = twice((float)x) * w; z = (Z)v; if (i == 0) count[0] = _ind.size() + y0", "options_ek")
        .preamble("typedef float T2;\n__device__ float twice(float a) { return 2 * a; }  // a comment")
        .loop_prep("const long long y0 = count.size();")
        .after_loop("(void)y0;")
        .options(["-DUNUSED=1"])
        .finish()
        .unwrap();
    compile("options_ek", &instantiate(&k, &[&[DType::I32, DType::F64]]));
}

// ---- `#[device]` struct elements -------------------------------------------------------------

const STRUCT_KERNELS: &str = include_str!("../../tests/kernels/struct_elementwise.cu");

fn struct_elem(name: &'static str, size: usize, align: usize) -> ElemType {
    ElemType::Struct(StructType { name, size, align })
}

/// The parameter structs of struct operands (12, 8 and 200 bytes) have the sizes the runtime
/// lays out, and the kernel's `vec_width` is the planner's for operand lists with sizes that are
/// and are not powers of two.
#[test]
fn struct_parameter_layouts_and_vector_widths_match_the_headers() {
    if skip() {
        return;
    }
    // `Big` (200 bytes, aligned to 8) is defined in the kernel file.
    let mut src = format!("{STRUCT_KERNELS}\nusing namespace cuprum::ew;\n");
    let elems = [("Particle", struct_elem("Particle", 12, 4)), ("Pair", struct_elem("Pair", 8, 4)), ("Big", struct_elem("Big", 200, 8))];
    for v in [Variant::Contig, Variant::S32, Variant::S64, Variant::T32] {
        let tag = v.name();
        for (t, e) in elems {
            let mut p = Params::new();
            p.input(&plan(v), e, 0, None, None);
            src += &format!("static_assert(sizeof(In<{t}, {tag}>) == {}, \"In<{t}, {tag}>\");\n", p.sizes()[0]);
        }
    }
    let cases: [(&[&str], &[usize]); 6] = [
        (&["In<Particle, contig>", "Out<Particle, contig>"], &[12, 12]),
        (&["In<Particle, s32>", "In<f32, s32>", "Out<Particle, s32>"], &[12, 4, 12]),
        (&["In<Pair, contig>", "Out<f32, contig>"], &[8, 4]),
        (&["In<Pair, s64>", "Out<u8, s64>"], &[8, 1]),
        (&["In<Big, contig>", "Out<f32, contig>"], &[200, 4]),
        (&["In<u8, contig>", "cuprum::Raw<Particle>"], &[1]),
    ];
    for (ops, sizes) in cases {
        let w = crate::elementwise::plan::vec_width(sizes.iter().copied());
        src += &format!("static_assert(vec_width<{}>() == {w}, \"vec_width {}\");\n", ops.join(", "), ops.join(", "));
    }
    compile("struct_layouts", &src);
}

/// The struct kernels compile for every variant: a 12-byte struct (no vector type), an 8-byte
/// one (vector accesses) and a 200-byte one through the loops of `elementwise.h`.
#[test]
fn struct_elementwise_kernels_compile() {
    if skip() {
        return;
    }
    let mut src = STRUCT_KERNELS.to_string();
    // `bump` takes a 200-byte struct: every variant must compile, `t32` included (its shared
    // exchange would need 211 KB for it; wider elements than 16 bytes skip it).
    for name in ["advance", "swap", "bump"] {
        for v in ElementwiseVariant::ALL.map(Into::into) {
            let sym = mangle::kernel_symbol(KernelKind::Elementwise, name, Some(v), &[]);
            src += &mangle::instantiate_variant_line(name, Some(v), &sym, &[]);
            src.push('\n');
        }
    }
    compile("struct_elementwise", &src);
}
