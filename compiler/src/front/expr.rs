//! Statements and expressions: syn -> IR, with name resolution (scopes, loop labels).

use std::collections::HashMap;

use proc_macro2::Span;
use syn::spanned::Spanned;

use super::ty::{self, Position};
use crate::diag::Diagnostics;
use cuprum_abi::dtype::DType;
use crate::ir::*;
use crate::lang::{AssocFn, Intrinsic, MathFn, Method};

pub struct Lowerer<'d> {
    pub diags: &'d mut Diagnostics,
    pub scope: &'d super::FileScope,
    pub generics: Vec<String>,
    pub locals: Vec<Local>,
    scopes: Vec<HashMap<String, LocalId>>,
    loops: Vec<(Option<String>, LoopId)>,
    /// Locals whose type or initializer was rejected (already reported): using them reports nothing
    /// more.
    pub poisoned: std::collections::HashSet<LocalId>,
    pub next_expr: u32,
    next_loop: u32,
    /// Nesting of `unsafe` blocks (1 in an `unsafe fn`): `get_unchecked` needs one, as in Rust.
    pub unsafe_depth: u32,
}

impl<'d> Lowerer<'d> {
    pub fn new(diags: &'d mut Diagnostics, scope: &'d super::FileScope) -> Self {
        Lowerer {
            diags,
            scope,
            generics: Vec::new(),
            locals: Vec::new(),
            scopes: Vec::new(),
            loops: Vec::new(),
            poisoned: Default::default(),
            next_expr: 0,
            next_loop: 0,
            unsafe_depth: 0,
        }
    }

    pub fn push_scope(&mut self) {
        self.scopes.push(HashMap::new());
    }
    pub fn pop_scope(&mut self) {
        self.scopes.pop();
    }
    pub fn declare(&mut self, ident: &syn::Ident, mutable: bool, declared: Option<Ty>) -> LocalId {
        let id = super::new_local(&mut self.locals, ident, mutable, declared);
        if let Some(scope) = self.scopes.last_mut() {
            scope.insert(ident.to_string(), id);
        }
        id
    }
    fn lookup(&self, name: &str) -> Option<LocalId> {
        self.scopes.iter().rev().find_map(|s| s.get(name).copied())
    }

    pub fn mk(&mut self, kind: ExprKind, span: Span) -> Expr {
        let id = ExprId(self.next_expr);
        self.next_expr += 1;
        Expr { id, kind, span }
    }
    /// A placeholder after an error (no later phase runs on a module with errors).
    fn error(&mut self, span: Span, message: impl std::fmt::Display) -> Expr {
        self.diags.error(span, message);
        self.mk(ExprKind::Error, span)
    }

    pub fn block(&mut self, b: &syn::Block) -> Block {
        self.push_scope();
        let mut stmts = Vec::new();
        let mut tail = None;
        let n = b.stmts.len();
        for (i, s) in b.stmts.iter().enumerate() {
            match s {
                syn::Stmt::Local(l) => {
                    if let Some(st) = self.local(l) {
                        stmts.push(st);
                    }
                }
                // `;;`: syn reads the second `;` as an empty expression statement.
                syn::Stmt::Expr(syn::Expr::Verbatim(empty), Some(semi)) if empty.is_empty() => {
                    self.diags.error(semi.span, "stray `;`: remove it (kernels have no empty statements)");
                }
                syn::Stmt::Expr(e, semi) => {
                    let e = self.expr(e);
                    if semi.is_none() && i + 1 == n {
                        tail = Some(Box::new(e));
                    } else {
                        stmts.push(Stmt::Expr(e));
                    }
                }
                syn::Stmt::Item(item) => {
                    self.diags.error(
                        item.span(),
                        "items inside kernel bodies are not supported; define `#[device]` functions at module level and use `let` for values",
                    );
                }
                syn::Stmt::Macro(m) => {
                    let e = self.mac(&m.mac);
                    stmts.push(Stmt::Expr(e));
                }
            }
        }
        self.pop_scope();
        Block { stmts, tail, span: b.span() }
    }

    fn local(&mut self, l: &syn::Local) -> Option<Stmt> {
        let init = match &l.init {
            Some(init) => {
                if let Some((_, els)) = &init.diverge {
                    self.diags.error(els.span(), "`let ... else` is not supported in kernels; use `if`/`match`");
                }
                Some(self.expr(&init.expr))
            }
            None => None,
        };
        // The initializer is lowered before the pattern declares its names (`let x = x + 1;`).
        let errors = self.diags.len();
        let pat = self.pat(&l.pat, None)?;
        if self.diags.len() > errors || matches!(init, Some(Expr { kind: ExprKind::Error, .. })) {
            let mut ids = Vec::new();
            pat_locals(&pat, &mut ids);
            self.poisoned.extend(ids);
        }
        Some(Stmt::Let { pat, init, span: l.span() })
    }

    fn pat(&mut self, p: &syn::Pat, declared: Option<Ty>) -> Option<Pat> {
        match p {
            syn::Pat::Ident(pi) => {
                if pi.by_ref.is_some() || pi.subpat.is_some() {
                    self.diags.error(pi.span(), "write a plain binding (`let x` or `let mut x`)");
                    return None;
                }
                let id = self.declare(&pi.ident, pi.mutability.is_some(), declared);
                Some(Pat::Bind(id, pi.ident.span()))
            }
            syn::Pat::Type(pt) => {
                let t = ty::lower(&pt.ty, &self.generics, self.scope, Position::Local, self.diags);
                self.pat(&pt.pat, t)
            }
            syn::Pat::Wild(w) => Some(Pat::Wild(w.span())),
            syn::Pat::Tuple(t) => {
                let declared: Vec<Option<Ty>> = match declared {
                    Some(Ty::Tuple(ts)) if ts.len() == t.elems.len() => ts.into_iter().map(Some).collect(),
                    _ => vec![None; t.elems.len()],
                };
                let mut pats = Vec::new();
                for (e, d) in t.elems.iter().zip(declared) {
                    pats.push(self.pat(e, d)?);
                }
                Some(Pat::Tuple(pats, t.span()))
            }
            syn::Pat::Paren(pp) => self.pat(&pp.pat, declared),
            other => {
                self.diags.error(other.span(), "this pattern is not supported in `let`; use a name, `_` or a tuple of those");
                None
            }
        }
    }

    fn mac(&mut self, m: &syn::Macro) -> Expr {
        let name = m.path.segments.last().map(|s| s.ident.to_string()).unwrap_or_default();
        if name == "gpu_print" || name == "gpu_println" {
            return self.print(m, name == "gpu_println");
        }
        let hint = match name.as_str() {
            "println" | "print" | "eprintln" | "eprint" | "dbg" | "format" | "write" | "writeln" => {
                "use `gpu_print!`/`gpu_println!` (CUDA `printf`; `{}`, `{:.N}`, `{:x}`, `{:X}` of numbers and `bool`), or write results to an output array"
            }
            "panic" | "assert" | "assert_eq" | "assert_ne" | "unreachable" | "todo" | "unimplemented" | "debug_assert" => {
                "panics are not available in kernels; check the condition with `if` and write a flag to an output array"
            }
            "vec" => "`vec!` is not available in kernels (no heap on the GPU); use a local `[T; N]` array",
            _ => "macros are not available in kernels; write the code out or use a `#[device]` function",
        };
        self.error(m.span(), format!("`{name}!`: {hint}"))
    }

    /// `gpu_print!("...", args)`: the format string's pieces and the arguments (docs/kernel-language.md,
    /// Printing).
    fn print(&mut self, m: &syn::Macro, newline: bool) -> Expr {
        use syn::parse::Parser;
        let parser = |input: syn::parse::ParseStream| -> syn::Result<(syn::LitStr, Vec<syn::Expr>)> {
            let lit: syn::LitStr = input.parse()?;
            let mut args = Vec::new();
            while !input.is_empty() {
                input.parse::<syn::Token![,]>()?;
                if input.is_empty() {
                    break;
                }
                args.push(input.parse::<syn::Expr>()?);
            }
            Ok((lit, args))
        };
        let (lit, args) = match parser.parse2(m.tokens.clone()) {
            Ok(parsed) => parsed,
            Err(e) => {
                let span = if m.tokens.is_empty() { m.span() } else { e.span() };
                return self.error(span, "`gpu_print!` takes a format string literal, then the values to print, separated by commas");
            }
        };
        let args: Vec<Expr> = args.iter().map(|a| self.expr(a)).collect();
        let span = lit.span();
        let mut pieces = match parse_format(&lit.value(), span) {
            Ok(p) => p,
            Err(msg) => return self.error(span, msg),
        };
        if newline {
            match pieces.last_mut() {
                Some(PrintPiece::Text(t)) => t.push('\n'),
                _ => pieces.push(PrintPiece::Text("\n".into())),
            }
        }
        let wanted = pieces.iter().filter(|p| matches!(p, PrintPiece::Arg { .. })).count();
        if wanted != args.len() {
            let s = |n: usize| if n == 1 { "" } else { "s" };
            let at = if args.len() > wanted { args[wanted].span } else { m.span() };
            return self.error(at, format!("the format string has {wanted} placeholder{} but {} argument{} {} given", s(wanted), args.len(), s(args.len()), if args.len() == 1 { "is" } else { "are" }));
        }
        self.mk(ExprKind::Print { pieces, args }, m.span())
    }

    pub fn expr(&mut self, e: &syn::Expr) -> Expr {
        let span = e.span();
        match e {
            syn::Expr::Lit(l) => self.lit(&l.lit),
            syn::Expr::Paren(p) => self.expr(&p.expr),
            syn::Expr::Group(g) => self.expr(&g.expr),
            syn::Expr::Path(p) => self.path_expr(p),
            syn::Expr::Unary(u) => {
                let op = match u.op {
                    syn::UnOp::Neg(_) => UnOp::Neg,
                    syn::UnOp::Not(_) => UnOp::Not,
                    syn::UnOp::Deref(_) => UnOp::Deref,
                    _ => return self.error(span, "unsupported unary operator"),
                };
                let inner = self.expr(&u.expr);
                self.mk(ExprKind::Unary(op, Box::new(inner)), span)
            }
            syn::Expr::Binary(b) => self.binary(b),
            syn::Expr::Assign(a) => {
                let place = self.expr(&a.left);
                let value = self.expr(&a.right);
                self.mk(ExprKind::Assign { op: None, place: Box::new(place), value: Box::new(value) }, span)
            }
            syn::Expr::Cast(c) => {
                let inner = self.expr(&c.expr);
                match ty::lower(&c.ty, &self.generics, self.scope, Position::Local, self.diags) {
                    Some(t) => self.mk(ExprKind::Cast(Box::new(inner), t), span),
                    None => self.mk(ExprKind::Error, span),
                }
            }
            syn::Expr::Call(c) => self.call(c),
            syn::Expr::MethodCall(m) => self.method_call(m),
            syn::Expr::Index(i) => {
                let base = self.expr(&i.expr);
                let indices = match &*i.index {
                    syn::Expr::Array(a) => a.elems.iter().map(|e| self.expr(e)).collect(),
                    syn::Expr::Range(r) => {
                        return self.error(r.span(), "sub-slices (`a[i..j]`) are not supported in kernels; index elements with an offset instead");
                    }
                    other => vec![self.expr(other)],
                };
                self.mk(ExprKind::Index { base: Box::new(base), indices }, span)
            }
            syn::Expr::Field(f) => {
                let base = self.expr(&f.base);
                match &f.member {
                    syn::Member::Named(n) => {
                        let field = Name { text: n.to_string(), span: n.span() };
                        self.mk(ExprKind::Field { base: Box::new(base), field }, span)
                    }
                    syn::Member::Unnamed(i) => self.mk(ExprKind::TupleField { base: Box::new(base), index: i.index }, span),
                }
            }
            syn::Expr::Tuple(t) => {
                let elems = t.elems.iter().map(|e| self.expr(e)).collect();
                self.mk(ExprKind::Tuple(elems), span)
            }
            syn::Expr::Array(a) => {
                let elems = a.elems.iter().map(|e| self.expr(e)).collect();
                self.mk(ExprKind::ArrayList(elems), span)
            }
            syn::Expr::Repeat(r) => {
                let value = self.expr(&r.expr);
                let len = ty::const_len(&r.len, self.scope, self.diags);
                if len == Some(0) {
                    // C++ has no zero-sized local variables: nvcc would reject the generated code.
                    return self.error(r.len.span(), "a local array of length 0 is not supported in kernels (CUDA has no zero-sized locals); give it at least one element");
                }
                let len = len.unwrap_or(0);
                self.mk(ExprKind::ArrayRepeat { value: Box::new(value), len }, span)
            }
            syn::Expr::Block(b) => {
                if let Some(l) = &b.label {
                    return self.error(l.span(), "labelled blocks are not supported; use a labelled `loop` with `break 'label`");
                }
                let blk = self.block(&b.block);
                self.mk(ExprKind::Block(blk), span)
            }
            syn::Expr::Unsafe(u) => {
                self.unsafe_depth += 1;
                let blk = self.block(&u.block);
                self.unsafe_depth -= 1;
                // `unsafe { *a.get_unchecked(i) }` is its expression (no temporary in the C).
                match blk {
                    Block { stmts, tail: Some(t), .. } if stmts.is_empty() => *t,
                    blk => self.mk(ExprKind::Block(blk), span),
                }
            }
            syn::Expr::If(i) => self.if_expr(i),
            syn::Expr::Match(m) => self.match_expr(m),
            syn::Expr::While(w) => {
                let label = w.label.as_ref().map(label_name);
                let id = self.enter_loop(label.as_ref());
                let cond = self.expr(&w.cond);
                let body = self.block(&w.body);
                self.loops.pop();
                self.mk(ExprKind::While { label, id, cond: Box::new(cond), body }, span)
            }
            syn::Expr::Loop(l) => {
                let label = l.label.as_ref().map(label_name);
                let id = self.enter_loop(label.as_ref());
                let body = self.block(&l.body);
                self.loops.pop();
                self.mk(ExprKind::Loop { label, id, body }, span)
            }
            syn::Expr::ForLoop(f) => self.for_loop(f),
            syn::Expr::Break(b) => {
                let Some(target) = self.loop_target(b.label.as_ref(), span, "break") else {
                    return self.mk(ExprKind::Error, span);
                };
                let value = b.expr.as_ref().map(|e| Box::new(self.expr(e)));
                self.mk(ExprKind::Break { target, value }, span)
            }
            syn::Expr::Continue(c) => {
                let Some(target) = self.loop_target(c.label.as_ref(), span, "continue") else {
                    return self.mk(ExprKind::Error, span);
                };
                self.mk(ExprKind::Continue { target }, span)
            }
            syn::Expr::Return(r) => {
                let value = r.expr.as_ref().map(|e| Box::new(self.expr(e)));
                self.mk(ExprKind::Return(value), span)
            }
            syn::Expr::Reference(r) => {
                // `&x` / `&mut x` passes a place to a device function's reference parameter.
                let inner = self.expr(&r.expr);
                let op = if r.mutability.is_some() { "mut" } else { "" };
                let _ = op;
                self.mk(ExprKind::Ref { mutable: r.mutability.is_some(), expr: Box::new(inner) }, span)
            }
            syn::Expr::Struct(s) => self.struct_lit(s),
            syn::Expr::Macro(m) => self.mac(&m.mac),
            syn::Expr::Closure(c) => self.error(
                c.span(),
                "closures are only allowed in the `#[reduction]` attribute (`reduce = |a, b| ...`); write a `#[device]` function instead",
            ),
            syn::Expr::Range(r) => self.error(r.span(), "ranges are only allowed as the iterator of a `for` loop (`for i in 0..n`)"),
            syn::Expr::Try(t) => self.error(t.span(), "`?` is not available in kernels (no `Result`); check with `if`"),
            syn::Expr::Await(a) => self.error(a.span(), "`.await` is not available in kernels"),
            syn::Expr::Let(l) => self.error(l.span(), "`if let` / `while let` are not supported in kernels; use `match` on an integer or a comparison"),
            other => self.error(other.span(), "this expression is not supported in kernels"),
        }
    }

    fn lit(&mut self, l: &syn::Lit) -> Expr {
        let span = l.span();
        // A negative literal (patterns such as `-1 => ..` parse as one literal): `-(1)`.
        let positive = match l {
            syn::Lit::Int(i) => i.base10_digits().strip_prefix('-').map(|d| syn::Lit::Int(syn::LitInt::new(&format!("{d}{}", i.suffix()), span))),
            syn::Lit::Float(f) => f.base10_digits().strip_prefix('-').map(|d| syn::Lit::Float(syn::LitFloat::new(&format!("{d}{}", f.suffix()), span))),
            _ => None,
        };
        if let Some(p) = positive {
            let inner = self.lit(&p);
            return self.mk(ExprKind::Unary(UnOp::Neg, Box::new(inner)), span);
        }
        match l {
            syn::Lit::Int(i) => {
                let suffix = match i.suffix() {
                    "" => None,
                    s => match s {
                        "usize" => Some(DType::U64),
                        "isize" => Some(DType::I64),
                        s => match DType::from_rust_name(s) {
                            Some(d) if d.is_int() || d.is_float() && !d.is_half() => Some(d),
                            _ => return self.error(span, format!("unknown literal suffix `{s}`")),
                        },
                    },
                };
                match i.base10_parse::<u128>() {
                    Ok(value) => match suffix {
                        Some(d) if d.is_float() => {
                            self.mk(ExprKind::Lit(Lit::Float { text: value.to_string(), suffix: Some(d) }), span)
                        }
                        _ => self.mk(ExprKind::Lit(Lit::Int { value, suffix }), span),
                    },
                    Err(e) => self.error(span, e),
                }
            }
            syn::Lit::Float(f) => {
                let suffix = match f.suffix() {
                    "" => None,
                    "f32" => Some(DType::F32),
                    "f64" => Some(DType::F64),
                    s => return self.error(span, format!("unknown float literal suffix `{s}`; use `f32` or `f64`")),
                };
                let text = f.base10_digits().to_string();
                self.mk(ExprKind::Lit(Lit::Float { text, suffix }), span)
            }
            syn::Lit::Bool(b) => self.mk(ExprKind::Lit(Lit::Bool(b.value)), span),
            syn::Lit::Str(_) | syn::Lit::ByteStr(_) | syn::Lit::CStr(_) => {
                self.error(span, "strings are not available in kernels; pass numbers, or a `&[u8]` of bytes")
            }
            syn::Lit::Byte(b) => self.mk(ExprKind::Lit(Lit::Int { value: b.value() as u128, suffix: Some(DType::U8) }), span),
            syn::Lit::Char(_) => self.error(span, "`char` is not available in kernels; use a `u8` byte literal (`b'a'`) or a `u32` code"),
            _ => self.error(span, "unsupported literal"),
        }
    }

    /// The type named by the first segments of a path (`f32` in `f32::MAX`, `T` in `T::zero`,
    /// skipping `std::`/`core::` and `consts::`).
    fn path_type(&mut self, segs: &[&syn::PathSegment], span: Span) -> Option<Ty> {
        let segs: Vec<&&syn::PathSegment> =
            segs.iter().filter(|s| !matches!(s.ident.to_string().as_str(), "std" | "core" | "consts" | "num_complex" | "half")).collect();
        let [seg] = segs.as_slice() else {
            self.diags.error(span, "unsupported path in a kernel");
            return None;
        };
        let name = seg.ident.to_string();
        if let Some(i) = self.generics.iter().position(|g| *g == name) {
            return Some(Ty::Param(i as u32));
        }
        if name == "Complex" && seg.arguments.is_empty() {
            return Some(Ty::Scalar(DType::C64)); // refined from the arguments by the type checker
        }
        let path = syn::Path::from((**seg).clone());
        ty::lower(&syn::Type::Path(syn::TypePath { qself: None, path }), &self.generics, self.scope, Position::Local, self.diags)
    }

    fn path_expr(&mut self, p: &syn::ExprPath) -> Expr {
        let span = p.span();
        if p.qself.is_some() {
            return self.error(span, "qualified paths (`<T as Trait>::X`) are not available in kernels");
        }
        if let Some(id) = p.path.get_ident() {
            let name = id.to_string();
            if let Some(local) = self.lookup(&name) {
                return self.mk(ExprKind::Local(local), span);
            }
            if self.generics.contains(&name) {
                return self.error(span, format!("`{name}` is a type; to make a value of it write `{name}::from_f64(..)`, `{name}::zero()` or `{name}::one()`"));
            }
            if Intrinsic::from_name(&name).is_some() {
                return self.error(span, format!("`{name}` is a function; call it: `{name}()`"));
            }
            if name == "None" || name == "Some" {
                return self.error(span, "`Option` is not available in kernels; return a value and a `bool` flag in a tuple");
            }
            if let Some((d, c)) = self.scope.float_consts.get(&name) {
                let name = Name { text: c.clone(), span };
                return self.mk(ExprKind::Const { ty: Ty::Scalar(*d), name }, span);
            }
            if let Some((t, init)) = self.scope.consts.get(&name) {
                // A file-level `const`: its initializer, typed as declared, at each use.
                let scope = self.scope;
                return match ty::lower(t, &[], scope, Position::Local, self.diags) {
                    Some(t @ Ty::Scalar(d)) if d.is_primitive() => {
                        let inner = self.expr(init);
                        self.mk(ExprKind::Ascribed(Box::new(inner), t), span)
                    }
                    Some(_) => self.error(span, format!("`{name}` is not a constant of a primitive number type; kernels can use `const` items of `bool`, integer and `f32`/`f64` types")),
                    None => self.mk(ExprKind::Error, span),
                };
            }
            if !self.scope.whole_file {
                // Under a macro: an item of the file this check cannot see; rustc resolves it.
                return self.mk(ExprKind::Error, span);
            }
            return self.error(span, format!("cannot find value `{name}` in this kernel; kernels see their parameters, their locals and the file's `const` items"));
        }
        let segs: Vec<&syn::PathSegment> = p.path.segments.iter().collect();
        let (last, prefix) = segs.split_last().expect("paths have at least one segment");
        let name = Name { text: last.ident.to_string(), span: last.ident.span() };
        let Some(ty) = self.path_type(prefix, span) else { return self.mk(ExprKind::Error, span) };
        self.mk(ExprKind::Const { ty, name }, span)
    }

    fn binary(&mut self, b: &syn::ExprBinary) -> Expr {
        use syn::BinOp as S;
        let span = b.span();
        let (op, assign) = match b.op {
            S::Add(_) => (BinOp::Add, false),
            S::Sub(_) => (BinOp::Sub, false),
            S::Mul(_) => (BinOp::Mul, false),
            S::Div(_) => (BinOp::Div, false),
            S::Rem(_) => (BinOp::Rem, false),
            S::And(_) => (BinOp::And, false),
            S::Or(_) => (BinOp::Or, false),
            S::BitXor(_) => (BinOp::BitXor, false),
            S::BitAnd(_) => (BinOp::BitAnd, false),
            S::BitOr(_) => (BinOp::BitOr, false),
            S::Shl(_) => (BinOp::Shl, false),
            S::Shr(_) => (BinOp::Shr, false),
            S::Eq(_) => (BinOp::Eq, false),
            S::Lt(_) => (BinOp::Lt, false),
            S::Le(_) => (BinOp::Le, false),
            S::Ne(_) => (BinOp::Ne, false),
            S::Ge(_) => (BinOp::Ge, false),
            S::Gt(_) => (BinOp::Gt, false),
            S::AddAssign(_) => (BinOp::Add, true),
            S::SubAssign(_) => (BinOp::Sub, true),
            S::MulAssign(_) => (BinOp::Mul, true),
            S::DivAssign(_) => (BinOp::Div, true),
            S::RemAssign(_) => (BinOp::Rem, true),
            S::BitXorAssign(_) => (BinOp::BitXor, true),
            S::BitAndAssign(_) => (BinOp::BitAnd, true),
            S::BitOrAssign(_) => (BinOp::BitOr, true),
            S::ShlAssign(_) => (BinOp::Shl, true),
            S::ShrAssign(_) => (BinOp::Shr, true),
            _ => return self.error(span, "unsupported operator"),
        };
        let l = self.expr(&b.left);
        let r = self.expr(&b.right);
        if assign {
            self.mk(ExprKind::Assign { op: Some(op), place: Box::new(l), value: Box::new(r) }, span)
        } else {
            self.mk(ExprKind::Binary(op, Box::new(l), Box::new(r)), span)
        }
    }

    fn call(&mut self, c: &syn::ExprCall) -> Expr {
        let span = c.span();
        let syn::Expr::Path(p) = &*c.func else {
            return self.error(c.func.span(), "only named functions can be called in kernels");
        };
        let args: Vec<Expr> = c.args.iter().map(|a| self.expr(a)).collect();
        let segs: Vec<&syn::PathSegment> = p.path.segments.iter().collect();
        if segs.len() == 1 {
            let seg = segs[0];
            let name = seg.ident.to_string();
            if let Some(l) = self.lookup(&name) {
                if self.poisoned.contains(&l) {
                    return self.mk(ExprKind::Error, span);
                }
                return self.error(span, format!("`{name}` is a local value, not a function; kernels call `#[device]` functions and the prelude's intrinsics"));
            }
            let Some((tys, consts)) = self.turbofish(&seg.arguments) else {
                return self.mk(ExprKind::Error, span);
            };
            if let Some(intrinsic) = Intrinsic::from_name(&name) {
                return self.mk(ExprKind::Call { callee: Callee::Intrinsic { intrinsic, tys, consts }, args }, span);
            }
            match name.as_str() {
                "Some" | "Ok" | "Err" => {
                    return self.error(span, "`Option`/`Result` are not available in kernels; return a value and a `bool` flag in a tuple")
                }
                "drop" | "print" | "panic" => return self.error(span, format!("`{name}` is not available in kernels")),
                _ => {}
            }
            if self.scope.plain_fns.contains(&name) {
                return self.error(
                    seg.ident.span(),
                    format!("cannot call `{name}`: it is a plain function of this file, and kernels call only `#[device]` functions and the prelude's intrinsics; mark it `#[device]` (it stays callable on the host)"),
                );
            }
            let name = Name { text: name, span: seg.ident.span() };
            return self.mk(ExprKind::Call { callee: Callee::Device { name, tys }, args }, span);
        }
        let (last, prefix) = segs.split_last().expect("non-empty path");
        let name = Name { text: last.ident.to_string(), span: last.ident.span() };
        if prefix.len() == 1 {
            let head = prefix[0].ident.to_string();
            match head.as_str() {
                "String" => {
                    return self.error(span, "`String` is not available in kernels; pass numbers, or a `&[u8]` of bytes");
                }
                "Vec" | "Box" | "Rc" | "Arc" | "HashMap" => {
                    return self.error(span, format!("`{head}` is not available in kernels (no heap on the GPU); use a `&[T]` / `&mut [T]` argument or a local `[T; N]` array"))
                }
                "Complex" if name.text == "new" => {
                    return self.mk(ExprKind::Call { callee: Callee::Intrinsic { intrinsic: Intrinsic::ComplexNew, tys: Vec::new(), consts: Vec::new() }, args }, span);
                }
                _ => {}
            }
        }
        let Some(ty) = self.path_type(prefix, span) else { return self.mk(ExprKind::Error, span) };
        // A method called as a path (Rust's UFCS): `f32::sin(x)` is `x.sin()`. Associated
        // functions come first, as their names are no methods' names.
        if AssocFn::from_name(&name.text).is_none()
            && let Some(m) = Method::from_name(&name.text)
        {
            // A bare `Complex` stands for `Complex<_>` (its part type inferred): no type to check.
            let ascribe = !prefix.last().is_some_and(|s| s.ident == "Complex" && s.arguments.is_empty());
            let shown = prefix.iter().map(|s| quote::ToTokens::to_token_stream(s).to_string().replace(' ', "")).collect::<Vec<_>>().join("::");
            return self.path_method(ty, ascribe, &shown, name, m, args, span);
        }
        self.mk(ExprKind::Call { callee: Callee::Assoc { ty, name }, args }, span)
    }

    /// `TYPE::method(recv, args..)`: `recv.method(args..)`, with `recv` ascribed `TYPE` (a
    /// receiver of another type is rustc's mismatch at the argument), so that the type checker,
    /// the CUDA writer and the host copy (rustc's own UFCS) see one method call.
    #[allow(clippy::too_many_arguments)]
    fn path_method(&mut self, ty: Ty, ascribe: bool, shown: &str, name: Name, m: Method, mut args: Vec<Expr>, span: Span) -> Expr {
        let n = name.text.as_str();
        let want = 1 + m.sig().arity();
        if args.len() != want {
            let rest: Vec<String> = (0..want - 1).map(|i| char::from(b'a' + i as u8).to_string()).collect();
            let all = std::iter::once("x".to_string()).chain(rest.iter().cloned()).collect::<Vec<_>>().join(", ");
            return self.error(
                span,
                format!("`{shown}::{n}` takes {want} argument(s) but {} were given: the receiver, then the method's (`{shown}::{n}({all})` is `x.{n}({})`)", args.len(), rest.join(", ")),
            );
        }
        // On the host, a path call does not autoref the receiver: the prelude's `Real::min`/`max`
        // take `&self` (so that `a.min(b)` finds `Ord::min` on integers), and on an integer type
        // `Ord::max` and `Real::max` both apply. Only the float types have inherent ones.
        if let Method::Math(MathFn::Min | MathFn::Max) = m
            && (matches!(ty, Ty::Param(_)) || ty.scalar().is_some_and(|d| d.is_int()))
        {
            let why = if matches!(ty, Ty::Param(_)) {
                format!("the prelude's `Real::{n}` takes `&self`")
            } else {
                format!("`Ord::{n}` and the prelude's `Real::{n}` both apply (rustc's E0034)")
            };
            return self.error(name.span, format!("`{shown}::{n}(a, b)` does not compile on the host: {why}; write `a.{n}(b)`"));
        }
        let recv = args.remove(0);
        let recv = if ascribe {
            let s = recv.span;
            self.mk(ExprKind::Ascribed(Box::new(recv), ty), s)
        } else {
            recv
        };
        self.mk(ExprKind::MethodCall { receiver: Box::new(recv), method: name, args }, span)
    }

    /// Generic arguments of a call: types and constant lengths (`shared_array::<f32, 256>`, or a
    /// file `const`: `shared_array::<f32, TILE>`). `None` under a macro when a constant is a name
    /// this check cannot see (rustc checks it).
    fn turbofish(&mut self, args: &syn::PathArguments) -> Option<(Vec<Ty>, Vec<u64>)> {
        let mut tys = Vec::new();
        let mut consts = Vec::new();
        let mut unknown = false;
        if let syn::PathArguments::AngleBracketed(a) = args {
            for g in &a.args {
                match g {
                    // A bare name parses as a type; it is a constant when the file defines one.
                    syn::GenericArgument::Type(syn::Type::Path(p))
                        if p.qself.is_none()
                            && p.path.get_ident().is_some_and(|i| {
                                let i = i.to_string();
                                self.scope.consts.contains_key(&i)
                                    || (!self.scope.whole_file && !self.generics.contains(&i) && cuprum_abi::dtype::DType::from_rust_name(&i).is_none())
                            }) =>
                    {
                        let e = syn::Expr::Path(syn::ExprPath { attrs: Vec::new(), qself: None, path: p.path.clone() });
                        match ty::const_len(&e, self.scope, self.diags) {
                            Some(n) => consts.push(n),
                            None => unknown = true,
                        }
                    }
                    syn::GenericArgument::Type(t) => {
                        if let Some(t) = ty::lower(t, &self.generics, self.scope, Position::Local, self.diags) {
                            tys.push(t);
                        }
                    }
                    syn::GenericArgument::Const(e) => match ty::const_len(e, self.scope, self.diags) {
                        Some(n) => consts.push(n),
                        None => unknown = true,
                    },
                    other => self.diags.error(other.span(), "unsupported generic argument"),
                }
            }
        }
        if unknown && !self.scope.whole_file { None } else { Some((tys, consts)) }
    }

    fn method_call(&mut self, m: &syn::ExprMethodCall) -> Expr {
        let span = m.span();
        let method = m.method.to_string();
        match method.as_str() {
            "unwrap" | "expect" | "unwrap_or" | "unwrap_or_default" | "unwrap_unchecked" => {
                return self.error(
                    m.method.span(),
                    format!("`.{method}()`: panics and `Option`/`Result` are not available in kernels; compute the value directly and check the edge case with `if`"),
                )
            }
            "iter" | "iter_mut" | "into_iter" | "map" | "sum" | "collect" | "fold" | "zip" | "enumerate" => {
                return self.error(m.method.span(), "iterators are not available in kernels; loop over indices: `for i in 0..a.len()`")
            }
            "clone" | "to_owned" | "to_vec" | "to_string" => {
                return self.error(m.method.span(), format!("`.{method}()` is not available in kernels; kernel values are `Copy`: use the value directly"))
            }
            _ => {}
        }
        if let Some(t) = &m.turbofish {
            return self.error(t.span(), "method turbofish is not supported in kernels");
        }
        if matches!(method.as_str(), "get_unchecked" | "get_unchecked_mut") && self.unsafe_depth == 0 {
            self.diags.error(
                m.method.span(),
                format!("`{method}` skips the index check, so it needs an `unsafe` block: `unsafe {{ *a.{method}(i) }}`; index with `a[i]` to keep the check"),
            );
        }
        let receiver = self.expr(&m.receiver);
        let args = m.args.iter().map(|a| self.expr(a)).collect();
        let method = Name { text: method, span: m.method.span() };
        self.mk(ExprKind::MethodCall { receiver: Box::new(receiver), method, args }, span)
    }

    fn struct_lit(&mut self, s: &syn::ExprStruct) -> Expr {
        let span = s.span();
        let name = s.path.segments.last().map(|x| x.ident.to_string()).unwrap_or_default();
        if name == "Complex" && s.fields.len() == 2 && s.rest.is_none() {
            let mut re = None;
            let mut im = None;
            for f in &s.fields {
                if let syn::Member::Named(n) = &f.member {
                    match n.to_string().as_str() {
                        "re" => re = Some(self.expr(&f.expr)),
                        "im" => im = Some(self.expr(&f.expr)),
                        _ => {}
                    }
                }
            }
            if let (Some(re), Some(im)) = (re, im) {
                let callee = Callee::Intrinsic { intrinsic: Intrinsic::ComplexNew, tys: Vec::new(), consts: Vec::new() };
                return self.mk(ExprKind::Call { callee, args: vec![re, im] }, span);
            }
        }
        if self.scope.has_struct(&name) && s.path.segments.len() == 1 {
            if let Some(rest) = &s.rest {
                return self.error(rest.span(), format!("`..base` is not supported in kernel struct literals; give every field of `{name}`"));
            }
            let mut fields = Vec::new();
            for f in &s.fields {
                match &f.member {
                    syn::Member::Named(n) => {
                        let value = self.expr(&f.expr);
                        fields.push((Name { text: n.to_string(), span: n.span() }, value));
                    }
                    syn::Member::Unnamed(i) => {
                        self.diags.error(i.span, format!("`{name}` has named fields; write `field: value`"));
                    }
                }
            }
            return self.mk(ExprKind::StructLit { name: Name { text: name, span: s.path.span() }, fields }, span);
        }
        let hint = if self.scope.whole_file || self.scope.structs.is_empty() {
            "; declare the struct in this file with `#[device] #[repr(C)]`, or use tuples, or `Complex::new(re, im)`"
        } else {
            "; kernels use `#[device] #[repr(C)]` structs of their own file"
        };
        self.error(span, format!("unknown struct `{name}` in a kernel{hint}"))
    }

    fn if_expr(&mut self, i: &syn::ExprIf) -> Expr {
        let span = i.span();
        let cond = self.expr(&i.cond);
        let then = self.block(&i.then_branch);
        let els = i.else_branch.as_ref().map(|(_, e)| Box::new(self.expr(e)));
        self.mk(ExprKind::If { cond: Box::new(cond), then, els }, span)
    }

    fn match_expr(&mut self, m: &syn::ExprMatch) -> Expr {
        let span = m.span();
        let scrutinee = self.expr(&m.expr);
        let mut arms = Vec::new();
        for arm in &m.arms {
            self.push_scope();
            let pat = self.match_pat(&arm.pat);
            let guard = arm.guard.as_ref().map(|(_, g)| self.expr(g));
            let body = self.expr(&arm.body);
            self.pop_scope();
            if let Some(pat) = pat {
                arms.push(Arm { pat, guard, body, span: arm.span() });
            }
        }
        self.mk(ExprKind::Match { scrutinee: Box::new(scrutinee), arms }, span)
    }

    fn match_pat(&mut self, p: &syn::Pat) -> Option<MatchPat> {
        match p {
            syn::Pat::Lit(l) => Some(MatchPat::Lit(self.lit(&l.lit))),
            syn::Pat::Range(r) => {
                let (Some(lo), Some(hi)) = (&r.start, &r.end) else {
                    self.diags.error(r.span(), "write both ends of a range pattern: `1..=9`");
                    return None;
                };
                let lo = self.expr(lo);
                let hi = self.expr(hi);
                Some(MatchPat::Range { lo, hi, inclusive: matches!(r.limits, syn::RangeLimits::Closed(_)) })
            }
            syn::Pat::Or(o) => {
                let cases: Option<Vec<MatchPat>> = o.cases.iter().map(|c| self.match_pat(c)).collect();
                Some(MatchPat::Or(cases?))
            }
            syn::Pat::Wild(_) => Some(MatchPat::Wild(None)),
            syn::Pat::Ident(pi) if pi.by_ref.is_none() => {
                let sub = match &pi.subpat {
                    Some((_, sub)) => Some(self.match_pat(sub)?),
                    None => None,
                };
                let id = self.declare(&pi.ident, pi.mutability.is_some(), None);
                Some(match sub {
                    Some(sub) => MatchPat::Bind(id, Box::new(sub)),
                    None => MatchPat::Wild(Some(id)),
                })
            }
            syn::Pat::Paren(pp) => self.match_pat(&pp.pat),
            syn::Pat::Verbatim(_) | syn::Pat::Path(_) => {
                // Constants such as `i32::MAX` as patterns.
                if let syn::Pat::Path(pp) = p {
                    let e = self.path_expr(&syn::ExprPath { attrs: Vec::new(), qself: pp.qself.clone(), path: pp.path.clone() });
                    return Some(MatchPat::Lit(e));
                }
                self.diags.error(p.span(), "unsupported pattern; `match` in kernels takes integer literals, ranges, `|`, `_` and names");
                None
            }
            other => {
                self.diags.error(other.span(), "unsupported pattern; `match` in kernels takes integer literals, ranges, `|`, `_` and names");
                None
            }
        }
    }

    fn enter_loop(&mut self, label: Option<&Name>) -> LoopId {
        let id = LoopId(self.next_loop);
        self.next_loop += 1;
        self.loops.push((label.map(|l| l.text.clone()), id));
        id
    }

    fn loop_target(&mut self, label: Option<&syn::Lifetime>, span: Span, what: &str) -> Option<LoopId> {
        match label {
            None => match self.loops.last() {
                Some((_, id)) => Some(*id),
                None => {
                    self.diags.error(span, format!("`{what}` outside of a loop"));
                    None
                }
            },
            Some(l) => {
                let name = l.ident.to_string();
                match self.loops.iter().rev().find(|(n, _)| n.as_deref() == Some(name.as_str())) {
                    Some((_, id)) => Some(*id),
                    None => {
                        self.diags.error(l.span(), format!("use of undeclared label `'{name}`"));
                        None
                    }
                }
            }
        }
    }

    fn for_loop(&mut self, f: &syn::ExprForLoop) -> Expr {
        let span = f.span();
        let label = f.label.as_ref().map(label_name);
        let Some(range) = self.range_iter(&f.expr) else { return self.mk(ExprKind::Error, span) };
        let id = self.enter_loop(label.as_ref());
        self.push_scope();
        let var = match &*f.pat {
            syn::Pat::Ident(pi) if pi.subpat.is_none() && pi.by_ref.is_none() => self.declare(&pi.ident, pi.mutability.is_some(), None),
            syn::Pat::Wild(w) => self.declare(&syn::Ident::new("_", w.span()), false, None),
            other => {
                self.diags.error(other.span(), "the loop variable must be a name or `_`");
                self.declare(&syn::Ident::new("_", other.span()), false, None)
            }
        };
        let body = self.block(&f.body);
        self.pop_scope();
        self.loops.pop();
        self.mk(ExprKind::For { label, id, var, range, body }, span)
    }

    /// `a..b`, `a..=b`, then optionally `.rev()`, then optionally `.step_by(s)`.
    fn range_iter(&mut self, e: &syn::Expr) -> Option<RangeLoop> {
        let unsupported = "`for` loops in kernels iterate over integer ranges: `a..b`, `a..=b`, with `.rev()`, `.step_by(s)` and `.unroll()` or `.unroll_by(n)` (in that order)";
        match e {
            syn::Expr::Paren(p) => self.range_iter(&p.expr),
            syn::Expr::Range(r) => {
                let (Some(start), Some(end)) = (&r.start, &r.end) else {
                    self.diags.error(r.span(), "write both ends of the range: `0..n`");
                    return None;
                };
                let start = Box::new(self.expr(start));
                let end = Box::new(self.expr(end));
                let inclusive = matches!(r.limits, syn::RangeLimits::Closed(_));
                Some(RangeLoop { start, end, inclusive, rev: false, step: None, unroll: None })
            }
            // Loop-unroll control: `#pragma unroll` (fully) or `#pragma unroll n`.
            syn::Expr::MethodCall(m) if (m.method == "unroll" && m.args.is_empty()) || (m.method == "unroll_by" && m.args.len() == 1) => {
                let mut r = self.range_iter(&m.receiver)?;
                if r.unroll.is_some() {
                    self.diags.error(m.span(), unsupported);
                    return None;
                }
                r.unroll = Some(match m.args.first() {
                    None => 0,
                    Some(syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(n), .. })) => match n.base10_parse::<u32>() {
                        Ok(k) if k >= 1 => k,
                        _ => {
                            self.diags.error(n.span(), "`unroll_by` takes an unroll factor from 1 (keep the loop rolled) up");
                            return None;
                        }
                    },
                    Some(other) => {
                        self.diags.error(other.span(), "`unroll_by` takes an integer literal (nvcc's `#pragma unroll n` needs a constant)");
                        return None;
                    }
                });
                Some(r)
            }
            syn::Expr::MethodCall(m) if m.method == "rev" && m.args.is_empty() => {
                let mut r = self.range_iter(&m.receiver)?;
                if r.rev || r.step.is_some() || r.unroll.is_some() {
                    self.diags.error(m.span(), unsupported);
                    return None;
                }
                r.rev = true;
                Some(r)
            }
            syn::Expr::MethodCall(m) if m.method == "step_by" && m.args.len() == 1 => {
                let mut r = self.range_iter(&m.receiver)?;
                if r.step.is_some() || r.unroll.is_some() {
                    self.diags.error(m.span(), unsupported);
                    return None;
                }
                r.step = Some(Box::new(self.expr(&m.args[0])));
                Some(r)
            }
            syn::Expr::MethodCall(_) => {
                self.diags.error(e.span(), unsupported);
                None
            }
            other => {
                self.diags.error(
                    other.span(),
                    "`for` over a slice or an array is not available in kernels; loop over indices: `for i in 0..x.len()` and read `x[i]`",
                );
                None
            }
        }
    }
}

/// The locals a `let` pattern binds.
fn pat_locals(p: &Pat, out: &mut Vec<LocalId>) {
    match p {
        Pat::Bind(l, _) => out.push(*l),
        Pat::Wild(_) => {}
        Pat::Tuple(ps, _) => ps.iter().for_each(|p| pat_locals(p, out)),
    }
}

fn label_name(l: &syn::Label) -> Name {
    Name { text: l.name.ident.to_string(), span: l.name.span() }
}

/// The pieces of a `gpu_print!` format string: text (`{{`/`}}` unescaped) and the placeholders
/// `{}`, `{:.N}`, `{:x}`, `{:X}`; anything else is an error message.
pub(crate) fn parse_format(f: &str, span: Span) -> Result<Vec<PrintPiece>, String> {
    let mut pieces = Vec::new();
    let mut text = String::new();
    let mut chars = f.chars().peekable();
    let mut arg = 0;
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                text.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                text.push('}');
            }
            '}' => return Err("unmatched `}` in the format string; write `}}` for a literal `}`".into()),
            '{' => {
                let mut inner = String::new();
                loop {
                    match chars.next() {
                        Some('}') => break,
                        Some(c) => inner.push(c),
                        None => return Err("unterminated `{` in the format string; write `{{` for a literal `{`".into()),
                    }
                }
                let spec = match inner.as_str() {
                    "" | ":" => PrintSpec::Display,
                    ":x" => PrintSpec::LowerHex,
                    ":X" => PrintSpec::UpperHex,
                    p if p.starts_with(":.") && p.len() > 2 && p[2..].bytes().all(|b| b.is_ascii_digit()) => match p[2..].parse::<u32>() {
                        Ok(n) if n <= 64 => PrintSpec::Precision(n),
                        _ => return Err(format!("`{{{inner}}}`: a precision of at most 64 digits")),
                    },
                    _ => {
                        return Err(format!(
                            "`{{{inner}}}` is not supported by `gpu_print!`: write `{{}}`, `{{:.N}}` (a float with N decimals), `{{:x}}` or `{{:X}}` (hexadecimal integers); no named or positional arguments, width, fill or alignment"
                        ));
                    }
                };
                if !text.is_empty() {
                    pieces.push(PrintPiece::Text(std::mem::take(&mut text)));
                }
                pieces.push(PrintPiece::Arg { arg, spec, span });
                arg += 1;
            }
            c => text.push(c),
        }
    }
    if !text.is_empty() {
        pieces.push(PrintPiece::Text(text));
    }
    Ok(pieces)
}
