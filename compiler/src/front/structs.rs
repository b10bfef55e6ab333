//! `#[device]` structs: Rust `#[repr(C)]` structs -> [`StructDef`]s, and the checks that make
//! one value mean the same bytes on the host and the device.
//!
//! Rules (each broken one is reported at its span, all of them in one run):
//! - `#[repr(C)]`, named fields, no generic parameters, no `packed`/`align`;
//! - field types: scalars other than `bool` (use `u8`: every byte the device writes must be a
//!   valid Rust value), fixed-size arrays, other `#[device]` structs of the file;
//! - no padding under CUDA C's layout rules (`crate::layout`): reorder the fields or add explicit
//!   padding fields; no struct that contains itself.

use std::collections::HashSet;

use syn::spanned::Spanned;

use super::ty::{self, Position};
use super::FileScope;
use crate::diag::Diagnostics;
use crate::ir::{FieldDef, Name, StructDef, Ty};
use crate::layout;

/// Whether an item carries `#[device]`.
pub fn is_device(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| super::AttrKind::from_path(a.path()) == Some(super::AttrKind::Device))
}

/// Lowers one `#[device]` struct (its field types may name other structs of `scope`).
pub fn lower(s: &syn::ItemStruct, scope: &FileScope, diags: &mut Diagnostics) -> Option<StructDef> {
    let name = Name { text: s.ident.to_string(), span: s.ident.span() };
    check_repr(s, diags);
    if !s.generics.params.is_empty() {
        diags.error(s.generics.span(), "`#[device]` structs cannot be generic yet; write one struct per element type");
    }
    let fields = match &s.fields {
        syn::Fields::Named(f) => &f.named,
        other => {
            diags.error(other.span(), format!("give `{}` named fields (`struct {} {{ x: f32, .. }}`): kernels read fields by name", name.text, name.text));
            return None;
        }
    };
    let mut out = Vec::new();
    let mut ok = true;
    for f in fields {
        let ident = f.ident.as_ref().expect("named fields have names");
        let Some(t) = ty::lower(&f.ty, &[], scope, Position::Local, diags) else {
            ok = false;
            continue;
        };
        if !field_type_ok(&t) {
            diags.error(
                f.ty.span(),
                "a `#[device]` struct field is a number (`f32`, `u8`, `Complex<f64>`, ...), a fixed-size array `[T; N]` or another `#[device]` struct",
            );
            ok = false;
            continue;
        }
        if has_bool(&t) {
            diags.error(
                f.ty.span(),
                "`bool` fields are not allowed in `#[device]` structs: the device may write any byte, and only 0 and 1 are valid Rust `bool`s; use `u8`",
            );
            ok = false;
            continue;
        }
        out.push(FieldDef { name: Name { text: ident.to_string(), span: ident.span() }, ty: t });
    }
    if out.is_empty() && ok {
        diags.error(s.ident.span(), format!("`{}` has no fields; a `#[device]` struct needs at least one", name.text));
        return None;
    }
    ok.then_some(StructDef { name, fields: out, span: s.ident.span() })
}

fn check_repr(s: &syn::ItemStruct, diags: &mut Diagnostics) {
    let mut c = false;
    for a in s.attrs.iter().filter(|a| a.path().is_ident("repr")) {
        let _ = a.parse_nested_meta(|m| {
            if m.path.is_ident("C") {
                c = true;
            } else {
                diags.error(m.path.span(), "only `#[repr(C)]` is supported on `#[device]` structs (no `packed`, `align` or `transparent`)");
            }
            Ok(())
        });
    }
    if !c {
        diags.error(s.ident.span(), format!("add `#[repr(C)]` to `{}`: a struct shared with the GPU needs C's field order", s.ident));
    }
}

fn field_type_ok(t: &Ty) -> bool {
    match t {
        Ty::Scalar(_) | Ty::Struct(_) => true,
        Ty::Array(e, _) => field_type_ok(e),
        _ => false,
    }
}

fn has_bool(t: &Ty) -> bool {
    match t {
        Ty::Scalar(d) => d.is_bool(),
        Ty::Array(e, _) => has_bool(e),
        _ => false,
    }
}

/// The layout rules over all structs of a module: no recursion, no padding.
pub fn check_layouts(structs: &[StructDef], diags: &mut Diagnostics) {
    let mut seen = HashSet::new();
    for s in structs {
        if !seen.insert(s.name.text.as_str()) {
            diags.error(s.name.span, format!("the struct `{}` is declared twice in this file", s.name.text));
            continue;
        }
        check_layout(s, structs, diags);
    }
}

/// The layout rules for one struct (`structs` holds the ones it may contain).
pub fn check_layout(s: &StructDef, structs: &[StructDef], diags: &mut Diagnostics) {
    let Some(l) = layout::of_struct(s, structs) else {
        diags.error(s.name.span, format!("`{}` contains itself (directly or through other structs): its size would be infinite", s.name.text));
        return;
    };
    for (k, bytes) in l.gaps {
        match s.fields.get(k) {
            Some(f) => diags.error(
                f.name.span,
                format!(
                    "`{}` needs {bytes} bytes of padding before field `{}` (CUDA aligns it to {} bytes); reorder the fields (largest first), or add a field `_pad: [u8; {bytes}]` before it",
                    s.name.text,
                    f.name.text,
                    layout::of(&f.ty, structs).map(|l| l.align).unwrap_or(0)
                ),
            ),
            None => diags.error(
                s.name.span,
                format!(
                    "`{}` needs {bytes} bytes of padding at its end to a multiple of its {}-byte alignment; add a field `_pad: [u8; {bytes}]` last",
                    s.name.text, l.layout.align
                ),
            ),
        }
    }
}
