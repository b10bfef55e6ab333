//! The types of the expression kinds that take more than a line (`Checker::expr_inner`
//! dispatches): literals, locals, assignments, fields, tuples, arrays, `if`, `for`, `break`,
//! `return` and `gpu_print!`. Calls, methods, indexing, operators and `match` have files or
//! functions of their own.

use super::expect::Expect;
use super::Checker;
use crate::ir::*;
use cuprum_abi::dtype::DType;

impl Checker<'_, '_> {
    /// A literal: recorded for inference (`literals.rs`), typed from the expectation.
    pub(super) fn literal(&mut self, e: &Expr, l: &Lit, expected: Expect<'_>) -> Ty {
        match l {
            Lit::Int { value, .. } => self.int_lits.push((e.id, *value, false, e.span)),
            Lit::Float { text, .. } => self.float_lits.push((e.id, text.clone(), e.span)),
            Lit::Bool(_) => {}
        }
        self.lit(l, expected)
    }

    /// A local's type; an error for a `let x;` read before its first assignment.
    pub(super) fn local(&mut self, e: &Expr, l: LocalId) -> Ty {
        match &self.locals[l.0 as usize] {
            Some(t) => t.clone(),
            None => {
                let n = &self.item.locals[l.0 as usize].name.text;
                self.diags.error(e.span, format!("type annotations needed for `{n}`: give its `let` a type (`let {n}: f32;`) or assign it before this use"));
                self.locals[l.0 as usize] = Some(Ty::Error);
                Ty::Error
            }
        }
    }

    /// The first assignment of `let x;`, which gives `x` its type.
    pub(super) fn first_assignment(&mut self, place: &Expr, value: &Expr) -> Ty {
        let ExprKind::Local(l) = &place.kind else { unreachable!() };
        let vt = self.expr(value, None);
        self.locals[l.0 as usize] = Some(vt.clone());
        self.exprs[place.id.0 as usize] = Some(vt);
        Ty::Unit
    }

    /// `place = value` or `place op= value`.
    pub(super) fn assign(&mut self, e: &Expr, op: Option<BinOp>, place: &Expr, value: &Expr) -> Ty {
        let pt = self.expr(place, None);
        self.check_place(place, true);
        match op {
            None => {
                let vt = self.expr(value, Some(&pt));
                self.expect(&pt, &vt, value.span);
            }
            Some(op) => {
                self.binary_types(op, &pt, value, e.span);
            }
        }
        Ty::Unit
    }

    /// `base.field`: of a `Dim3`, a complex number or a `#[device]` struct.
    pub(super) fn field(&mut self, base: &Expr, field: &Name) -> Ty {
        let bt = self.expr(base, None);
        let bt = self.deref(&bt);
        match (&bt, field.text.as_str()) {
            (Ty::Error, _) => Ty::Error,
            (Ty::Dim3, "x" | "y" | "z") => Ty::Scalar(DType::U32),
            (Ty::Scalar(d), "re" | "im") if d.is_complex() => Ty::Scalar(d.complex_part().unwrap()),
            (Ty::Struct(n), f) if self.struct_field(n, f).is_some() => self.struct_field(n, f).unwrap(),
            (Ty::Struct(n), _) if self.find_struct(n).is_none() => Ty::Error,
            _ => {
                let shown = self.show(&bt);
                let hint = match &bt {
                    Ty::Tuple(_) => "; tuple fields are numbered: `t.0`",
                    Ty::Dim3 => "; `Dim3` has the fields `x`, `y` and `z`",
                    _ => "",
                };
                let fields;
                let hint = match &bt {
                    Ty::Struct(n) => {
                        let names: Vec<String> = self.find_struct(n).map(|d| d.fields.iter().map(|f| format!("`{}`", f.name.text)).collect()).unwrap_or_default();
                        fields = format!("; `{n}` has the fields {}", names.join(", "));
                        fields.as_str()
                    }
                    _ => hint,
                };
                self.diags.error(field.span, format!("no field `{}` on type `{shown}`{hint}", field.text));
                Ty::Error
            }
        }
    }

    /// `base.0`.
    pub(super) fn tuple_field(&mut self, e: &Expr, base: &Expr, index: u32) -> Ty {
        let bt = self.expr(base, None);
        match self.resolve(&bt) {
            Ty::Error => Ty::Error,
            Ty::Tuple(ts) if (index as usize) < ts.len() => ts[index as usize].clone(),
            other => {
                let shown = self.show(&other);
                self.diags.error(e.span, format!("no field `{index}` on type `{shown}`"));
                Ty::Error
            }
        }
    }

    /// `(a, b, ..)`, each element under the expected tuple's element when there is one; `()`.
    pub(super) fn tuple(&mut self, elems: &[Expr], expected: Expect<'_>) -> Ty {
        let exp: Vec<Option<Ty>> = match expected.only_has_type().map(|t| self.resolve(t)) {
            Some(Ty::Tuple(ts)) if ts.len() == elems.len() => ts.into_iter().map(Some).collect(),
            _ => vec![None; elems.len()],
        };
        if elems.is_empty() {
            return Ty::Unit;
        }
        Ty::Tuple(elems.iter().zip(exp).map(|(e, x)| self.expr(e, x.as_ref())).collect())
    }

    /// `[a, b, ..]`: one element type; an empty list needs the expected array's.
    pub(super) fn array_list(&mut self, e: &Expr, elems: &[Expr], expected: Expect<'_>) -> Ty {
        let elem_exp = match expected.only_has_type().map(|t| self.resolve(t)) {
            Some(Ty::Array(e, _)) => Some(*e),
            _ => None,
        };
        let mut t = elem_exp;
        for el in elems {
            let et = self.expr(el, t.as_ref());
            t = Some(match &t {
                Some(t) => self.expect(t, &et, el.span),
                None => et,
            });
        }
        match t {
            Some(t) => Ty::Array(Box::new(t), elems.len() as u64),
            None => {
                self.diags.error(e.span, "give the empty array a type: `let a: [f32; 0] = [];`");
                Ty::Error
            }
        }
    }

    /// `if cond { .. } else ..`: a `bool` condition; without `else`, a `()` branch; with one,
    /// branches of one type (a diverging first branch takes the second's).
    pub(super) fn if_expr(&mut self, cond: &Expr, then: &Block, els: Option<&Expr>, expected: Expect<'_>) -> Ty {
        let ct = self.expr(cond, Some(&Ty::Scalar(DType::Bool)));
        self.expect(&Ty::Scalar(DType::Bool), &ct, cond.span);
        match els {
            None => {
                let tt = self.block(then, Expect::Has(&Ty::Unit));
                let span = then.tail.as_ref().map(|t| t.span).unwrap_or(then.span);
                self.expect(&Ty::Unit, &tt, span);
                Ty::Unit
            }
            Some(els) => {
                let branch = expected.for_branches();
                let tt = self.block(then, branch);
                let et = if matches!(self.resolve(&tt), Ty::Never) { self.expr_with(els, branch) } else { self.expr(els, Some(&tt)) };
                match self.unify(&tt, &et) {
                    Some(t) => t,
                    None => {
                        let (a, b) = (self.show(&tt), self.show(&et));
                        self.diags.error(els.span, format!("`if` and `else` have incompatible types: `{a}` and `{b}`"));
                        tt
                    }
                }
            }
        }
    }

    /// `for var in start..end (.step_by(s))`: a concrete integer range; `var` gets its type.
    pub(super) fn for_loop(&mut self, var: LocalId, range: &RangeLoop, body: &Block) -> Ty {
        let st = self.expr(&range.start, None);
        let et = self.expr(&range.end, Some(&st));
        let t = self.expect(&st, &et, range.end.span);
        if !self.is_int(&t) || matches!(self.resolve(&t), Ty::Param(_)) {
            let shown = self.show(&t);
            self.diags.error(range.start.span, format!("`for` ranges must be over a concrete integer type, found `{shown}`"));
        }
        if let Some(step) = &range.step {
            let usize_ty = Ty::Scalar(DType::U64);
            let s = self.expr(step, Some(&usize_ty));
            self.expect(&usize_ty, &s, step.span);
        }
        self.locals[var.0 as usize] = Some(t);
        let bt = self.block(body, Expect::Has(&Ty::Unit));
        self.expect(&Ty::Unit, &bt, body.span);
        Ty::Unit
    }

    /// `break (value)`: the loop's value type, merged over its `break`s.
    pub(super) fn break_expr(&mut self, e: &Expr, target: LoopId, value: Option<&Expr>) -> Ty {
        let vt = match value {
            Some(v) => {
                let prev = self.loop_breaks.get(&target).cloned();
                self.expr(v, prev.as_ref())
            }
            None => Ty::Unit,
        };
        let merged = match self.loop_breaks.get(&target).cloned() {
            Some(prev) => self.expect(&prev, &vt, e.span),
            None => vt,
        };
        self.loop_breaks.insert(target, merged);
        Ty::Never
    }

    /// `gpu_print!`: each argument typed, its format spec checked once types are final.
    pub(super) fn print(&mut self, pieces: &[PrintPiece], args: &[Expr]) -> Ty {
        let specs = pieces.iter().filter_map(|p| match p {
            PrintPiece::Arg { spec, .. } => Some(*spec),
            PrintPiece::Text(_) => None,
        });
        for (a, spec) in args.iter().zip(specs) {
            self.expr(a, None);
            self.pending_prints.push((a.id, a.span, spec));
        }
        Ty::Unit
    }

    /// `return (value)`: of the item's return type.
    pub(super) fn return_expr(&mut self, e: &Expr, v: Option<&Expr>) -> Ty {
        let ret = self.ret.clone();
        match v {
            Some(v) => {
                let t = self.expr(v, Some(&ret));
                self.expect(&ret, &t, v.span);
            }
            None => {
                self.expect(&ret, &Ty::Unit, e.span);
            }
        }
        Ty::Never
    }
}
