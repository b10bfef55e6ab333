//! The arguments of `#[elementwise(..)]`, `#[reduction(..)]`, `#[rawkernel(..)]`, `#[device]`.
//!
//! - every kernel: `instances = [f32, f64]` (one dtype per generic parameter; a tuple
//!   `(f32, i32)` each when there are several) lists the instantiations precompiled ahead of time;
//!   without it, the default of each parameter's bound (`lang::default_instances`) is used and
//!   several parameters take every combination.
//! - `#[rawkernel(fast_math)]`: compile with fast-math.
//! - `#[rawkernel(max_threads = N)]` and `#[elementwise(max_threads = N)]`: compile for blocks of
//!   at most N threads (`__launch_bounds__`); with `min_blocks = M` too, for M such blocks resident
//!   per multiprocessor (its registers are then capped so that they fit: `__launch_bounds__(N, M)`).
//!   A launch with larger blocks is refused with an error that names the limit.
//! - `#[rawkernel(unchecked)]` and `#[device(unchecked)] unsafe fn`: no index checks in the body
//!   (docs/semantics.md, row 18), so the kernel's `launch` is an `unsafe fn`; the default is
//!   checked.
//! - `#[reduction(identity = 0, reduce = |a, b| a + b, post = |a| a.sqrt(), acc = f64)]`.
//! - every attribute, `#[device]` structs included: `crate = path` (or `crate = "path"`, as serde
//!   spells it) names the crate whose `__private` module the generated code reaches the runtime
//!   through; `::cuprum` by default, so that a crate other than the facade can use the macros.

use proc_macro2::{Span, TokenStream};
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;

use super::expr::Lowerer;
use super::ty;
use crate::attr_kind::AttrKind;
use crate::diag::Diagnostics;
use cuprum_abi::dtype::DType;
use crate::ir::{Closure, Generic, ReductionParts};
use crate::lang;

/// The parsed attribute arguments, before lowering.
#[derive(Debug, Default)]
pub struct KernelAttr {
    /// `fast_math` (raw kernels): compile the unit with `--use_fast_math`.
    pub fast_math: bool,
    /// `unchecked`: no index checks in this function's body.
    pub unchecked: bool,
    /// `max_threads = N` (raw and elementwise kernels): compiled for blocks of at most N threads
    /// (`__launch_bounds__(N)`).
    pub max_threads: Option<u32>,
    /// `min_blocks = M` (raw and elementwise kernels, with `max_threads`): compiled for M resident blocks per
    /// multiprocessor (`__launch_bounds__(N, M)`).
    pub min_blocks: Option<u32>,
    /// The listed instances (each a type, or a tuple of types) and the span of `instances`.
    pub instances: Option<(Vec<syn::Type>, Span)>,
    /// A reduction's `identity = expr`.
    pub identity: Option<syn::Expr>,
    /// A reduction's `reduce = |a, b| expr`.
    pub reduce: Option<syn::Expr>,
    /// A reduction's `post = |a| expr`.
    pub post: Option<syn::Expr>,
    /// A reduction's `acc = T`.
    pub acc: Option<syn::Type>,
    /// `crate = path`.
    pub krate: Option<syn::Path>,
    /// The span of the attribute's arguments, for errors about them as a whole.
    pub span: Option<Span>,
}

impl KernelAttr {
    /// The path the generated code reaches the runtime through: `<crate>::__private`.
    pub fn private_path(&self) -> TokenStream {
        match &self.krate {
            Some(p) => quote::quote!(#p::__private),
            None => quote::quote!(::cuprum::__private),
        }
    }
}

/// An argument's value: types for `instances` and `acc` (so that `Complex<f32>` parses), an
/// expression otherwise.
enum Value {
    Expr(syn::Expr),
    Types(Vec<syn::Type>),
    Type(syn::Type),
    Path(syn::Path),
}

struct Arg {
    name: syn::Ident,
    value: Option<(Value, Span)>,
}

impl Parse for Arg {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        // `crate` is a keyword.
        let name = syn::ext::IdentExt::parse_any(input)?;
        if !input.peek(syn::Token![=]) {
            return Ok(Arg { name, value: None });
        }
        input.parse::<syn::Token![=]>()?;
        let span = input.span();
        let value = match name.to_string().as_str() {
            "instances" if input.peek(syn::token::Bracket) => {
                let content;
                syn::bracketed!(content in input);
                let list = Punctuated::<syn::Type, syn::Token![,]>::parse_terminated(&content)?;
                Value::Types(list.into_iter().collect())
            }
            "instances" => {
                let e: syn::Expr = input.parse()?;
                return Err(syn::Error::new_spanned(e, "`instances` takes a list of types: `instances = [f32, f64]`"));
            }
            "acc" => Value::Type(input.parse().map_err(|e| syn::Error::new(e.span(), "`acc` takes a type: `acc = f64`"))?),
            "crate" => {
                let expected = |e: syn::Error| syn::Error::new(e.span(), "`crate` takes a path: `crate = ::cuprum`");
                let path = if input.peek(syn::LitStr) {
                    input.parse::<syn::LitStr>()?.parse_with(syn::Path::parse_mod_style).map_err(expected)?
                } else {
                    input.call(syn::Path::parse_mod_style).map_err(expected)?
                };
                Value::Path(path)
            }
            _ => Value::Expr(input.parse()?),
        };
        Ok(Arg { name, value: Some((value, span)) })
    }
}

/// The arguments of an attribute of `kind` (every error into `diags`). `crate` is taken by every
/// attribute and named in no hint (it is for crates that wrap cuprum, not for kernels).
pub fn parse(kind: AttrKind, args: TokenStream, attr_span: Span, diags: &mut Diagnostics) -> KernelAttr {
    let mut out = KernelAttr::default();
    if args.is_empty() {
        if kind == AttrKind::Reduction {
            diags.error(
                attr_span,
                "`#[reduction]` needs at least `reduce`: `#[reduction(identity = 0, reduce = |a, b| a + b)]`",
            );
        }
        return out;
    }
    out.span = Some(args.span());
    let parsed = syn::parse::Parser::parse2(Punctuated::<Arg, syn::Token![,]>::parse_terminated, args);
    let list = match parsed {
        Ok(l) => l,
        Err(e) => {
            diags.push(e);
            return out;
        }
    };
    for arg in list {
        let name = arg.name.to_string();
        if name == "crate" {
            match arg.value {
                Some((Value::Path(p), _)) => out.krate = Some(p),
                _ => diags.error(arg.name.span(), "`crate` needs a value: `crate = ::cuprum`"),
            }
            continue;
        }
        let allowed: &[&str] = match kind {
            AttrKind::Elementwise => &["instances", "max_threads", "min_blocks"],
            AttrKind::RawKernel => &["instances", "fast_math", "unchecked", "max_threads", "min_blocks"],
            AttrKind::Reduction => &["instances", "identity", "reduce", "post", "acc"],
            AttrKind::Device => &["unchecked"],
        };
        if !allowed.contains(&name.as_str()) {
            let attr = match kind {
                AttrKind::Elementwise => "elementwise",
                AttrKind::RawKernel => "rawkernel",
                AttrKind::Reduction => "reduction",
                AttrKind::Device => "device",
            };
            let hint = match allowed.iter().find(|a| similar(a, &name)) {
                _ if name == "unchecked" => format!(
                    "`#[{attr}]` keeps its index checks, as its call is safe; for the accesses that need none write \
                     `unsafe {{ *x.get_unchecked(i) }}`"
                ),
                _ if allowed.is_empty() => format!("`#[{attr}]` takes no arguments: write `#[{attr}]`"),
                Some(a) => format!("did you mean `{a}`?"),
                None => format!("`#[{attr}]` takes: {}", allowed.join(", ")),
            };
            diags.error(arg.name.span(), format!("unknown attribute argument `{name}`; {hint}"));
            continue;
        }
        match (name.as_str(), arg.value) {
            ("fast_math", None) => out.fast_math = true,
            ("fast_math", Some((_, span))) => diags.error(span, "write `fast_math` alone, without a value"),
            ("unchecked", None) => out.unchecked = true,
            ("unchecked", Some((_, span))) => diags.error(span, "write `unchecked` alone, without a value"),
            (_, None) => diags.error(arg.name.span(), format!("`{name}` needs a value: `{name} = ...`")),
            ("instances", Some((Value::Types(ts), _))) => out.instances = Some((ts, arg.name.span())),
            ("max_threads", Some((Value::Expr(v), span))) => match &v {
                syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(i), .. }) if i.base10_parse::<u32>().is_ok_and(|n| (1..=1024).contains(&n)) => {
                    out.max_threads = i.base10_parse().ok();
                }
                _ => diags.error(span, "`max_threads` is an integer literal from 1 to 1024 (threads per block): `max_threads = 384`"),
            },
            ("min_blocks", Some((Value::Expr(v), span))) => match &v {
                syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(i), .. }) if i.base10_parse::<u32>().is_ok_and(|n| (1..=32).contains(&n)) => {
                    out.min_blocks = i.base10_parse().ok();
                }
                _ => diags.error(span, "`min_blocks` is an integer literal from 1 to 32 (resident blocks per multiprocessor): `min_blocks = 6`"),
            },
            ("acc", Some((Value::Type(t), _))) => out.acc = Some(t),
            ("identity", Some((Value::Expr(v), _))) => out.identity = Some(v),
            ("reduce", Some((Value::Expr(v), _))) => out.reduce = Some(v),
            ("post", Some((Value::Expr(v), _))) => out.post = Some(v),
            _ => unreachable!("checked against `allowed`; values parsed by name"),
        }
    }
    if out.min_blocks.is_some() && out.max_threads.is_none() {
        let attr = if kind == AttrKind::Elementwise { "elementwise" } else { "rawkernel" };
        diags.error(
            out.span.unwrap_or(attr_span),
            format!("`min_blocks` needs `max_threads` too (the block size it counts): `#[{attr}(max_threads = 256, min_blocks = 6)]`"),
        );
    }
    if kind == AttrKind::Reduction && out.reduce.is_none() {
        diags.error(out.span.unwrap_or(attr_span), "`#[reduction]` needs `reduce = |a, b| ...`: `#[reduction(identity = 0, reduce = |a, b| a + b)]`");
    }
    out
}

/// Whether two argument names differ only in case and underscores, or by one edit.
fn similar(a: &str, b: &str) -> bool {
    let norm = |s: &str| s.chars().filter(|c| *c != '_').flat_map(char::to_lowercase).collect::<Vec<char>>();
    let (x, y) = (norm(a), norm(b));
    if x == y {
        return true;
    }
    // One substitution, insertion or deletion.
    let (short, long) = if x.len() <= y.len() { (&x, &y) } else { (&y, &x) };
    if long.len() - short.len() > 1 {
        return false;
    }
    let prefix = short.iter().zip(long.iter()).take_while(|(p, q)| p == q).count();
    if short.len() == long.len() {
        short[prefix + 1..] == long[prefix + 1..]
    } else {
        short[prefix..] == long[prefix + 1..]
    }
}

/// Lowers the reduction's parts; the closures' parameters become locals of the item.
pub fn lower_reduction(attr: &KernelAttr, cx: &mut Lowerer<'_>) -> Option<ReductionParts> {
    let acc = attr.acc.as_ref().and_then(|t| ty::lower(t, &cx.generics, cx.scope, ty::Position::Local, cx.diags));
    let identity = attr.identity.as_ref().map(|e| Box::new(cx.expr(e)));
    let reduce = closure(attr.reduce.as_ref()?, 2, "reduce", cx)?;
    let post = match &attr.post {
        Some(p) => Some(closure(p, 1, "post", cx)?),
        None => None,
    };
    Some(ReductionParts { identity, reduce, post, acc })
}

fn closure(e: &syn::Expr, arity: usize, what: &str, cx: &mut Lowerer<'_>) -> Option<Closure> {
    let syn::Expr::Closure(c) = e else {
        let example = if arity == 2 { "|a, b| a + b" } else { "|a| a.sqrt()" };
        cx.diags.error(e.span(), format!("`{what}` takes a closure: `{what} = {example}`"));
        return None;
    };
    if c.inputs.len() != arity {
        let example = if arity == 2 { "|a, b| a + b" } else { "|a| a.sqrt()" };
        let n = if arity == 2 { "two parameters" } else { "one parameter" };
        cx.diags.error(c.inputs.span(), format!("`{what}` takes a closure of {n}: `{what} = {example}`"));
        return None;
    }
    cx.push_scope();
    let mut params = Vec::new();
    for p in &c.inputs {
        let (ident, declared) = match p {
            syn::Pat::Ident(pi) => (&pi.ident, None),
            syn::Pat::Type(pt) => match &*pt.pat {
                syn::Pat::Ident(pi) => (&pi.ident, ty::lower(&pt.ty, &cx.generics, cx.scope, ty::Position::Local, cx.diags)),
                other => {
                    cx.diags.error(other.span(), "closure parameters must be plain names");
                    cx.pop_scope();
                    return None;
                }
            },
            other => {
                cx.diags.error(other.span(), "closure parameters must be plain names");
                cx.pop_scope();
                return None;
            }
        };
        params.push(cx.declare(ident, false, declared));
    }
    let body = Box::new(cx.expr(&c.body));
    cx.pop_scope();
    Some(Closure { params, body, span: c.span() })
}

/// The instantiations to precompile: the attribute's list, or each bound's default.
pub fn instances(attr: &KernelAttr, generics: &[Generic], diags: &mut Diagnostics) -> Vec<Vec<DType>> {
    if let Some((list, span)) = &attr.instances {
        if generics.is_empty() {
            diags.error(*span, "`instances` is only meaningful for a generic kernel; remove it");
            return Vec::new();
        }
        let mut out = Vec::new();
        for elem in list {
            let dtypes: Vec<&syn::Type> = match elem {
                syn::Type::Tuple(t) => t.elems.iter().collect(),
                syn::Type::Paren(p) => vec![&*p.elem],
                other => vec![other],
            };
            if dtypes.len() != generics.len() {
                diags.error(
                    elem.span(),
                    format!("this instance names {} type(s) but the kernel has {} generic parameter(s)", dtypes.len(), generics.len()),
                );
                continue;
            }
            let mut inst = Vec::new();
            for (d, g) in dtypes.iter().zip(generics) {
                let dt = match d {
                    syn::Type::Path(p) if p.qself.is_none() => ty::dtype_of_path(&p.path),
                    _ => None,
                };
                match dt {
                    Some(dt) if g.bound.admits(dt) => inst.push(dt),
                    Some(dt) => {
                        let ok: Vec<&str> = DType::ALL.iter().filter(|d| g.bound.admits(**d)).map(|d| d.rust_name()).collect();
                        let n = &g.name.text;
                        diags.error(d.span(), format!("`{dt}` does not satisfy `{n}: {}`; `{n}` can be {}", g.bound.name(), ok.join(", ")))
                    }
                    None => diags.error(d.span(), "expected a scalar type such as `f32`, `i64`, `f16` or `Complex<f64>`"),
                }
            }
            if inst.len() == generics.len() {
                out.push(inst);
            }
        }
        return out;
    }
    // Default: every combination of each bound's defaults.
    let mut out: Vec<Vec<DType>> = vec![Vec::new()];
    for g in generics {
        let mut next = Vec::new();
        for prefix in &out {
            for d in lang::default_instances(g.bound) {
                let mut v = prefix.clone();
                v.push(*d);
                next.push(v);
            }
        }
        out = next;
    }
    out
}
