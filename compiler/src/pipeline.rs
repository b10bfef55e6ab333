//! The compiler's entry points, running the phases in order. Every phase runs even when an earlier
//! one reported errors (a rejected construct is an `ExprKind::Error` / `Ty::Error` that later
//! phases accept silently), so all mistakes of a file are reported in one run, in source order;
//! only the back end needs a clean module.

use std::path::Path;

use proc_macro2::TokenStream;
use quote::ToTokens;

use crate::back::cuda::{self, Unit};
use crate::diag::{self, Diagnostics};
use crate::front::{self, AttrKind};
use crate::{typeck, valid};

/// A kernel file translated to CUDA C.
#[derive(Debug, Clone)]
pub struct CompiledFile {
    pub unit: Unit,
    /// How many annotated functions the file has.
    pub items: usize,
}

/// Translates the text of a kernel file. Errors carry real line/column spans.
pub fn compile_source(source: &str) -> Result<CompiledFile, syn::Error> {
    let file = syn::parse_file(source)?;
    let mut diags = Diagnostics::new();
    let module = front::lower_file(&file, &mut diags);
    let types = typeck::check(&module, &mut diags);
    valid::check(&module, valid::Scope::File, &mut diags);
    diags.finish()?;
    Ok(CompiledFile { unit: cuda::write_module(&module, &types), items: module.items.len() })
}

/// Translates a kernel file, rendering errors like rustc (`FILE:LINE:COL`, the line, a caret).
pub fn compile_file(path: &Path) -> Result<CompiledFile, String> {
    let source = std::fs::read_to_string(path).map_err(|e| format!("error: cannot read {}: {e}", path.display()))?;
    compile_source(&source).map_err(|e| diag::render(&path.display().to_string(), &source, &e))
}

/// The macro path: checks one annotated function (its neighbours are unknown, so calls to other
/// functions are assumed to be `#[device]` functions checked by the build) and returns the
/// user's function unchanged, plus a `compile_error!` per error at its span.
pub fn check_item(kind: AttrKind, attr: TokenStream, item: TokenStream) -> TokenStream {
    let f: syn::ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(_) => {
            let what = if kind == AttrKind::Device { "functions and `#[repr(C)]` structs" } else { "functions only" };
            let e = syn::Error::new_spanned(&item, format!("`#[{}]` applies to {what}", attr_name(kind)));
            let mut out = e.to_compile_error();
            out.extend(item);
            return out;
        }
    };
    let mut out = f.to_token_stream();
    if let Err(e) = check_fn(kind, attr, &f, &front::FileScope::default()) {
        out.extend(e.to_compile_error());
    }
    out
}

/// `scope` holds the `#[device]` structs of the item's file (their own errors are reported by
/// their own attributes, not here).
pub(crate) fn check_fn(kind: AttrKind, attr: TokenStream, f: &syn::ItemFn, scope: &front::FileScope) -> Result<(), syn::Error> {
    let mut diags = Diagnostics::new();
    let structs = scope.lower_structs(&mut Diagnostics::new());
    let item = front::lower_item(kind, attr, proc_macro2::Span::call_site(), f, scope, &mut diags);
    let module = crate::ir::Module { items: item.into_iter().collect(), structs };
    // Device functions called from this item are not visible here: type-check the item with
    // calls to unknown functions typed `Ty::Error` (the file-level build checks them).
    typeck::check(&module, &mut diags);
    valid::check(&module, valid::Scope::Item, &mut diags);
    diags.finish()
}

pub(crate) fn attr_name(kind: AttrKind) -> &'static str {
    match kind {
        AttrKind::Elementwise => "elementwise",
        AttrKind::Reduction => "reduction",
        AttrKind::RawKernel => "rawkernel",
        AttrKind::Device => "device",
    }
}
