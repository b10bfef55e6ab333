//! The kernel IR: what the front end produces from Rust syntax and every later phase consumes.
//!
//! # Shape
//!
//! A [`Module`] is one source file: its kernels and `#[device]` functions, each an [`Item`]. An
//! item owns its [`Local`]s (every `let` binding, parameter and loop variable, already resolved by
//! the front end: a name in an expression is a [`LocalId`], never text) and a tree of [`Expr`]s
//! numbered densely by [`ExprId`] so that the type checker can keep its results in a side table.
//!
//! # Invariants
//!
//! Established by the front end:
//! - every node carries the [`Span`] of the user's tokens it came from;
//! - every `LocalId` refers to a binding in scope at its use;
//! - `ExprId`s are unique within an item and `< Item::expr_count`;
//! - `break`/`continue` refer to an enclosing loop (`LoopId`), labelled or not.
//!
//! Established by the type checker (see `typeck`): every expression has a type, with no inference
//! variables left; integer literals fit their type; every method call, associated function and
//! associated constant is resolved to its `lang` variant (in `Types`). A module with errors may
//! hold `ExprKind::Error` and `Ty::Error` (each stands for a reported error); the back end only
//! sees modules without.
//!
//! Established by the validator (`valid.rs`): no recursion among device functions, every called
//! device function exists, kernel-kind rules (elementwise parameters are scalars or `Raw<T>`,
//! raw kernels return `()`), intrinsics used only where they mean something.
//!
//! Statements and expressions are Rust's: blocks, `if` and `match` are expressions; the back end
//! lowers them to C statements.

use proc_macro2::Span;

use cuprum_abi::dtype::DType;
use crate::lang::{Bound, Intrinsic};

/// One source file's kernels and device functions, and its `#[device]` structs.
#[derive(Debug, Default)]
pub struct Module {
    pub items: Vec<Item>,
    pub structs: Vec<StructDef>,
}

impl Module {
    pub fn find_struct(&self, name: &str) -> Option<&StructDef> {
        self.structs.iter().find(|s| s.name.text == name)
    }
}

/// A `#[device] #[repr(C)] struct`: plain data usable in kernels (by value, as array elements,
/// as a parameter). Its fields are scalars, fixed-size arrays and other `#[device]` structs.
#[derive(Debug, Clone)]
pub struct StructDef {
    pub name: Name,
    pub fields: Vec<FieldDef>,
    pub span: Span,
}

impl StructDef {
    pub fn field(&self, name: &str) -> Option<&FieldDef> {
        self.fields.iter().find(|f| f.name.text == name)
    }
}

#[derive(Debug, Clone)]
pub struct FieldDef {
    pub name: Name,
    pub ty: Ty,
}

/// What an item is, with the attribute arguments that matter to code generation.
#[derive(Debug, Clone)]
pub enum ItemKind {
    /// `#[elementwise]`: CuPy's ElementwiseKernel; the body maps one element.
    Elementwise,
    /// `#[reduction(identity = .., reduce = |a, b| .., post = |a| ..)]`: the body is the map.
    Reduction(ReductionParts),
    /// `#[rawkernel]`: the user manages the parallelism.
    RawKernel { fast_math: bool },
    /// `#[device]`: a function callable from kernels.
    Device,
}

impl ItemKind {
    pub fn attr_name(&self) -> &'static str {
        match self {
            ItemKind::Elementwise => "elementwise",
            ItemKind::Reduction(_) => "reduction",
            ItemKind::RawKernel { .. } => "rawkernel",
            ItemKind::Device => "device",
        }
    }
    pub fn is_kernel(&self) -> bool {
        !matches!(self, ItemKind::Device)
    }
    /// The kernel kind (in symbols); `None` for a `#[device]` function.
    pub fn kernel_kind(&self) -> Option<cuprum_abi::KernelKind> {
        use cuprum_abi::KernelKind;
        match self {
            ItemKind::Elementwise => Some(KernelKind::Elementwise),
            ItemKind::Reduction(_) => Some(KernelKind::Reduction),
            ItemKind::RawKernel { .. } => Some(KernelKind::RawKernel),
            ItemKind::Device => None,
        }
    }
}

/// The parts of a reduction given on its attribute. Closure parameters are locals of the item.
#[derive(Debug, Clone)]
pub struct ReductionParts {
    /// The identity, an expression of the accumulator type (usually a literal).
    pub identity: Option<ExprRef>,
    /// `|a, b| expr`: combines two accumulators.
    pub reduce: Closure,
    /// `|a| expr`: maps the final accumulator to the output; identity when absent.
    pub post: Option<Closure>,
    /// `acc = T`: the accumulator type; the map's return type when absent.
    pub acc: Option<Ty>,
}

#[derive(Debug, Clone)]
pub struct Closure {
    pub params: Vec<LocalId>,
    pub body: ExprRef,
    pub span: Span,
}

pub type ExprRef = Box<Expr>;

/// An identifier as the user wrote it.
#[derive(Debug, Clone)]
pub struct Name {
    pub text: String,
    pub span: Span,
}

/// A kernel or device function.
#[derive(Debug, Clone)]
pub struct Item {
    pub kind: ItemKind,
    pub name: Name,
    pub generics: Vec<Generic>,
    pub params: Vec<Param>,
    /// The return type; `Ty::Unit` when there is none.
    pub ret: Ty,
    pub ret_span: Span,
    pub body: Block,
    pub locals: Vec<Local>,
    pub expr_count: u32,
    /// Instantiations to precompile: one dtype per generic parameter.
    pub instances: Vec<Vec<DType>>,
    /// Whether indexing in the body is checked at run time (docs/semantics.md, row 18): true unless
    /// the attribute says `unchecked`.
    pub bounds_checks: bool,
    /// `#[rawkernel(max_threads = N)]` (or `#[elementwise(..)]`): the most threads per block the kernel is compiled for
    /// (`__launch_bounds__(N)`), so that the compiler keeps its registers within what N threads
    /// may have.
    pub max_threads: Option<u32>,
    /// `#[rawkernel(min_blocks = M)]` (or `#[elementwise(..)]`, with `max_threads`): the resident blocks per multiprocessor
    /// the kernel is compiled for (`__launch_bounds__(N, M)`).
    pub min_blocks: Option<u32>,
    pub span: Span,
}

/// A generic type parameter and its prelude bound.
#[derive(Debug, Clone)]
pub struct Generic {
    pub name: Name,
    pub bound: Bound,
    /// The bound was missing or not a prelude trait (an error was reported): the type checker
    /// allows every operation on this parameter rather than repeat that error at each use.
    pub unchecked: bool,
}

#[derive(Debug, Clone)]
pub struct Param {
    pub local: LocalId,
    pub ty: Ty,
    pub span: Span,
}

/// A local binding: parameter, `let`, loop variable, closure parameter.
#[derive(Debug, Clone)]
pub struct Local {
    pub name: Name,
    /// The type written by the user, if any (the type checker fills in the rest).
    pub declared: Option<Ty>,
    pub mutable: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LocalId(pub u32);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ExprId(pub u32);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LoopId(pub u32);

/// Types of the kernel language.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Ty {
    Unit,
    /// The type of `return`, `break`, `continue`: unifies with anything.
    Never,
    Scalar(DType),
    /// The item's generic parameter with this index.
    Param(u32),
    Tuple(Vec<Ty>),
    /// `[T; N]`, a value (local arrays).
    Array(Box<Ty>, u64),
    /// `&[T]` / `&mut [T]`: a device pointer and a length.
    Slice { elem: Box<Ty>, mutable: bool },
    /// `&mut [T; N]` from `shared_array::<T, N>()`.
    ArrayRef { elem: Box<Ty>, len: u64, mutable: bool },
    /// `View<T, N>` / `ViewMut<T, N>`: an n-d strided array argument of a raw kernel.
    View { elem: Box<Ty>, ndim: u32, mutable: bool },
    /// `Raw<T>`: an elementwise argument indexed by hand.
    Raw(Box<Ty>),
    /// `TensorMap<T>`: a TMA descriptor of a 2-D array, taken by a raw kernel as `&TensorMap<T>`
    /// (`Ty::Ref` of it) and passed to `tma_load_2d`.
    TensorMap(Box<Ty>),
    /// `&T` / `&mut T` to a scalar or local value: elementwise output parameters, device-function
    /// out-parameters (a C++ reference).
    Ref { inner: Box<Ty>, mutable: bool },
    /// `Dim3 { x, y, z }` of the thread/block intrinsics.
    Dim3,
    /// A `#[device]` struct of the file, by name.
    Struct(String),
    /// An integer literal whose type is not known yet (type checker only).
    IntVar(u32),
    /// A float literal whose type is not known yet (type checker only).
    FloatVar(u32),
    /// The type of something already reported as an error (a rejected construct, a parameter whose
    /// type was rejected), or of a call to a function the check cannot see (the macro path checks
    /// one item alone). Accepted everywhere so that one mistake yields one message; never reaches
    /// the back end.
    Error,
}

impl Ty {
    pub fn scalar(&self) -> Option<DType> {
        match self {
            Ty::Scalar(d) => Some(*d),
            _ => None,
        }
    }
    pub fn is_unit(&self) -> bool {
        matches!(self, Ty::Unit)
    }
    /// The element type of anything indexable.
    pub fn elem(&self) -> Option<&Ty> {
        match self {
            Ty::Array(e, _) | Ty::Slice { elem: e, .. } | Ty::ArrayRef { elem: e, .. } => Some(e),
            Ty::View { elem, .. } | Ty::Raw(elem) => Some(elem),
            _ => None,
        }
    }
}

/// A `{ ... }` block: statements and an optional tail expression (its value).
#[derive(Debug, Clone)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    pub tail: Option<ExprRef>,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub enum Stmt {
    /// `let pat (: ty)? (= init)?;`
    Let { pat: Pat, init: Option<Expr>, span: Span },
    /// An expression statement (`x += 1;`, `if ... {}`).
    Expr(Expr),
}

/// Binding patterns of `let` and tuple destructuring.
#[derive(Debug, Clone)]
pub enum Pat {
    Bind(LocalId, Span),
    /// `_`
    Wild(Span),
    Tuple(Vec<Pat>, Span),
}

/// Patterns of `match` arms over integers (and bool).
#[derive(Debug, Clone)]
pub enum MatchPat {
    Lit(Expr),
    /// `a..=b` or `a..b`.
    Range { lo: Expr, hi: Expr, inclusive: bool },
    Or(Vec<MatchPat>),
    /// `_` or a binding name (bound to the scrutinee).
    Wild(Option<LocalId>),
    /// `name @ pat`: binds the scrutinee when `pat` matches.
    Bind(LocalId, Box<MatchPat>),
}

impl MatchPat {
    /// The locals this pattern binds (each to the scrutinee).
    pub fn bindings(&self, out: &mut Vec<LocalId>) {
        match self {
            MatchPat::Wild(Some(l)) => out.push(*l),
            MatchPat::Bind(l, p) => {
                out.push(*l);
                p.bindings(out);
            }
            MatchPat::Or(ps) => ps.iter().for_each(|p| p.bindings(out)),
            MatchPat::Lit(_) | MatchPat::Range { .. } | MatchPat::Wild(None) => {}
        }
    }
    /// Whether the pattern matches every value (`_`, a name, `n @ _`).
    pub fn is_catch_all(&self) -> bool {
        match self {
            MatchPat::Wild(_) => true,
            MatchPat::Bind(_, p) => p.is_catch_all(),
            MatchPat::Or(ps) => ps.iter().any(|p| p.is_catch_all()),
            MatchPat::Lit(_) | MatchPat::Range { .. } => false,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Arm {
    pub pat: MatchPat,
    pub guard: Option<Expr>,
    pub body: Expr,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub struct Expr {
    pub id: ExprId,
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
}

impl BinOp {
    pub fn symbol(self) -> &'static str {
        use BinOp::*;
        match self {
            Add => "+",
            Sub => "-",
            Mul => "*",
            Div => "/",
            Rem => "%",
            BitAnd => "&",
            BitOr => "|",
            BitXor => "^",
            Shl => "<<",
            Shr => ">>",
            Eq => "==",
            Ne => "!=",
            Lt => "<",
            Le => "<=",
            Gt => ">",
            Ge => ">=",
            And => "&&",
            Or => "||",
        }
    }
    pub fn is_comparison(self) -> bool {
        use BinOp::*;
        matches!(self, Eq | Ne | Lt | Le | Gt | Ge)
    }
    pub fn is_logical(self) -> bool {
        matches!(self, BinOp::And | BinOp::Or)
    }
    pub fn is_shift(self) -> bool {
        matches!(self, BinOp::Shl | BinOp::Shr)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnOp {
    Neg,
    Not,
    /// `*r` of a `&T` / `&mut T`.
    Deref,
}

/// A literal as written, with its suffix type if any.
#[derive(Debug, Clone)]
pub enum Lit {
    Int { value: u128, suffix: Option<DType> },
    Float { text: String, suffix: Option<DType> },
    Bool(bool),
}

/// What a range `for` loop iterates over: `start..end` / `start..=end`, then `.rev()`, then
/// `.step_by(step)`, as in Rust.
#[derive(Debug, Clone)]
pub struct RangeLoop {
    pub start: ExprRef,
    pub end: ExprRef,
    pub inclusive: bool,
    pub rev: bool,
    pub step: Option<ExprRef>,
    /// `.unroll()` (`Some(0)`: unroll fully, `#pragma unroll`) or `.unroll_by(n)` (`Some(n)`,
    /// `#pragma unroll n`; 1 keeps the loop rolled).
    pub unroll: Option<u32>,
}

/// A resolved call target.
#[derive(Debug, Clone)]
pub enum Callee {
    /// A prelude intrinsic (`thread_idx`, `atomic_add`, `sync_threads`, ...), with the turbofish
    /// types and lengths if any (`shared_array::<f32, 256>`).
    Intrinsic { intrinsic: Intrinsic, tys: Vec<Ty>, consts: Vec<u64> },
    /// A `#[device]` function of the same file, with explicit generic arguments if given.
    Device { name: Name, tys: Vec<Ty> },
    /// An associated function of a type: `T::zero()`, `f32::from_bits(..)`, `f16::from_f32(..)`.
    /// Which one depends on the type: the type checker resolves it (`Types::assoc_fns`).
    Assoc { ty: Ty, name: Name },
}

#[derive(Debug, Clone)]
pub enum ExprKind {
    /// A construct the front end rejected (the error is reported); typed `Ty::Error`.
    Error,
    Lit(Lit),
    Local(LocalId),
    /// An associated constant: `f32::INFINITY`, `i32::MAX`, `f64::consts::PI`, `u32::BITS`;
    /// resolved against the type by the type checker (`Types::consts`).
    Const { ty: Ty, name: Name },
    Unary(UnOp, ExprRef),
    Binary(BinOp, ExprRef, ExprRef),
    /// `place = value` or `place op= value`.
    Assign { op: Option<BinOp>, place: ExprRef, value: ExprRef },
    Cast(ExprRef, Ty),
    /// An expression that must have the type (rustc's type ascription): the initializer of a
    /// file's `const N: T = init;` at each use of `N`. Unlike `init as T`, the type constrains the
    /// initializer, so that `const LIMIT: i64 = 1 << 40;` shifts an `i64`.
    Ascribed(ExprRef, Ty),
    /// `&place` / `&mut place`: an argument to a device function's reference parameter.
    Ref { mutable: bool, expr: ExprRef },
    Call { callee: Callee, args: Vec<Expr> },
    /// `receiver.method(args)`: which method depends on the receiver's type, so the type checker
    /// resolves the name (`Types::methods`).
    MethodCall { receiver: ExprRef, method: Name, args: Vec<Expr> },
    /// `a[i]`; a view's multi-index `v[[i, j]]` has several indices.
    Index { base: ExprRef, indices: Vec<Expr> },
    /// `e.name` (struct fields, `Dim3` fields, complex `re`/`im`) or `e.0` (tuples).
    Field { base: ExprRef, field: Name },
    /// `Name { field: value, .. }`: a struct value, the fields in the order written (Rust's
    /// evaluation order).
    StructLit { name: Name, fields: Vec<(Name, Expr)> },
    TupleField { base: ExprRef, index: u32 },
    Tuple(Vec<Expr>),
    /// `[a, b, c]`.
    ArrayList(Vec<Expr>),
    /// `[v; N]`.
    ArrayRepeat { value: ExprRef, len: u64 },
    Block(Block),
    If { cond: ExprRef, then: Block, els: Option<ExprRef> },
    Match { scrutinee: ExprRef, arms: Vec<Arm> },
    While { label: Option<Name>, id: LoopId, cond: ExprRef, body: Block },
    Loop { label: Option<Name>, id: LoopId, body: Block },
    For { label: Option<Name>, id: LoopId, var: LocalId, range: RangeLoop, body: Block },
    Break { target: LoopId, value: Option<ExprRef> },
    Continue { target: LoopId },
    Return(Option<ExprRef>),
    /// `gpu_print!("x = {} at {}", x, i)` / `gpu_println!` (a newline appended to the last text
    /// piece): the format string parsed into pieces, one argument per `Arg` piece, in order.
    /// Typed `()`; CUDA `printf`.
    Print { pieces: Vec<PrintPiece>, args: Vec<Expr> },
}

/// A piece of a `gpu_print!` format string.
#[derive(Debug, Clone)]
pub enum PrintPiece {
    /// Literal text (`{{`/`}}` already unescaped).
    Text(String),
    /// `{}` / `{:.N}` / `{:x}` / `{:X}`: the next argument (`arg` counts from 0), with the span of
    /// the format string.
    Arg { arg: usize, spec: PrintSpec, span: Span },
}

/// How a `gpu_print!` argument is formatted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrintSpec {
    /// `{}`: Display (floats as C's `%g`, docs/kernel-language.md, Printing).
    Display,
    /// `{:.N}`: a float with N decimals (`%.Nf`).
    Precision(u32),
    /// `{:x}`: an integer in lower-case hexadecimal (two's complement for negative values).
    LowerHex,
    /// `{:X}`: upper-case hexadecimal.
    UpperHex,
}

/// The names of the items that call an intrinsic `pred` admits, directly or through the
/// `#[device]` functions of the module they call (`grid_sync`: the kernels that need a
/// cooperative launch, `Intrinsic::grid_wide`).
pub fn reaching_intrinsic<'m>(module: &'m Module, pred: &dyn Fn(Intrinsic) -> bool) -> std::collections::HashSet<&'m str> {
    let mut calls: Vec<(&str, Vec<String>)> = Vec::new();
    let mut reached = std::collections::HashSet::new();
    for item in &module.items {
        let (mut direct, mut callees) = (false, Vec::new());
        each_expr_of_item(item, &mut |e| {
            if let ExprKind::Call { callee, .. } = &e.kind {
                match callee {
                    Callee::Intrinsic { intrinsic, .. } => direct |= pred(*intrinsic),
                    Callee::Device { name, .. } => callees.push(name.text.clone()),
                    Callee::Assoc { .. } => {}
                }
            }
        });
        if direct {
            reached.insert(item.name.text.as_str());
        }
        calls.push((item.name.text.as_str(), callees));
    }
    // Callers of reached functions, until nothing changes (the call graph is small).
    loop {
        let before = reached.len();
        for (name, callees) in &calls {
            if !reached.contains(name) && callees.iter().any(|c| reached.contains(c.as_str())) {
                reached.insert(*name);
            }
        }
        if reached.len() == before {
            return reached;
        }
    }
}

/// Calls `f` on every expression of the item (body and reduction parts).
pub fn each_expr_of_item(item: &Item, f: &mut dyn FnMut(&Expr)) {
    fn block(b: &Block, f: &mut dyn FnMut(&Expr)) {
        for s in &b.stmts {
            match s {
                Stmt::Let { init: Some(e), .. } | Stmt::Expr(e) => expr(e, f),
                Stmt::Let { init: None, .. } => {}
            }
        }
        if let Some(t) = &b.tail {
            expr(t, f);
        }
    }
    fn expr(e: &Expr, f: &mut dyn FnMut(&Expr)) {
        f(e);
        let (mut exprs, mut blocks) = (Vec::new(), Vec::new());
        visit_children(e, &mut |c| exprs.push(c), &mut |b| blocks.push(b));
        for c in exprs {
            expr(c, f);
        }
        for b in blocks {
            block(b, f);
        }
    }
    block(&item.body, f);
    if let ItemKind::Reduction(parts) = &item.kind {
        for e in [parts.identity.as_deref(), Some(&*parts.reduce.body), parts.post.as_ref().map(|p| &*p.body)].into_iter().flatten() {
            expr(e, f);
        }
    }
}

/// Calls `on_expr` for each direct sub-expression of `e` and `on_block` for each direct block.
pub fn visit_children<'a>(e: &'a Expr, on_expr: &mut dyn FnMut(&'a Expr), on_block: &mut dyn FnMut(&'a Block)) {
    match &e.kind {
        ExprKind::Error | ExprKind::Lit(_) | ExprKind::Local(_) | ExprKind::Const { .. } | ExprKind::Continue { .. } => {}
        ExprKind::Unary(_, a) | ExprKind::Cast(a, _) | ExprKind::Ascribed(a, _) | ExprKind::Ref { expr: a, .. } => on_expr(a),
        ExprKind::Binary(_, a, b) => {
            on_expr(a);
            on_expr(b);
        }
        ExprKind::Assign { place, value, .. } => {
            on_expr(place);
            on_expr(value);
        }
        ExprKind::Call { args, .. } => args.iter().for_each(&mut *on_expr),
        ExprKind::MethodCall { receiver, args, .. } => {
            on_expr(receiver);
            args.iter().for_each(&mut *on_expr);
        }
        ExprKind::Index { base, indices } => {
            on_expr(base);
            indices.iter().for_each(&mut *on_expr);
        }
        ExprKind::Field { base, .. } | ExprKind::TupleField { base, .. } => on_expr(base),
        ExprKind::Tuple(es) | ExprKind::ArrayList(es) | ExprKind::Print { args: es, .. } => es.iter().for_each(&mut *on_expr),
        ExprKind::StructLit { fields, .. } => fields.iter().for_each(|(_, e)| on_expr(e)),
        ExprKind::ArrayRepeat { value, .. } => on_expr(value),
        ExprKind::Block(b) => on_block(b),
        ExprKind::If { cond, then, els } => {
            on_expr(cond);
            on_block(then);
            if let Some(e) = els {
                on_expr(e);
            }
        }
        ExprKind::Match { scrutinee, arms } => {
            on_expr(scrutinee);
            for a in arms {
                if let Some(g) = &a.guard {
                    on_expr(g);
                }
                on_expr(&a.body);
            }
        }
        ExprKind::While { cond, body, .. } => {
            on_expr(cond);
            on_block(body);
        }
        ExprKind::Loop { body, .. } => on_block(body),
        ExprKind::For { range, body, .. } => {
            on_expr(&range.start);
            on_expr(&range.end);
            if let Some(s) = &range.step {
                on_expr(s);
            }
            on_block(body);
        }
        ExprKind::Break { value, .. } | ExprKind::Return(value) => {
            if let Some(v) = value {
                on_expr(v);
            }
        }
    }
}
