//! Calls: intrinsics, device functions (with generic inference) and associated functions.

use std::collections::HashMap;

use proc_macro2::Span;

use super::Checker;
use cuprum_abi::dtype::DType;
use crate::ir::*;
use crate::lang::{AssocFn, AtomicOp, Bound, Intrinsic, MathFn, Method, NumFn, Receiver, SpecialFn};

const U32: Ty = Ty::Scalar(DType::U32);

impl Checker<'_, '_> {
    pub(super) fn call(&mut self, e: &Expr, callee: &Callee, args: &[Expr], expected: Option<&Ty>) -> Ty {
        match callee {
            Callee::Intrinsic { intrinsic, tys, consts } => self.intrinsic(*intrinsic, tys, consts, args, expected, e.span),
            Callee::Device { name, tys } => self.device_call(e, name, tys, args, expected),
            Callee::Assoc { ty, name } => self.assoc(e.id, ty, name, args, e.span),
        }
    }

    fn arity(&mut self, name: &str, args: &[Expr], n: usize, span: Span) -> bool {
        if args.len() != n {
            self.diags.error(span, format!("`{name}` takes {n} argument(s) but {} were given", args.len()));
            for a in args {
                self.expr(a, None);
            }
            return false;
        }
        true
    }

    pub(super) fn arg(&mut self, a: &Expr, t: &Ty) -> Ty {
        let at = self.expr(a, Some(t));
        self.expect(t, &at, a.span)
    }

    fn intrinsic(&mut self, f: Intrinsic, tys: &[Ty], consts: &[u64], args: &[Expr], expected: Option<&Ty>, span: Span) -> Ty {
        use Intrinsic::*;
        let dim_tuple = |n: usize| if n == 1 { U32 } else { Ty::Tuple(vec![U32; n]) };
        // A wrong argument count is reported once; intrinsics whose type does not depend on their
        // arguments keep it, the others give up.
        let arity_ok = self.arity(f.rust_name(), args, f.arity(), span);
        match f {
            ThreadIdx | BlockIdx | BlockDim | GridDim => Ty::Dim3,
            Grid1d | GridSize1d | LaneId | WarpSize => U32,
            Grid2d | GridSize2d => dim_tuple(2),
            Grid3d | GridSize3d => dim_tuple(3),
            SyncThreads | ThreadFence | ThreadFenceBlock | GridSync => Ty::Unit,
            SyncWarp => {
                if arity_ok {
                    self.arg(&args[0], &U32);
                }
                Ty::Unit
            }
            Index | LoopSize | ReduceIndex => Ty::Scalar(DType::U64),
            SharedArray => match (tys, consts) {
                ([t], [n]) => Ty::ArrayRef { elem: Box::new(t.clone()), len: *n, mutable: true },
                _ => {
                    self.diags.error(span, "write the element type and length: `shared_array::<f32, 256>()`");
                    Ty::Error
                }
            },
            DynamicShared => match tys {
                [t] => Ty::Slice { elem: Box::new(t.clone()), mutable: true },
                _ => {
                    self.diags.error(span, "write the element type: `dynamic_shared::<f32>()`");
                    Ty::Error
                }
            },
            CpAsyncCommit => Ty::Unit,
            CpAsyncWait => {
                if !matches!(consts, [n] if *n <= 7) {
                    self.diags.error(span, "write how many committed groups may stay in flight, 0 to 7: `cp_async_wait::<0>()` waits for all");
                }
                Ty::Unit
            }
            ComplexNew | Atomic(_) | Shuffle(_) | Warp(_) | CpAsync | CpAsyncUnchecked | Load4 | Store4 | Mma(_) | LdMatrix(_) | Special(_)
                if !arity_ok =>
            {
                Ty::Error
            }
            Hopper(h) => self.hopper(h, consts, args, arity_ok, span),
            CpAsync | CpAsyncUnchecked => self.cp_async(args),
            Load4 => self.quad(false, args),
            Store4 => self.quad(true, args),
            Mma(m) => self.mma(m, args),
            LdMatrix(l) => self.ldmatrix(l, args),
            ComplexNew => {
                let part_exp = match expected.map(|t| self.resolve(t)) {
                    Some(Ty::Scalar(d)) if d.is_complex() => Some(Ty::Scalar(d.complex_part().unwrap())),
                    _ => None,
                };
                let re = self.expr(&args[0], part_exp.as_ref());
                let im = self.expr(&args[1], Some(&re));
                let t = self.expect(&re, &im, args[1].span);
                let t = match self.resolve(&t) {
                    Ty::FloatVar(_) => self.unify(&t, &Ty::Scalar(DType::F64)).unwrap_or(t),
                    other => other,
                };
                match t {
                    Ty::Scalar(DType::F32) => Ty::Scalar(DType::C32),
                    Ty::Scalar(DType::F64) => Ty::Scalar(DType::C64),
                    Ty::Error => Ty::Error,
                    other => {
                        let shown = self.show(&other);
                        self.diags.error(span, format!("`Complex::new` takes two `f32` or two `f64`, found `{shown}`"));
                        Ty::Scalar(DType::C64)
                    }
                }
            }
            Atomic(op) => self.atomic(op, args, span),
            Warp(w) if w.is_vote() => {
                let b = Ty::Scalar(DType::Bool);
                self.arg(&args[0], &b);
                b
            }
            Warp(w) => {
                let vt = self.expr(&args[0], expected);
                if !self.is_error(&vt) && !self.has(&vt, w.bound()) {
                    let (shown, what) = (self.show(&vt), if w.bound() == Bound::Real { "ordered numbers (integers or floats)" } else { "numbers" });
                    self.diags.error(args[0].span, format!("`{}` works on {what}, found `{shown}`", w.rust_name()));
                }
                if w.has_width() {
                    self.arg(&args[1], &U32);
                }
                vt
            }
            // `erf<T: Float>(x: T) -> T`: a literal argument stays one (`erf(0.5)` is an `f64`
            // unless its use says otherwise), as rustc infers it.
            Special(f) => {
                let xt = self.expr(&args[0], expected);
                if !self.is_error(&xt) && !self.has(&xt, Bound::Float) {
                    let shown = self.show(&xt);
                    let hint = match self.resolve(&xt) {
                        Ty::IntVar(_) => "; write the literal as a float (`1.0`)",
                        Ty::Scalar(d) if d.is_int() => "; convert it first (`x as f64`)",
                        Ty::Param(_) => "; bound the parameter by `Float`",
                        _ => "",
                    };
                    self.diags.error(
                        args[0].span,
                        format!("`{}` takes a float (`f16`, `bf16`, `f32`, `f64` or a `T: Float`), found `{shown}`{hint}", f.rust_name()),
                    );
                    return Ty::Error;
                }
                xt
            }
            Shuffle(s) => {
                self.arg(&args[0], &U32);
                let vt = self.expr(&args[1], expected);
                let ok = matches!(self.resolve(&vt), Ty::Scalar(_) | Ty::Param(_) | Ty::IntVar(_) | Ty::FloatVar(_) | Ty::Error);
                if !ok {
                    let shown = self.show(&vt);
                    self.diags.error(args[1].span, format!("warp shuffles move scalars, found `{shown}`"));
                }
                self.arg(&args[2], &U32);
                if s.has_width() {
                    self.arg(&args[3], &U32);
                }
                vt
            }
        }
    }

    /// `atomic_*(array, index, operand..)`, its argument count already checked.
    fn atomic(&mut self, op: AtomicOp, args: &[Expr], span: Span) -> Ty {
        let name = op.rust_name();
        let at = self.expr(&args[0], None);
        let elem = match self.resolve(&at) {
            Ty::Slice { elem, mutable: true } | Ty::ArrayRef { elem, mutable: true, .. } => *elem,
            Ty::Ref { inner, mutable: true } if matches!(*inner, Ty::Array(..)) => match *inner {
                Ty::Array(e, _) => *e,
                _ => unreachable!(),
            },
            Ty::Error => Ty::Error,
            other => {
                let shown = self.show(&other);
                let hint = match other {
                    Ty::Slice { mutable: false, .. } => "; take the argument as `&mut [T]`",
                    Ty::Array(..) => "; pass the local array as `&mut a`",
                    _ => "",
                };
                self.diags.error(args[0].span, format!("`{name}` takes a `&mut [T]` slice or a shared array as its first argument, found `{shown}`{hint}"));
                for a in &args[1..] {
                    self.expr(a, None);
                }
                return Ty::Error;
            }
        };
        self.index_arg(&args[1]);
        for a in &args[2..] {
            self.arg(a, &elem);
        }
        match self.resolve(&elem) {
            Ty::Scalar(d) if !op.supports(d) => {
                self.diags.error(span, format!("CUDA has no `{name}` for `{d}`"));
            }
            Ty::Param(p) => match op.generic_bound() {
                None => self.diags.error(span, format!("`{name}` works on `u32` only")),
                Some(b) if !self.bound_implies(p, b) => {
                    let g = self.item.generics[p as usize].name.text.clone();
                    self.diags.error(span, format!("`{name}` needs `{g}: {}`", b.name()));
                }
                Some(_) => {}
            },
            _ => {}
        }
        elem
    }

    /// An index argument of an intrinsic: the prelude's `I: KernelIndex`, so a literal keeps its
    /// own type (`i32` by default), as rustc infers it.
    pub(super) fn index_arg(&mut self, a: &Expr) {
        let it = self.expr(a, None);
        match self.resolve(&it) {
            Ty::Scalar(DType::U64 | DType::U32 | DType::I32 | DType::I64) | Ty::IntVar(_) | Ty::Error => {}
            other => {
                let shown = self.show(&other);
                self.diags.error(a.span, format!("the index must be `usize`, `u32`, `i32`, `u64` or `i64`, found `{shown}`"));
            }
        }
    }

    fn device_call(&mut self, e: &Expr, name: &Name, tys: &[Ty], args: &[Expr], expected: Option<&Ty>) -> Ty {
        let Some(callee) = self.sigs.get(name.text.as_str()).copied() else {
            for a in args {
                self.expr(a, None);
            }
            // Reported by the validator (an unknown function) when the whole file is known; under a
            // macro the function is a neighbour this check cannot see.
            return Ty::Error;
        };
        if args.len() != callee.params.len() {
            self.diags.error(e.span, format!("`{}` takes {} argument(s) but {} were given", name.text, callee.params.len(), args.len()));
            for a in args {
                self.expr(a, None);
            }
            return callee_ret_or_error(callee);
        }
        let ng = callee.generics.len();
        let mut binding: HashMap<u32, Ty> = HashMap::new();
        if !tys.is_empty() {
            if tys.len() != ng {
                self.diags.error(name.span, format!("`{}` takes {ng} generic argument(s)", name.text));
            }
            for (i, t) in tys.iter().enumerate() {
                binding.insert(i as u32, t.clone());
            }
        }
        // First pass: argument types without expectations, to infer the callee's generics.
        let mut arg_tys = Vec::new();
        for (a, p) in args.iter().zip(&callee.params) {
            let exp = if ng == 0 { Some(p.ty.clone()) } else { subst_known(&p.ty, &binding) };
            let at = self.expr(a, exp.as_ref());
            self.infer_generics(&p.ty, &at, &mut binding);
            arg_tys.push(at);
        }
        if ng > 0 {
            if let Some(x) = expected {
                let x = x.clone();
                self.infer_generics(&callee.ret, &x, &mut binding);
            }
        }
        let mut resolved = Vec::new();
        for i in 0..ng as u32 {
            match binding.get(&i) {
                Some(t) => {
                    let t = self.resolve(t);
                    let bound = callee.generics[i as usize].bound;
                    let ok = match &t {
                        Ty::Scalar(d) => bound.admits(*d),
                        Ty::Param(p) => self.bound_implies(*p, bound),
                        // Every type a literal can become meets the same bounds: `2` is no `Float`.
                        Ty::IntVar(_) | Ty::FloatVar(_) => self.has(&t, bound),
                        Ty::Error => true,
                        _ => false,
                    };
                    if !ok {
                        let shown = self.show(&t);
                        self.diags.error(e.span, format!("`{shown}` does not satisfy `{}: {}` of `{}`", callee.generics[i as usize].name.text, bound.name(), name.text));
                    }
                    resolved.push(t);
                }
                None => {
                    self.diags.error(
                        e.span,
                        format!("cannot infer `{}` of `{}`; write it: `{}::<f32>(..)`", callee.generics[i as usize].name.text, name.text, name.text),
                    );
                    resolved.push(Ty::Error);
                }
            }
        }
        for ((a, p), at) in args.iter().zip(&callee.params).zip(&arg_tys) {
            let want = subst(&p.ty, &resolved);
            self.coerce_arg(&want, at, a.span);
        }
        self.call_args.insert(e.id.0, resolved.clone());
        subst(&callee.ret, &resolved)
    }

    /// Argument passing: exact types, plus Rust's reference coercions: `&mut [T]` to `&[T]`, an
    /// array reference (`&a`, `&mut a`, a shared array) to a slice, and `&mut [T; N]` to
    /// `&[T; N]`.
    fn coerce_arg(&mut self, want: &Ty, have: &Ty, span: Span) {
        let have_r = self.resolve(have);
        // The element type and length of an array reference, and whether it is mutable.
        let array_ref = match &have_r {
            Ty::ArrayRef { elem, len, mutable } => Some((elem.clone(), *len, *mutable)),
            Ty::Ref { inner, mutable } => match &**inner {
                Ty::Array(e, n) => Some((e.clone(), *n, *mutable)),
                _ => None,
            },
            _ => None,
        };
        let from_elem = match (want, &have_r, &array_ref) {
            (Ty::Slice { mutable, .. }, _, Some((e, _, m))) if *m || !mutable => Some(e.clone()),
            (Ty::Slice { mutable: false, .. }, Ty::Slice { elem: e, mutable: true }, _) => Some(e.clone()),
            (Ty::ArrayRef { len, mutable, .. }, _, Some((e, n, m))) if n == len && (*m || !mutable) => Some(e.clone()),
            _ => None,
        };
        match (want, from_elem) {
            (Ty::Slice { elem, .. } | Ty::ArrayRef { elem, .. }, Some(fe)) => {
                self.expect(elem, &fe, span);
            }
            _ => {
                self.expect(want, have, span);
            }
        }
    }

    /// Matches a parameter type against an argument type, recording generic bindings.
    fn infer_generics(&mut self, param: &Ty, arg: &Ty, binding: &mut HashMap<u32, Ty>) {
        let arg = self.resolve(arg);
        match (param, &arg) {
            (Ty::Param(i), _) => {
                if let Some(prev) = binding.get(i).cloned() {
                    if let Some(t) = self.unify(&prev, &arg) {
                        binding.insert(*i, t);
                    }
                } else if !matches!(arg, Ty::Never) {
                    binding.insert(*i, arg.clone());
                }
            }
            (Ty::Tuple(ps), Ty::Tuple(as_)) if ps.len() == as_.len() => {
                for (p, a) in ps.iter().zip(as_) {
                    self.infer_generics(p, a, binding);
                }
            }
            (Ty::Array(p, _), Ty::Array(a, _)) => self.infer_generics(p, a, binding),
            (Ty::Slice { elem: p, .. }, Ty::Slice { elem: a, .. } | Ty::ArrayRef { elem: a, .. }) => {
                self.infer_generics(p, a, binding)
            }
            (Ty::View { elem: p, .. }, Ty::View { elem: a, .. }) => self.infer_generics(p, a, binding),
            (Ty::Ref { inner: p, .. }, Ty::Ref { inner: a, .. }) => self.infer_generics(p, a, binding),
            _ => {}
        }
    }

    fn assoc(&mut self, id: ExprId, ty: &Ty, name: &Name, args: &[Expr], span: Span) -> Ty {
        let n = name.text.as_str();
        // `Complex::new` is handled as an intrinsic; `Complex` alone reaches here otherwise.
        let concrete = self.resolve(ty).scalar();
        if AssocFn::from_name(n) == Some(AssocFn::FromF32Pair) && matches!(concrete, Some(DType::F16 | DType::BF16)) {
            // Two `f32`s in, a pair of the 16-bit type out.
            self.assoc_fns.insert(id.0, AssocFn::FromF32Pair);
            if self.arity(n, args, 2, span) {
                for a in args {
                    self.arg(a, &Ty::Scalar(DType::F32));
                }
            }
            return Ty::Array(Box::new(ty.clone()), 2);
        }
        let arg = match AssocFn::from_name(n) {
            Some(f @ AssocFn::Num(num)) => {
                let need = num.bound();
                let ok = match self.resolve(ty) {
                    Ty::Scalar(d) => need.admits(d),
                    Ty::Param(p) => self.bound_implies(p, need),
                    _ => false,
                };
                if !ok {
                    let shown = self.show(ty);
                    self.diags.error(span, format!("`{shown}::{n}` needs a `{}` type", need.name()));
                }
                Some((f, num.arg()))
            }
            Some(f @ AssocFn::FromF32) if concrete.is_some_and(|d| d.is_half()) => Some((f, Some(DType::F32))),
            Some(f @ AssocFn::FromBits) if concrete.is_some_and(|d| d.is_float()) => Some((f, concrete.map(bits_of))),
            Some(AssocFn::FromF32 | AssocFn::FromBits | AssocFn::FromF32Pair) | None => None,
        };
        let Some((f, arg)) = arg else {
            let shown = self.show(ty);
            for a in args {
                self.expr(a, None);
            }
            if SpecialFn::from_name(n).is_some() {
                self.diags.error(name.span, format!("`{n}` is a free function in kernels: write `{n}(x)` (the prelude's, for any float type), not `{shown}::{n}(x)`"));
                return Ty::Error;
            }
            let (fns, methods) = self.members_of(ty);
            let list = |v: Vec<&str>| if v.is_empty() { "none".to_string() } else { v.join(", ") };
            self.diags.error(
                name.span,
                format!(
                    "no function or method `{n}` on `{shown}` in kernels; its functions: {}; its methods (`{shown}::m(x, ..)` is `x.m(..)`): {}",
                    list(fns),
                    list(methods)
                ),
            );
            return Ty::Error;
        };
        self.assoc_fns.insert(id.0, f);
        match arg {
            Some(d) => {
                if self.arity(n, args, 1, span) {
                    self.arg(&args[0], &Ty::Scalar(d));
                }
            }
            None => {
                self.arity(n, args, 0, span);
            }
        }
        ty.clone()
    }
}

impl Checker<'_, '_> {
    /// The names of the associated functions and the methods kernels have on `ty`, for a path
    /// call that names neither.
    fn members_of(&self, ty: &Ty) -> (Vec<&'static str>, Vec<&'static str>) {
        let t = self.resolve(ty);
        if matches!(t, Ty::Error) {
            return (Vec::new(), Vec::new());
        }
        let concrete = t.scalar();
        let mut fns: Vec<&str> = NumFn::ALL.iter().filter(|f| self.has(&t, f.bound())).map(|f| f.rust_name()).collect();
        if concrete.is_some_and(|d| d.is_half()) {
            fns.push(AssocFn::FromF32.rust_name());
        }
        if matches!(concrete, Some(DType::F16 | DType::BF16)) {
            fns.push(AssocFn::FromF32Pair.rust_name());
        }
        if concrete.is_some_and(|d| d.is_float()) {
            fns.push(AssocFn::FromBits.rust_name());
        }
        let all = Method::ALL.iter().copied().chain(MathFn::ALL.iter().map(|f| Method::Math(*f)));
        let methods = all
            .filter(|m| m.receivers().iter().any(|k| self.receives(*k, &t)))
            // `abs` of integers is the signed ones'.
            .filter(|m| *m != Method::Math(MathFn::Abs) || self.receives(Receiver::Float, &t) || concrete.is_some_and(|d| d.is_signed_int()))
            .map(|m| m.rust_name())
            .collect();
        (fns, methods)
    }
}

/// The unsigned integer type of a float's width: what `to_bits` returns and `from_bits` takes.
pub(super) fn bits_of(d: DType) -> DType {
    match d.size() {
        8 => DType::U64,
        4 => DType::U32,
        2 => DType::U16,
        _ => DType::U8,
    }
}

fn callee_ret_or_error(callee: &Item) -> Ty {
    if callee.generics.is_empty() { callee.ret.clone() } else { Ty::Error }
}

/// Substitutes resolved generic arguments into a callee's type.
pub fn subst(t: &Ty, args: &[Ty]) -> Ty {
    match t {
        Ty::Param(i) => args.get(*i as usize).cloned().unwrap_or(Ty::Error),
        Ty::Tuple(ts) => Ty::Tuple(ts.iter().map(|t| subst(t, args)).collect()),
        Ty::Array(e, n) => Ty::Array(Box::new(subst(e, args)), *n),
        Ty::Slice { elem, mutable } => Ty::Slice { elem: Box::new(subst(elem, args)), mutable: *mutable },
        Ty::ArrayRef { elem, len, mutable } => Ty::ArrayRef { elem: Box::new(subst(elem, args)), len: *len, mutable: *mutable },
        Ty::View { elem, ndim, mutable } => Ty::View { elem: Box::new(subst(elem, args)), ndim: *ndim, mutable: *mutable },
        Ty::Raw(e) => Ty::Raw(Box::new(subst(e, args))),
        Ty::Ref { inner, mutable } => Ty::Ref { inner: Box::new(subst(inner, args)), mutable: *mutable },
        other => other.clone(),
    }
}

/// Substitutes only if every generic mentioned is known (an expectation for literal arguments).
fn subst_known(t: &Ty, binding: &HashMap<u32, Ty>) -> Option<Ty> {
    match t {
        Ty::Param(i) => binding.get(i).cloned(),
        Ty::Scalar(_) | Ty::Unit | Ty::Dim3 => Some(t.clone()),
        _ => None,
    }
}
