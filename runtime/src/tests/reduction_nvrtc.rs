//! No GPU needed: the built-in reductions over complex numbers (`x.sum()`, `prod`, `mean`, `all`,
//! `any` of `Complex<f32>`/`Complex<f64>`) are listed with their precompiled instances, and the
//! instances NVRTC compiles at first use (the 64-bit index variants, `all`/`any` of numbers)
//! compile from exactly the source the runtime hands NVRTC (`KernelUnit::instance_source` with
//! `headers::includes_for` and the instantiation line, as `registry::Kernel::instance` builds it).
//!
//! Needs libnvrtc for the compiling part (`source scripts/cuda-env.sh`); fails without it unless
//! `CUPRUM_SKIP_CUDA_COMPILE=1`, like the compiler's `cuda_compile` test.

use crate::abi::{headers, mangle, KernelKind, ReductionVariant, Variant};
use crate::nvrtc::{self, CodeTarget, Program};
use crate::registry;
use crate::DType;

const COMPLEX: [DType; 2] = [DType::C32, DType::C64];

fn entry(name: &str) -> &'static registry::KernelEntry {
    registry::kernels()
        .find(|e| e.kind() == KernelKind::Reduction && e.name() == name && e.file().ends_with("kernels/reductions.rs"))
        .unwrap_or_else(|| panic!("the runtime lists its built-in reduction `{name}`"))
}

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

/// Compiles, in one NVRTC program, the instances `instances` of built-in reduction `name` in
/// `variants`, from the unit's definitions as the JIT does.
fn compile_on_demand(name: &str, instances: &[&[DType]], variants: &[ReductionVariant]) {
    let unit = entry(name).unit().unwrap();
    let mut lines = String::new();
    let mut symbols = Vec::new();
    for inst in instances {
        lines += &headers::includes_for(inst);
        for v in variants {
            let v: Variant = (*v).into();
            let sym = mangle::kernel_symbol(KernelKind::Reduction, name, Some(v), inst);
            assert!(!unit.precompiled().contains(&sym.as_str()), "{sym} is precompiled: test another instance");
            lines += &mangle::instantiate_variant_line(name, Some(v), &sym, inst);
            lines.push('\n');
            symbols.push(sym);
        }
    }
    let src = unit.instance_source(&lines);
    let target = CodeTarget::Cubin(90);
    let options = nvrtc::effective_options(&[], target, false);
    let program = Program { name, file_name: name, source: &src, options: &options, name_expressions: &[], dump_source_on_error: true };
    if let Err(e) = nvrtc::compile(&program, target) {
        panic!("{name} ({symbols:?}): {e}");
    }
}

#[test]
fn complex_sum_prod_and_mean_are_precompiled_where_the_real_ones_are() {
    for v in [ReductionVariant::Rows, ReductionVariant::Warps, ReductionVariant::Cols] {
        let v: Variant = v.into();
        for name in ["sum", "prod"] {
            let unit = entry(name).unit().unwrap();
            for d in [DType::F32, DType::F64, DType::C32, DType::C64] {
                let sym = mangle::kernel_symbol(KernelKind::Reduction, name, Some(v), &[d]);
                assert!(unit.precompiled().contains(&sym.as_str()), "{sym} in {:?}", unit.precompiled());
            }
        }
        for name in ["mean_c32", "mean_c64"] {
            let sym = mangle::kernel_symbol(KernelKind::Reduction, name, Some(v), &[]);
            assert!(entry(name).unit().unwrap().precompiled().contains(&sym.as_str()), "{sym}");
        }
    }
}

#[test]
fn complex_instances_compiled_on_demand_compile_with_nvrtc() {
    if skip() {
        return;
    }
    let wide = [ReductionVariant::Rows64, ReductionVariant::Warps64, ReductionVariant::Cols64];
    let complex: Vec<&[DType]> = COMPLEX.iter().map(std::slice::from_ref).collect();
    compile_on_demand("sum", &complex, &wide);
    compile_on_demand("prod", &complex, &wide);
    compile_on_demand("mean_c32", &[&[]], &wide);
    compile_on_demand("mean_c64", &[&[]], &wide);
    // `all`/`any` of numbers precompile nothing: `x != T::zero()` with `cuprum::num<c32>`.
    compile_on_demand("all", &complex, &ReductionVariant::ALL);
    compile_on_demand("any", &complex, &ReductionVariant::ALL);
}
