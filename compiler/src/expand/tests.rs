//! The expansion read from the checked IR: parameter roles, the host names of types, the runtime
//! path (`crate = path`).

use proc_macro2::TokenStream;

use super::{expand_item, Context};
use crate::attr_kind::AttrKind;
use crate::front::FileScope;
use crate::pipeline::check_fn;
use crate::signature::Role;

fn expand(kind: AttrKind, attr: &str, item: &str) -> String {
    let attr: TokenStream = attr.parse().unwrap();
    let item: TokenStream = item.parse().unwrap();
    squash(&expand_item(kind, attr, item, &Context::default()).to_string())
}

fn squash(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

#[track_caller]
fn has(out: &str, fragment: &str) {
    let f = squash(fragment);
    assert!(out.contains(&f), "missing `{f}` in\n{out}");
}

#[test]
fn check_fn_returns_the_roles_of_the_parameters() {
    let f: syn::ItemFn = syn::parse_str(
        "fn k<T: Float>(x: &[T], y: &mut [T], v: View<f32, 2>, w: ViewMut<T, 3>, n: usize, s: T) {}",
    )
    .unwrap();
    let checked = check_fn(AttrKind::RawKernel, TokenStream::new(), &f, &FileScope::default()).unwrap();
    let roles: Vec<(String, Role)> = checked.sig.params.iter().map(|p| (p.name.to_string(), p.role)).collect();
    assert_eq!(
        roles,
        [
            ("x".into(), Role::Slice { mutable: false }),
            ("y".into(), Role::Slice { mutable: true }),
            ("v".into(), Role::View { ndim: 2, mutable: false }),
            ("w".into(), Role::View { ndim: 3, mutable: true }),
            ("n".into(), Role::Scalar),
            ("s".into(), Role::Scalar),
        ]
    );
    assert_eq!(checked.types.locals.len(), checked.item.locals.len());

    let f: syn::ItemFn = syn::parse_str("fn e(x: &Raw<f32>, a: &mut f64, s: f32) -> (f32, bool) { (x[0] * s, *a > 0.0) }").unwrap();
    let checked = check_fn(AttrKind::Elementwise, TokenStream::new(), &f, &FileScope::default()).unwrap();
    let roles: Vec<Role> = checked.sig.params.iter().map(|p| p.role).collect();
    assert_eq!(roles, [Role::Raw, Role::InOut, Role::Scalar]);
    assert_eq!(checked.sig.outputs.len(), 2);
}

#[test]
fn raw_kernel_types_are_named_as_written() {
    let out = expand(
        AttrKind::RawKernel,
        "",
        "pub fn k<T: Float>(x: &[Complex<f32>], y: &mut [T], v: View<f16, 2>, n: usize, m: isize, c: u64) {}",
    );
    has(&out, "x: &__cuprum::Array<__cuprum::lang::prelude::Complex<f32>>");
    has(&out, "y: &mut __cuprum::Array<T>");
    has(&out, "v: &__cuprum::Array<__cuprum::lang::prelude::f16>");
    has(&out, "__cuprum::rawkernel::view_arg::<__cuprum::lang::prelude::f16, { 2 }>(\"k\", \"v\", v, __device)?");
    // `usize` and `isize` are `u64` / `i64` on the GPU, but stay what they are on the host.
    has(&out, "n: usize, m: isize, c: u64");
}

#[test]
fn reduction_raw_parameters_by_reference_are_raw_too() {
    let out = expand(
        AttrKind::Reduction,
        "identity = 0.0, reduce = |a, b| a + b",
        "pub fn wsum(x: f32, w: &Raw<f32>) -> f32 { x * w[index()] }",
    );
    assert!(!out.contains("compile_error"), "{out}");
    has(&out, "w: &'__a __cuprum::Array<f32>");
    // `x` takes an array or a value (by-value scalars are uploaded by the call).
    has(&out, "x: impl ::core::convert::Into<__cuprum::elementwise::Input<'__a, f32>>");
    has(&out, "::core::convert::Into::<__cuprum::elementwise::Input<'__a, f32>>::into(x).arg(), __cuprum::launch::operand::Arg::raw(w)");
}

#[test]
fn crate_path_replaces_the_facade() {
    for (kind, attr, item) in [
        (AttrKind::RawKernel, "crate = ::cuprum_runtime", "fn k(x: &mut [f32]) { x[0] = 1.0; }"),
        (AttrKind::Elementwise, "instances = [f32], crate = crate", "fn e<T: Float>(x: T) -> T { x }"),
        (AttrKind::Reduction, "crate = \"::cuprum_runtime\", identity = 0.0, reduce = |a, b| a + b", "fn r(x: f32) -> f32 { x }"),
    ] {
        let out = expand(kind, attr, item);
        assert!(!out.contains("compile_error"), "{out}");
        assert!(!out.contains("::cuprum::"), "{out}");
        let expected = if attr.contains("crate = crate") { "use crate::__private as __cuprum;" } else { "use ::cuprum_runtime::__private as __cuprum;" };
        has(&out, expected);
    }
    // Without it, the facade.
    let out = expand(AttrKind::RawKernel, "", "fn k(x: &mut [f32]) { x[0] = 1.0; }");
    has(&out, "use ::cuprum::__private as __cuprum;");
    // A `#[device]` struct takes it too (and nothing else).
    let item: TokenStream = "#[repr(C)] #[derive(Clone, Copy, Debug)] pub struct P { pub x: f32 }".parse().unwrap();
    let out = squash(&expand_item(AttrKind::Device, "crate = crate".parse().unwrap(), item.clone(), &Context::default()).to_string());
    assert!(!out.contains("compile_error"), "{out}");
    has(&out, "unsafe impl crate::__private::DeviceRepr for P {}");
    let out = expand_item(AttrKind::Device, "inline".parse().unwrap(), item, &Context::default()).to_string();
    assert!(out.contains("takes no arguments"), "{out}");
    // A bad value is an error at it.
    let out = expand(AttrKind::RawKernel, "crate = 1", "fn k(x: &mut [f32]) { x[0] = 1.0; }");
    has(&out, "::core::compile_error!{\"`crate` takes a path: `crate = ::cuprum`\"}");
}

/// Kernel files are named relative to their package, never by a folder of the build machine
/// (issue 34, item 10): the name the unit table and the audit record carry.
#[test]
fn kernel_file_names_are_relative_to_their_package() {
    use super::unit::display_path;
    use std::path::Path;
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    // The runtime's `#[path = "../../kernels/elementwise.rs"]` from `src/array/`, by an absolute path.
    let through = workspace.join("runtime/src/array/../../kernels/elementwise.rs");
    assert!(through.is_absolute());
    assert_eq!(display_path(&through), "kernels/elementwise.rs");
    assert_eq!(display_path(&workspace.join("compiler/./tests/in/casts.rs")), "tests/in/casts.rs");
    // Relative to the current folder (cargo runs rustc, and so the macros, in the workspace root).
    assert_eq!(display_path(Path::new("./tests/in/../in/casts.rs")), "tests/in/casts.rs");
    // No package above it: the file's name alone.
    assert_eq!(display_path(Path::new("/nonexistent/dir/a.rs")), "a.rs");
}

#[test]
fn unchecked_raw_kernels_launch_through_an_unsafe_fn() {
    let out = squash(&expand(AttrKind::RawKernel, "unchecked", "pub fn k(x: &mut [f32]) { x[0] = 1.0; }"));
    has(&out, "pub unsafe fn launch");
    has(&out, "# Safety");
    let out = squash(&expand(AttrKind::RawKernel, "", "pub fn k(x: &mut [f32]) { x[0] = 1.0; }"));
    assert!(!out.contains("unsafe fn launch"), "{out}");
}
