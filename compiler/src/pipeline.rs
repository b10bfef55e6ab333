//! The compiler's entry points, running the phases in order. Every phase runs even when an earlier
//! one reported errors (a rejected construct is an `ExprKind::Error` / `Ty::Error` that later
//! phases accept silently), so all mistakes of a file are reported in one run, in source order;
//! only the back end needs a clean module.

use std::path::Path;

use proc_macro2::TokenStream;
use quote::ToTokens;

use crate::back::cuda::{self, Unit};
use crate::diag::{self, Diagnostics};
use crate::attr_kind::AttrKind;
use crate::front;
use crate::ir::{self, Ty};
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

/// A kernel or device function as [`check_fn`] checked it: its typed IR, and the host signature
/// read from that IR. The expanders take parameter roles and types from here only; of the user's
/// tokens they keep the function's name, visibility and generics (passed through as written) and
/// a reduction's closure bodies (its host parts).
#[derive(Debug)]
pub(crate) struct Checked {
    pub item: ir::Item,
    /// The type checker's table for `item`.
    pub types: typeck::Types,
    /// The attribute's arguments as parsed (a reduction's host parts are its closures).
    pub attr: front::KernelAttr,
    /// Empty for a `#[device]` function.
    pub sig: Signature,
}

/// What the host API of a kernel is made of.
#[derive(Debug, Default)]
pub(crate) struct Signature {
    pub params: Vec<SigParam>,
    /// An elementwise kernel's returned outputs: the tuple's elements, the one type, or none.
    pub outputs: Vec<Typed>,
}

/// A checked type, with how the user wrote it (spans, `usize` spellings) when they did.
#[derive(Debug, Clone)]
pub(crate) struct Typed {
    pub ty: Ty,
    pub written: front::Written,
}

#[derive(Debug)]
pub(crate) struct SigParam {
    pub name: syn::Ident,
    pub role: Role,
    /// The element type the API names: of the slice, view, `Raw` or `&mut`, else the type itself.
    pub elem: Typed,
}

/// How a kernel parameter is passed (the kind-specific rules were checked by `valid`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// `&[T]` / `&mut [T]` (raw kernels).
    Slice { mutable: bool },
    /// `View<T, N>` / `ViewMut<T, N>` (raw kernels).
    View { ndim: u32, mutable: bool },
    /// A scalar type or a generic parameter: by value (raw kernels), a per-element input
    /// (elementwise), a reduced array (reductions).
    Scalar,
    /// A `#[device]` struct: by value (raw kernels), a per-element input from an array
    /// (elementwise).
    Struct,
    /// `Raw<T>` / `&Raw<T>`: an array indexed by the kernel (elementwise, reductions).
    Raw,
    /// `&mut T`: an elementwise parameter read and written.
    InOut,
    /// `&TensorMap<T>` (raw kernels): a TMA descriptor of a 2-D array.
    TensorMap,
}

impl Checked {
    /// Whether the item's body reads the loop index (`index()` or `reduce_index()`): a reduction
    /// whose map does must walk its reduced axes in C order (`ReductionSignature::positional`).
    pub fn uses_index(&self) -> bool {
        self.calls_intrinsic(|i| matches!(i, crate::lang::Intrinsic::Index | crate::lang::Intrinsic::ReduceIndex))
    }

    /// Whether the item's body reads its elementwise loop position (`index()` or `loop_size()`):
    /// the CPU device's loop then sets them for each call of the body.
    pub fn uses_loop_position(&self) -> bool {
        self.calls_intrinsic(|i| matches!(i, crate::lang::Intrinsic::Index | crate::lang::Intrinsic::LoopSize))
    }

    /// Whether the item's body calls an intrinsic `which` accepts.
    fn calls_intrinsic(&self, which: impl Fn(crate::lang::Intrinsic) -> bool) -> bool {
        let mut found = false;
        ir::each_expr_of_item(&self.item, &mut |e| {
            if let ir::ExprKind::Call { callee: ir::Callee::Intrinsic { intrinsic, .. }, .. } = &e.kind {
                found |= which(*intrinsic);
            }
        });
        found
    }

    /// A reduction's accumulator and output types, as the type checker found them.
    pub fn reduction_types(&self) -> Option<ReductionTypes> {
        let ir::ItemKind::Reduction(parts) = &self.item.kind else {
            return None;
        };
        let acc = self
            .types
            .acc
            .clone()
            .unwrap_or_else(|| self.item.ret.clone());
        let out = match &parts.post {
            Some(p) => self.types.of(&p.body).clone(),
            None => acc.clone(),
        };
        Some(ReductionTypes { acc, out })
    }
}

#[derive(Debug)]
pub(crate) struct ReductionTypes {
    /// The accumulator: `acc = T`, else the map's return type.
    pub acc: Ty,
    /// The post-map's result type, the accumulator's without `post`.
    pub out: Ty,
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

/// The host signature of a clean kernel, read from its typed IR.
fn signature(
    item: &ir::Item,
    params_written: Vec<front::Written>,
    ret_written: front::Written,
) -> Result<Signature, syn::Error> {
    let mut diags = Diagnostics::new();
    let mut params = Vec::new();
    for (p, written) in item.params.iter().zip(params_written) {
        let local = &item.locals[p.local.0 as usize].name;
        let name = match local.text.strip_prefix("r#") {
            Some(raw) => syn::Ident::new_raw(raw, local.span),
            None => syn::Ident::new(&local.text, local.span),
        };
        let (role, elem) = match &p.ty {
            Ty::Slice { elem, mutable } => (Role::Slice { mutable: *mutable }, (**elem).clone()),
            Ty::View {
                elem,
                ndim,
                mutable,
            } => (
                Role::View {
                    ndim: *ndim,
                    mutable: *mutable,
                },
                (**elem).clone(),
            ),
            Ty::Raw(elem) => (Role::Raw, (**elem).clone()),
            Ty::Ref { inner, mutable: false } if matches!(**inner, Ty::TensorMap(_)) => match &**inner {
                Ty::TensorMap(elem) => (Role::TensorMap, (**elem).clone()),
                _ => unreachable!(),
            },
            Ty::Ref {
                inner,
                mutable: true,
            } => (Role::InOut, (**inner).clone()),
            t @ (Ty::Scalar(_) | Ty::Param(_)) => (Role::Scalar, t.clone()),
            t @ Ty::Struct(_) => (Role::Struct, t.clone()),
            // Under a macro a length or dimension count named by a `const` of the file cannot be
            // read (the file's consts are not in scope): the type is unknown, silently.
            Ty::Error => {
                diags.error(p.span, "this parameter's type names a `const` of the file, which the macro cannot read; write the number as an integer literal (`View<T, 2>`)");
                continue;
            }
            _ => {
                diags.error(
                    p.span,
                    "cuprum: no host type for this parameter; report this as a cuprum bug",
                );
                continue;
            }
        };
        params.push(SigParam {
            name,
            role,
            elem: Typed { ty: elem, written },
        });
    }
    diags.finish()?;
    let outputs = match (&item.kind, &item.ret) {
        (ir::ItemKind::Elementwise, Ty::Unit) => Vec::new(),
        (ir::ItemKind::Elementwise, Ty::Tuple(ts)) => ts
            .iter()
            .cloned()
            .zip(ret_written.split(ts))
            .map(|(ty, written)| Typed { ty, written })
            .collect(),
        (ir::ItemKind::Elementwise, t) => vec![Typed {
            ty: t.clone(),
            written: ret_written,
        }],
        _ => Vec::new(),
    };
    Ok(Signature { params, outputs })
}

pub(crate) fn attr_name(kind: AttrKind) -> &'static str {
    match kind {
        AttrKind::Elementwise => "elementwise",
        AttrKind::Reduction => "reduction",
        AttrKind::RawKernel => "rawkernel",
        AttrKind::Device => "device",
    }
}
