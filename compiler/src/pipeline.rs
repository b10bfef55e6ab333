//! The compiler's entry points, running the phases in order. Every phase runs even when an earlier
//! one reported errors (a rejected construct is an `ExprKind::Error` / `Ty::Error` that later
//! phases accept silently), so all mistakes of a file are reported in one run, in source order;
//! only the back end needs a clean module.

use std::path::Path;

use proc_macro2::TokenStream;
use quote::ToTokens;

use crate::attr_kind::AttrKind;
use crate::back::cuda::{self, Unit};
use crate::checked::Checked;
use crate::diag::{self, Diagnostics};
use crate::front;
use crate::ir;
use crate::signature::{signature, Signature};
use crate::{typeck, valid};

/// A kernel file translated to CUDA C.
#[derive(Debug, Clone)]
pub struct CompiledFile {
    /// The CUDA C translation unit and its kernels.
    pub unit: Unit,
    /// How many annotated functions the file has.
    pub items: usize,
}

/// Translates the text of a kernel file. Errors carry real line/column spans.
pub fn compile_source(source: &str) -> Result<CompiledFile, syn::Error> {
    compile(source, None)
}

/// Translates the text of the kernel file named `name` in `#line` directives ([`source_name`]):
/// the code of each statement is attributed to its line (docs/debugging.md). Lines are known only
/// outside a procedural macro (the spans of text parsed inside one carry none, and the unit then
/// has no directives).
///
/// [`source_name`]: crate::back::cuda::source_name
pub fn compile_source_with_lines(source: &str, name: &str) -> Result<CompiledFile, syn::Error> {
    compile(source, Some(name))
}

fn compile(source: &str, name: Option<&str>) -> Result<CompiledFile, syn::Error> {
    let file = syn::parse_file(source)?;
    // Any span of the parsed text tells the file's own spans from those of generated nodes.
    let lines = name.zip(file.items.first()).map(|(n, item)| cuda::LineSource::new(n, syn::spanned::Spanned::span(item)));
    let mut diags = Diagnostics::new();
    let module = front::lower_file(&file, &mut diags);
    let types = typeck::check(&module, &mut diags);
    valid::check(&module, valid::Scope::File, &mut diags);
    diags.finish()?;
    Ok(CompiledFile {
        unit: cuda::write_module(&module, &types, lines.as_ref()),
        items: module.items.len(),
    })
}

/// Translates a kernel file, rendering errors like rustc (`FILE:LINE:COL`, the line, a caret).
/// With `line_directives`, the unit attributes the code of each statement to its line of the file
/// ([`compile_source_with_lines`], the file named by [`source_name`]): what the build crate
/// compiles with `CUPRUM_LINEINFO=1` and `cuprum emit --lines` prints.
///
/// [`source_name`]: crate::back::cuda::source_name
pub fn compile_file(path: &Path, line_directives: bool) -> Result<CompiledFile, String> {
    let source = std::fs::read_to_string(path)
        .map_err(|e| format!("error: cannot read {}: {e}", path.display()))?;
    let name = line_directives.then(|| cuda::source_name(path));
    compile(&source, name.as_deref()).map_err(|e| diag::render(&path.display().to_string(), &source, &e))
}

/// The mistakes of the whole file `text` (named `file` in messages) that lie in its top-level
/// function `name`, each with its position: what a macro adds to its item's own check, which
/// cannot see the file's other items (a kernel called from a kernel, a device function's misuse).
/// The build crate skips a file with mistakes and leaves them to the macros, so that each is
/// reported by rustc. Empty when the file cannot be parsed or has no mistake in that function.
///
/// Under a macro the compiler's spans carry no lines: the file is checked with proc-macro2's own
/// spans (`fallback::force`), and only strings leave this function.
pub(crate) fn file_mistakes_in(file: &str, text: &str, name: &str) -> Vec<String> {
    proc_macro2::fallback::force();
    let found = (|| {
        let parsed = syn::parse_file(text).ok()?;
        let item = parsed.items.iter().find_map(|i| match i {
            syn::Item::Fn(f) if f.sig.ident == name => Some(syn::spanned::Spanned::span(f)),
            _ => None,
        })?;
        let lines = item.start().line..=item.end().line;
        let errors = compile(text, None).err()?;
        Some(
            errors
                .into_iter()
                .filter(|e| lines.contains(&e.span().start().line))
                .map(|e| {
                    let at = e.span().start();
                    format!("{e} ({file}:{}:{}, found by checking the whole file)", at.line, at.column + 1)
                })
                .collect::<Vec<_>>(),
        )
    })();
    proc_macro2::fallback::unforce();
    found.unwrap_or_default()
}

/// The macro path: checks one annotated function (its neighbours are unknown, so calls to other
/// functions are assumed to be `#[device]` functions checked by the build) and returns the
/// user's function unchanged, plus a `compile_error!` per error at its span.
pub fn check_item(kind: AttrKind, attr: TokenStream, item: TokenStream) -> TokenStream {
    let f: syn::ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(_) => {
            let what = if kind == AttrKind::Device {
                "functions and `#[repr(C)]` structs"
            } else {
                "functions only"
            };
            let e = syn::Error::new_spanned(
                &item,
                format!("`#[{}]` applies to {what}", attr_name(kind)),
            );
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
pub(crate) fn check_fn(
    kind: AttrKind,
    attr: TokenStream,
    f: &syn::ItemFn,
    scope: &front::FileScope,
) -> Result<Checked, syn::Error> {
    let mut diags = Diagnostics::new();
    let structs = scope.lower_structs(&mut Diagnostics::new());
    let lowered = front::lower_kernel(
        kind,
        attr,
        proc_macro2::Span::call_site(),
        f,
        scope,
        &mut diags,
    );
    let (item, attr, params_written, ret_written) = match lowered {
        Some(l) => (Some(l.item), l.attr, l.params_written, l.ret_written),
        None => (
            None,
            front::KernelAttr::default(),
            Vec::new(),
            front::Written::default(),
        ),
    };
    let mut module = ir::Module {
        items: item.into_iter().collect(),
        structs,
    };
    // Device functions called from this item are not visible here: type-check the item with
    // calls to unknown functions typed `Ty::Error` (the file-level build checks them).
    let types = typeck::check(&module, &mut diags).pop();
    valid::check(&module, valid::Scope::Item, &mut diags);
    diags.finish()?;
    let (Some(item), Some(types)) = (module.items.pop(), types) else {
        return Err(syn::Error::new(
            f.sig.ident.span(),
            "cuprum: this item could not be lowered; report this as a cuprum bug",
        ));
    };
    let sig = if item.kind.is_kernel() {
        signature(&item, params_written, ret_written)?
    } else {
        Signature::default()
    };
    Ok(Checked {
        item,
        types,
        attr,
        sig,
    })
}

pub(crate) fn attr_name(kind: AttrKind) -> &'static str {
    match kind {
        AttrKind::Elementwise => "elementwise",
        AttrKind::Reduction => "reduction",
        AttrKind::RawKernel => "rawkernel",
        AttrKind::Device => "device",
    }
}
