//! What `#[reduction]` expands to (`expand::expand_item`): the user's function kept, a module of
//! the same name with the kernel statics, the host parts and the typed `call`, with the output
//! and accumulator types the type checker found.

use cuprum_compiler::expand::{Context, expand_item};
use cuprum_compiler::AttrKind;
use proc_macro2::TokenStream;

fn expand(attr: &str, item: &str) -> String {
    let attr: TokenStream = attr.parse().unwrap();
    let item: TokenStream = item.parse().unwrap();
    // Without whitespace, so that fragments can be written as Rust is usually written.
    expand_item(AttrKind::Reduction, attr, item, &Context::default())
        .to_string()
        .split_whitespace()
        .collect()
}

fn has(out: &str, fragment: &str) {
    let fragment: String = fragment.split_whitespace().collect();
    assert!(out.contains(&fragment), "missing `{fragment}` in:\n{out}");
}

#[test]
fn l2norm_keeps_the_function_and_adds_call_and_host_parts() {
    let out = expand(
        "identity = T::zero(), reduce = |a, b| a + b, post = |a| a.sqrt()",
        "pub fn l2norm<T: Float>(x: T) -> T { x * x }",
    );
    has(&out, "pub fn l2norm<T: Float>(x: T) -> T { x * x }");
    has(&out, "pub mod l2norm");
    has(
        &out,
        "__cuprum::registry::Kernel::new(__cuprum::registry::UnitRef::Embedded(&__CUPRUM_UNIT), \"l2norm\", __cuprum::launch::signature::Signature::Reduction(&__CUPRUM_SIGNATURE))",
    );
    has(
        &out,
        "pub fn call<'__a, T: Float + __cuprum::Scalar>(x: impl ::core::convert::Into<__cuprum::elementwise::Input<'__a, T>>) -> __cuprum::ReductionCall<'__a, T>",
    );
    has(&out, "&[<T as __cuprum::Scalar>::DTYPE]");
    has(
        &out,
        "::std::vec![::core::convert::Into::<__cuprum::elementwise::Input<'__a, T>>::into(x).arg()]",
    );
    has(&out, "has_identity: true");
    // `x * x` does not read the loop index: its axes may be reordered.
    has(&out, "positional: false");
    has(
        &out,
        "acc: __cuprum::launch::signature::ParamType::Generic(0u8)",
    );
    has(&out, "pub fn identity_host<T: Float>() -> T { T::zero() }");
    has(
        &out,
        "pub fn reduce_host<T: Float>(a: T, b: T) -> T { a + b }",
    );
    has(&out, "pub fn post_host<T: Float>(a: T) -> T { a.sqrt() }");
    has(&out, "pub const __HAS_IDENTITY: bool = true;");
    assert!(!out.contains("compile_error"), "{out}");
}

#[test]
fn output_type_is_the_posts_and_accumulator_the_acc_attribute() {
    let out = expand(
        "identity = 0.0, reduce = |a, b| a + b, post = |a| T::from_f64(a.sqrt()), acc = f64",
        "pub fn l2<T: Float>(x: T) -> f64 { x.to_f64() * x.to_f64() }",
    );
    has(&out, "-> __cuprum::ReductionCall<'__a, T>");
    has(
        &out,
        "acc: __cuprum::launch::signature::ParamType::Fixed(<f64 as __cuprum::Element>::ELEM)",
    );
    // Host parts are generic only over the parameters they mention.
    has(&out, "pub fn identity_host() -> f64 { 0.0 }");
    has(&out, "pub fn reduce_host(a: f64, b: f64) -> f64 { a + b }");
    has(
        &out,
        "pub fn post_host<T: Float>(a: f64) -> T { T::from_f64(a.sqrt()) }",
    );

    // A post to a concrete type; no post: the output is the accumulator.
    let out = expand(
        "identity = 0.0, reduce = |a, b| a + b, post = |a| a as f32",
        "fn dot(x: f64, y: f64) -> f64 { x * y }",
    );
    has(&out, "-> __cuprum::ReductionCall<'__a, f32>");
    has(
        &out,
        "::core::convert::Into::<__cuprum::elementwise::Input<'__a, f64>>::into(x).arg(), ::core::convert::Into::<__cuprum::elementwise::Input<'__a, f64>>::into(y).arg()",
    );
    let out = expand(
        "identity = 0, reduce = |a, b| a + b, acc = i64",
        "fn s(x: i8) -> i8 { x }",
    );
    has(&out, "-> __cuprum::ReductionCall<'__a, i64>");
    has(&out, "pub fn post_host(a: i64) -> i64 { a }");
    has(&out, "&[]");
}

#[test]
fn raw_parameters_become_raw_arguments_and_no_identity_is_recorded() {
    let out = expand(
        "reduce = |a: f32, b: f32| a.max(b), instances = [f32]",
        "pub fn wmax<T: Float>(x: T, w: Raw<f32>) -> f32 { x.to_f64() as f32 * w[index()] }",
    );
    has(&out, "w: &'__a __cuprum::Array<f32>");
    has(&out, "__cuprum::launch::operand::Arg::raw(w)");
    has(&out, "has_identity: false");
    // `w[index()]` reads the loop index: the reduced axes keep their C order.
    has(&out, "positional: true");
    has(&out, "pub const __HAS_IDENTITY: bool = false;");
    has(
        &out,
        "pub fn reduce_host(a: f32, b: f32) -> f32 { a.max(b) }",
    );
    assert!(!out.contains("pubfnidentity_host"), "{out}");
}

#[test]
fn non_primitive_output_types_are_named_through_the_private_module() {
    let out = expand(
        "identity = 0.0, reduce = |a, b| a + b, post = |a| f16::from_f64(a)",
        "fn h(x: f64) -> f64 { x }",
    );
    has(
        &out,
        "-> __cuprum::ReductionCall<'__a, __cuprum::lang::prelude::f16>",
    );
}

#[test]
fn a_kernel_with_errors_gets_its_errors_and_no_module() {
    let out = expand("identity = 0.0", "fn s(x: f32) -> f32 { x }");
    assert!(out.contains("compile_error"), "{out}");
    assert!(!out.contains("mods"), "{out}");
    // The signature stays for callers; the body is not checked again by rustc (the mistakes are
    // reported once, by cuprum).
    has(&out, "fn s(x: f32) -> f32 { ::core::unreachable!() }");
    has(&out, "#[allow(unused_variables, unused_mut, dead_code)]");
}
