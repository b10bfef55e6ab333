//! Validator: the structural rules the type checker does not cover. After it passes, the back end
//! may assume every invariant documented in `ir.rs`.
//!
//! - every called device function exists in the file (when the whole file is known), and device
//!   functions do not recurse (CUDA has no stack for it by default);
//! - kernels are not called from kernel code;
//! - per kernel kind: elementwise/reduction parameters are per-element scalars or `Raw<T>`
//!   (elementwise also `&mut T` outputs); raw kernels return `()` and take slices, views and
//!   scalars;
//! - `index()`/`loop_size()` only in elementwise and reduction bodies; shared memory only in raw
//!   kernels and device functions, and `shared_array` only as a `let` initializer;
//! - tensor-core and asynchronous-copy intrinsics only in raw kernels and device functions, and
//!   `ldmatrix_*`/`cp_async` only on a shared array bound in the same function;
//! - `grid_sync()` only in raw kernels and device functions, and no elementwise or reduction
//!   kernel calls a device function that reaches it (only a raw kernel's launch is cooperative);
//! - a reduction's `identity`, `reduce` and `post` use their own parameters only (they run
//!   outside the map).

use std::collections::{HashMap, HashSet};

use crate::diag::Diagnostics;
use crate::ir::*;
use crate::lang::{HopperOp, Intrinsic};

/// Whether the whole file is being compiled (`Module` has every device function) or one item
/// under a macro, which cannot see its neighbours.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The whole file: a call to a device function the module lacks is an error.
    File,
    /// One item under a macro: calls to the file's other functions are left to rustc.
    Item,
}

/// Checks what the type checker does not (recursion, missing device functions, kernel-kind
/// rules, where intrinsics may be used), reporting into `diags`.
pub fn check(module: &Module, scope: Scope, diags: &mut Diagnostics) {
    let by_name: HashMap<&str, &Item> = module.items.iter().map(|i| (i.name.text.as_str(), i)).collect();
    let grid_wide = reaching_intrinsic(module, &Intrinsic::grid_wide);
    let mut seen = HashSet::new();
    for item in &module.items {
        if !seen.insert(item.name.text.as_str()) {
            diags.error(item.name.span, format!("the name `{}` is defined more than once in this file", item.name.text));
        }
    }
    for item in &module.items {
        signature(item, diags);
        let mut v = BodyCheck { item, by_name: &by_name, scope, diags, shared_locals: HashSet::new(), dynamic_locals: HashSet::new(), grid_wide: &grid_wide };
        v.block(&item.body);
        if let ItemKind::Reduction(parts) = &item.kind {
            if let Some(id) = &parts.identity {
                v.expr(id);
                reduction_part(item, id, "identity", v.diags);
            }
            v.expr(&parts.reduce.body);
            reduction_part(item, &parts.reduce.body, "reduce", v.diags);
            if let Some(p) = &parts.post {
                v.expr(&p.body);
                reduction_part(item, &p.body, "post", v.diags);
            }
        }
    }
    recursion(module, diags);
}

fn signature(item: &Item, diags: &mut Diagnostics) {
    match &item.kind {
        ItemKind::Elementwise | ItemKind::Reduction(_) => {
            let is_ew = matches!(item.kind, ItemKind::Elementwise);
            let mut outputs = 0;
            // Elementwise elements may be `#[device]` structs; reductions (whose runtime binds
            // every input by dtype) take numbers only, for now.
            let elem = |t: &Ty| matches!(t, Ty::Scalar(_) | Ty::Param(_)) || (is_ew && matches!(t, Ty::Struct(_)));
            for p in &item.params {
                match &p.ty {
                    Ty::Scalar(_) | Ty::Param(_) | Ty::Error => {}
                    Ty::Struct(_) | Ty::Raw(_) if !is_ew && contains_struct(&p.ty) => diags.error(
                        p.span,
                        "reductions over `#[device]` struct elements are not supported yet; map the struct array to numbers with an `#[elementwise]` kernel first",
                    ),
                    Ty::Struct(_) | Ty::Raw(_) => {}
                    Ty::Ref { inner, mutable: true } if is_ew && elem(inner) => outputs += 1,
                    Ty::Slice { .. } | Ty::ArrayRef { .. } | Ty::View { .. } | Ty::Array(..) => diags.error(
                        p.span,
                        format!("{} parameters are per-element values; use `Raw<T>` for an array indexed by hand with `index()`", item.kind.attr_name()),
                    ),
                    _ => diags.error(p.span, format!("this parameter type is not allowed in a `#[{}]` kernel", item.kind.attr_name())),
                }
            }
            let ret_ok = match &item.ret {
                Ty::Scalar(_) | Ty::Param(_) | Ty::Error => true,
                // A reduction's map may build a `#[device]` struct accumulator.
                Ty::Struct(_) => true,
                Ty::Tuple(ts) => is_ew && ts.iter().all(elem),
                Ty::Unit => is_ew && outputs > 0,
                _ => false,
            };
            if !ret_ok {
                let what = if is_ew {
                    "an elementwise kernel returns its output(s): a scalar, a `#[device]` struct or a tuple of them (or writes `&mut T` output parameters)"
                } else {
                    "a reduction's body is the map: it returns one value per element, a scalar or a `#[device]` struct (the accumulator)"
                };
                diags.error(item.ret_span, what);
            }
        }
        ItemKind::RawKernel { .. } => {
            if !item.ret.is_unit() && item.ret != Ty::Error {
                diags.error(item.ret_span, "a raw kernel returns nothing; write results to a `&mut [T]` argument");
            }
            for p in &item.params {
                match &p.ty {
                    Ty::Scalar(_) | Ty::Param(_) | Ty::Struct(_) | Ty::Slice { .. } | Ty::View { .. } | Ty::Error => {}
                    Ty::Ref { inner, mutable: false } if matches!(**inner, Ty::TensorMap(_)) => {}
                    Ty::TensorMap(_) | Ty::Ref { .. } if tensor_map_in(&p.ty) => {
                        diags.error(p.span, "take a tensor map by shared reference: `map: &TensorMap<T>`")
                    }
                    Ty::Raw(_) => diags.error(p.span, "`Raw<T>` belongs to elementwise kernels; a raw kernel takes `&[T]`, `&mut [T]` or `View<T, N>`"),
                    Ty::Ref { .. } => diags.error(p.span, "a raw kernel cannot return through a reference; take a `&mut [T]` and write element 0"),
                    _ => diags.error(p.span, "raw kernel parameters are scalars, `#[device]` structs, slices (`&[T]`, `&mut [T]`) and views (`View<T, N>`)"),
                }
            }
        }
        ItemKind::Device => {
            for p in &item.params {
                if let Ty::Raw(_) = p.ty {
                    diags.error(p.span, "`Raw<T>` belongs to elementwise kernels; a device function takes `&[T]` or `View<T, N>`");
                }
                if tensor_map_in(&p.ty) && !matches!(&p.ty, Ty::Ref { inner, mutable: false } if matches!(**inner, Ty::TensorMap(_))) {
                    diags.error(p.span, "take a tensor map by shared reference: `map: &TensorMap<T>`");
                }
            }
        }
    }
}

/// Whether a type holds a `TensorMap` (only `&TensorMap<T>` parameters of raw kernels and
/// device functions may: the copies need the kernel parameter's own address).
fn tensor_map_in(t: &Ty) -> bool {
    match t {
        Ty::TensorMap(_) => true,
        Ty::Ref { inner, .. } => tensor_map_in(inner),
        Ty::Tuple(ts) => ts.iter().any(tensor_map_in),
        other => other.elem().is_some_and(tensor_map_in),
    }
}

fn contains_struct(t: &Ty) -> bool {
    match t {
        Ty::Struct(_) => true,
        other => other.elem().is_some_and(contains_struct),
    }
}

struct BodyCheck<'a, 'd> {
    item: &'a Item,
    by_name: &'a HashMap<&'a str, &'a Item>,
    scope: Scope,
    diags: &'d mut Diagnostics,
    /// The locals bound to `shared_array` so far.
    shared_locals: HashSet<LocalId>,
    /// The locals bound to `dynamic_shared` so far.
    dynamic_locals: HashSet<LocalId>,
    /// The functions that call `grid_sync()`, directly or through device functions.
    grid_wide: &'a HashSet<&'a str>,
}

impl BodyCheck<'_, '_> {
    fn block(&mut self, b: &Block) {
        for s in &b.stmts {
            match s {
                Stmt::Let { init: Some(e), pat, .. } => {
                    if let ExprKind::Call { callee: Callee::Intrinsic { intrinsic: Intrinsic::SharedArray, .. }, args } = &e.kind {
                        if let Pat::Bind(id, _) = pat {
                            self.shared_locals.insert(*id);
                        }
                        self.shared(e.span);
                        for a in args {
                            self.expr(a);
                        }
                    } else {
                        if let (ExprKind::Call { callee: Callee::Intrinsic { intrinsic: Intrinsic::DynamicShared, .. }, .. }, Pat::Bind(id, _)) = (&e.kind, pat) {
                            self.dynamic_locals.insert(*id);
                        }
                        self.expr(e);
                    }
                }
                Stmt::Let { init: None, .. } => {}
                Stmt::Expr(e) => self.expr(e),
            }
        }
        if let Some(t) = &b.tail {
            self.expr(t);
        }
    }

    /// `ldmatrix_*` and `cp_async` address shared memory by its shared-window address: their
    /// array must be one this function bound with `shared_array` or `dynamic_shared` (a
    /// `&[T; N]` parameter may be a local array, a `&[T]` one global memory).
    fn shared_operand(&mut self, f: Intrinsic, a: Option<&Expr>) {
        let Some(a) = a else { return };
        let ok = match &a.kind {
            ExprKind::Local(id) => self.shared_locals.contains(id) || self.dynamic_locals.contains(id),
            ExprKind::Error => true,
            _ => false,
        };
        if !ok {
            self.diags.error(
                a.span,
                format!(
                    "`{}` needs shared memory bound in this function: `let s = shared_array::<T, N>();` or `let s = dynamic_shared::<T>();`, then pass `s`",
                    f.rust_name()
                ),
            );
        }
    }

    /// Hopper's barriers, copies and multiplies address shared memory by its shared-window
    /// address: each shared operand must be an array this function bound with `shared_array` or
    /// `dynamic_shared`.
    fn hopper_operands(&mut self, h: HopperOp, args: &[Expr]) {
        let at: &[usize] = match h {
            HopperOp::MbarrierInit | HopperOp::MbarrierArrive | HopperOp::MbarrierArriveExpectTx | HopperOp::MbarrierWait => &[0],
            HopperOp::TmaLoad2d => &[0, 5],
            h if h.wgmma_rs() => &[2],
            h if h.wgmma_n().is_some() => &[1, 3],
            _ => &[],
        };
        for &k in at {
            let Some(a) = args.get(k) else { continue };
            let ok = match &a.kind {
                ExprKind::Local(id) => self.shared_locals.contains(id) || self.dynamic_locals.contains(id),
                ExprKind::Error => true,
                _ => false,
            };
            if !ok {
                self.diags.error(
                    a.span,
                    format!(
                        "`{}` needs shared memory bound in this function: `let s = shared_array::<T, N>();` or `let s = dynamic_shared::<T>();`, then pass `s`",
                        h.rust_name()
                    ),
                );
            }
        }
    }

    /// `cp_async_unchecked` copies from a slice parameter of the function, whose start the
    /// generated code checks for 16-byte alignment when the function is entered (the one
    /// promise of the `unsafe` call the caller cannot see: the array's address).
    fn source_parameter(&mut self, a: Option<&Expr>) {
        let Some(a) = a else { return };
        let ok = match &a.kind {
            ExprKind::Local(id) => self.item.params.iter().any(|p| p.local == *id && matches!(p.ty, Ty::Slice { .. })),
            ExprKind::Error => true,
            _ => false,
        };
        if !ok {
            self.diags.error(
                a.span,
                "`cp_async_unchecked` copies from a `&[T]` or `&mut [T]` parameter of this function (its start is checked for 16-byte alignment when the function is entered); pass the parameter itself",
            );
        }
    }

    fn shared(&mut self, span: proc_macro2::Span) {
        if !matches!(self.item.kind, ItemKind::RawKernel { .. } | ItemKind::Device) {
            self.diags.error(span, "shared memory is available in raw kernels and device functions only");
        }
    }

    /// Where each intrinsic may be used: the loop index in the bodies that have one, shared
    /// memory and barriers where the user manages the block's threads.
    fn intrinsic(&mut self, f: Intrinsic, span: proc_macro2::Span) {
        use Intrinsic::*;
        let name = f.rust_name();
        let elementwise = matches!(self.item.kind, ItemKind::Elementwise | ItemKind::Reduction(_));
        match f {
            Index | LoopSize => {
                if !elementwise {
                    let what = if f == Index { "the elementwise loop index" } else { "the elementwise loop size" };
                    self.diags.error(
                        span,
                        format!("`{name}()` is {what}; in a raw kernel or device function compute indices from `thread_idx()`, `block_idx()` and `block_dim()` (or `grid_1d()`)"),
                    );
                }
            }
            ReduceIndex => {
                if !matches!(self.item.kind, ItemKind::Reduction(_)) {
                    self.diags.error(
                        span,
                        "`reduce_index()` is a reduction map's position along the reduced axes; an elementwise body has `index()` (the element's index), a raw kernel computes its own from `thread_idx()` and `block_idx()`",
                    );
                }
            }
            SharedArray => self.diags.error(span, "bind shared memory to a name first: `let s = shared_array::<f32, 256>();`"),
            DynamicShared => self.shared(span),
            SyncThreads | SyncWarp | Warp(_) => {
                if elementwise {
                    self.diags.error(span, format!("`{name}()` is not meaningful in a `#[{}]` kernel; write a `#[rawkernel]`", self.item.kind.attr_name()))
                }
            }
            CpAsync | CpAsyncUnchecked | CpAsyncCommit | CpAsyncWait | Load4 | Store4 | Mma(_) | LdMatrix(_) | Hopper(_) => {
                if !matches!(self.item.kind, ItemKind::RawKernel { .. } | ItemKind::Device) {
                    self.diags.error(span, format!("`{name}()` works on a warp's or a block's tiles: write a `#[rawkernel]` (or a `#[device]` function it calls)"))
                }
            }
            GridSync => {
                if !matches!(self.item.kind, ItemKind::RawKernel { .. } | ItemKind::Device) {
                    self.diags.error(
                        span,
                        "`grid_sync()` waits for every thread of a raw kernel's grid, which only a cooperative launch can run: write a `#[rawkernel]` (or a `#[device]` function it calls)",
                    )
                }
            }
            ThreadIdx | BlockIdx | BlockDim | GridDim | Grid1d | Grid2d | Grid3d | GridSize1d | GridSize2d | GridSize3d | LaneId | WarpSize
            | ThreadFence | ThreadFenceBlock | ComplexNew | Atomic(_) | Shuffle(_) | Special(_) => {}
        }
    }

    fn expr(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Call { callee, args } => {
                match callee {
                    Callee::Intrinsic { intrinsic: i @ (Intrinsic::LdMatrix(_) | Intrinsic::CpAsync | Intrinsic::CpAsyncUnchecked), .. } => {
                        self.intrinsic(*i, e.span);
                        self.shared_operand(*i, args.first());
                        if *i == Intrinsic::CpAsyncUnchecked {
                            self.source_parameter(args.get(2));
                        }
                    }
                    Callee::Intrinsic { intrinsic: Intrinsic::Hopper(h), .. } => {
                        self.intrinsic(Intrinsic::Hopper(*h), e.span);
                        self.hopper_operands(*h, args);
                    }
                    Callee::Intrinsic { intrinsic, .. } => self.intrinsic(*intrinsic, e.span),
                    Callee::Device { name, .. } => match self.by_name.get(name.text.as_str()) {
                        Some(target) if target.kind.is_kernel() => self.diags.error(
                            name.span,
                            format!("`{}` is a `#[{}]` kernel; kernels cannot be called from kernel code: mark a helper `#[device]`", name.text, target.kind.attr_name()),
                        ),
                        Some(_) if matches!(self.item.kind, ItemKind::Elementwise | ItemKind::Reduction(_)) && self.grid_wide.contains(name.text.as_str()) => {
                            self.diags.error(
                                name.span,
                                format!(
                                    "`{}` calls `grid_sync()` (directly or through the device functions it calls), which only a cooperatively launched `#[rawkernel]` can run; a `#[{}]` kernel cannot call it",
                                    name.text,
                                    self.item.kind.attr_name()
                                ),
                            )
                        }
                        Some(_) => {}
                        None if self.scope == Scope::File => self.diags.error(
                            name.span,
                            format!("cannot find function `{}`; kernels can call the prelude's intrinsics and `#[device]` functions of the same file", name.text),
                        ),
                        None => {}
                    },
                    Callee::Assoc { .. } => {}
                }
                for a in args {
                    self.expr(a);
                }
            }
            ExprKind::Error | ExprKind::Lit(_) | ExprKind::Local(_) | ExprKind::Const { .. } | ExprKind::Continue { .. } => {}
            ExprKind::Unary(_, a) | ExprKind::Cast(a, _) | ExprKind::Ascribed(a, _) | ExprKind::Ref { expr: a, .. } => self.expr(a),
            ExprKind::Binary(_, a, b) => {
                self.expr(a);
                self.expr(b);
            }
            ExprKind::Assign { place, value, .. } => {
                self.expr(place);
                self.expr(value);
            }
            ExprKind::MethodCall { receiver, args, .. } => {
                self.expr(receiver);
                for a in args {
                    self.expr(a);
                }
            }
            ExprKind::Index { base, indices } => {
                self.expr(base);
                for i in indices {
                    self.expr(i);
                }
            }
            ExprKind::Field { base, .. } | ExprKind::TupleField { base, .. } => self.expr(base),
            ExprKind::Tuple(es) | ExprKind::ArrayList(es) | ExprKind::Print { args: es, .. } => {
                for x in es {
                    self.expr(x);
                }
            }
            ExprKind::StructLit { fields, .. } => {
                for (_, x) in fields {
                    self.expr(x);
                }
            }
            ExprKind::ArrayRepeat { value, .. } => self.expr(value),
            ExprKind::Block(b) => self.block(b),
            ExprKind::If { cond, then, els } => {
                self.expr(cond);
                self.block(then);
                if let Some(e) = els {
                    self.expr(e);
                }
            }
            ExprKind::Match { scrutinee, arms } => {
                self.expr(scrutinee);
                for a in arms {
                    if let Some(g) = &a.guard {
                        self.expr(g);
                    }
                    self.expr(&a.body);
                }
            }
            ExprKind::While { cond, body, .. } => {
                self.expr(cond);
                self.block(body);
            }
            ExprKind::Loop { body, .. } => self.block(body),
            ExprKind::For { range, body, .. } => {
                self.expr(&range.start);
                self.expr(&range.end);
                if let Some(s) = &range.step {
                    self.expr(s);
                }
                self.block(body);
            }
            ExprKind::Break { value, .. } | ExprKind::Return(value) => {
                if let Some(v) = value {
                    self.expr(v);
                }
            }
        }
    }
}

/// The reduction's attribute parts run outside the map: they see their own parameters only, not
/// the kernel's parameters nor the loop index.
fn reduction_part(item: &Item, e: &Expr, what: &str, diags: &mut Diagnostics) {
    match &e.kind {
        ExprKind::Local(l) if item.params.iter().any(|p| p.local == *l) => {
            let name = &item.locals[l.0 as usize].name.text;
            diags.error(
                e.span,
                format!("`{what}` cannot use the kernel parameter `{name}`: the reduction's attribute parts see only their own parameters; use `{name}` in the body (the map)"),
            );
        }
        ExprKind::Call { callee: Callee::Intrinsic { intrinsic: f @ (Intrinsic::Index | Intrinsic::LoopSize | Intrinsic::ReduceIndex), .. }, .. } => {
            diags.error(e.span, format!("`{}()` is only meaningful in the body (the map), not in `{what}`", f.rust_name()));
        }
        _ => {}
    }
    let (mut exprs, mut blocks) = (Vec::new(), Vec::new());
    visit_children(e, &mut |c| exprs.push(c), &mut |b| blocks.push(b));
    for c in exprs {
        reduction_part(item, c, what, diags);
    }
    for b in blocks {
        for st in &b.stmts {
            match st {
                Stmt::Let { init: Some(x), .. } | Stmt::Expr(x) => reduction_part(item, x, what, diags),
                Stmt::Let { init: None, .. } => {}
            }
        }
        if let Some(t) = &b.tail {
            reduction_part(item, t, what, diags);
        }
    }
}

/// Device functions must not call themselves, directly or through others.
fn recursion(module: &Module, diags: &mut Diagnostics) {
    let mut graph: HashMap<&str, Vec<(&str, proc_macro2::Span)>> = HashMap::new();
    for item in &module.items {
        let mut calls = Vec::new();
        collect_calls_block(&item.body, &mut calls);
        graph.insert(item.name.text.as_str(), calls);
    }
    let names: HashSet<&str> = module.items.iter().filter(|i| matches!(i.kind, ItemKind::Device)).map(|i| i.name.text.as_str()).collect();
    for item in module.items.iter().filter(|i| matches!(i.kind, ItemKind::Device)) {
        let start = item.name.text.as_str();
        // Depth-first search for a path back to `start`.
        let mut stack: Vec<&str> = vec![start];
        let mut visited = HashSet::new();
        while let Some(n) = stack.pop() {
            for (callee, span) in graph.get(n).map(|v| v.as_slice()).unwrap_or(&[]) {
                if !names.contains(callee) {
                    continue;
                }
                if *callee == start {
                    if n == start {
                        diags.error(*span, format!("`{start}` calls itself; recursion is not supported in kernels: rewrite it as a loop"));
                    } else {
                        diags.error(item.name.span, format!("`{start}` is recursive (through `{n}`); recursion is not supported in kernels: rewrite it as a loop"));
                    }
                    stack.clear();
                    break;
                }
                if visited.insert(*callee) {
                    stack.push(callee);
                }
            }
        }
    }
}

fn collect_calls_block<'a>(b: &'a Block, out: &mut Vec<(&'a str, proc_macro2::Span)>) {
    for s in &b.stmts {
        match s {
            Stmt::Let { init: Some(e), .. } | Stmt::Expr(e) => collect_calls(e, out),
            _ => {}
        }
    }
    if let Some(t) = &b.tail {
        collect_calls(t, out);
    }
}

fn collect_calls<'a>(e: &'a Expr, out: &mut Vec<(&'a str, proc_macro2::Span)>) {
    let (mut exprs, mut blocks) = (Vec::new(), Vec::new());
    crate::ir::visit_children(e, &mut |c| exprs.push(c), &mut |b| blocks.push(b));
    exprs.into_iter().for_each(|c| collect_calls(c, out));
    blocks.into_iter().for_each(|b| collect_calls_block(b, out));
    if let ExprKind::Call { callee: Callee::Device { name, .. }, .. } = &e.kind {
        out.push((name.text.as_str(), name.span));
    }
}
