//! CUDA C back end. Entry point: [`write_module`], which produces one translation unit for a
//! checked module: the `#include`s it needs, every device function, and per kernel a body function,
//! an instantiation macro (see `mangle`) and one instantiation per precompiled instance.
//!
//! Trusts the validator: every construct here is supported and every type is known.

mod arch;
mod elementwise;
pub mod lines;
pub(crate) mod namer;
pub mod reduction;
mod writer;

use std::collections::BTreeSet;
use std::fmt::Write as _;

use cuprum_abi::dtype::DType;
use crate::ir::{Item, ItemKind, Module, StructDef, Ty};
use cuprum_abi::mangle;
use crate::typeck::Types;
use cuprum_abi::unit::UNIT_HEADER;
use cuprum_abi::{KernelKind, Variant};

pub use arch::ArchNeed;
pub use lines::{source_name, LineSource};
pub use writer::Writer;

/// The generated translation unit and what the build and JIT need to know about it.
#[derive(Debug, Clone)]
pub struct Unit {
    /// The CUDA C source.
    pub source: String,
    /// Every kernel, with its instances' symbols.
    pub kernels: Vec<KernelInfo>,
    /// A kernel asked for fast-math: compile the unit with `--use_fast_math`.
    pub fast_math: bool,
}

/// One kernel of a translated unit and its precompiled entry points.
#[derive(Debug, Clone)]
pub struct KernelInfo {
    /// The kernel's Rust name.
    pub name: String,
    /// `#[elementwise]`, `#[reduction]` or `#[rawkernel]`.
    pub kind: KernelKind,
    /// `(instance, variant, symbol)` for every precompiled entry point (an elementwise or
    /// reduction kernel has one per instance and launch variant, `kind.variants()`; a raw kernel
    /// one per instance, with no variant).
    pub instances: Vec<(Vec<DType>, Option<Variant>, String)>,
    /// The oldest architecture the kernel runs on, when it uses instructions not every GPU has
    /// (tensor cores, `cp.async`): `(80, "mma_m16n8k16")`.
    pub min_arch: ArchNeed,
    /// The intrinsic that needs the arch-specific target of `min_arch` (`sm_90a`: `wgmma_*`,
    /// `warpgroup_reg_*`), whose code runs on that exact architecture only. cuprum-build builds
    /// such a kernel for `sm_<min_arch>a` alone (docs/building.md, "Architecture-specific kernels").
    pub arch_specific: Option<&'static str>,
    /// The kernel calls `grid_sync()`, directly or through `#[device]` functions: the runtime
    /// launches it cooperatively, with a grid no larger than the device keeps resident.
    pub cooperative: bool,
}

/// Which headers a unit includes: only those its code uses.
#[derive(Default)]
pub(crate) struct Features {
    pub headers: BTreeSet<&'static str>,
    pub dynamic_shared: bool,
}

impl Features {
    pub fn need(&mut self, h: &'static str) {
        self.headers.insert(h);
    }

    /// The header that defines dtype `d`, for an instance of a generic kernel (whose code names
    /// only `T`): `half.h` for `f16`/`bf16`, `complex.h` (which includes `math.h`, where
    /// `cuprum::num` is) for complex types. An instance compiled on demand gets the same from
    /// `cuprum_abi::headers::includes_for`.
    pub fn need_dtype(&mut self, d: DType) {
        if d.is_half() {
            self.need("cuprum/half.h");
        }
        if d.is_complex() {
            self.need("cuprum/complex.h");
        }
    }
}

/// Writes the translation unit of a checked module; with `lines`, the file the module was parsed
/// from, with `#line` directives that attribute the code of each statement to its Rust line
/// (module [`lines`]).
pub fn write_module(module: &Module, types: &[Types], lines: Option<&LineSource>) -> Unit {
    let mut features = Features::default();
    features.need("cuprum/types.h");
    let mut body = String::new();
    let mut kernels = Vec::new();
    let mut fast_math = false;

    let arch_needs = arch::needs(module);
    let cooperative = crate::ir::reaching_intrinsic(module, &crate::lang::Intrinsic::grid_wide);
    write_structs(module, &mut features, &mut body);
    let device_items: Vec<&Item> = module.items.iter().filter(|i| matches!(i.kind, ItemKind::Device)).collect();
    // Prototypes of every device function first, so definitions may come in any order.
    let devices: Vec<(&Item, &Types)> =
        module.items.iter().zip(types).filter(|(i, _)| matches!(i.kind, ItemKind::Device)).collect();
    if !devices.is_empty() {
        for (item, ty) in &devices {
            let w = Writer::new(item, ty, &mut features, &device_items, &module.structs);
            let _ = writeln!(body, "{};", w.device_signature());
        }
        body.push('\n');
    }
    for (item, ty) in module.items.iter().zip(types) {
        let mut w = Writer::new(item, ty, &mut features, &device_items, &module.structs);
        let need = arch_needs.get(item.name.text.as_str()).copied().unwrap_or_default();
        let (arch_need, arch_specific) = (need.min, need.specific);
        w.arch_need = arch_need;
        w.arch_specific = arch_specific;
        w.lines = lines;
        match &item.kind {
            ItemKind::Device => w.device_fn(),
            ItemKind::RawKernel { fast_math: fm } => {
                fast_math |= *fm;
                w.raw_kernel();
            }
            ItemKind::Elementwise => w.elementwise(),
            ItemKind::Reduction(_) => w.reduction(),
        }
        body.push_str(&w.finish());
        body.push('\n');
        if let Some(kind) = item.kind.kernel_kind() {
            let instances: Vec<Vec<DType>> =
                if item.generics.is_empty() { vec![Vec::new()] } else { item.instances.clone() };
            let cooperative = cooperative.contains(item.name.text.as_str());
            let mut info = KernelInfo { name: item.name.text.clone(), kind, instances: Vec::new(), min_arch: arch_need, arch_specific, cooperative };
            // Kernels with launch variants get one entry point per variant and instance, except
            // the 64-bit index variants (`s64`, `rows64`, ...: they serve only arrays whose
            // offsets pass 2^31 elements, and cost as much as the others together) and `t32`
            // (transposed 2-D operands only): NVRTC compiles those at first use instead
            // (docs/building.md, "What is precompiled").
            let variants: Vec<Option<Variant>> = match kind.variants() {
                [] => vec![None],
                vs => vs.iter().copied().filter(|v| v.precompiled()).map(Some).collect(),
            };
            for inst in instances {
                // A generic kernel's code names only `T`: the headers of the instance's dtypes
                // (complex.h for `Complex<f32>`, ...) come from its instances.
                for d in &inst {
                    features.need_dtype(*d);
                }
                for variant in &variants {
                    let sym = mangle::kernel_symbol(kind, &item.name.text, *variant, &inst);
                    let _ = writeln!(body, "{}", mangle::instantiate_variant_line(&item.name.text, *variant, &sym, &inst));
                    info.instances.push((inst.clone(), *variant, sym));
                }
            }
            body.push('\n');
            kernels.push(info);
        }
    }

    let mut source = String::new();
    source.push_str(UNIT_HEADER);
    if fast_math {
        let names: Vec<&str> = module
            .items
            .iter()
            .filter(|i| matches!(i.kind, ItemKind::RawKernel { fast_math: true }))
            .map(|i| i.name.text.as_str())
            .collect();
        let _ = writeln!(source, "// Fast-math ({}): compile this unit with --use_fast_math.", names.join(", "));
    }
    for h in ordered_headers(&features) {
        let _ = writeln!(source, "#include <{h}>");
    }
    if features.dynamic_shared {
        // 1024-byte aligned where Hopper's copies and multiplies may address it (their 128-byte
        // swizzled tiles start on 1024 bytes), else 16 bytes.
        let align = if features.headers.contains("cuprum/hopper.h") { 1024 } else { 16 };
        let _ = writeln!(source, "\nextern __shared__ __align__({align}) unsigned char cuprum_dynamic_smem[];");
    }
    source.push('\n');
    source.push_str(body.trim_end());
    source.push('\n');
    Unit { source: lines::resolve(&source, lines), kernels, fast_math }
}

/// The `#[device]` structs, each after the structs it contains, with their layout asserted (the
/// Rust side asserts the same size: together they keep host and device in agreement).
fn write_structs(module: &Module, features: &mut Features, body: &mut String) {
    let mut done: Vec<&str> = Vec::new();
    fn visit<'m>(s: &'m StructDef, module: &'m Module, features: &mut Features, body: &mut String, done: &mut Vec<&'m str>) {
        if done.contains(&s.name.text.as_str()) {
            return;
        }
        done.push(&s.name.text);
        for f in &s.fields {
            let mut t = &f.ty;
            while let Ty::Array(e, _) = t {
                t = e;
            }
            if let Ty::Struct(n) = t {
                if let Some(inner) = module.find_struct(n) {
                    visit(inner, module, features, body, done);
                }
            }
        }
        let name = namer::struct_name(&s.name.text);
        let _ = writeln!(body, "struct {name} {{");
        for f in &s.fields {
            let _ = writeln!(body, "    {} {};", c_type(&f.ty, &[], features), namer::field_name(&f.name.text));
        }
        let _ = writeln!(body, "}};");
        if let Some(l) = crate::layout::of_struct(s, &module.structs) {
            let _ = writeln!(
                body,
                "static_assert(sizeof({name}) == {} && alignof({name}) == {}, \"{name}: the layout the Rust side was checked against\");",
                l.layout.size, l.layout.align
            );
        }
    }
    for s in &module.structs {
        visit(s, module, features, body, &mut done);
    }
    if !module.structs.is_empty() {
        body.push('\n');
    }
}

/// Headers in the order `headers::HEADERS` lists them (dependency order).
fn ordered_headers(f: &Features) -> Vec<&'static str> {
    cuprum_abi::headers::HEADERS.iter().map(|(n, _)| *n).filter(|n| f.headers.contains(n)).collect()
}

/// The C spelling of a type (generic parameters by their escaped names).
pub(crate) fn c_type(t: &Ty, generics: &[String], f: &mut Features) -> String {
    match t {
        Ty::Unit | Ty::Never => "void".into(),
        Ty::Scalar(d) => {
            if d.is_half() {
                f.need("cuprum/half.h");
            }
            if d.is_complex() {
                f.need("cuprum/complex.h");
            }
            d.short_name().into()
        }
        Ty::Param(i) => generics[*i as usize].clone(),
        Ty::Tuple(ts) => {
            let inner: Vec<String> = ts.iter().map(|t| c_type(t, generics, f)).collect();
            format!("cuprum::Tuple{}<{}>", ts.len(), inner.join(", "))
        }
        Ty::Array(e, n) => format!("cuprum::Array<{}, {n}>", c_type(e, generics, f)),
        Ty::Slice { elem, mutable } => {
            format!("cuprum::Slice<{}{}>", if *mutable { "" } else { "const " }, c_type(elem, generics, f))
        }
        Ty::ArrayRef { elem, .. } => format!("{}*", c_type(elem, generics, f)),
        Ty::View { elem, ndim, mutable } => {
            format!("cuprum::View<{}{}, {ndim}>", if *mutable { "" } else { "const " }, c_type(elem, generics, f))
        }
        Ty::Raw(e) => format!("cuprum::Raw<{}>", c_type(e, generics, f)),
        Ty::TensorMap(e) => {
            f.need("cuprum/hopper.h");
            format!("cuprum::TensorMap<{}>", c_type(e, generics, f))
        }
        Ty::Ref { inner, mutable } => {
            format!("{}{}&", if *mutable { "" } else { "const " }, c_type(inner, generics, f))
        }
        Ty::Dim3 => "uint3".into(),
        Ty::Struct(n) => namer::struct_name(n),
        Ty::IntVar(_) => "i32".into(),
        Ty::FloatVar(_) => "f64".into(),
        Ty::Error => unreachable!("the back end only runs on modules without errors"),
    }
}
