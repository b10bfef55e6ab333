//! Which indexing needs a run-time check (docs/semantics.md, row 18): the index expressions of an
//! item that the compiler proves in range, so the CUDA writer emits them unchecked.
//!
//! Entry point: [`proven`]. An access `a[i]` (or an atomic's `a, i`) is proven when
//!
//! - `a` has a length known at compile time (a local `[T; N]`, a shared array, an array field) and
//!   every value `i` can take lies in `0..N`, by interval arithmetic over literals, constants,
//!   casts, `+ - * / % & >>` and the locals below; or
//! - `i` (or `i as uN`, `i as i64`) is a local known to be below `a.len()`, `a` an argument or local
//!   that is never reassigned.
//!
//! What a local is known to be below (a *fact*, which holds for the rest of its scope):
//!
//! - `for i in a..b` (also `.rev()` and `.step_by(s)`): `i < b`, and `i >= 0` when `a` is;
//!   `for i in a..=b`: `i <= b`;
//! - `if i < b && .. { then }`: in `then`;
//! - `if i >= b || .. { return / break / continue }` without `else`: in the statements after it;
//!
//! where `i` is a local of unsigned type (or a loop variable starting at 0 or above) that is never
//! assigned nor borrowed `&mut` after its initialisation, and `b` is `x.len()`, a local bound to
//! `x.len()`, or an expression whose largest value is known. A local bound once by `let` (also in
//! a tuple pattern, `let (r, k) = (i % 64, i / 64)`) keeps the range its initializer had there.
//! Everything else stays checked: the analysis is deliberately small and never wrong. (Not even
//! `i % x.len()` is proven: on the GPU `i % 0` is 0, which is out of range of an empty `x`.)

use std::collections::{HashMap, HashSet};

use cuprum_abi::dtype::DType;
use crate::ir::*;
use crate::lang::{Intrinsic, Method};
use crate::typeck::Types;

/// The `ExprId`s of the item's index expressions (`ExprKind::Index`, and atomic calls, whose first
/// two arguments are an array and an index) that need no run-time check.
pub fn proven(item: &Item, types: &Types) -> HashSet<ExprId> {
    let mut unstable = HashSet::new();
    let mut cx = Cx { types, unstable: HashSet::new(), lens: HashMap::new(), lets: HashMap::new(), facts: Vec::new(), out: HashSet::new() };
    each_expr_of_item(item, &mut |e| match &e.kind {
        ExprKind::Assign { place, .. } | ExprKind::Ref { mutable: true, expr: place } => {
            if let ExprKind::Local(l) = place.kind {
                unstable.insert(l);
            }
        }
        _ => {}
    });
    cx.unstable = unstable;
    cx.block(&item.body);
    if let ItemKind::Reduction(parts) = &item.kind {
        for e in [parts.identity.as_deref(), Some(&*parts.reduce.body), parts.post.as_ref().map(|p| &*p.body)].into_iter().flatten() {
            cx.expr(e);
        }
    }
    cx.out
}

/// What a local is below.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Limit {
    /// `x.len()` of this (stable) local.
    Len(LocalId),
    /// A constant: the local is in `0..c`.
    Const(i128),
}

struct Cx<'a> {
    types: &'a Types,
    /// Locals assigned (after their `let`) or borrowed `&mut` somewhere in the item.
    unstable: HashSet<LocalId>,
    /// `let n = x.len();` (both stable): `n` -> `x`.
    lens: HashMap<LocalId, LocalId>,
    /// Stable locals bound by `let` to an integer whose range is known then (and so forever).
    lets: HashMap<LocalId, (i128, i128)>,
    /// In scope now: the local is in `0..limit`.
    facts: Vec<(LocalId, Limit)>,
    out: HashSet<ExprId>,
}

impl Cx<'_> {
    fn stable(&self, l: LocalId) -> bool {
        !self.unstable.contains(&l)
    }

    fn block(&mut self, b: &Block) {
        let mark = self.facts.len();
        for s in &b.stmts {
            match s {
                Stmt::Let { pat, init, .. } => {
                    if let Some(e) = init {
                        self.expr(e);
                        self.bind(pat, e);
                    }
                }
                Stmt::Expr(e) => {
                    self.expr(e);
                    // `if i >= n { return; }`: below, `i < n`.
                    if let ExprKind::If { cond, then, els: None } = &e.kind {
                        if diverges(then) {
                            let mut fs = Vec::new();
                            self.exit_facts(cond, &mut fs);
                            self.facts.extend(fs);
                        }
                    }
                }
            }
        }
        if let Some(t) = &b.tail {
            self.expr(t);
        }
        self.facts.truncate(mark);
    }

    /// What `let pat = e;` tells about the locals it binds (a tuple literal element by element).
    fn bind(&mut self, pat: &Pat, e: &Expr) {
        match (pat, &e.kind) {
            (Pat::Bind(l, _), _) if self.stable(*l) => {
                if let Some(x) = self.len_of(e) {
                    self.lens.insert(*l, x);
                }
                if let Some(r) = self.known_range(e) {
                    self.lets.insert(*l, r);
                }
            }
            (Pat::Tuple(ps, _), ExprKind::Tuple(es)) if ps.len() == es.len() => {
                for (p, x) in ps.iter().zip(es) {
                    self.bind(p, x);
                }
            }
            _ => {}
        }
    }

    /// The range of `e` when narrower than its type's.
    fn known_range(&self, e: &Expr) -> Option<(i128, i128)> {
        let d = self.types.of(e).scalar().filter(|d| d.is_int())?;
        let r = self.range(e)?;
        (r != int_range(d)).then_some(r)
    }

    fn expr(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Index { base, indices } => {
                if let [i] = indices.as_slice() {
                    if self.in_range(base, i) {
                        self.out.insert(e.id);
                    }
                }
            }
            ExprKind::Call { callee: Callee::Intrinsic { intrinsic: Intrinsic::Atomic(_), .. }, args }
                if args.len() >= 2 && self.in_range(&args[0], &args[1]) =>
            {
                self.out.insert(e.id);
            }
            ExprKind::For { var, range, body, .. } => {
                for x in [Some(&*range.start), Some(&*range.end), range.step.as_deref()].into_iter().flatten() {
                    self.expr(x);
                }
                let mark = self.facts.len();
                if let Some(f) = self.loop_fact(*var, range) {
                    self.facts.push((*var, f));
                }
                self.block(body);
                self.facts.truncate(mark);
                return;
            }
            ExprKind::If { cond, then, els } => {
                self.expr(cond);
                let mark = self.facts.len();
                let mut fs = Vec::new();
                self.true_facts(cond, &mut fs);
                self.facts.extend(fs);
                self.block(then);
                self.facts.truncate(mark);
                if let Some(e) = els {
                    self.expr(e);
                }
                return;
            }
            _ => {}
        }
        let (mut exprs, mut blocks) = (Vec::new(), Vec::new());
        visit_children(e, &mut |c| exprs.push(c), &mut |b| blocks.push(b));
        for c in exprs {
            self.expr(c);
        }
        for b in blocks {
            self.block(b);
        }
    }

    /// Whether `base[index]` is provably in range here.
    fn in_range(&self, base: &Expr, index: &Expr) -> bool {
        let bt = match self.types.of(base) {
            Ty::Ref { inner, .. } => (**inner).clone(),
            t => t.clone(),
        };
        if let Ty::Array(_, n) | Ty::ArrayRef { len: n, .. } = bt {
            if self.range(index).is_some_and(|(lo, hi)| lo >= 0 && hi < n as i128) {
                return true;
            }
        }
        // `x[i]` with `i < x.len()` known.
        let (Some(i), Some(x)) = (self.index_local(index), self.base_local(base)) else { return false };
        self.facts.iter().any(|(l, f)| *l == i && *f == Limit::Len(x))
    }

    /// The stable local an index is, through value-preserving casts (`i as usize` of an unsigned
    /// or known-non-negative `i`).
    fn index_local(&self, e: &Expr) -> Option<LocalId> {
        match &e.kind {
            ExprKind::Local(l) if self.stable(*l) => Some(*l),
            ExprKind::Cast(inner, to) if widening(self.types.of(inner), to) => self.index_local(inner),
            _ => None,
        }
    }

    /// The stable local an indexed value is (a slice, view or `Raw` argument or local).
    fn base_local(&self, e: &Expr) -> Option<LocalId> {
        match &e.kind {
            ExprKind::Local(l) if self.stable(*l) => Some(*l),
            _ => None,
        }
    }

    /// `x` when `e` is `x.len()` (or a local bound to it) of a stable local `x` whose length is
    /// not a constant.
    fn len_of(&self, e: &Expr) -> Option<LocalId> {
        match &e.kind {
            ExprKind::MethodCall { receiver, .. } if self.types.methods.get(&e.id.0) == Some(&Method::Len) => self.base_local(receiver),
            ExprKind::Local(l) => self.lens.get(l).copied(),
            _ => None,
        }
    }

    /// What `var` of `for var in range` is below, when it is never negative.
    fn loop_fact(&self, var: LocalId, r: &RangeLoop) -> Option<Limit> {
        if !self.stable(var) {
            return None;
        }
        let unsigned = self.types.local(var).scalar().is_some_and(|d| d.is_unsigned_int());
        if !unsigned && self.range(&r.start).is_none_or(|(lo, _)| lo < 0) {
            return None;
        }
        if !r.inclusive {
            if let Some(x) = self.len_of(&r.end) {
                return Some(Limit::Len(x));
            }
        }
        let (_, hi) = self.range(&r.end)?;
        Some(Limit::Const(if r.inclusive { hi + 1 } else { hi }))
    }

    /// Facts that hold where `cond` is true: its `&&`-joined comparisons `i < b`, `i <= b`,
    /// `b > i`, `b >= i`.
    fn true_facts(&self, cond: &Expr, out: &mut Vec<(LocalId, Limit)>) {
        match &cond.kind {
            ExprKind::Binary(BinOp::And, a, b) => {
                self.true_facts(a, out);
                self.true_facts(b, out);
            }
            ExprKind::Binary(op @ (BinOp::Lt | BinOp::Le), i, b) | ExprKind::Binary(op @ (BinOp::Gt | BinOp::Ge), b, i) => {
                let strict = matches!(op, BinOp::Lt | BinOp::Gt);
                out.extend(self.below(i, b, strict));
            }
            _ => {}
        }
    }

    /// Facts that hold after `if cond { diverge }`: `cond` is false, so each of its `||`-joined
    /// comparisons `i >= b`, `i > b`, `b <= i`, `b < i` is false.
    fn exit_facts(&self, cond: &Expr, out: &mut Vec<(LocalId, Limit)>) {
        match &cond.kind {
            ExprKind::Binary(BinOp::Or, a, b) => {
                self.exit_facts(a, out);
                self.exit_facts(b, out);
            }
            ExprKind::Binary(op @ (BinOp::Ge | BinOp::Gt), i, b) | ExprKind::Binary(op @ (BinOp::Le | BinOp::Lt), b, i) => {
                // not (i >= b) is i < b; not (i > b) is i <= b.
                let strict = matches!(op, BinOp::Ge | BinOp::Le);
                out.extend(self.below(i, b, strict));
            }
            ExprKind::Unary(UnOp::Not, inner) => self.true_facts(inner, out),
            _ => {}
        }
    }

    /// The fact `i < b` (`strict`) or `i <= b`, when `i` is a stable local that cannot be negative.
    fn below(&self, i: &Expr, b: &Expr, strict: bool) -> Option<(LocalId, Limit)> {
        let l = self.index_local(i)?;
        if !self.types.local(l).scalar().is_some_and(|d| d.is_unsigned_int()) {
            return None;
        }
        if strict {
            if let Some(x) = self.len_of(b) {
                return Some((l, Limit::Len(x)));
            }
        }
        let (_, hi) = self.range(b)?;
        Some((l, Limit::Const(if strict { hi } else { hi + 1 })))
    }

    /// The values an integer expression can take, `[lo, hi]`: from literals, facts and the
    /// operators above, else (or where the C arithmetic may wrap) the whole range of its type.
    fn range(&self, e: &Expr) -> Option<(i128, i128)> {
        let d = self.types.of(e).scalar().filter(|d| d.is_int())?;
        let (min, max) = int_range(d);
        let r = self.known(e).filter(|r| r.0 >= min && r.1 <= max && r.0 <= r.1);
        Some(r.unwrap_or((min, max)))
    }

    fn known(&self, e: &Expr) -> Option<(i128, i128)> {
        Some(match &e.kind {
            ExprKind::Lit(Lit::Int { value, .. }) => (*value as i128, *value as i128),
            ExprKind::Unary(UnOp::Neg, inner) => {
                let (lo, hi) = self.range(inner)?;
                (-hi, -lo)
            }
            ExprKind::Local(l) => {
                // The tightest of the facts in scope and the range it was bound with.
                let mut r = self.lets.get(l).copied();
                for (x, f) in &self.facts {
                    if let (true, Limit::Const(c)) = (x == l, f) {
                        let (lo, hi) = r.unwrap_or((0, *c - 1));
                        r = Some((lo.max(0), hi.min(*c - 1)));
                    }
                }
                r?
            }
            ExprKind::Cast(inner, _) => self.range(inner)?,
            // A file `const`'s initializer, typed as the const (its value is the initializer's).
            ExprKind::Ascribed(inner, _) => self.range(inner)?,
            ExprKind::Binary(op, a, b) => {
                let (al, ah) = self.range(a)?;
                let (bl, bh) = self.range(b)?;
                match op {
                    BinOp::Add => (al + bl, ah + bh),
                    BinOp::Sub => (al - bh, ah - bl),
                    BinOp::Mul => {
                        let ps = [al.checked_mul(bl)?, al.checked_mul(bh)?, ah.checked_mul(bl)?, ah.checked_mul(bh)?];
                        (*ps.iter().min()?, *ps.iter().max()?)
                    }
                    BinOp::Div if bl > 0 && al >= 0 => (al / bh, ah / bl),
                    BinOp::Rem if bl > 0 && al >= 0 => (0, ah.min(bh - 1)),
                    BinOp::BitAnd if al >= 0 && bl >= 0 => (0, ah.min(bh)),
                    // The amount is masked to the type's width (row 7): exact only below it.
                    BinOp::Shr if al >= 0 && bl >= 0 && bh < self.types.of(e).scalar()?.bits() as i128 => (al >> bh, ah >> bl),
                    _ => return None,
                }
            }
            _ => return None,
        })
    }
}

/// Whether a cast from `from` to `to` keeps every non-negative value below the source's bound: an
/// integer to `u64`, `usize`, `i64`, or to an unsigned type at least as wide.
fn widening(from: &Ty, to: &Ty) -> bool {
    let (Some(f), Some(t)) = (from.scalar(), to.scalar()) else { return false };
    f.is_int() && (matches!(t, DType::U64 | DType::I64) || (t.is_unsigned_int() && t.bits() >= f.bits()))
}

fn int_range(d: DType) -> (i128, i128) {
    let bits = d.bits();
    if d.is_signed_int() {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    }
}

/// Whether a block always leaves its scope (`return`, `break`, `continue` last).
fn diverges(b: &Block) -> bool {
    let last = b.tail.as_deref().or(match b.stmts.last() {
        Some(Stmt::Expr(e)) => Some(e),
        _ => None,
    });
    matches!(last.map(|e| &e.kind), Some(ExprKind::Return(_) | ExprKind::Break { .. } | ExprKind::Continue { .. }))
}


#[cfg(test)]
mod tests {
    use super::*;

    /// The source text of every index expression of the first item that stays checked.
    fn checked(src: &str) -> Vec<String> {
        let file = syn::parse_file(src).expect("parses");
        let mut diags = crate::diag::Diagnostics::new();
        let module = crate::front::lower_file(&file, &mut diags);
        let types = crate::typeck::check(&module, &mut diags);
        diags.finish().unwrap_or_else(|e| panic!("{}", crate::diag::render("test.rs", src, &e)));
        let item = &module.items[0];
        let proven = proven(item, &types[0]);
        let mut out = Vec::new();
        each_expr_of_item(item, &mut |e| {
            let is_access = matches!(&e.kind, ExprKind::Index { .. })
                || matches!(&e.kind, ExprKind::Call { callee: Callee::Intrinsic { intrinsic: Intrinsic::Atomic(_), .. }, .. });
            if is_access && !proven.contains(&e.id) {
                out.push(span_text(src, e));
            }
        });
        out
    }

    /// The text of `e`'s span (one line).
    fn span_text(src: &str, e: &Expr) -> String {
        let (a, b) = (e.span.start(), e.span.end());
        let line = src.lines().nth(a.line - 1).unwrap_or("");
        line.chars().skip(a.column).take(b.column.saturating_sub(a.column)).collect()
    }

    #[test]
    fn loops_over_len_are_proven() {
        let c = checked(
            "#[rawkernel] fn k(x: &[f32], y: &mut [f32]) {
                for i in 0..y.len() { y[i] = x[i]; }
                let n = x.len();
                for i in (0..n).rev() { y[0] += x[i]; }
                for i in (2..x.len()).step_by(3) { y[1] += x[i]; }
            }",
        );
        assert_eq!(c, ["x[i]", "y[0]", "y[1]"]);
    }

    #[test]
    fn guards_and_early_exits_are_proven() {
        let c = checked(
            "#[rawkernel] fn k(x: &[f32], y: &mut [f32], n: u32) {
                let i = grid_1d() as usize;
                if i < y.len() && i < x.len() { y[i] = x[i]; }
                if i < y.len() || i < 3 { y[i] = 1.0; }
                if i >= x.len() { return; }
                y[0] = x[i];
                let j = grid_1d();
                if j < n { y[j as usize] = 2.0; }
            }",
        );
        assert_eq!(c, ["y[i]", "y[0]", "y[j as usize]"]);
    }

    /// A file `const` (typed as the const: `Ascribed`) bounds an index like its literal value:
    /// `examples/kernels/sgemm.rs`'s tiles are indexed through `DIM`.
    #[test]
    fn file_consts_bound_indices() {
        let c = checked(
            "#[rawkernel] fn k(y: &mut [f32]) {
                let s = shared_array::<f32, 256>();
                let t = thread_idx().x;
                if t >= DIM { return; }
                for i in 0..DIM { s[(i * DIM + t) as usize] = 1.0; }
                y[0] = s[(t * DIM) as usize];
            }
            const DIM: u32 = 16;",
        );
        assert_eq!(c, ["y[0]"]);
    }

    #[test]
    fn constant_lengths_use_intervals() {
        let c = checked(
            "#[rawkernel] fn k(y: &mut [f32]) {
                let s = shared_array::<f32, 64>();
                let mut acc = [0.0f32; 16];
                for i in 0..4usize { for j in 0..4usize { acc[i * 4 + j] += 1.0; } }
                for i in 0..=15u32 { acc[i as usize] += s[(i * 4 + 3) as usize]; }
                for i in 0..16u32 { s[(i * 4 + 4) as usize] = 0.0; }
                let t = thread_idx().x;
                s[(t % 64) as usize] = acc[3];
                s[(t & 63) as usize] = acc[(t >> 28) as usize];
                acc[(t >> 27) as usize] = 1.0;
                y[0] = acc[16 - 1];
                atomic_add(s, 63usize, 1.0);
                atomic_add(s, 64usize, 1.0);
            }",
        );
        assert_eq!(c, ["s[(i * 4 + 4) as usize]", "acc[(t >> 27) as usize]", "y[0]", "atomic_add(s, 64usize, 1.0)"]);
    }

    #[test]
    fn reassigned_or_signed_locals_stay_checked() {
        let c = checked(
            "#[rawkernel] fn k(x: &[f32], y: &mut [f32]) {
                for mut i in 0..x.len() { i += 1; y[0] = x[i]; }
                let mut j = 0usize;
                while j < x.len() { y[1] = x[j]; j += 1; }
                for k in -2..4i32 { y[2] = x[k as usize]; }
                for k in 0..4i32 { let a = [1.0f32; 4]; y[3] = a[k as usize]; }
            }",
        );
        assert_eq!(c, ["y[0]", "x[i]", "y[1]", "x[j]", "y[2]", "x[k as usize]", "y[3]"]);
    }

    #[test]
    fn views_and_raw_by_their_len() {
        let c = checked(
            "#[rawkernel] fn k(a: View<f32, 2>, mut b: ViewMut<f32, 1>) {
                let n = b.len();
                let i = grid_1d() as usize;
                if i < n { b[i] = a[i]; }
                if i < a.len() { b[[i]] = a[[i, 0usize]]; }
            }",
        );
        assert_eq!(c, ["a[i]", "b[[i]]", "a[[i, 0usize]]"]);
    }

    #[test]
    fn let_bound_ranges_and_tile_guards() {
        // The shape of examples/kernels/sgemm.rs: a guard on the thread index makes every
        // shared-memory index provable.
        let c = checked(
            "#[rawkernel] fn k(a: &[f32], y: &mut [f32]) {
                let sa = shared_array::<f32, 1024>();
                let sb = shared_array::<f32, 1088>();
                let tx = thread_idx().x;
                let ty = thread_idx().y;
                if tx >= 16 || ty >= 16 { return; }
                let tid = ty * 16 + tx;
                for l in 0..4u32 {
                    let idx = tid + 256 * l;
                    let (r, kk) = (idx % 64, idx / 64);
                    sa[(kk * 64 + r) as usize] = a[0];
                    let (kb, cb) = (idx % 16, idx / 16);
                    sb[(cb * (16 + 1) + kb) as usize] = 0.0;
                }
                for kk in 0..16u32 {
                    for i in 0..4u32 {
                        y[0] += sa[(kk * 64 + tx + 16 * i) as usize] * sb[((ty + 16 * i) * 17 + kk) as usize];
                    }
                }
                let mut w = thread_idx().x;
                w += 1;
                sa[(w % 1024) as usize] = 1.0;
                sa[w as usize] = 1.0;
            }",
        );
        assert_eq!(c, ["a[0]", "y[0]", "sa[w as usize]"]);
    }
}
