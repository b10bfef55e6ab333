//! The body of a `#[fuse]` function read as a graph of array operations.
//!
//! The body is ordinary Rust over `cuprum::Array` (it runs as written: the unfused function), in
//! this shape: `let` bindings of array expressions, then the result (`Ok(e)` or an expression of
//! type `Result<Array<T>>`). An array expression is
//!
//! - a parameter (`&Array<T>`: per element; a scalar type: the same for every element), an earlier
//!   binding, a numeric literal;
//! - `a + b`, `a - b`, `a * b`, `a / b`, `a % b`, `-a` (arrays broadcast, scalars on either side);
//! - `a.exp()`, `log`, `sqrt`, `sin`, `cos`, `tanh`, `abs`; `a.maximum(b)`, `a.minimum(b)` (NaN
//!   propagates, as NumPy's);
//!   `a.astype::<U>()`;
//! - `k::call(a, ..)` of an `#[elementwise]` kernel `k` of the same file (one output);
//! - a reduction, `a.sum()`, `prod`, `max`, `min`, `mean`, configured with `.axis(k)`,
//!   `.axes(..)`, `.keepdims(b)` and ended by `.run()`;
//!
//! with `?`, `&`, parentheses and `.clone()` where Rust needs them (they do not change the value).
//! Anything else is an error at its span, all of them reported at once.

use std::collections::HashMap;

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::{quote, ToTokens};
use syn::spanned::Spanned;

use crate::diag::Diagnostics;

pub type NodeId = usize;

/// A parameter of the fused function.
#[derive(Debug, Clone)]
pub struct Param {
    pub name: syn::Ident,
    /// `&Array<T>` (else a scalar `T`, passed by value).
    pub array: bool,
    /// `T`.
    pub elem: syn::Type,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReduceOp {
    Sum,
    Prod,
    Max,
    Min,
    Mean,
}

impl ReduceOp {
    fn from_name(name: &str) -> Option<ReduceOp> {
        Some(match name {
            "sum" => ReduceOp::Sum,
            "prod" => ReduceOp::Prod,
            "max" => ReduceOp::Max,
            "min" => ReduceOp::Min,
            "mean" => ReduceOp::Mean,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone)]
pub enum Op {
    /// Index into [`Graph::params`].
    Param(usize),
    Lit(Box<syn::Expr>),
    Binary(syn::BinOp, NodeId, NodeId),
    Neg(NodeId),
    /// A scalar method of the kernel language with these arguments (`exp`, `max`, ...).
    Method(syn::Ident, NodeId, Vec<NodeId>),
    Cast(NodeId, syn::Type),
    /// The body of a same-file `#[elementwise]` function, with its arguments.
    Inline(Box<Inline>, Vec<NodeId>),
    Reduce(Reduce),
}

/// An `#[elementwise]` function's parameter names and body, its generic types replaced by
/// those of the arguments.
#[derive(Debug, Clone)]
pub struct Inline {
    pub params: Vec<syn::Pat>,
    pub body: syn::Block,
}

#[derive(Debug, Clone)]
pub struct Reduce {
    pub op: ReduceOp,
    pub arg: NodeId,
    pub axis: Option<syn::Expr>,
    pub axes: Option<syn::Expr>,
    pub keepdims: Option<syn::Expr>,
}

/// How a value varies: the same everywhere, once per row (a reduction over the last axis, kept
/// as an axis of extent 1 or, at the end, dropped), or per element.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Class {
    Uniform,
    Row,
    Elem,
}

#[derive(Debug, Clone)]
pub struct Node {
    pub op: Op,
    /// The element type, when known (a literal takes its neighbour's).
    pub ty: Option<syn::Type>,
    pub class: Class,
    pub span: Span,
}

/// The body as nodes in evaluation order (an operand before its users).
#[derive(Debug, Clone)]
pub struct Graph {
    pub params: Vec<Param>,
    pub nodes: Vec<Node>,
    pub out: NodeId,
}

impl Graph {
    /// The nodes `root` needs, in evaluation order, not looking through `stop` (whose value is
    /// taken as given).
    pub fn needed(&self, root: NodeId, stop: &dyn Fn(&Node) -> bool) -> Vec<NodeId> {
        let mut seen = vec![false; self.nodes.len()];
        let mut stack = vec![root];
        while let Some(n) = stack.pop() {
            if seen[n] {
                continue;
            }
            seen[n] = true;
            if n != root && stop(&self.nodes[n]) {
                continue;
            }
            stack.extend(operands(&self.nodes[n].op));
        }
        (0..self.nodes.len()).filter(|&n| seen[n]).collect()
    }

    /// Every reduction the result depends on, in evaluation order.
    pub fn reductions(&self) -> Vec<NodeId> {
        self.needed(self.out, &|_| false).into_iter().filter(|&n| matches!(self.nodes[n].op, Op::Reduce(_))).collect()
    }
}

/// The operands of `op`.
pub fn operands(op: &Op) -> Vec<NodeId> {
    match op {
        Op::Param(_) | Op::Lit(_) => Vec::new(),
        Op::Binary(_, a, b) => vec![*a, *b],
        Op::Neg(a) | Op::Cast(a, _) => vec![*a],
        Op::Method(_, a, args) => std::iter::once(*a).chain(args.iter().copied()).collect(),
        Op::Inline(_, args) => args.clone(),
        Op::Reduce(r) => vec![r.arg],
    }
}

/// The element type of `&Array<T>` (also `&cuprum::Array<T>`, `&runtime::Array<T>`).
pub fn array_elem(ty: &syn::Type) -> Option<syn::Type> {
    let syn::Type::Reference(r) = ty else { return None };
    if r.mutability.is_some() {
        return None;
    }
    let syn::Type::Path(p) = &*r.elem else { return None };
    let last = p.path.segments.last()?;
    if last.ident != "Array" {
        return None;
    }
    let syn::PathArguments::AngleBracketed(a) = &last.arguments else { return None };
    match a.args.iter().collect::<Vec<_>>().as_slice() {
        [syn::GenericArgument::Type(t)] => Some(t.clone()),
        _ => None,
    }
}

/// Reads `f`'s parameters and body. `elementwise` finds a same-file `#[elementwise]` function by
/// name.
pub fn read(f: &syn::ItemFn, elementwise: &dyn Fn(&str) -> Option<syn::ItemFn>, diags: &mut Diagnostics) -> Option<Graph> {
    let mut params = Vec::new();
    for input in &f.sig.inputs {
        match input {
            syn::FnArg::Receiver(r) => diags.error(r.span(), "a `#[fuse]` function takes no `self`"),
            syn::FnArg::Typed(t) => {
                let syn::Pat::Ident(id) = &*t.pat else {
                    diags.error(t.pat.span(), "name each parameter of a `#[fuse]` function with an identifier");
                    continue;
                };
                if let Some(elem) = array_elem(&t.ty) {
                    params.push(Param { name: id.ident.clone(), array: true, elem });
                } else if matches!(&*t.ty, syn::Type::Path(_)) {
                    params.push(Param { name: id.ident.clone(), array: false, elem: (*t.ty).clone() });
                } else {
                    diags.error(t.ty.span(), "a `#[fuse]` parameter is an array (`&Array<T>`) or a scalar (`T`, `f32`, ..) passed by value");
                }
            }
        }
    }
    let mut r = Reader { graph: Graph { params, nodes: Vec::new(), out: 0 }, names: HashMap::new(), elementwise, diags };
    // A parameter that was rejected is known (its uses are not errors of their own).
    for input in &f.sig.inputs {
        if let syn::FnArg::Typed(t) = input
            && let syn::Pat::Ident(id) = &*t.pat {
                r.names.insert(id.ident.to_string(), None);
            }
    }
    for (k, p) in r.graph.params.clone().iter().enumerate() {
        let class = if p.array { Class::Elem } else { Class::Uniform };
        let id = r.push(Op::Param(k), Some(p.elem.clone()), class, p.name.span());
        r.names.insert(p.name.to_string(), Some(id));
    }
    let stmts = &f.block.stmts;
    let Some((last, lets)) = stmts.split_last() else {
        r.diags.error(f.block.span(), "a `#[fuse]` function's body ends in the array it returns");
        return None;
    };
    for s in lets {
        match s {
            syn::Stmt::Local(l) => {
                let name = match &l.pat {
                    syn::Pat::Ident(p) => Some(&p.ident),
                    syn::Pat::Type(t) => match &*t.pat {
                        syn::Pat::Ident(p) => Some(&p.ident),
                        _ => None,
                    },
                    _ => None,
                };
                let (Some(name), Some(init)) = (name, &l.init) else {
                    r.diags.error(l.span(), "a `#[fuse]` body binds each value once: `let name = expression;`");
                    continue;
                };
                // A binding whose value was rejected is known: its uses are not errors again.
                let id = r.expr(&init.expr);
                r.names.insert(name.to_string(), id);
            }
            other => r.diags.error(other.span(), "a `#[fuse]` body is `let` bindings of array expressions, then the result"),
        }
    }
    let result = match last {
        syn::Stmt::Expr(e, None) => e,
        other => {
            r.diags.error(other.span(), "end a `#[fuse]` body with the result: `Ok(y)` or an expression such as `&a / &b`");
            return None;
        }
    };
    let result = match result {
        syn::Expr::Call(c) if matches!(&*c.func, syn::Expr::Path(p) if p.path.is_ident("Ok")) && c.args.len() == 1 => &c.args[0],
        e => e,
    };
    let out = r.expr(result)?;
    r.graph.out = out;
    Some(r.graph)
}

struct Reader<'a> {
    graph: Graph,
    /// Each name's node; `None` for a name whose value was rejected (already reported).
    names: HashMap<String, Option<NodeId>>,
    elementwise: &'a dyn Fn(&str) -> Option<syn::ItemFn>,
    diags: &'a mut Diagnostics,
}

impl Reader<'_> {
    fn push(&mut self, op: Op, ty: Option<syn::Type>, class: Class, span: Span) -> NodeId {
        self.graph.nodes.push(Node { op, ty, class, span });
        self.graph.nodes.len() - 1
    }

    fn node(&self, id: NodeId) -> &Node {
        &self.graph.nodes[id]
    }

    /// A node computed from `args`: the first known type, the widest class.
    fn derived(&mut self, op: Op, args: &[NodeId], span: Span) -> NodeId {
        let ty = args.iter().find_map(|&a| self.node(a).ty.clone());
        let class = args.iter().map(|&a| self.node(a).class).max().unwrap_or(Class::Uniform);
        self.push(op, ty, class, span)
    }

    fn expr(&mut self, e: &syn::Expr) -> Option<NodeId> {
        match e {
            syn::Expr::Try(t) => self.expr(&t.expr),
            syn::Expr::Paren(p) => self.expr(&p.expr),
            syn::Expr::Group(g) => self.expr(&g.expr),
            syn::Expr::Reference(r) if r.mutability.is_none() => self.expr(&r.expr),
            syn::Expr::Path(p) if p.path.get_ident().is_some() => {
                let name = p.path.get_ident().unwrap().to_string();
                match self.names.get(&name) {
                    Some(&id) => id,
                    None => {
                        self.diags.error(p.span(), format!("`{name}` is not a parameter or an earlier `let` of this `#[fuse]` function"));
                        None
                    }
                }
            }
            syn::Expr::Lit(l) if matches!(l.lit, syn::Lit::Int(_) | syn::Lit::Float(_)) => {
                Some(self.push(Op::Lit(Box::new(e.clone())), literal_type(&l.lit), Class::Uniform, e.span()))
            }
            syn::Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => {
                let a = self.expr(&u.expr)?;
                if let Op::Lit(_) = self.node(a).op {
                    return Some(self.push(Op::Lit(Box::new(e.clone())), self.node(a).ty.clone(), Class::Uniform, e.span()));
                }
                Some(self.derived(Op::Neg(a), &[a], e.span()))
            }
            syn::Expr::Binary(b) if is_arith(&b.op) => {
                let l = self.expr(&b.left);
                let r = self.expr(&b.right);
                let (l, r) = (l?, r?);
                if let (Op::Lit(_), Op::Lit(_)) = (&self.node(l).op, &self.node(r).op) {
                    let ty = self.node(l).ty.clone().or_else(|| self.node(r).ty.clone());
                    let lit: syn::Expr = syn::parse_quote!((#e));
                    return Some(self.push(Op::Lit(Box::new(lit)), ty, Class::Uniform, e.span()));
                }
                Some(self.derived(Op::Binary(b.op, l, r), &[l, r], e.span()))
            }
            syn::Expr::MethodCall(m) => self.method(m),
            syn::Expr::Call(c) => self.call(c),
            other => {
                self.diags.error(other.span(), "not an array expression a `#[fuse]` function can fuse (see docs/fusion.md for what it takes)");
                None
            }
        }
    }

    fn method(&mut self, m: &syn::ExprMethodCall) -> Option<NodeId> {
        let name = m.method.to_string();
        let span = m.span();
        match name.as_str() {
            "run" if m.args.is_empty() => self.reduction(m),
            "clone" if m.args.is_empty() => self.expr(&m.receiver),
            "exp" | "log" | "sqrt" | "sin" | "cos" | "tanh" | "abs" if m.args.is_empty() => {
                let a = self.expr(&m.receiver)?;
                // The arrays' natural logarithm is NumPy's `log`, the kernel language's Rust's `ln`.
                let scalar = if name == "log" { syn::Ident::new("ln", m.method.span()) } else { m.method.clone() };
                Some(self.derived(Op::Method(scalar, a, Vec::new()), &[a], span))
            }
            "maximum" | "minimum" if m.args.len() == 1 => {
                let a = self.expr(&m.receiver);
                let b = self.expr(&m.args[0]);
                let (a, b) = (a?, b?);
                // NumPy's (and the arrays' `maximum`/`minimum`): a NaN operand gives NaN (`p != p`
                // is false for integers, which take the plain comparison).
                let body: syn::Block = if name == "maximum" {
                    syn::parse_quote!({ if fuse_p >= fuse_q || fuse_p != fuse_p { fuse_p } else { fuse_q } })
                } else {
                    syn::parse_quote!({ if fuse_p <= fuse_q || fuse_p != fuse_p { fuse_p } else { fuse_q } })
                };
                let inline = Inline { params: vec![syn::parse_quote!(fuse_p), syn::parse_quote!(fuse_q)], body };
                Some(self.derived(Op::Inline(Box::new(inline), vec![a, b]), &[a, b], span))
            }
            "astype" if m.args.is_empty() => {
                let to = match m.turbofish.as_ref().map(|t| t.args.iter().collect::<Vec<_>>()) {
                    Some(args) if args.len() == 1 => match args[0] {
                        syn::GenericArgument::Type(t) => t.clone(),
                        _ => {
                            self.diags.error(span, "write the element type: `.astype::<f32>()`");
                            return None;
                        }
                    },
                    _ => {
                        self.diags.error(span, "write the element type: `.astype::<f32>()`");
                        return None;
                    }
                };
                let a = self.expr(&m.receiver)?;
                let class = self.node(a).class;
                Some(self.push(Op::Cast(a, to.clone()), Some(to), class, span))
            }
            "sum" | "prod" | "max" | "min" | "mean" | "axis" | "axes" | "keepdims" => {
                self.diags.error(span, "end the reduction with `.run()`: `x.sum().axis(-1).keepdims(true).run()?`");
                None
            }
            _ => {
                self.diags.error(
                    m.method.span(),
                    format!("`.{name}(..)` is not an array operation a `#[fuse]` function can fuse (see docs/fusion.md for what it takes)"),
                );
                None
            }
        }
    }

    /// `x.sum().axis(-1).keepdims(true).run()`.
    fn reduction(&mut self, run: &syn::ExprMethodCall) -> Option<NodeId> {
        let (mut axis, mut axes, mut keepdims) = (None, None, None);
        let mut cur = &*run.receiver;
        loop {
            let syn::Expr::MethodCall(m) = strip(cur) else {
                self.diags.error(cur.span(), "`.run()` ends a reduction: `x.sum().axis(-1).keepdims(true).run()`");
                return None;
            };
            let name = m.method.to_string();
            match (name.as_str(), m.args.len()) {
                ("axis", 1) => axis = Some(m.args[0].clone()),
                ("axes", 1) => axes = Some(m.args[0].clone()),
                ("keepdims", 1) => keepdims = Some(m.args[0].clone()),
                (op, 0) if ReduceOp::from_name(op).is_some() => {
                    let arg = self.expr(&m.receiver)?;
                    let op = ReduceOp::from_name(op).unwrap();
                    let ty = self.node(arg).ty.clone();
                    return Some(self.push(Op::Reduce(Reduce { op, arg, axis, axes, keepdims }), ty, Class::Row, run.span()));
                }
                _ => {
                    self.diags.error(
                        m.method.span(),
                        format!("`.{name}(..)` is not part of a reduction a `#[fuse]` function can fuse: `sum`, `prod`, `max`, `min`, `mean`, then `axis`, `axes`, `keepdims`, `run`"),
                    );
                    return None;
                }
            }
            cur = &m.receiver;
        }
    }

    /// `k::call(a, ..)` of a same-file `#[elementwise]` function `k`.
    fn call(&mut self, c: &syn::ExprCall) -> Option<NodeId> {
        let syn::Expr::Path(p) = &*c.func else {
            self.diags.error(c.func.span(), "call an `#[elementwise]` kernel of this file as `name::call(..)`");
            return None;
        };
        let segs: Vec<String> = p.path.segments.iter().map(|s| s.ident.to_string()).collect();
        let [kernel, call] = segs.as_slice() else {
            self.diags.error(p.span(), "call an `#[elementwise]` kernel of this file as `name::call(..)`");
            return None;
        };
        if call != "call" {
            self.diags.error(p.span(), format!("call the kernel as `{kernel}::call(..)`"));
            return None;
        }
        let Some(f) = (self.elementwise)(kernel) else {
            self.diags.error(p.span(), format!("`{kernel}` is not an `#[elementwise]` function of this file (a `#[fuse]` function inlines those)"));
            return None;
        };
        if f.sig.inputs.len() != c.args.len() {
            self.diags.error(c.span(), format!("`{kernel}` takes {} arguments", f.sig.inputs.len()));
            return None;
        }
        let args: Vec<Option<NodeId>> = c.args.iter().map(|a| self.expr(a)).collect();
        let args: Vec<NodeId> = args.into_iter().collect::<Option<_>>()?;
        let syn::ReturnType::Type(_, ret) = &f.sig.output else {
            self.diags.error(p.span(), format!("`{kernel}` returns nothing; a `#[fuse]` function inlines kernels of one output"));
            return None;
        };
        if matches!(&**ret, syn::Type::Tuple(_)) {
            self.diags.error(p.span(), format!("`{kernel}` has several outputs; a `#[fuse]` function inlines kernels of one output"));
            return None;
        }
        // The kernel's generic parameters take the types of the arguments they name.
        let mut subst: HashMap<String, syn::Type> = HashMap::new();
        for (input, &a) in f.sig.inputs.iter().zip(&args) {
            if let (syn::FnArg::Typed(t), Some(ty)) = (input, &self.node(a).ty)
                && let syn::Type::Path(tp) = &*t.ty
                    && let Some(id) = tp.path.get_ident()
                        && f.sig.generics.type_params().any(|g| g.ident == *id) {
                            subst.entry(id.to_string()).or_insert_with(|| ty.clone());
                        }
        }
        for g in f.sig.generics.type_params() {
            if !subst.contains_key(&g.ident.to_string()) {
                self.diags.error(c.span(), format!("the type `{}` of `{kernel}` is not decided by an argument here", g.ident));
                return None;
            }
        }
        let body = syn::parse2::<syn::Block>(substitute(f.block.to_token_stream(), &subst));
        let ty = syn::parse2::<syn::Type>(substitute(ret.to_token_stream(), &subst));
        let (body, ty) = match (body, ty) {
            (Ok(b), Ok(t)) => (b, t),
            (Err(e), _) | (_, Err(e)) => {
                self.diags.push(e);
                return None;
            }
        };
        let params = f
            .sig
            .inputs
            .iter()
            .filter_map(|i| match i {
                syn::FnArg::Typed(t) => Some((*t.pat).clone()),
                syn::FnArg::Receiver(_) => None,
            })
            .collect();
        let inline = Inline { params, body };
        let ty = Some(ty);
        let class = args.iter().map(|&a| self.node(a).class).max().unwrap_or(Class::Uniform);
        Some(self.push(Op::Inline(Box::new(inline), args), ty, class, c.span()))
    }
}

fn strip(e: &syn::Expr) -> &syn::Expr {
    match e {
        syn::Expr::Paren(p) => strip(&p.expr),
        syn::Expr::Group(g) => strip(&g.expr),
        e => e,
    }
}

fn is_arith(op: &syn::BinOp) -> bool {
    matches!(op, syn::BinOp::Add(_) | syn::BinOp::Sub(_) | syn::BinOp::Mul(_) | syn::BinOp::Div(_) | syn::BinOp::Rem(_))
}

/// `2.0f32` is an `f32`; an unsuffixed literal takes its neighbour's type.
fn literal_type(l: &syn::Lit) -> Option<syn::Type> {
    let suffix = match l {
        syn::Lit::Int(i) => i.suffix(),
        syn::Lit::Float(f) => f.suffix(),
        _ => "",
    };
    (!suffix.is_empty()).then(|| syn::parse_str(suffix).ok()).flatten()
}

/// `tokens` with each identifier named in `subst` replaced by its type.
fn substitute(tokens: TokenStream, subst: &HashMap<String, syn::Type>) -> TokenStream {
    tokens
        .into_iter()
        .flat_map(|t| -> TokenStream {
            match t {
                TokenTree::Ident(i) => match subst.get(&i.to_string()) {
                    Some(ty) => quote!(#ty),
                    None => TokenTree::Ident(i).into(),
                },
                TokenTree::Group(g) => {
                    let mut ng = proc_macro2::Group::new(g.delimiter(), substitute(g.stream(), subst));
                    ng.set_span(g.span());
                    TokenTree::Group(ng).into()
                }
                other => other.into(),
            }
        })
        .collect()
}
