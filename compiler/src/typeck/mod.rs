//! Type checker: gives every expression and local of an item a type, as rustc would.
//!
//! Entry point: [`check`]. Rules (docs/semantics.md states them for users):
//! - no implicit conversions or promotions: both operands of `+` have one type, `u8 + u8` is `u8`;
//! - unsuffixed literals are typed as rustc types them (`literals.rs`): inference variables that
//!   unify with what they meet, `i32` / `f64` when nothing constrains them; a cast never
//!   constrains its operand, it only offers its target to a literal operand (`expect.rs`:
//!   `300 as u8` is a `u8` literal, `(n - 1) as usize` a `u32` subtraction when `n: u32`); a
//!   literal never becomes a generic `T` (write `T::from_f64(2.0)`); every integer literal must
//!   fit its type (rustc's `overflowing_literals`);
//! - generic parameters stay generic: operations on `T` are those its prelude bound allows;
//! - method calls resolve against the receiver's type (see `methods.rs`);
//! - `match` on integers and `bool` is exhaustive (range coverage, as rustc checks it);
//! - slices and arrays are indexed by `usize`; `Raw` and `View` also by `u32`/`i32`/`u64`/`i64`;
//! - `let x;` takes its type from its first assignment.
//!
//! An expression whose type cannot be known because of a reported error (or a call to a function
//! the macro path cannot see) has `Ty::Error`, which every rule accepts: one mistake, one message.

mod calls;
mod expect;
mod exprs;
mod hopper;
mod identity;
mod literals;
mod methods;
mod tensor;

pub(crate) use identity::IdentityLiteral;

use std::collections::HashMap;

use proc_macro2::Span;

use crate::diag::Diagnostics;
use cuprum_abi::dtype::DType;
use crate::ir::*;
use crate::lang::{AssocConst, AssocFn, Bound, Method, NumConst, NumFn};
use expect::Expect;

/// The type checker's results for one item (the side table the back end reads).
#[derive(Debug, Clone, Default)]
pub struct Types {
    /// Indexed by `ExprId`.
    pub exprs: Vec<Ty>,
    /// Indexed by `LocalId`.
    pub locals: Vec<Ty>,
    /// Generic arguments of each device-function call, by the call's `ExprId`.
    pub call_args: HashMap<u32, Vec<Ty>>,
    /// The method each method call resolved to, by the call's `ExprId`.
    pub methods: HashMap<u32, Method>,
    /// The function each associated-function call (`Callee::Assoc`) resolved to, by `ExprId`.
    pub assoc_fns: HashMap<u32, AssocFn>,
    /// The constant each `ExprKind::Const` resolved to, by `ExprId`.
    pub consts: HashMap<u32, AssocConst>,
    /// The accumulator type of a reduction (its map's type unless `acc` was given).
    pub acc: Option<Ty>,
}

impl Types {
    /// The type of a checked expression.
    pub fn of(&self, e: &Expr) -> &Ty {
        &self.exprs[e.id.0 as usize]
    }
    /// The type of a local.
    pub fn local(&self, l: LocalId) -> &Ty {
        &self.locals[l.0 as usize]
    }
    /// The method of a checked method call.
    pub fn method(&self, call: &Expr) -> Method {
        *self.methods.get(&call.id.0).expect("the type checker resolves every method call")
    }
    /// The function of a checked `Callee::Assoc` call.
    pub fn assoc_fn(&self, call: &Expr) -> AssocFn {
        *self.assoc_fns.get(&call.id.0).expect("the type checker resolves every associated function")
    }
    /// The constant of a checked `ExprKind::Const`.
    pub fn constant(&self, e: &Expr) -> AssocConst {
        *self.consts.get(&e.id.0).expect("the type checker resolves every associated constant")
    }
}

/// Type-checks every item of a module. Returns one `Types` per item, in order.
pub fn check(module: &Module, diags: &mut Diagnostics) -> Vec<Types> {
    let sigs: HashMap<&str, &Item> =
        module.items.iter().filter(|i| matches!(i.kind, ItemKind::Device)).map(|i| (i.name.text.as_str(), i)).collect();
    module.items.iter().map(|item| Checker::new(item, &sigs, &module.structs, diags).run()).collect()
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum VarKind {
    Int,
    Float,
}

pub(crate) struct Checker<'a, 'd> {
    item: &'a Item,
    sigs: &'a HashMap<&'a str, &'a Item>,
    structs: &'a [StructDef],
    diags: &'d mut Diagnostics,
    exprs: Vec<Option<Ty>>,
    locals: Vec<Option<Ty>>,
    vars: Vec<(VarKind, Option<Ty>)>,
    loop_breaks: HashMap<LoopId, Ty>,
    call_args: HashMap<u32, Vec<Ty>>,
    methods: HashMap<u32, Method>,
    assoc_fns: HashMap<u32, AssocFn>,
    consts: HashMap<u32, AssocConst>,
    /// The return type `return` checks against (the item's, or the closure's being checked).
    ret: Ty,
    /// Integer literals, to check that each fits its type once types are known: the literal's
    /// expression, its value, and whether it is directly negated (`-128i8`).
    int_lits: Vec<(ExprId, u128, bool, Span)>,
    /// Float literals, to check that each is finite in its type: the expression and the text.
    float_lits: Vec<(ExprId, String, Span)>,
    /// Negations whose operand was a literal of unknown type: its final type must be signed
    /// (rustc's `Neg` obligation, solved once the literal's type is known).
    negated_vars: Vec<(ExprId, Span)>,
    /// `match`es on a literal of unknown type: the scrutinee, and the patterns of the unguarded
    /// arms, checked for exhaustiveness once its type is known (as rustc checks after typing).
    pending_matches: Vec<(ExprId, Span, Vec<MatchPat>)>,
    /// `gpu_print!` arguments, checked once literals have their types: (argument, placeholder).
    pending_prints: Vec<(ExprId, Span, PrintSpec)>,
    /// Locals declared by `let x;` without an initializer: the first assignment initialises them
    /// (and gives their type when none was written); rustc checks that they are assigned once.
    deferred: Vec<bool>,
}

impl<'a, 'd> Checker<'a, 'd> {
    fn new(item: &'a Item, sigs: &'a HashMap<&'a str, &'a Item>, structs: &'a [StructDef], diags: &'d mut Diagnostics) -> Self {
        let mut locals: Vec<Option<Ty>> = item.locals.iter().map(|l| l.declared.clone()).collect();
        for p in &item.params {
            locals[p.local.0 as usize] = Some(p.ty.clone());
        }
        Checker {
            item,
            sigs,
            structs,
            diags,
            exprs: vec![None; item.expr_count as usize],
            locals,
            vars: Vec::new(),
            loop_breaks: HashMap::new(),
            call_args: HashMap::new(),
            methods: HashMap::new(),
            assoc_fns: HashMap::new(),
            consts: HashMap::new(),
            ret: item.ret.clone(),
            deferred: vec![false; item.locals.len()],
            int_lits: Vec::new(),
            float_lits: Vec::new(),
            negated_vars: Vec::new(),
            pending_matches: Vec::new(),
            pending_prints: Vec::new(),
        }
    }

    fn run(mut self) -> Types {
        let item = self.item;
        let ret = item.ret.clone();
        let body_ty = self.block(&item.body, Expect::Has(&ret));
        if !matches!(item.kind, ItemKind::Reduction(_)) || !ret.is_unit() {
            self.expect(&ret, &body_ty, item.body.tail.as_ref().map(|t| t.span).unwrap_or(item.ret_span));
        }
        let mut acc = None;
        if let ItemKind::Reduction(parts) = &item.kind {
            acc = Some(self.reduction(parts, &ret));
        }
        self.finish(acc)
    }

    /// The reduction's parts: `identity: acc`, `reduce: (acc, acc) -> acc`, `post: acc -> out`.
    fn reduction(&mut self, parts: &ReductionParts, map_ty: &Ty) -> Ty {
        let acc = parts.acc.clone().unwrap_or_else(|| map_ty.clone());
        // The map's value enters the accumulator as by `as`: both primitive, or the same type.
        if *map_ty != acc {
            let castable = |t: &Ty| matches!(t, Ty::Scalar(d) if d.is_primitive() && !d.is_bool());
            if !(castable(map_ty) && castable(&acc)) {
                let (m, a) = (self.show(map_ty), self.show(&acc));
                self.diags.error(
                    self.item.ret_span,
                    format!("the map returns `{m}` but the accumulator is `{a}`; return `{a}` from the body, or convert with `as` between primitive types"),
                );
            }
        }
        if let Some(id) = &parts.identity
            && !self.literal_identity(id, &acc)
        {
            let t = self.expr(id, Some(&acc));
            self.expect(&acc, &t, id.span);
        }
        for p in &parts.reduce.params {
            self.locals[p.0 as usize].get_or_insert_with(|| acc.clone());
        }
        for p in &parts.reduce.params {
            let declared = self.locals[p.0 as usize].clone().unwrap();
            self.expect(&acc, &declared, parts.reduce.span);
        }
        self.ret = acc.clone();
        let t = self.expr(&parts.reduce.body, Some(&acc));
        self.expect(&acc, &t, parts.reduce.body.span);
        if let Some(post) = &parts.post {
            let p = post.params[0];
            self.locals[p.0 as usize].get_or_insert_with(|| acc.clone());
            self.ret = Ty::Unit;
            let t = self.expr(&post.body, None);
            let t = self.resolve(&t);
            // `Ty::Error`: a call of a neighbour function the macro cannot see (the build
            // script's check of the whole file types it).
            if !matches!(t, Ty::Scalar(_) | Ty::Param(_) | Ty::IntVar(_) | Ty::FloatVar(_) | Ty::Error) {
                self.diags.error(post.body.span, "`post` must produce a scalar");
            }
        }
        acc
    }

    fn finish(mut self, acc: Option<Ty>) -> Types {
        self.check_literals();
        self.check_float_literals();
        self.check_negations();
        self.check_pending_matches();
        self.check_pending_prints();
        let exprs: Vec<Ty> = std::mem::take(&mut self.exprs)
            .into_iter()
            .map(|t| t.map(|t| self.zonk(&t)).unwrap_or(Ty::Unit))
            .collect();
        let locals: Vec<Ty> = std::mem::take(&mut self.locals)
            .into_iter()
            .map(|t| t.map(|t| self.zonk(&t)).unwrap_or(Ty::Unit))
            .collect();
        let call_args = std::mem::take(&mut self.call_args)
            .into_iter()
            .map(|(k, v)| (k, v.iter().map(|t| self.zonk(t)).collect()))
            .collect();
        let acc = acc.map(|t| self.zonk(&t));
        Types { exprs, locals, call_args, methods: self.methods, assoc_fns: self.assoc_fns, consts: self.consts, acc }
    }

    // ---- inference variables -------------------------------------------------------------

    fn fresh(&mut self, kind: VarKind) -> Ty {
        let id = self.vars.len() as u32;
        self.vars.push((kind, None));
        match kind {
            VarKind::Int => Ty::IntVar(id),
            VarKind::Float => Ty::FloatVar(id),
        }
    }

    pub(crate) fn resolve(&self, t: &Ty) -> Ty {
        match t {
            Ty::IntVar(v) | Ty::FloatVar(v) => match &self.vars[*v as usize].1 {
                Some(b) => self.resolve(b),
                None => t.clone(),
            },
            other => other.clone(),
        }
    }

    /// Resolves all variables, defaulting unconstrained ones (`i32`, `f64`) as rustc does.
    fn zonk(&self, t: &Ty) -> Ty {
        match self.resolve(t) {
            Ty::IntVar(_) => Ty::Scalar(DType::I32),
            Ty::FloatVar(_) => Ty::Scalar(DType::F64),
            Ty::Tuple(ts) => Ty::Tuple(ts.iter().map(|t| self.zonk(t)).collect()),
            Ty::Array(e, n) => Ty::Array(Box::new(self.zonk(&e)), n),
            Ty::Ref { inner, mutable } => Ty::Ref { inner: Box::new(self.zonk(&inner)), mutable },
            other => other,
        }
    }

    /// Unifies two types; `None` when they cannot be the same.
    pub(crate) fn unify(&mut self, a: &Ty, b: &Ty) -> Option<Ty> {
        let a = self.resolve(a);
        let b = self.resolve(b);
        if a == b {
            return Some(a);
        }
        match (&a, &b) {
            (Ty::Error, _) => Some(b),
            (_, Ty::Error) => Some(a),
            (Ty::Never, _) => Some(b),
            (_, Ty::Never) => Some(a),
            (Ty::IntVar(x), Ty::IntVar(_) | Ty::FloatVar(_)) if matches!(b, Ty::IntVar(_)) => {
                self.vars[*x as usize].1 = Some(b.clone());
                Some(b)
            }
            (Ty::FloatVar(x), Ty::FloatVar(_)) => {
                self.vars[*x as usize].1 = Some(b.clone());
                Some(b)
            }
            (Ty::IntVar(x), Ty::Scalar(d)) | (Ty::Scalar(d), Ty::IntVar(x)) if d.is_int() => {
                self.vars[*x as usize].1 = Some(Ty::Scalar(*d));
                Some(Ty::Scalar(*d))
            }
            (Ty::FloatVar(x), Ty::Scalar(d)) | (Ty::Scalar(d), Ty::FloatVar(x)) if d.is_float() && !d.is_half() => {
                self.vars[*x as usize].1 = Some(Ty::Scalar(*d));
                Some(Ty::Scalar(*d))
            }
            (Ty::Tuple(xs), Ty::Tuple(ys)) if xs.len() == ys.len() => {
                let mut out = Vec::new();
                for (x, y) in xs.iter().zip(ys) {
                    out.push(self.unify(x, y)?);
                }
                Some(Ty::Tuple(out))
            }
            (Ty::Array(x, n), Ty::Array(y, m)) if n == m => Some(Ty::Array(Box::new(self.unify(x, y)?), *n)),
            _ => None,
        }
    }

    /// Checks that `actual` can be used where `expected` is wanted, reporting a mismatch at `span`.
    pub(crate) fn expect(&mut self, expected: &Ty, actual: &Ty, span: Span) -> Ty {
        match self.unify(expected, actual) {
            Some(t) => t,
            None => {
                let (e, a) = (self.show(expected), self.show(actual));
                let hint = self.conversion_hint(expected, actual);
                self.diags.error(span, format!("mismatched types: expected `{e}`, found `{a}`{hint}"));
                expected.clone()
            }
        }
    }

    fn conversion_hint(&self, expected: &Ty, actual: &Ty) -> String {
        match (self.resolve(expected), self.resolve(actual)) {
            (Ty::Scalar(e), Ty::Scalar(a)) if e.is_primitive() && a.is_primitive() && !e.is_bool() => {
                format!("; convert explicitly with `as {e}` (no implicit conversions in kernels)")
            }
            (Ty::Param(p), Ty::IntVar(_) | Ty::FloatVar(_)) => {
                let n = &self.item.generics[p as usize].name.text;
                format!("; a literal is not a `{n}`: write `{n}::from_f64(..)`, `{n}::from_i64(..)`, `{n}::zero()` or `{n}::one()`")
            }
            (Ty::Scalar(d), Ty::FloatVar(_)) if d.is_half() => {
                format!("; write `{d}::from_f32(..)` for a `{d}` constant")
            }
            _ => String::new(),
        }
    }

    /// A type as rustc would print it.
    pub(crate) fn show(&self, t: &Ty) -> String {
        match self.resolve(t) {
            Ty::Unit => "()".into(),
            Ty::Never => "!".into(),
            Ty::Scalar(d) => d.rust_name().into(),
            Ty::Param(i) => self.item.generics.get(i as usize).map(|g| g.name.text.clone()).unwrap_or_else(|| format!("T{i}")),
            Ty::Tuple(ts) => format!("({})", ts.iter().map(|t| self.show(t)).collect::<Vec<_>>().join(", ")),
            Ty::Array(e, n) => format!("[{}; {n}]", self.show(&e)),
            Ty::Slice { elem, mutable } => format!("&{}[{}]", if mutable { "mut " } else { "" }, self.show(&elem)),
            Ty::ArrayRef { elem, len, mutable } => format!("&{}[{}; {len}]", if mutable { "mut " } else { "" }, self.show(&elem)),
            Ty::View { elem, ndim, mutable } => format!("{}<{}, {ndim}>", if mutable { "ViewMut" } else { "View" }, self.show(&elem)),
            Ty::Raw(e) => format!("Raw<{}>", self.show(&e)),
            Ty::TensorMap(e) => format!("TensorMap<{}>", self.show(&e)),
            Ty::Ref { inner, mutable } => format!("&{}{}", if mutable { "mut " } else { "" }, self.show(&inner)),
            Ty::Dim3 => "Dim3".into(),
            Ty::Struct(n) => n,
            Ty::IntVar(_) => "{integer}".into(),
            Ty::FloatVar(_) => "{float}".into(),
            Ty::Error => "{unknown}".into(),
        }
    }

    /// The bound of a generic parameter.
    pub(crate) fn bound(&self, p: u32) -> Bound {
        self.item.generics[p as usize].bound
    }

    /// Whether generic parameter `p` allows what `cap` allows (always, when its bound was an
    /// error already reported).
    pub(crate) fn bound_implies(&self, p: u32, cap: Bound) -> bool {
        let g = &self.item.generics[p as usize];
        g.unchecked || g.bound.implies(cap)
    }

    /// Whether `t` is (or resolves to) the error type.
    pub(crate) fn is_error(&self, t: &Ty) -> bool {
        matches!(self.resolve(t), Ty::Error)
    }

    // ---- structs ------------------------------------------------------------------------------

    fn find_struct(&self, name: &str) -> Option<&'a StructDef> {
        self.structs.iter().find(|s| s.name.text == name)
    }

    fn struct_field(&self, name: &str, field: &str) -> Option<Ty> {
        self.find_struct(name)?.field(field).map(|f| f.ty.clone())
    }

    /// `Name { a: .., b: .. }`: every field exactly once, each of its declared type.
    fn struct_lit(&mut self, name: &Name, fields: &[(Name, Expr)]) -> Ty {
        let Some(def) = self.find_struct(&name.text) else {
            // Only under a macro whose file could not be read: rustc checks the literal.
            for (_, e) in fields {
                self.expr(e, None);
            }
            return Ty::Error;
        };
        let mut given: Vec<&str> = Vec::new();
        for (f, e) in fields {
            match def.field(&f.text) {
                Some(fd) => {
                    if given.contains(&f.text.as_str()) {
                        self.diags.error(f.span, format!("field `{}` is given twice", f.text));
                    }
                    given.push(&f.text);
                    let t = self.expr(e, Some(&fd.ty));
                    self.expect(&fd.ty, &t, e.span);
                }
                None => {
                    self.expr(e, None);
                    self.diags.error(f.span, format!("`{}` has no field `{}`", name.text, f.text));
                }
            }
        }
        let missing: Vec<String> = def.fields.iter().filter(|f| !given.contains(&f.name.text.as_str())).map(|f| format!("`{}`", f.name.text)).collect();
        if !missing.is_empty() {
            self.diags.error(name.span, format!("missing fields {} in this `{}` literal", missing.join(", "), name.text));
        }
        Ty::Struct(name.text.clone())
    }

    // ---- classification helpers used by the operator and method rules --------------------

    /// Whether values of `t` support a numeric capability (`Bound::Number`, `Real`, `Float`,
    /// `Int`), as concrete dtypes or through a generic bound.
    pub(crate) fn has(&self, t: &Ty, cap: Bound) -> bool {
        match self.resolve(t) {
            Ty::Scalar(d) => cap.admits(d),
            Ty::Param(p) => self.bound_implies(p, cap),
            Ty::Error => true,
            Ty::IntVar(_) => matches!(cap, Bound::Int | Bound::Real | Bound::Number | Bound::Scalar),
            Ty::FloatVar(_) => matches!(cap, Bound::Float | Bound::Real | Bound::Number | Bound::Scalar),
            _ => false,
        }
    }

    pub(crate) fn is_int(&self, t: &Ty) -> bool {
        self.has(t, Bound::Int)
    }

    // ---- statements and blocks --------------------------------------------------------------

    fn block(&mut self, b: &Block, expected: Expect<'_>) -> Ty {
        let mut diverges = false;
        for s in &b.stmts {
            match s {
                Stmt::Let { pat, init, .. } => {
                    let declared = self.pat_declared(pat);
                    let t = match init {
                        Some(e) => {
                            let t = self.expr(e, declared.as_ref());
                            match &declared {
                                Some(d) => self.expect(d, &t, e.span),
                                None => t,
                            }
                        }
                        None => {
                            self.defer_pat(pat);
                            continue;
                        }
                    };
                    self.bind_pat(pat, &t);
                }
                Stmt::Expr(e) => {
                    let t = self.expr(e, None);
                    if matches!(self.resolve(&t), Ty::Never) {
                        diverges = true;
                    }
                }
            }
        }
        match &b.tail {
            Some(t) => self.expr_with(t, expected),
            None if diverges => Ty::Never,
            None => Ty::Unit,
        }
    }

    /// `let x;` / `let x: T;`: marks the bindings as initialised by their first assignment.
    fn defer_pat(&mut self, p: &Pat) {
        match p {
            Pat::Bind(l, _) => self.deferred[l.0 as usize] = true,
            Pat::Wild(_) => {}
            Pat::Tuple(ps, _) => ps.iter().for_each(|p| self.defer_pat(p)),
        }
    }

    fn pat_declared(&self, p: &Pat) -> Option<Ty> {
        match p {
            Pat::Bind(l, _) => self.locals[l.0 as usize].clone(),
            Pat::Wild(_) => None,
            Pat::Tuple(ps, _) => {
                let ts: Option<Vec<Ty>> = ps.iter().map(|p| self.pat_declared(p)).collect();
                ts.map(Ty::Tuple)
            }
        }
    }

    fn bind_pat(&mut self, p: &Pat, t: &Ty) {
        match p {
            Pat::Bind(l, _) => self.locals[l.0 as usize] = Some(t.clone()),
            Pat::Wild(_) => {}
            Pat::Tuple(ps, span) => match self.resolve(t) {
                Ty::Error => ps.iter().for_each(|p| self.bind_pat(p, &Ty::Error)),
                Ty::Tuple(ts) if ts.len() == ps.len() => {
                    for (p, t) in ps.iter().zip(ts.iter()) {
                        self.bind_pat(p, t);
                    }
                }
                other => {
                    let shown = self.show(&other);
                    self.diags.error(*span, format!("this pattern destructures a tuple of {} but the value is `{shown}`", ps.len()));
                }
            },
        }
    }

    // ---- expressions ------------------------------------------------------------------------

    /// Checks `e` where the context requires `expected` when given (the caller unifies).
    pub(crate) fn expr(&mut self, e: &Expr, expected: Option<&Ty>) -> Ty {
        self.expr_with(e, Expect::from(expected))
    }

    /// Checks `e` under an expectation (`expect.rs`).
    pub(crate) fn expr_with(&mut self, e: &Expr, expected: Expect<'_>) -> Ty {
        let t = self.expr_inner(e, expected);
        self.exprs[e.id.0 as usize] = Some(t.clone());
        t
    }

    /// The type of `e`, by its kind (the larger kinds in `exprs.rs`).
    fn expr_inner(&mut self, e: &Expr, expected: Expect<'_>) -> Ty {
        match &e.kind {
            ExprKind::Error => Ty::Error,
            ExprKind::Lit(l) => self.literal(e, l, expected),
            ExprKind::Local(l) => self.local(e, *l),
            ExprKind::Const { ty, name } => self.constant(e.id, ty, name),
            ExprKind::Unary(op, inner) => self.unary(*op, inner, expected, e.span),
            ExprKind::Binary(op, l, r) => self.binary(*op, l, r, e.span),
            ExprKind::Assign { op: None, place, value }
                if matches!(&place.kind, ExprKind::Local(l) if self.deferred[l.0 as usize] && self.locals[l.0 as usize].is_none()) =>
            {
                self.first_assignment(place, value)
            }
            ExprKind::Assign { op, place, value } => self.assign(e, *op, place, value),
            ExprKind::Cast(inner, to) => self.cast(inner, to, e.span),
            ExprKind::Ascribed(inner, ty) => {
                let t = self.expr(inner, Some(ty));
                self.expect(ty, &t, inner.span)
            }
            ExprKind::Ref { mutable, expr } => {
                let t = self.expr(expr, None);
                self.check_place(expr, *mutable);
                Ty::Ref { inner: Box::new(t), mutable: *mutable }
            }
            ExprKind::Call { callee, args } => self.call(e, callee, args, expected.only_has_type()),
            ExprKind::MethodCall { receiver, method, args } => self.method(e.id, receiver, method, args, e.span),
            ExprKind::Index { base, indices } => self.index(base, indices, e.span),
            ExprKind::Field { base, field } => self.field(base, field),
            ExprKind::StructLit { name, fields } => self.struct_lit(name, fields),
            ExprKind::TupleField { base, index } => self.tuple_field(e, base, *index),
            ExprKind::Tuple(elems) => self.tuple(elems, expected),
            ExprKind::ArrayList(elems) => self.array_list(e, elems, expected),
            ExprKind::ArrayRepeat { value, len } => {
                let elem_exp = match expected.only_has_type().map(|t| self.resolve(t)) {
                    Some(Ty::Array(e, _)) => Some(*e),
                    _ => None,
                };
                let t = self.expr(value, elem_exp.as_ref());
                Ty::Array(Box::new(t), *len)
            }
            ExprKind::Block(b) => self.block(b, expected),
            ExprKind::If { cond, then, els } => self.if_expr(cond, then, els.as_deref(), expected),
            ExprKind::Match { scrutinee, arms } => self.match_expr(scrutinee, arms, expected.for_branches()),
            ExprKind::While { cond, body, .. } => {
                let ct = self.expr(cond, Some(&Ty::Scalar(DType::Bool)));
                self.expect(&Ty::Scalar(DType::Bool), &ct, cond.span);
                let bt = self.block(body, Expect::Has(&Ty::Unit));
                self.expect(&Ty::Unit, &bt, body.span);
                Ty::Unit
            }
            ExprKind::Loop { id, body, .. } => {
                let bt = self.block(body, Expect::Has(&Ty::Unit));
                self.expect(&Ty::Unit, &bt, body.span);
                self.loop_breaks.remove(id).unwrap_or(Ty::Never)
            }
            ExprKind::For { var, range, body, .. } => self.for_loop(*var, range, body),
            ExprKind::Break { target, value } => self.break_expr(e, *target, value.as_deref()),
            ExprKind::Continue { .. } => Ty::Never,
            ExprKind::Print { pieces, args } => self.print(pieces, args),
            ExprKind::Return(v) => self.return_expr(e, v.as_deref()),
        }
    }

    fn constant(&mut self, id: ExprId, ty: &Ty, name: &Name) -> Ty {
        let n = name.text.as_str();
        let resolved = AssocConst::from_name(n);
        let t = match (ty, resolved) {
            (Ty::Scalar(d), Some(c)) if d.is_float() && c.on_float() => Ty::Scalar(*d),
            (Ty::Scalar(d), Some(AssocConst::Bits)) if d.is_int() => Ty::Scalar(DType::U32),
            (Ty::Scalar(d), Some(c)) if d.is_int() && c.on_int() => Ty::Scalar(*d),
            (Ty::Param(p), _) => {
                let g = &self.item.generics[*p as usize].name.text;
                // Matched without case: `T::max` also means `T::max_value()`.
                let f = NumConst::from_name(&n.to_uppercase()).and_then(NumConst::trait_fn).unwrap_or(NumFn::Zero);
                self.diags.error(
                    name.span,
                    format!("generic `{g}` has no associated constants; call the trait function instead: `{g}::{}()`", f.rust_name()),
                );
                return ty.clone();
            }
            (Ty::Error, _) => return Ty::Error,
            (other, _) => {
                let shown = self.show(other);
                let known = match other {
                    Ty::Scalar(d) if d.is_float() => {
                        let names: Vec<&str> = NumConst::ALL.iter().map(|c| c.rust_name()).collect();
                        format!("; float types have {}", names.join(", "))
                    }
                    Ty::Scalar(d) if d.is_int() => "; integer types have MAX, MIN and BITS".to_string(),
                    _ => String::new(),
                };
                self.diags.error(name.span, format!("no associated constant `{n}` on `{shown}` in kernels{known}"));
                return Ty::Error;
            }
        };
        if let Some(c) = resolved {
            self.consts.insert(id.0, c);
        }
        t
    }

    /// `-x`, `!x`, `*x`. As in rustc, `-` and `!` pass their expectation to the operand (so that
    /// `-1 as i8` is an `i8` literal), `*` none.
    fn unary(&mut self, op: UnOp, inner: &Expr, expected: Expect<'_>, span: Span) -> Ty {
        match op {
            UnOp::Deref => {
                let t = self.expr(inner, None);
                match self.resolve(&t) {
                    Ty::Ref { inner, .. } => *inner,
                    Ty::Error => Ty::Error,
                    other => {
                        let shown = self.show(&other);
                        self.diags.error(span, format!("type `{shown}` cannot be dereferenced; `*` applies to `&T` / `&mut T` parameters"));
                        Ty::Error
                    }
                }
            }
            UnOp::Neg => {
                let t = self.expr_with(inner, expected);
                if let ExprKind::Lit(Lit::Int { .. }) = inner.kind {
                    if let Some(l) = self.int_lits.iter_mut().rev().find(|l| l.0 == inner.id) {
                        l.2 = true;
                    }
                }
                let ok = match self.resolve(&t) {
                    Ty::Scalar(d) => d.is_signed_int() || d.is_float() || d.is_complex(),
                    Ty::Param(p) => self.bound_implies(p, Bound::Float),
                    Ty::IntVar(_) => {
                        // Checked once the literal's type is known (`check_negations`).
                        self.negated_vars.push((inner.id, span));
                        true
                    }
                    Ty::FloatVar(_) | Ty::Error => true,
                    _ => false,
                };
                if !ok {
                    self.negation_error(&t, span);
                }
                t
            }
            UnOp::Not => {
                let t = self.expr_with(inner, expected);
                let ok = matches!(self.resolve(&t), Ty::Scalar(DType::Bool) | Ty::Error) || self.is_int(&t);
                if !ok {
                    let shown = self.show(&t);
                    self.diags.error(span, format!("cannot apply `!` to type `{shown}`"));
                }
                t
            }
        }
    }

    /// A binary operator. As in rustc, the operands get no expectation from the context: the
    /// left one is checked alone, the right one against it (except for shifts), and the operator
    /// unifies them; a literal operand takes its type from the other operand, else defaults.
    fn binary(&mut self, op: BinOp, l: &Expr, r: &Expr, span: Span) -> Ty {
        if op.is_logical() {
            let b = Ty::Scalar(DType::Bool);
            let lt = self.expr(l, Some(&b));
            self.expect(&b, &lt, l.span);
            let rt = self.expr(r, Some(&b));
            self.expect(&b, &rt, r.span);
            return b;
        }
        if op.is_comparison() {
            let lt = self.expr(l, None);
            let rt = self.expr(r, Some(&lt));
            let t = self.expect(&lt, &rt, r.span);
            let ordered = !matches!(op, BinOp::Eq | BinOp::Ne);
            let ok = if ordered {
                self.has(&t, Bound::Real) || matches!(self.resolve(&t), Ty::Scalar(DType::Bool))
            } else {
                matches!(self.resolve(&t), Ty::Scalar(_) | Ty::Param(_) | Ty::IntVar(_) | Ty::FloatVar(_) | Ty::Error)
            };
            if !ok {
                let shown = self.show(&t);
                self.diags.error(span, format!("`{}` cannot compare values of type `{shown}`", op.symbol()));
            }
            return Ty::Scalar(DType::Bool);
        }
        let lt = self.expr(l, None);
        self.binary_types(op, &lt, r, span)
    }

    /// The right operand and result of an arithmetic, bitwise or shift operator whose left operand
    /// has type `lt` (also used by compound assignment).
    fn binary_types(&mut self, op: BinOp, lt: &Ty, r: &Expr, span: Span) -> Ty {
        if op.is_shift() {
            let rt = self.expr(r, None);
            if self.is_error(lt) || self.is_error(&rt) {
                return lt.clone();
            }
            if !self.is_int(lt) {
                let shown = self.show(lt);
                self.diags.error(span, format!("`{}` needs an integer on the left, found `{shown}`", op.symbol()));
            }
            match self.resolve(lt) {
                Ty::Param(_) => {
                    self.expect(&Ty::Scalar(DType::U32), &rt, r.span);
                }
                _ => {
                    if !self.is_int(&rt) || matches!(self.resolve(&rt), Ty::Param(_)) {
                        let shown = self.show(&rt);
                        self.diags.error(r.span, format!("the shift amount must be an integer, found `{shown}`"));
                    }
                }
            }
            return lt.clone();
        }
        let rt = self.expr(r, Some(lt));
        let t = self.expect(lt, &rt, r.span);
        let rt = self.resolve(&t);
        let ok = match op {
            BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div => self.has(&rt, Bound::Number),
            BinOp::Rem => self.has(&rt, Bound::Float) || self.has(&rt, Bound::Int),
            BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor => self.is_int(&rt) || rt == Ty::Scalar(DType::Bool),
            _ => unreachable!("comparison and logical operators are handled by the caller"),
        };
        if !ok {
            let shown = self.show(&rt);
            let hint = match (&rt, op) {
                (Ty::Param(p), _) => format!(
                    "; the bound `{}: {}` does not allow it",
                    self.item.generics[*p as usize].name.text,
                    self.bound(*p).name()
                ),
                _ => String::new(),
            };
            self.diags.error(span, format!("cannot apply `{}` to values of type `{shown}`{hint}", op.symbol()));
        }
        t
    }

    fn cast(&mut self, inner: &Expr, to: &Ty, span: Span) -> Ty {
        // The target never constrains the operand; it is only offered to a literal operand
        // (`300 as u8` types `300` as `u8`, and is out of range): see `expect.rs`.
        let from = self.expr_with(inner, Expect::Cast(to));
        let from_r = self.resolve(&from);
        let target_ok = matches!(to, Ty::Scalar(d) if d.is_primitive());
        let source_ok = match &from_r {
            Ty::Scalar(d) => d.is_primitive() && !(d.is_bool() && matches!(to, Ty::Scalar(t) if t.is_float())),
            Ty::IntVar(_) | Ty::FloatVar(_) => true,
            Ty::Error => return to.clone(),
            _ => false,
        };
        let bool_target = matches!(to, Ty::Scalar(DType::Bool)) && !matches!(from_r, Ty::Scalar(DType::Bool));
        if !target_ok || !source_ok || bool_target {
            let (f, t) = (self.show(&from), self.show(to));
            let hint = match (&from_r, to) {
                (Ty::Param(_), _) => "; for a generic value use `x.to_f64()` and `T::from_f64(..)`".to_string(),
                (_, Ty::Param(p)) => {
                    let n = &self.item.generics[*p as usize].name.text;
                    format!("; use `{n}::from_f64(..)` or `{n}::from_i64(..)`")
                }
                (Ty::Scalar(d), _) if d.is_half() => "; use `x.to_f32()`".to_string(),
                (_, Ty::Scalar(d)) if d.is_half() => format!("; use `{d}::from_f32(..)`"),
                (_, Ty::Scalar(DType::Bool)) => "; compare instead: `x != 0`".to_string(),
                _ => String::new(),
            };
            self.diags.error(span, format!("cannot cast `{f}` as `{t}`{hint}"));
        }
        to.clone()
    }

    fn deref(&self, t: &Ty) -> Ty {
        match self.resolve(t) {
            Ty::Ref { inner, .. } => *inner,
            other => other,
        }
    }

    /// Checks that `e` denotes a place (and a mutable one when `mutable`).
    pub(crate) fn check_place(&mut self, e: &Expr, mutable: bool) {
        match &e.kind {
            ExprKind::Local(l) => {
                let local = &self.item.locals[l.0 as usize];
                if mutable && !local.mutable && !self.deferred[l.0 as usize] {
                    // A `&mut` reference held in an immutable binding is fine: writing through it.
                    if !matches!(self.locals[l.0 as usize].as_ref().map(|t| self.resolve(t)), Some(Ty::Ref { mutable: true, .. })) {
                        self.diags.error(e.span, format!("cannot assign to `{}`: it is not mutable; declare it with `let mut {}`", local.name.text, local.name.text));
                    }
                }
            }
            ExprKind::Index { base, .. } => {
                let bt = self.exprs[base.id.0 as usize].clone().unwrap_or(Ty::Unit);
                let bt = self.deref(&bt);
                match bt {
                    Ty::Slice { mutable: m, .. } | Ty::ArrayRef { mutable: m, .. } | Ty::View { mutable: m, .. } if mutable && !m => {
                        let shown = self.show(&bt);
                        let fix = match &bt {
                            Ty::View { elem, ndim, .. } => format!("ViewMut<{}, {ndim}>", self.show(elem)),
                            Ty::Slice { elem, .. } => format!("&mut [{}]", self.show(elem)),
                            _ => format!("&mut {}", shown.trim_start_matches('&')),
                        };
                        self.diags.error(base.span, format!("cannot write through `{shown}`: it is read-only; take the argument as `{fix}`"));
                    }
                    Ty::Raw(_) if mutable => {
                        self.diags.error(base.span, "a `Raw<T>` argument is read-only; return the value as an output (or take a `&mut T` output parameter)")
                    }
                    Ty::Raw(_) => {}
                    Ty::Array(..) => self.check_place(base, mutable),
                    _ => {}
                }
            }
            ExprKind::Field { base, .. } | ExprKind::TupleField { base, .. } => self.check_place(base, mutable),
            ExprKind::Unary(UnOp::Deref, inner) => {
                let t = self.exprs[inner.id.0 as usize].clone().unwrap_or(Ty::Unit);
                if mutable && matches!(self.resolve(&t), Ty::Ref { mutable: false, .. }) {
                    self.diags.error(e.span, "cannot write through a `&` reference; take it as `&mut`");
                }
            }
            _ => self.diags.error(e.span, "this expression is not a place that can be assigned or borrowed"),
        }
    }

    /// `a[i]` and `v[[i, j]]`. Slices and arrays take `usize` indices, as in Rust; `Raw` and
    /// `View` arguments also take `u32`, `i32`, `u64` and `i64` (the prelude's
    /// `Index<I: KernelIndex>`), the indices of one multi-index all of one type. So, as rustc infers
    /// it, a literal index of a slice is a `usize`, one of a `Raw` or `View` keeps its own type
    /// (`i32` unless something else constrains it).
    fn index(&mut self, base: &Expr, indices: &[Expr], span: Span) -> Ty {
        let bt = self.expr(base, None);
        let bt = self.deref(&bt);
        self.indexed(&bt, base.span, indices, span)
    }

    /// The element type of `bt` indexed by `indices` (each checked as an index of `bt`): `a[i]`,
    /// `v[[i, j]]`, and the argument of `get_unchecked`.
    pub(crate) fn indexed(&mut self, bt: &Ty, base_span: Span, indices: &[Expr], span: Span) -> Ty {
        let usize_ty = Ty::Scalar(DType::U64);
        let any_int = matches!(bt, Ty::View { .. } | Ty::Raw(_) | Ty::Error);
        let mut first: Option<Ty> = None;
        for i in indices {
            let exp = if any_int { first.clone() } else { Some(usize_ty.clone()) };
            let it = self.expr(i, exp.as_ref());
            let ok = match self.resolve(&it) {
                Ty::Scalar(DType::U64) | Ty::Error => true,
                Ty::Scalar(DType::U32 | DType::I32 | DType::I64) => any_int,
                Ty::IntVar(_) => {
                    if !any_int {
                        self.unify(&it, &usize_ty);
                    }
                    true
                }
                _ => false,
            };
            if !ok {
                let shown = self.show(&it);
                let msg = if any_int {
                    format!("`Raw` and `View` arguments are indexed by `usize`, `u32`, `i32`, `u64` or `i64`, found `{shown}`; convert with `as usize`")
                } else {
                    format!("slices and arrays are indexed by `usize`, found `{shown}`; write `[i as usize]` (`Raw` and `View` arguments also take `u32` and `i32` indices)")
                };
                self.diags.error(i.span, msg);
            } else if let Some(f) = &first {
                if self.unify(f, &it).is_none() {
                    let (a, b) = (self.show(f), self.show(&it));
                    self.diags.error(i.span, format!("the indices of a multi-index have one type: expected `{a}`, found `{b}`; convert with `as {a}`"));
                }
            } else {
                first = Some(it);
            }
        }
        match bt {
            Ty::Error => Ty::Error,
            Ty::View { elem, ndim, .. } => {
                if indices.len() != 1 && indices.len() != *ndim as usize {
                    self.diags.error(span, format!("a `View` of {ndim} dimension(s) takes {ndim} indices (`v[[i, j]]`) or one flat index"));
                }
                (**elem).clone()
            }
            Ty::Slice { elem, .. } | Ty::ArrayRef { elem, .. } | Ty::Array(elem, _) | Ty::Raw(elem) => {
                if indices.len() != 1 {
                    self.diags.error(span, "only `View` arguments take a multi-index (`v[[i, j]]`); index with one integer");
                }
                (**elem).clone()
            }
            other => {
                let shown = self.show(other);
                self.diags.error(base_span, format!("cannot index into a value of type `{shown}`"));
                Ty::Error
            }
        }
    }

    fn match_expr(&mut self, scrutinee: &Expr, arms: &[Arm], expected: Expect<'_>) -> Ty {
        let st = self.expr(scrutinee, None);
        let sr = self.resolve(&st);
        let ok = matches!(sr, Ty::Scalar(DType::Bool) | Ty::IntVar(_)) || matches!(sr, Ty::Scalar(d) if d.is_int());
        if !ok && sr != Ty::Error {
            let shown = self.show(&st);
            self.diags.error(scrutinee.span, format!("`match` in kernels works on integers and `bool`, found `{shown}`; use `if`/`else` for other types"));
        }
        let mut result: Option<Ty> = None;
        for arm in arms {
            self.match_pat(&arm.pat, &st);
            if let Some(g) = &arm.guard {
                let gt = self.expr(g, Some(&Ty::Scalar(DType::Bool)));
                self.expect(&Ty::Scalar(DType::Bool), &gt, g.span);
            }
            let bt = match result.clone() {
                Some(r) => self.expr(&arm.body, Some(&r)),
                None => self.expr_with(&arm.body, expected),
            };
            result = Some(match result {
                Some(r) => match self.unify(&r, &bt) {
                    Some(t) => t,
                    None => {
                        let (a, b) = (self.show(&r), self.show(&bt));
                        self.diags.error(arm.body.span, format!("`match` arms have incompatible types: `{a}` and `{b}`"));
                        r
                    }
                },
                None => bt,
            });
        }
        if ok {
            let pats: Vec<&MatchPat> = arms.iter().filter(|a| a.guard.is_none()).map(|a| &a.pat).collect();
            match self.resolve(&st) {
                Ty::Scalar(d) => self.exhaustive(d, &pats, scrutinee.span),
                // A literal's type may still be decided by a later use: checked at the end.
                _ => self.pending_matches.push((scrutinee.id, scrutinee.span, pats.into_iter().cloned().collect())),
            }
        }
        result.unwrap_or(Ty::Never)
    }

    /// rustc's exhaustiveness check of a `match` on `d`, given the patterns of its unguarded arms.
    fn exhaustive(&mut self, d: DType, pats: &[&MatchPat], span: Span) {
        if let Some(missing) = uncovered(d, pats) {
            let shown = if d.is_bool() { (missing != 0).to_string() } else { missing.to_string() };
            self.diags.error(span, format!("non-exhaustive `match`: `{shown}` is not covered; add a `_ => ...` arm"));
        }
    }

    /// The `match`es whose scrutinee was a literal of unknown type, now that it is known.
    /// Each `gpu_print!` argument is a number or `bool` its placeholder formats (`{:x}` integers,
    /// `{:.N}` floats).
    fn check_pending_prints(&mut self) {
        for (arg, span, spec) in std::mem::take(&mut self.pending_prints) {
            let Some(t) = self.exprs[arg.0 as usize].clone() else { continue };
            let t = match self.zonk(&t) {
                Ty::Ref { inner, .. } => *inner,
                t => t,
            };
            let shown = self.show(&t);
            let problem = match (&t, spec) {
                (Ty::Error, _) => None,
                (Ty::Scalar(d), PrintSpec::Display) if !d.is_complex() => None,
                (Ty::Scalar(d), PrintSpec::LowerHex | PrintSpec::UpperHex) if d.is_int() => None,
                (Ty::Scalar(d), PrintSpec::Precision(_)) if d.is_float() => None,
                (Ty::Scalar(d), PrintSpec::LowerHex | PrintSpec::UpperHex) if !d.is_complex() => {
                    Some(format!("`{{:x}}`/`{{:X}}` format integers, not `{shown}`; use `{{}}`"))
                }
                (Ty::Scalar(d), PrintSpec::Precision(_)) if !d.is_complex() => {
                    Some(format!("`{{:.N}}` formats floats, not `{shown}`; use `{{}}` or convert with `as f32`"))
                }
                (Ty::Scalar(_), _) => Some(format!("`gpu_print!` cannot print the complex value of type `{shown}`; print `.re` and `.im`")),
                (Ty::Param(_), _) => Some(format!("`gpu_print!` cannot print a value of the generic type `{shown}`; convert it first: `x.to_f64()`")),
                (Ty::Array(..) | Ty::Slice { .. } | Ty::ArrayRef { .. } | Ty::View { .. } | Ty::Raw(_), _) => {
                    Some(format!("`gpu_print!` prints numbers and `bool`, not `{shown}`; print its elements (`a[i]`)"))
                }
                _ => Some(format!("`gpu_print!` prints numbers and `bool` (f16/bf16 as f32), not `{shown}`")),
            };
            if let Some(msg) = problem {
                self.diags.error(span, msg);
            }
        }
    }

    fn check_pending_matches(&mut self) {
        for (scrutinee, span, pats) in std::mem::take(&mut self.pending_matches) {
            let Some(t) = self.exprs[scrutinee.0 as usize].clone() else { continue };
            if let Ty::Scalar(d) = self.zonk(&t) {
                self.exhaustive(d, &pats.iter().collect::<Vec<_>>(), span);
            }
        }
    }

    fn match_pat(&mut self, p: &MatchPat, st: &Ty) {
        match p {
            MatchPat::Lit(e) => {
                let t = self.expr(e, Some(st));
                self.expect(st, &t, e.span);
            }
            MatchPat::Range { lo, hi, .. } => {
                for e in [lo, hi] {
                    let t = self.expr(e, Some(st));
                    self.expect(st, &t, e.span);
                }
            }
            MatchPat::Or(ps) => {
                for p in ps {
                    self.match_pat(p, st);
                }
            }
            MatchPat::Wild(Some(l)) => self.locals[l.0 as usize] = Some(st.clone()),
            MatchPat::Wild(None) => {}
            MatchPat::Bind(l, p) => {
                self.locals[l.0 as usize] = Some(st.clone());
                self.match_pat(p, st);
            }
        }
    }
}

/// The value range of an integer or bool type, as `i128`.
pub(crate) fn int_range(d: DType) -> (i128, i128) {
    if d.is_bool() {
        return (0, 1);
    }
    let bits = d.bits();
    if d.is_signed_int() { (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1) } else { (0, (1i128 << bits) - 1) }
}

/// The value of a constant pattern expression: a literal, a negated literal, `MIN`/`MAX`.
fn pattern_value(e: &Expr, d: DType) -> Option<i128> {
    match &e.kind {
        ExprKind::Lit(Lit::Int { value, .. }) => i128::try_from(*value).ok(),
        ExprKind::Lit(Lit::Bool(b)) => Some(*b as i128),
        ExprKind::Unary(UnOp::Neg, inner) => pattern_value(inner, d).map(|v| -v),
        ExprKind::Const { name, .. } => match AssocConst::from_name(&name.text)? {
            AssocConst::Num(NumConst::Min) => Some(int_range(d).0),
            AssocConst::Num(NumConst::Max) => Some(int_range(d).1),
            AssocConst::Bits | AssocConst::Num(_) => None,
        },
        _ => None,
    }
}

/// Intervals (inclusive) of the values a pattern matches; `None` when not computable.
fn pattern_intervals(p: &MatchPat, d: DType, out: &mut Vec<(i128, i128)>) {
    match p {
        MatchPat::Wild(_) => out.push(int_range(d)),
        MatchPat::Bind(_, p) => pattern_intervals(p, d, out),
        MatchPat::Or(ps) => ps.iter().for_each(|p| pattern_intervals(p, d, out)),
        MatchPat::Lit(e) => {
            if let Some(v) = pattern_value(e, d) {
                out.push((v, v));
            }
        }
        MatchPat::Range { lo, hi, inclusive } => {
            if let (Some(l), Some(h)) = (pattern_value(lo, d), pattern_value(hi, d)) {
                let h = if *inclusive { h } else { h - 1 };
                if l <= h {
                    out.push((l, h));
                }
            }
        }
    }
}

/// The smallest value of `d` that none of the patterns (of the unguarded arms: guarded arms count
/// as matching nothing) matches, if any (rustc's exhaustiveness check for integers and bools).
pub(crate) fn uncovered(d: DType, pats: &[&MatchPat]) -> Option<i128> {
    let mut iv = Vec::new();
    for p in pats {
        pattern_intervals(p, d, &mut iv);
    }
    iv.sort();
    let (lo, hi) = int_range(d);
    let mut next = lo;
    for (l, h) in iv {
        if l > next {
            return Some(next);
        }
        if h >= next {
            if h >= hi {
                return None;
            }
            next = h + 1;
        }
    }
    Some(next)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Type-checks a file; returns the module, each item's types and the rendered errors.
    fn check_src(src: &str) -> (Module, Vec<Types>, Vec<String>) {
        let file = syn::parse_file(src).expect("valid Rust");
        let mut diags = Diagnostics::new();
        let module = crate::front::lower_file(&file, &mut diags);
        assert!(diags.is_empty(), "front-end errors in a typeck test");
        let types = check(&module, &mut diags);
        let errors = match diags.finish() {
            Ok(()) => Vec::new(),
            Err(e) => e.into_iter().map(|e| e.to_string()).collect(),
        };
        (module, types, errors)
    }

    /// The type of each local, by name (the last binding of that name).
    fn local(module: &Module, types: &[Types], name: &str) -> Ty {
        let item = &module.items[0];
        let i = item.locals.iter().rposition(|l| l.name.text == name).expect("a local of that name");
        types[0].locals[i].clone()
    }

    #[test]
    fn unconstrained_literals_default_like_rustc() {
        let (m, t, e) = check_src("#[device] fn f() { let a = 1; let b = 2.5; let c = -7; }");
        assert!(e.is_empty(), "{e:?}");
        assert_eq!(local(&m, &t, "a"), Ty::Scalar(DType::I32));
        assert_eq!(local(&m, &t, "b"), Ty::Scalar(DType::F64));
        assert_eq!(local(&m, &t, "c"), Ty::Scalar(DType::I32));
    }

    #[test]
    fn literals_take_their_type_from_context() {
        let src = "#[device] fn f(n: u64, x: f32, s: &[u8]) { let a: u8 = 3; let b = n + 1; let c = 1.5 * x; \
                   let d = s[2]; let e = 0; let g = e + n; let mut h = 0; h += 2u16; }";
        let (m, t, e) = check_src(src);
        assert!(e.is_empty(), "{e:?}");
        assert_eq!(local(&m, &t, "a"), Ty::Scalar(DType::U8));
        assert_eq!(local(&m, &t, "b"), Ty::Scalar(DType::U64));
        assert_eq!(local(&m, &t, "c"), Ty::Scalar(DType::F32));
        assert_eq!(local(&m, &t, "d"), Ty::Scalar(DType::U8));
        // A literal bound to a local takes the type of a later use, as in rustc.
        assert_eq!(local(&m, &t, "e"), Ty::Scalar(DType::U64));
        assert_eq!(local(&m, &t, "h"), Ty::Scalar(DType::U16));
    }

    #[test]
    fn deferred_initialisation_takes_the_assigned_type() {
        let (m, t, e) = check_src("#[device] fn f(c: bool) -> i64 { let z; if c { z = 1i64; } else { z = 2; } z }");
        assert!(e.is_empty(), "{e:?}");
        assert_eq!(local(&m, &t, "z"), Ty::Scalar(DType::I64));
    }

    #[test]
    fn no_implicit_conversions() {
        let (_, _, e) = check_src("#[device] fn f(a: f32, b: f64) -> f32 { a * b }");
        assert_eq!(e.len(), 1);
        assert!(e[0].contains("expected `f32`, found `f64`") && e[0].contains("as f32"), "{e:?}");
        let (_, _, e) = check_src("#[device] fn f<T: Float>(x: T) -> T { x * 2.0 }");
        assert_eq!(e.len(), 1);
        assert!(e[0].contains("T::from_f64"), "{e:?}");
    }

    #[test]
    fn an_error_is_reported_once() {
        // The unknown method's result feeds three more operations: one message.
        let (_, _, e) = check_src("#[device] fn f(x: f32) -> f32 { let y = x.frobnicate(); let z = y * 2.0 + y.sqrt(); z }");
        assert_eq!(e.len(), 1, "{e:?}");
    }

    #[test]
    fn exhaustiveness_of_integer_matches() {
        let (_, _, e) = check_src("#[device] fn f(x: u8) -> i32 { match x { 0..=127 => 0, 128..=255 => 1 } }");
        assert!(e.is_empty(), "{e:?}");
        let (_, _, e) = check_src("#[device] fn f(x: u8) -> i32 { match x { 0..=127 => 0, 129..=255 => 1 } }");
        assert_eq!(e.len(), 1);
        assert!(e[0].contains("`128` is not covered"), "{e:?}");
        let (_, _, e) = check_src("#[device] fn f(x: bool) -> i32 { match x { true => 0, false => 1 } }");
        assert!(e.is_empty(), "{e:?}");
        let (_, _, e) = check_src("#[device] fn f(x: i8) -> i32 { match x { i8::MIN..=-1 => 0, 0 => 1, y if y > 0 => 2 } }");
        assert_eq!(e.len(), 1, "a guarded arm covers nothing: {e:?}");
    }

    #[test]
    fn literals_must_fit_their_type() {
        let (_, _, e) = check_src("#[device] fn f() -> u8 { 300 as u8 }");
        assert_eq!(e.len(), 1);
        assert!(e[0].contains("literal out of range for `u8`"), "{e:?}");
        let (_, _, e) = check_src("#[device] fn f() -> i8 { let a: i8 = -128; let b = 127i8; a + b }");
        assert!(e.is_empty(), "{e:?}");
        let (_, _, e) = check_src("#[device] fn f() -> i8 { 128 }");
        assert_eq!(e.len(), 1, "{e:?}");
        let (_, _, e) = check_src("#[device] fn f() -> u32 { 3_000_000_000 as u32 }");
        assert!(e.is_empty(), "the cast types the literal: {e:?}");
    }

    #[test]
    fn file_consts_and_imported_float_consts() {
        let src = "const N: u32 = 8; #[device] fn f() -> u8 { let a = [0u8; N as usize]; a[0] + MISSING }";
        let file = syn::parse_file(src).unwrap();
        let mut diags = Diagnostics::new();
        crate::front::lower_file(&file, &mut diags);
        assert_eq!(diags.len(), 1, "only `MISSING` is unknown: {diags:?}");
        let src = "use std::f32::consts::PI; const N: u32 = 8; const LEN: usize = 4; const SCALE: f64 = 0.5;\n\
                   #[device] fn f(x: f32) -> (f32, u32, f64) { let a = [0u8; LEN]; let s = shared_array::<f32, { LEN * 2 }>(); \
                   (x * PI + s[0], N * 2 + a[1] as u32, SCALE) }";
        let (m, t, e) = check_src(src);
        assert!(e.is_empty(), "{e:?}");
        assert_eq!(local(&m, &t, "a"), Ty::Array(Box::new(Ty::Scalar(DType::U8)), 4));
        assert_eq!(local(&m, &t, "s"), Ty::ArrayRef { elem: Box::new(Ty::Scalar(DType::F32)), len: 8, mutable: true });
    }

    #[test]
    fn slices_index_with_usize_views_also_with_u32() {
        let (_, _, e) = check_src("#[device] fn f(s: &[f32], i: u32) -> f32 { s[i] }");
        assert_eq!(e.len(), 1);
        let (_, _, e) = check_src("#[device] fn f(v: View<f32, 2>, i: u32, j: i32) -> f32 { v[[i, i]] + v[j] }");
        assert!(e.is_empty(), "{e:?}");
        let (_, _, e) = check_src("#[device] fn f(v: View<f32, 2>, i: u32, j: i32) -> f32 { v[[i, j]] }");
        assert_eq!(e.len(), 1, "one multi-index, one index type: {e:?}");
    }
}
