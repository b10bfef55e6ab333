//! `#[fuse]`: a function over arrays, written as ordinary Rust with cuprum's array operations,
//! that becomes one kernel at build time (docs/fusion.md).
//!
//! Entry point: [`desugar`]. It reads the body as a graph of array operations
//! ([`graph::read`]), picks the fewest passes the data dependencies need ([`Passes`]) and writes
//! the kernel as an item of the kernel language of one of the existing kinds
//! (`write.rs`): an `#[elementwise]` function (no reduction), a `#[reduction]` whose map is the
//! fused expression (the result is one reduction), or a `#[rawkernel]` that runs each row in one
//! block (reductions over the last axis kept as an axis of extent 1, then elementwise work over
//! the same rows: softmax, layer norm; or a result that is one value per row: log-sum-exp). From there the generated item goes down the same pipeline
//! as one the user wrote: the file's translation (`front::lower_file`, so the build precompiles
//! it), the macro's typed API, the CPU device's host copy, the JIT fallback.
//!
//! The user's function stays as written: it runs the same computation unfused, one operation at a
//! time (the reference for tests, and the "without fusion" side of a comparison). The macro adds
//! `NAME::call(..)` (`expand::fuse`).

pub mod graph;
mod write;

use proc_macro2::{TokenStream, TokenTree};
use quote::quote;
use syn::spanned::Spanned;

use crate::diag::Diagnostics;
use crate::attr_kind::AttrKind;
use graph::{Class, Graph, Op, ReduceOp};
pub use write::{ROW_BLOCK, ROW_REGS};

/// How the fused function runs.
#[derive(Debug, Clone)]
pub enum Passes {
    /// One elementwise kernel over the broadcast shape of the arguments.
    Elementwise,
    /// One reduction kernel whose map is the fused expression, configured as written.
    Reduce { axis: Option<syn::Expr>, axes: Option<syn::Expr>, keepdims: Option<syn::Expr> },
    /// One raw kernel, one block per row of the broadcast shape; `axes` are the axes the
    /// reductions name (each must be the last: checked at the call, where the rank is known);
    /// `cached` the parameter whose row the kernel keeps in registers; `result` what it writes.
    Rows { axes: Vec<syn::Expr>, cached: usize, result: RowResult },
}

/// What a row kernel writes.
#[derive(Debug, Clone)]
pub enum RowResult {
    /// Every element of the rows (the broadcast shape of the arguments: softmax, layer norm).
    Elements,
    /// One value per row (log-sum-exp): the broadcast shape with its last axis of extent 1 where
    /// `keepdims` is true (a kept reduction, or arithmetic on kept reductions), without it where
    /// false (the function ends in a reduction over the last axis written without `keepdims`).
    PerRow { keepdims: Box<syn::Expr> },
}

/// A `#[fuse]` function as a kernel of an existing kind.
#[derive(Debug, Clone)]
pub struct Fused {
    pub kind: AttrKind,
    /// The generated kernel's attribute arguments.
    pub attr: TokenStream,
    /// The kernel, named as the fused function.
    pub kernel: syn::ItemFn,
    pub passes: Passes,
    pub params: Vec<graph::Param>,
    /// The result's element type.
    pub out: syn::Type,
}

/// The names a row kernel adds to the parameters (`fused_out`, `x_rs`, ...).
pub const ROW_OUT: &str = "fused_out";
pub const ROW_COLS: &str = "fused_cols";

/// Desugars `#[fuse(args)] f`. `elementwise` finds a same-file `#[elementwise]` function by name
/// (their bodies are inlined). Every mistake is reported, at its span.
pub fn desugar(f: &syn::ItemFn, args: TokenStream, elementwise: &dyn Fn(&str) -> Option<syn::ItemFn>) -> Result<Fused, syn::Error> {
    let mut diags = Diagnostics::new();
    check_args(&args, &mut diags);
    if let Some(a) = &f.sig.asyncness {
        diags.error(a.span(), "a `#[fuse]` function cannot be `async`");
    }
    if let Some(u) = &f.sig.unsafety {
        diags.error(u.span(), "a `#[fuse]` function cannot be `unsafe`");
    }
    let graph = graph::read(f, elementwise, &mut diags);
    let planned = graph.as_ref().and_then(|g| passes(g, &mut diags).map(|p| (g, p)));
    diags.finish()?;
    let Some((g, passes)) = planned else {
        return Err(syn::Error::new(f.sig.ident.span(), "cuprum: this `#[fuse]` function could not be read; report this as a cuprum bug"));
    };
    let out = g.nodes[g.out].ty.clone().ok_or_else(|| {
        syn::Error::new(g.nodes[g.out].span, "the result's element type is not decided: write a typed literal (`2.0f32`) or use a parameter")
    })?;
    let floats = float_generics(&f.sig.generics);
    let (kind, kernel, extra) = match &passes {
        Passes::Elementwise => (AttrKind::Elementwise, write::elementwise(f, g, &out), TokenStream::new()),
        Passes::Reduce { .. } => {
            let (k, extra) = write::reduction(f, g, &out, &floats)?;
            (AttrKind::Reduction, k, extra)
        }
        Passes::Rows { cached, .. } => (AttrKind::RawKernel, write::rows(f, g, &out, &floats, *cached)?, quote!(unchecked)),
    };
    let attr = match (args.is_empty(), extra.is_empty()) {
        (_, true) => args,
        (true, false) => extra,
        (false, false) => quote!(#args, #extra),
    };
    Ok(Fused { kind, attr, kernel, passes, params: g.params.clone(), out })
}

/// `#[fuse]` takes `instances = [..]` and `crate = path`.
fn check_args(args: &TokenStream, diags: &mut Diagnostics) {
    let mut at_start = true;
    for t in args.clone() {
        match &t {
            TokenTree::Punct(p) if p.as_char() == ',' => at_start = true,
            TokenTree::Ident(i) if at_start => {
                if i != "instances" && i != "crate" {
                    diags.error(i.span(), format!("`#[fuse]` takes `instances = [..]` and `crate = path`, not `{i}`"));
                }
                at_start = false;
            }
            _ => at_start = false,
        }
    }
}

/// The generic type parameters bounded by `Float` (their reductions start from infinities).
fn float_generics(g: &syn::Generics) -> Vec<String> {
    let bounded = |bounds: &syn::punctuated::Punctuated<syn::TypeParamBound, syn::Token![+]>| {
        bounds.iter().any(|b| matches!(b, syn::TypeParamBound::Trait(t) if t.path.segments.last().is_some_and(|s| s.ident == "Float")))
    };
    let mut out: Vec<String> = g.type_params().filter(|t| bounded(&t.bounds)).map(|t| t.ident.to_string()).collect();
    if let Some(w) = &g.where_clause {
        for p in &w.predicates {
            if let syn::WherePredicate::Type(t) = p
                && let (syn::Type::Path(tp), true) = (&t.bounded_ty, bounded(&t.bounds))
                    && let Some(id) = tp.path.get_ident() {
                        out.push(id.to_string());
                    }
        }
    }
    out
}

/// The passes the graph needs.
fn passes(g: &Graph, diags: &mut Diagnostics) -> Option<Passes> {
    let reductions = g.reductions();
    let out = &g.nodes[g.out];
    if reductions.is_empty() {
        if out.class != Class::Elem {
            diags.error(out.span, "a `#[fuse]` function returns an array computed from its array parameters");
            return None;
        }
        return Some(Passes::Elementwise);
    }
    // The result is one reduction of an elementwise expression.
    if let Op::Reduce(r) = &out.op
        && reductions.len() == 1 {
            if g.nodes[r.arg].class != Class::Elem {
                diags.error(g.nodes[r.arg].span, "reduce an array expression of the array parameters");
                return None;
            }
            if r.op == ReduceOp::Mean {
                diags.error(out.span, "a `#[fuse]` function whose only reduction is its result (one reduction kernel) takes `sum`, `prod`, `max` or `min` (a mean: the sum, divided after the call)");
            }
            return Some(Passes::Reduce { axis: r.axis.clone(), axes: r.axes.clone(), keepdims: r.keepdims.clone() });
        }
    // Row-wise: every reduction runs over the last axis; each that feeds more work keeps it; the
    // result is the rows' elements, or one value per row.
    let mut axes = Vec::new();
    let mut ok = true;
    for &n in &reductions {
        let Op::Reduce(r) = &g.nodes[n].op else { continue };
        let keeps = matches!(&r.keepdims, Some(syn::Expr::Lit(l)) if matches!(&l.lit, syn::Lit::Bool(b) if b.value));
        if n == g.out && (r.axes.is_some() || r.axis.is_none()) {
            diags.error(
                g.nodes[n].span,
                "a `#[fuse]` function that ends in a reduction after other reductions reduces the last axis: `.axis(-1)` (one value per row), with `.keepdims(true)` or without",
            );
            ok = false;
            continue;
        }
        if n != g.out && (r.axes.is_some() || r.axis.is_none() || !keeps) {
            diags.error(
                g.nodes[n].span,
                "a reduction that feeds more work in a `#[fuse]` function runs over the last axis and keeps it: `.axis(-1).keepdims(true)`",
            );
            ok = false;
            continue;
        }
        if g.nodes[r.arg].class != Class::Elem {
            diags.error(g.nodes[r.arg].span, "reduce an array expression of the array parameters (this value is the same along the row)");
            ok = false;
        }
        axes.push(r.axis.clone().unwrap());
    }
    let result = match &out.op {
        _ if out.class == Class::Elem => RowResult::Elements,
        // Ends in a reduction over the last axis: NumPy's shape for its `keepdims`.
        Op::Reduce(r) => RowResult::PerRow { keepdims: Box::new(r.keepdims.clone().unwrap_or_else(|| syn::parse_quote!(false))) },
        // Arithmetic on kept reductions (each checked above): one value per row, the axis kept.
        _ => RowResult::PerRow { keepdims: Box::new(syn::parse_quote!(true)) },
    };
    ok.then(|| Passes::Rows { axes, cached: write::cached_param(g), result })
}

#[cfg(test)]
mod tests;
