//! Front end: Rust syntax (syn) -> IR.
//!
//! One entry point per input shape: [`lower_file`] for a whole source file (the build crate and
//! `cuprum emit`), [`lower_item`] for one function under an attribute (the macros). Names are
//! resolved here (locals, loop labels, intrinsics); types are left to `typeck`. Every unsupported
//! construct is reported at its span with what to write instead, and lowering continues so that
//! all mistakes of a file are reported in one run.

mod attr;
mod expr;
mod ty;

use proc_macro2::{Span, TokenStream};
use syn::spanned::Spanned;

use crate::diag::Diagnostics;
use crate::ir::{self, Bound, Generic, Item, ItemKind, Local, LocalId, Module, Name, Param, Ty};

pub use attr::KernelAttr;

/// Which attribute an item was marked with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttrKind {
    Elementwise,
    Reduction,
    RawKernel,
    Device,
}

impl AttrKind {
    pub fn from_path(path: &syn::Path) -> Option<AttrKind> {
        let last = path.segments.last()?.ident.to_string();
        Some(match last.as_str() {
            "elementwise" => AttrKind::Elementwise,
            "reduction" => AttrKind::Reduction,
            "rawkernel" => AttrKind::RawKernel,
            "device" => AttrKind::Device,
            _ => return None,
        })
    }
}

/// Lowers every annotated function of a file. Unannotated items are ignored (a kernel file is an
/// ordinary Rust module); annotated ones that are not functions are errors.
pub fn lower_file(file: &syn::File, diags: &mut Diagnostics) -> Module {
    let mut module = Module::default();
    for item in &file.items {
        let (attrs, span) = match item {
            syn::Item::Fn(f) => (&f.attrs, f.sig.ident.span()),
            syn::Item::Struct(s) => (&s.attrs, s.ident.span()),
            syn::Item::Const(c) => (&c.attrs, c.ident.span()),
            syn::Item::Static(s) => (&s.attrs, s.ident.span()),
            syn::Item::Mod(m) => (&m.attrs, m.ident.span()),
            _ => continue,
        };
        for a in attrs {
            let Some(kind) = AttrKind::from_path(a.path()) else { continue };
            let syn::Item::Fn(f) = item else {
                diags.error(span, format!("`#[{}]` applies to functions only", a.path().segments.last().unwrap().ident));
                continue;
            };
            let args = match &a.meta {
                syn::Meta::Path(_) => TokenStream::new(),
                syn::Meta::List(l) => l.tokens.clone(),
                syn::Meta::NameValue(nv) => {
                    diags.error(nv.span(), "write the attribute's arguments in parentheses: `#[reduction(identity = 0, ...)]`");
                    continue;
                }
            };
            if let Some(item) = lower_item(kind, args, f, diags) {
                module.items.push(item);
            }
        }
    }
    module
}

/// Lowers one annotated function. Returns `None` only when nothing usable could be lowered (the
/// errors are in `diags`).
pub fn lower_item(kind: AttrKind, args: TokenStream, f: &syn::ItemFn, diags: &mut Diagnostics) -> Option<Item> {
    let attr = attr::parse(kind, args, diags);
    let mut cx = expr::Lowerer::new(diags);
    let sig = &f.sig;
    if let Some(c) = &sig.constness {
        cx.diags.error(c.span, "kernels cannot be `const fn`; remove `const`");
    }
    if let Some(a) = &sig.asyncness {
        cx.diags.error(a.span, "kernels cannot be `async`; remove `async`");
    }
    if let Some(u) = &sig.unsafety {
        if kind != AttrKind::RawKernel && kind != AttrKind::Device {
            cx.diags.error(u.span, "`unsafe` is not needed on this kernel; remove it");
        }
    }
    if let Some(v) = &sig.variadic {
        cx.diags.error(v.span(), "variadic functions are not available in kernels");
    }

    // Generic parameters become C++ template parameters with a prelude bound.
    let mut generics = Vec::new();
    for gp in &sig.generics.params {
        match gp {
            syn::GenericParam::Type(tp) => {
                let bound = generic_bound(tp, sig.generics.where_clause.as_ref(), cx.diags);
                generics.push(Generic { name: Name { text: tp.ident.to_string(), span: tp.ident.span() }, bound });
            }
            syn::GenericParam::Lifetime(_) => {}
            syn::GenericParam::Const(c) => {
                cx.diags.error(c.span(), "const generic parameters are not supported in kernels yet; use a fixed size or pass the value as an argument");
            }
        }
    }
    cx.generics = generics.iter().map(|g| g.name.text.clone()).collect();

    // Parameters.
    let mut params = Vec::new();
    cx.push_scope();
    for input in &sig.inputs {
        match input {
            syn::FnArg::Receiver(r) => {
                cx.diags.error(r.span(), "kernels are free functions; `self` parameters are not available");
            }
            syn::FnArg::Typed(pt) => {
                let t = ty::lower(&pt.ty, &cx.generics, ty::Position::Param, cx.diags);
                match &*pt.pat {
                    syn::Pat::Ident(pi) => {
                        if let Some(r) = &pi.by_ref {
                            cx.diags.error(r.span, "`ref` bindings are not supported in kernel parameters");
                        }
                        let local = cx.declare(&pi.ident, pi.mutability.is_some(), t.clone());
                        params.push(Param { local, ty: t.unwrap_or(Ty::Unit), span: pt.span() });
                    }
                    other => {
                        cx.diags.error(other.span(), "kernel parameters must be plain names (`x: f32`)");
                    }
                }
            }
        }
    }

    let (ret, ret_span) = match &sig.output {
        syn::ReturnType::Default => (Ty::Unit, sig.ident.span()),
        syn::ReturnType::Type(_, t) => {
            (ty::lower(t, &cx.generics, ty::Position::Return, cx.diags).unwrap_or(Ty::Unit), t.span())
        }
    };

    // The reduction's attribute closures see the item's generics; their parameters are locals.
    let kind_ir = match kind {
        AttrKind::Elementwise => ItemKind::Elementwise,
        AttrKind::RawKernel => ItemKind::RawKernel { fast_math: attr.fast_math },
        AttrKind::Device => ItemKind::Device,
        AttrKind::Reduction => match attr::lower_reduction(&attr, &mut cx) {
            Some(parts) => ItemKind::Reduction(parts),
            None => ItemKind::Reduction(ir::ReductionParts {
                identity: None,
                reduce: placeholder_closure(&mut cx),
                post: None,
                acc: None,
            }),
        },
    };

    let body = cx.block(&f.block);
    cx.pop_scope();

    let instances = attr::instances(&attr, &generics, cx.diags);
    let expr_count = cx.next_expr;
    let locals: Vec<Local> = std::mem::take(&mut cx.locals);
    Some(Item {
        kind: kind_ir,
        name: Name { text: sig.ident.to_string(), span: sig.ident.span() },
        generics,
        params,
        ret,
        ret_span,
        body,
        locals,
        expr_count,
        instances,
        span: sig.ident.span(),
    })
}

fn placeholder_closure(cx: &mut expr::Lowerer<'_>) -> ir::Closure {
    let e = cx.mk(ir::ExprKind::Tuple(Vec::new()), Span::call_site());
    ir::Closure { params: Vec::new(), body: Box::new(e), span: Span::call_site() }
}

/// The strongest prelude bound on a type parameter, from `T: Bound` or a where clause.
fn generic_bound(tp: &syn::TypeParam, wc: Option<&syn::WhereClause>, diags: &mut Diagnostics) -> Bound {
    let mut bounds: Vec<&syn::TypeParamBound> = tp.bounds.iter().collect();
    if let Some(wc) = wc {
        for pred in &wc.predicates {
            if let syn::WherePredicate::Type(pt) = pred {
                if let syn::Type::Path(p) = &pt.bounded_ty {
                    if p.path.is_ident(&tp.ident) {
                        bounds.extend(pt.bounds.iter());
                    }
                }
            }
        }
    }
    let mut best: Option<Bound> = None;
    for b in bounds {
        match b {
            syn::TypeParamBound::Trait(t) => {
                let name = t.path.segments.last().map(|s| s.ident.to_string()).unwrap_or_default();
                let found = match name.as_str() {
                    "Scalar" => Some(Bound::Scalar),
                    "Number" => Some(Bound::Number),
                    "Real" => Some(Bound::Real),
                    "Float" => Some(Bound::Float),
                    "Int" => Some(Bound::Int),
                    "Copy" | "Clone" | "Send" | "Sync" | "Default" | "Debug" | "PartialEq" | "PartialOrd" => None,
                    _ => {
                        diags.error(
                            t.span(),
                            format!("`{name}` is not a kernel bound; use one of the prelude's `Scalar`, `Number`, `Real`, `Float` or `Int`"),
                        );
                        None
                    }
                };
                if let Some(f) = found {
                    best = Some(match best {
                        None => f,
                        Some(b) if f.implies(b) => f,
                        Some(b) if b.implies(f) => b,
                        Some(b) => {
                            diags.error(t.span(), format!("`{}` and `{}` cannot both bound one parameter: no dtype is both", b.name(), f.name()));
                            b
                        }
                    });
                }
            }
            syn::TypeParamBound::Lifetime(_) => {}
            other => diags.error(other.span(), "unsupported bound; use one of `Scalar`, `Number`, `Real`, `Float`, `Int`"),
        }
    }
    match best {
        Some(b) => b,
        None => {
            diags.error(
                tp.ident.span(),
                format!("generic parameter `{}` needs a prelude bound (`{}: Float`, `Int`, `Real`, `Number` or `Scalar`) so the compiler knows which operations it allows", tp.ident, tp.ident),
            );
            Bound::Scalar
        }
    }
}

/// Used by the lowering of locals: the binding table of an item.
pub(crate) fn new_local(locals: &mut Vec<Local>, name: &syn::Ident, mutable: bool, declared: Option<Ty>) -> LocalId {
    let id = LocalId(locals.len() as u32);
    locals.push(Local { name: Name { text: name.to_string(), span: name.span() }, declared, mutable });
    id
}
