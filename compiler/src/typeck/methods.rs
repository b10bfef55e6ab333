//! Method calls, resolved against the receiver's type: `lang::Method::from_name` gives the
//! method a name denotes, its `receivers` say whether this receiver has it, and its signature
//! class gives the argument and result types. The resolved method is recorded for the back end.
//!
//! As in rustc, the receiver is checked with no expectation, and a receiver that is a literal of
//! unknown type (`2.0.sqrt()`, `let k = 1; k.min(n)`) stays one: the methods that a prelude trait
//! gives every integer or every float type (those a generic `T: Int` / `T: Float` / `T: Real`
//! has) apply to it, typed in terms of it, and the literal's type is decided later; the others
//! exist only on concrete types, and calling them is rustc's E0689.

use proc_macro2::Span;

use super::calls::bits_of;
use super::Checker;
use cuprum_abi::dtype::DType;
use crate::ir::*;
use crate::lang::{Bound, MathFn, Method, MethodSig, Receiver, SpecialFn};

impl Checker<'_, '_> {
    pub(super) fn method(&mut self, id: ExprId, receiver: &Expr, method: &Name, args: &[Expr], span: Span) -> Ty {
        let rt = self.expr(receiver, None);
        if self.is_error(&rt) {
            for a in args {
                self.expr(a, None);
            }
            return Ty::Error;
        }
        let rt = match self.resolve(&rt) {
            Ty::Ref { inner, .. } => self.resolve(&inner),
            other => other,
        };
        let m = method.text.as_str();
        let ambiguous = matches!(rt, Ty::IntVar(_) | Ty::FloatVar(_));
        let named = Method::from_name(m);
        // Integers have `abs` as an inherent method only (the prelude's is `Float::abs`).
        let inherent_only = |r: &Method| *r == Method::Math(MathFn::Abs) && matches!(rt, Ty::IntVar(_));
        if ambiguous && named.is_some_and(|r| inherent_only(&r) || self.concrete_receivers(r, &rt)) {
            for a in args {
                self.expr(a, None);
            }
            let (shown, like) = if matches!(rt, Ty::IntVar(_)) { ("{integer}", "i32") } else { ("{float}", "f32") };
            self.diags.error(
                method.span,
                format!("can't call method `{m}` on ambiguous numeric type `{shown}`; give the value a type, like `{like}` (a suffix such as `2{like}`, or `let x: {like} = ..`)"),
            );
            return Ty::Error;
        }
        let Some(resolved) = named.filter(|r| r.receivers().iter().any(|k| self.receives(*k, &rt))) else {
            for a in args {
                self.expr(a, None);
            }
            if SpecialFn::from_name(m).is_some() {
                // std's `f32::erf` is unstable; the prelude has the family as free functions.
                self.diags.error(method.span, format!("`{m}` is a free function in kernels, not a method: write `{m}(x)` (the prelude's, for any float type)"));
                return Ty::Error;
            }
            let shown = self.show(&rt);
            let hint = match &rt {
                Ty::Param(p) => format!(
                    " (with the bound `{}: {}`; a stronger bound such as `Float` or `Int` may provide it)",
                    self.item.generics[*p as usize].name.text,
                    self.bound(*p).name()
                ),
                _ => String::new(),
            };
            let hint = match (&rt, reduction_name(m)) {
                (Ty::Slice { .. } | Ty::View { .. } | Ty::Array(..) | Ty::ArrayRef { .. }, Some(op)) => format!(
                    " (`.{m}()` of an `Array` is a host reduction, not kernel code: in a kernel, loop over the elements (`let mut acc = a[0]; for i in 1..a.len() {{ acc = {op}; }}`), or write a `#[reduction]` kernel)"
                ),
                _ => hint,
            };
            self.diags.error(method.span, format!("no method `{m}` on type `{shown}` in kernels{hint}; docs/kernel-language.md lists the methods kernels support"));
            return Ty::Error;
        };
        let concrete = rt.scalar();
        // `abs` of an integer receiver (not a float one) needs a signed type.
        if resolved == Method::Math(MathFn::Abs) && !self.receives(Receiver::Float, &rt) && !concrete.is_some_and(|d| d.is_signed_int()) {
            self.diags.error(method.span, "`abs` is defined on signed integer types only");
        }
        self.methods.insert(id.0, resolved);
        if let MethodSig::GetUnchecked { mutable } = resolved.sig() {
            return self.get_unchecked(receiver, &rt, args, mutable, m, span);
        }
        let this = rt.clone();
        let ndim = match &rt {
            Ty::View { ndim, .. } => *ndim as u64,
            _ => 0,
        };
        let (params, ret) = match resolved.sig() {
            MethodSig::Unary => (vec![], this),
            MethodSig::Binary => (vec![this.clone()], this),
            MethodSig::Ternary => (vec![this.clone(), this.clone()], this),
            MethodSig::ByU32 => (vec![Ty::Scalar(DType::U32)], this),
            MethodSig::ByI32 => (vec![Ty::Scalar(DType::I32)], this),
            MethodSig::Predicate => (vec![], Ty::Scalar(DType::Bool)),
            MethodSig::Count => (vec![], Ty::Scalar(DType::U32)),
            MethodSig::ToF32 => (vec![], Ty::Scalar(DType::F32)),
            MethodSig::ToF64 => (vec![], Ty::Scalar(DType::F64)),
            MethodSig::ToU64 => (vec![], Ty::Scalar(DType::U64)),
            MethodSig::ToBits => (vec![], Ty::Scalar(bits_of(concrete.expect("`to_bits` receivers are concrete floats")))),
            MethodSig::Part => (vec![], Ty::Scalar(concrete.and_then(DType::complex_part).expect("complex receivers are concrete"))),
            MethodSig::Len => (vec![], Ty::Scalar(DType::U64)),
            MethodSig::Shape => (vec![], Ty::Array(Box::new(Ty::Scalar(DType::U64)), ndim)),
            MethodSig::Strides => (vec![], Ty::Array(Box::new(Ty::Scalar(DType::I64)), ndim)),
            MethodSig::GetUnchecked { .. } => unreachable!("typed by `get_unchecked` above"),
        };
        if args.is_empty() && matches!(m, "max" | "min") && params.len() == 1 {
            let (what, op) = if m == "max" { ("larger", "a.max(b)") } else { ("smaller", "a.min(b)") };
            self.diags.error(
                method.span,
                format!("`x.{m}(y)` is the {what} of two values and takes 1 argument; to reduce many elements to their {m}, write a `#[reduction]` kernel (`reduce = |a, b| {op}`) or a loop"),
            );
        } else if args.len() != params.len() {
            self.diags.error(span, format!("`{m}` takes {} argument(s) but {} were given", params.len(), args.len()));
        } else {
            for (a, t) in args.iter().zip(&params) {
                let at = self.expr(a, Some(t));
                self.expect(t, &at, a.span);
            }
        }
        ret
    }

    /// Whether `m` is found on concrete types of the literal kind of `t` (an integer or float
    /// variable) but on none of its prelude traits: the receivers that would take `t` once its
    /// type is known are all concrete ones.
    fn concrete_receivers(&self, m: Method, t: &Ty) -> bool {
        let kinds = m.receivers();
        let generic = kinds.iter().any(|k| self.receives(*k, t));
        let concrete = kinds.iter().any(|k| match (k, t) {
            (Receiver::ConcreteFloat, Ty::FloatVar(_)) | (Receiver::Unsigned, Ty::IntVar(_)) => true,
            // `f16`/`bf16` and complex numbers are not primitive: no literal can become one.
            _ => false,
        });
        !generic && concrete
    }

    /// `a.get_unchecked(i)` / `a.get_unchecked_mut(i)`: one index as `a[i]` takes it (a view also
    /// a multi-index written as an array, `v.get_unchecked([i, j])`); `&T` / `&mut T` of the
    /// element. The `_mut` form needs a receiver that can be written through.
    fn get_unchecked(&mut self, receiver: &Expr, rt: &Ty, args: &[Expr], mutable: bool, m: &str, span: Span) -> Ty {
        let [arg] = args else {
            for a in args {
                self.expr(a, None);
            }
            self.diags.error(span, format!("`{m}` takes one index (a view also a multi-index `[i, j]`)"));
            return Ty::Error;
        };
        let elem = match (rt, &arg.kind) {
            (Ty::View { ndim, .. }, ExprKind::ArrayList(ix)) if *ndim > 1 => {
                let t = self.indexed(rt, receiver.span, ix, span);
                let it = ix.first().and_then(|i| self.exprs[i.id.0 as usize].clone()).unwrap_or(Ty::Scalar(DType::U64));
                self.exprs[arg.id.0 as usize] = Some(Ty::Array(Box::new(it), ix.len() as u64));
                t
            }
            _ => self.indexed(rt, receiver.span, std::slice::from_ref(arg), span),
        };
        if mutable {
            match rt {
                Ty::Raw(_) => self.diags.error(receiver.span, "a `Raw<T>` argument is read-only: use `get_unchecked`"),
                Ty::Array(..) => self.check_place(receiver, true),
                Ty::Slice { mutable: false, .. } | Ty::ArrayRef { mutable: false, .. } | Ty::View { mutable: false, .. } => {
                    let shown = self.show(rt);
                    self.diags.error(receiver.span, format!("cannot write through `{shown}`: it is read-only; take the argument as writable (`&mut [T]`, `ViewMut`), or read with `get_unchecked`"));
                }
                _ => {}
            }
        }
        if matches!(elem, Ty::Error) {
            return Ty::Error;
        }
        Ty::Ref { inner: Box::new(elem), mutable }
    }

    /// Whether a receiver of type `t` (resolved, not a reference) is of kind `k`.
    pub(super) fn receives(&self, k: Receiver, t: &Ty) -> bool {
        let concrete = |f: fn(DType) -> bool| t.scalar().is_some_and(f);
        match k {
            Receiver::Float => self.has(t, Bound::Float),
            Receiver::Int => self.has(t, Bound::Int),
            Receiver::Real => self.has(t, Bound::Real),
            Receiver::Complex => concrete(DType::is_complex),
            Receiver::Half => concrete(DType::is_half),
            Receiver::ConcreteFloat => concrete(DType::is_float),
            Receiver::Unsigned => concrete(DType::is_unsigned_int),
            Receiver::Array => matches!(t, Ty::Slice { .. } | Ty::ArrayRef { .. } | Ty::Array(..) | Ty::Raw(_) | Ty::View { .. }),
            Receiver::View => matches!(t, Ty::View { .. }),
        }
    }
}

/// For the array reductions' names that are also scalar methods (`a.max()`; `a.sum()` is
/// rejected earlier as an iterator method), the loop step that computes one in a kernel, over
/// `acc` and `a[i]`.
fn reduction_name(m: &str) -> Option<&'static str> {
    match m {
        "max" => Some("acc.max(a[i])"),
        "min" => Some("acc.min(a[i])"),
        _ => None,
    }
}
