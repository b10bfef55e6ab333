//! The Rust side of `#[elementwise]` (`expand::expand_item`): the shape of the generated module,
//! asserted by key fragments of its tokens (whitespace-normalised). That the generated code
//! compiles and runs is checked by the root crate's tests (`testsuite/tests/gpu_elementwise_macro.rs`).

use cuprum_compiler::expand::{expand_item, Context};
use cuprum_compiler::AttrKind;
use proc_macro2::TokenStream;

fn expand(attr: &str, item: &str) -> String {
    let attr: TokenStream = attr.parse().unwrap();
    let item: TokenStream = item.parse().unwrap();
    squash(&expand_item(AttrKind::Elementwise, attr, item, &Context::default()).to_string())
}

/// Without whitespace (token printing spaces `>>` and `> >` differently).
fn squash(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

/// `fragment` (tokens) occurs in `out`.
#[track_caller]
fn has(out: &str, fragment: &str) {
    let f = squash(fragment);
    assert!(out.contains(&f), "missing `{f}` in\n{out}");
}

#[test]
fn generic_kernel_gets_a_call_module() {
    let out = expand("", "pub fn squared_diff<T: Float>(x: T, y: T) -> T { let d = x - y; d * d }");
    // The user's function stays (host-callable), then the module of the same name.
    has(&out, "pub fn squared_diff<T: Float>(x: T, y: T) -> T");
    has(&out, "pub mod squared_diff");
    has(&out, r#"__cuprum::registry::Kernel::new(__cuprum::registry::UnitRef::Embedded(&__CUPRUM_UNIT), "squared_diff", __cuprum::launch::signature::Signature::Elementwise(SIGNATURE))"#);
    has(&out, r#"pub const SIGNATURE: &[__cuprum::launch::signature::Param; 3usize] = &[
        __cuprum::launch::signature::Param::new("x", __cuprum::launch::signature::Role::In, __cuprum::launch::signature::ParamType::Generic(0u8)),
        __cuprum::launch::signature::Param::new("y", __cuprum::launch::signature::Role::In, __cuprum::launch::signature::ParamType::Generic(0u8)),
        __cuprum::launch::signature::Param::new("out", __cuprum::launch::signature::Role::Out, __cuprum::launch::signature::ParamType::Generic(0u8))
    ];"#);
    has(&out, "pub fn call<'a, T: Float + __cuprum::Scalar>(
        x: impl ::core::convert::Into<__cuprum::elementwise::Input<'a, T>>,
        y: impl ::core::convert::Into<__cuprum::elementwise::Input<'a, T>>
    ) -> __cuprum::Result<__cuprum::Array<T>>");
    has(&out, "pub fn call_with<'a, T: Float + __cuprum::Scalar>(options: &__cuprum::elementwise::Options<'_>,");
    has(&out, "pub fn call_into<'a, T: Float + __cuprum::Scalar>(");
    has(&out, "out: &mut __cuprum::Array<T>) -> __cuprum::Result<()>");
    has(&out, "__cuprum::elementwise::launch(&__CUPRUM_KERNEL, &[<T as __cuprum::Scalar>::DTYPE], &__cuprum_args, options)");
    has(&out, r#"__cuprum::elementwise::broadcast_shape("squared_diff", &__cuprum_args, options.size)?"#);
}

#[test]
fn raw_inout_fixed_dtypes_and_tuples() {
    let out = expand(
        "",
        "pub fn k<T: Float, I: Int>(x: &Raw<T>, s: f32, acc: &mut T, n: I, options: u32) -> (T, bool) { \
         *acc += x[index()]; (x[index()] * T::from_f64(s as f64), n == I::zero() && options > 0) }",
    );
    has(&out, "x: &__cuprum::Array<T>");
    has(&out, "s: impl ::core::convert::Into<__cuprum::elementwise::Input<'a, f32>>");
    has(&out, "acc: &mut __cuprum::Array<T>");
    has(&out, r#"Param::new("s", __cuprum::launch::signature::Role::In, __cuprum::launch::signature::ParamType::Fixed(<f32 as __cuprum::Element>::ELEM))"#);
    has(&out, r#"Param::new("x", __cuprum::launch::signature::Role::Raw, __cuprum::launch::signature::ParamType::Generic(0u8))"#);
    has(&out, r#"Param::new("acc", __cuprum::launch::signature::Role::InOut, __cuprum::launch::signature::ParamType::Generic(0u8))"#);
    has(&out, r#"Param::new("n", __cuprum::launch::signature::Role::In, __cuprum::launch::signature::ParamType::Generic(1u8))"#);
    has(&out, r#"Param::new("out1", __cuprum::launch::signature::Role::Out, __cuprum::launch::signature::ParamType::Fixed(<bool as __cuprum::Element>::ELEM))"#);
    // A parameter named `options` moves the options parameter aside.
    has(&out, "options_: &__cuprum::elementwise::Options<'_>");
    has(&out, "-> __cuprum::Result<(__cuprum::Array<T>, __cuprum::Array<bool>)>");
    has(&out, "&[<T as __cuprum::Scalar>::DTYPE, <I as __cuprum::Scalar>::DTYPE]");
    has(&out, "out0: &mut __cuprum::Array<T>, out1: &mut __cuprum::Array<bool>");
}

#[test]
fn output_parameters_only_and_no_inputs() {
    // Outputs only through `&mut`: `call` returns nothing and there is no `call_into`.
    let out = expand("", "pub fn sincos<T: Float>(x: T, s: &mut T, c: &mut T) { *s = x.sin(); *c = x.cos(); }");
    has(&out, "-> __cuprum::Result<()>");
    assert!(!out.contains("call_into"), "{out}");
    // No per-element input: no lifetime parameter.
    let out = expand("", "pub fn iota(x: &Raw<f32>) -> f32 { index() as f32 + x[0] }");
    has(&out, "pub fn call(x: &__cuprum::Array<f32>) -> __cuprum::Result<__cuprum::Array<f32>>");
    has(&out, "pub const SIGNATURE: &[__cuprum::launch::signature::Param; 2usize]");
}

#[test]
fn kernel_errors_leave_the_function_and_no_module() {
    let out = expand("", "pub fn bad(x: &[f32]) -> f32 { x[0] }");
    assert!(out.contains("compile_error"), "{out}");
    assert!(!out.contains("pub mod bad"), "{out}");
}

/// A kernel file on disk, as the macros see it (`Span::local_file`).
fn file_context(name: &str, source: &str) -> Context {
    let dir = std::env::temp_dir().join(format!("cuprum-expand-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, source).unwrap();
    Context { file: Some(path), out_dir: None }
}

const STRUCT_FILE: &str = "
#[device]
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Particle { pub x: f32, pub v: f32, pub id: u32 }

#[elementwise]
pub fn speed(p: Particle, scale: f32) -> f32 { p.v * scale }
";

#[test]
fn device_structs_get_checked_unsafe_impls() {
    let cx = file_context("structs_ok.rs", STRUCT_FILE);
    let item: TokenStream = "#[repr(C)] #[derive(Clone, Copy, Debug)] pub struct Particle { pub x: f32, pub v: f32, pub id: u32 }".parse().unwrap();
    let out = squash(&expand_item(AttrKind::Device, TokenStream::new(), item, &cx).to_string());
    assert!(!out.contains("compile_error"), "{out}");
    has(&out, "pub struct Particle { pub x: f32, pub v: f32, pub id: u32 }");
    has(&out, "element::<f32>(); element::<f32>(); element::<u32>();");
    has(&out, "assert!(::core::mem::size_of::<Particle>() == 12usize");
    has(&out, "unsafe impl ::cuprum::__private::DeviceRepr for Particle {}");
    has(&out, r#"::cuprum::__private::StructType { name: "Particle", size: 12usize, align: 4usize }"#);
}

#[test]
fn device_struct_errors_are_reported_at_their_fields() {
    let source = "#[device] #[derive(Clone, Copy)] pub struct Bad { a: u8, b: f64, flag: bool, s: &'static str }";
    let cx = file_context("structs_bad.rs", source);
    let item: TokenStream = "#[derive(Clone, Copy)] pub struct Bad { a: u8, b: f64, flag: bool, s: &'static str }".parse().unwrap();
    let out = expand_item(AttrKind::Device, TokenStream::new(), item, &cx).to_string();
    // Three mistakes, three messages: no repr(C), a bool field, a reference field.
    assert!(out.contains("add `#[repr(C)]`"), "{out}");
    assert!(out.contains("`bool` fields are not allowed"), "{out}");
    assert!(out.contains("references are only allowed"), "{out}");
    assert!(!out.contains("unsafe impl"), "{out}");

    // Padding (under CUDA's layout rules) inside and at the end.
    let source = "#[device] #[repr(C)] pub struct Gappy { a: u8, b: f64, c: u16 }";
    let cx = file_context("structs_gappy.rs", source);
    let item: TokenStream = "#[repr(C)] pub struct Gappy { a: u8, b: f64, c: u16 }".parse().unwrap();
    let out = expand_item(AttrKind::Device, TokenStream::new(), item, &cx).to_string();
    assert!(out.contains("needs 7 bytes of padding before field `b`"), "{out}");
    assert!(out.contains("needs 6 bytes of padding at its end"), "{out}");
    assert!(!out.contains("unsafe impl"), "{out}");
}

#[test]
fn struct_elements_are_array_arguments() {
    let cx = file_context("structs_ew.rs", STRUCT_FILE);
    let item: TokenStream = "pub fn speed(p: Particle, scale: f32) -> f32 { p.v * scale }".parse().unwrap();
    let out = squash(&expand_item(AttrKind::Elementwise, TokenStream::new(), item, &cx).to_string());
    assert!(!out.contains("compile_error"), "{out}");
    has(&out, "p: &'a __cuprum::Array<Particle>");
    has(&out, "__cuprum::elementwise::Arg::input(p)");
    has(&out, r#"Param::new("p", __cuprum::launch::signature::Role::In, __cuprum::launch::signature::ParamType::Fixed(<Particle as __cuprum::Element>::ELEM))"#);
    // The unit is the whole file: the struct's C definition is in it.
    has(&out, "structParticle{");
}

const GRID_FILE: &str = "
use cuprum::prelude::*;

#[device]
fn step(x: &mut [f32]) {
    x[grid_1d() as usize] += 1.0;
    grid_sync();
}

#[rawkernel]
pub fn through_device(x: &mut [f32]) {
    step(x);
}

#[rawkernel]
pub fn direct(x: &mut [f32]) {
    grid_sync();
    x[0] = 1.0;
}

#[rawkernel]
pub fn plain(x: &mut [f32]) {
    sync_threads();
    x[0] = 1.0;
}
";

/// A raw kernel that reaches `grid_sync()`, itself or through a device function, launches
/// cooperatively on both devices and gets `max_cooperative_blocks`; one that does not, neither.
#[test]
fn grid_sync_kernels_launch_cooperatively() {
    let cx = file_context("grid_sync_kernels.rs", GRID_FILE);
    let unit = cuprum_compiler::compile_source(GRID_FILE).unwrap().unit;
    let cooperative: Vec<(&str, bool)> = unit.kernels.iter().map(|k| (k.name.as_str(), k.cooperative)).collect();
    assert_eq!(cooperative, [("through_device", true), ("direct", true), ("plain", false)]);
    for (name, body) in [("through_device", "{ step(x); }"), ("direct", "{ grid_sync(); x[0] = 1.0; }")] {
        let item: TokenStream = format!("pub fn {name}(x: &mut [f32]) {body}").parse().unwrap();
        let out = squash(&expand_item(AttrKind::RawKernel, TokenStream::new(), item, &cx).to_string());
        assert!(!out.contains("compile_error"), "{out}");
        has(&out, "__cuprum::launch::launch_cooperative(__function, config,");
        has(&out, "__grid.run_cooperative(&move ||");
        has(&out, "pub fn max_cooperative_blocks(config: &__cuprum::LaunchConfig<'_>) -> __cuprum::Result<u32>");
        has(&out, "__cuprum::cpu::grid::co_residency(config.block, config.shared_mem_bytes).blocks_u32()");
        has(&out, "__function.co_residency(config.block, config.shared_mem_bytes)?.blocks_u32()");
    }
    let item: TokenStream = "pub fn plain(x: &mut [f32]) { sync_threads(); x[0] = 1.0; }".parse().unwrap();
    let out = squash(&expand_item(AttrKind::RawKernel, TokenStream::new(), item, &cx).to_string());
    has(&out, "__cuprum::launch::launch(__function, config,");
    assert!(!out.contains("cooperative"), "{out}");
}
