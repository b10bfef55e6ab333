//! The CUDA C `Writer` of one item: statements, expressions (Rust semantics kept through the
//! helpers of `include/cuprum/`), and the kernel entry points of each kernel kind.
//!
//! Rust's expression-oriented constructs (`if`, `match`, blocks and `loop` as values) are lowered
//! to C statements that store into a destination ([`Dest`]); a value needed inside a larger
//! expression is first computed into a temporary. Indentation lives in one place (`line`).

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use proc_macro2::Span;

use super::lines::{self, LineSource};
use super::namer::{self, Namer};
use super::{c_type, Features};
use cuprum_abi::dtype::DType;
use crate::ir::*;
use crate::lang::{AssocConst, AssocFn, Bound, Intrinsic, Method};
use cuprum_abi::mangle;
use crate::typeck::Types;

/// Where the value of a lowered expression goes.
#[derive(Clone)]
pub(super) enum Dest {
    Discard,
    Assign(String),
    Return,
}

struct LoopInfo {
    /// Variable receiving `break value`.
    value: Option<String>,
    label: String,
    used_break_goto: bool,
    used_continue_goto: bool,
}

/// Writes one item (kernel or device function) as CUDA C.
pub struct Writer<'a> {
    pub(super) item: &'a Item,
    pub(super) types: &'a Types,
    pub(super) features: &'a mut Features,
    pub(super) out: String,
    pub(super) indent: usize,
    namer: Namer,
    pub(super) locals: Vec<String>,
    pub(super) generics: Vec<String>,
    loops: HashMap<LoopId, LoopInfo>,
    /// Loops being emitted, innermost last (for plain `break`/`continue` vs `goto`).
    loop_stack: Vec<LoopId>,
    devices: &'a [&'a Item],
    structs: &'a [StructDef],
    /// Index expressions proven in range (`crate::bounds`): emitted without a check.
    proven: HashSet<ExprId>,
    /// The architecture a kernel needs (`arch::needs`), asserted in its entry point.
    pub(crate) arch_need: super::ArchNeed,
    /// The intrinsic that needs the arch-specific target (`sm_90a`), if the kernel uses one.
    pub(crate) arch_specific: Option<&'static str>,
    /// The function calls Hopper's intrinsics: its shared arrays are 1024-byte aligned.
    hopper: bool,
    /// The file the item is in, when the unit says which Rust line each line comes from
    /// (`lines`).
    pub(crate) lines: Option<&'a LineSource>,
    /// The Rust line the lines written now come from (`None`: cuprum's own code).
    rust_line: Option<u32>,
}

/// The variable of a function that uses checked tensor operations: their first violation, reported
/// when the function returns (`cuprum::oob_later`, cuprum/tensor.h). Reserved in every function.
const LATER: &str = "cuprum_later";

/// What a function's entry must set up for its tensor operations, from one walk of its body:
/// whether it calls a checked `ldmatrix_*` or `cp_async`, and the parameters it passes to
/// `cp_async_unchecked` as sources (each once).
fn tensor_entry(item: &Item) -> (bool, Vec<LocalId>) {
    let (mut checked, mut sources) = (false, Vec::new());
    crate::ir::each_expr_of_item(item, &mut |e| {
        if let ExprKind::Call { callee: Callee::Intrinsic { intrinsic, .. }, args } = &e.kind {
            checked |= matches!(intrinsic, Intrinsic::CpAsync | Intrinsic::Hopper(_)) || matches!(intrinsic, Intrinsic::LdMatrix(l) if l.checked());
            if let (Intrinsic::CpAsyncUnchecked, Some(Expr { kind: ExprKind::Local(id), .. })) = (intrinsic, args.get(2))
                && !sources.contains(id)
            {
                sources.push(*id);
            }
        }
    });
    (checked, sources)
}

/// Whether a function calls one of Hopper's intrinsics.
fn uses_hopper(item: &Item) -> bool {
    let mut found = false;
    crate::ir::each_expr_of_item(item, &mut |e| {
        found |= matches!(&e.kind, ExprKind::Call { callee: Callee::Intrinsic { intrinsic: Intrinsic::Hopper(_), .. }, .. });
    });
    found
}

impl<'a> Writer<'a> {
    /// A writer for `item`; `devices` are the file's device functions (their signatures shape the
    /// arguments of calls; no local may take their C++ names).
    pub(crate) fn new(item: &'a Item, types: &'a Types, features: &'a mut Features, devices: &'a [&'a Item], structs: &'a [StructDef]) -> Self {
        let mut namer = Namer::default();
        namer.reserve(LATER);
        for d in devices {
            namer.reserve(&namer::item_name(&d.name.text));
        }
        for s in structs {
            namer.reserve(&namer::struct_name(&s.name.text));
        }
        let generics: Vec<String> = item.generics.iter().map(|g| namer.name(&g.name.text)).collect();
        let locals = item.locals.iter().map(|l| namer.name(&l.name.text)).collect();
        let proven = if item.bounds_checks { crate::bounds::proven(item, types) } else { HashSet::new() };
        Writer { item, types, features, out: String::new(), indent: 0, namer, locals, generics, loops: HashMap::new(), loop_stack: Vec::new(), devices, structs, proven, arch_need: None, arch_specific: None, hopper: uses_hopper(item), lines: None, rust_line: None }
    }

    /// The CUDA C written.
    pub fn finish(self) -> String {
        self.out
    }

    pub(super) fn line(&mut self, s: impl AsRef<str>) {
        for _ in 0..self.indent {
            self.out.push_str("    ");
        }
        // After the indentation: code that moves a written line into another trims it.
        if let Some(l) = self.rust_line {
            self.out.push_str(&lines::mark(l));
        }
        self.out.push_str(s.as_ref());
        self.out.push('\n');
    }

    /// Runs `f` with the lines it writes attributed to the Rust line where `span` starts, when the
    /// span is of the file's text (else to the enclosing statement's line, as before).
    pub(super) fn at<R>(&mut self, span: Span, f: impl FnOnce(&mut Self) -> R) -> R {
        let saved = self.rust_line;
        if let Some(l) = self.lines.and_then(|s| s.line_of(span)) {
            self.rust_line = Some(l);
        }
        let r = f(self);
        self.rust_line = saved;
        r
    }

    /// Writes a function of the item: the template prefix `tp`, `header` (ending in `{`) at the
    /// Rust line of `open`, what `body` writes, and the closing brace at the line where `close`
    /// ends (the Rust function's or closure's own brace). What follows is cuprum's own code.
    pub(super) fn function(&mut self, tp: &str, header: String, open: Span, close: Span, body: impl FnOnce(&mut Self)) {
        self.at(open, |w| {
            // The template prefix's lines take the Rust lines before the header's, so that the
            // header needs no directive of its own.
            let n = tp.lines().count() as u32;
            let header_line = w.rust_line;
            for (k, l) in tp.lines().enumerate() {
                w.rust_line = header_line.map(|h| h.saturating_sub(n - k as u32).max(1));
                w.line(l);
            }
            w.rust_line = header_line;
            w.line(header);
            body(w);
            let end = w.lines.and_then(|s| s.end_line_of(close));
            w.rust_line = end.or(w.rust_line);
            w.line("}");
        });
        self.rust_line = None;
    }

    pub(super) fn ty(&mut self, t: &Ty) -> String {
        c_type(t, &self.generics, self.features)
    }

    pub(super) fn ty_of(&self, e: &Expr) -> Ty {
        self.types.of(e).clone()
    }

    /// The template head of a function's first declaration. A function without generic
    /// parameters is a template too, of one defaulted parameter that nothing names (its calls
    /// `f(..)` take the default): C++ instantiates a template's body only where it is used, so a
    /// part of the fat binary compiles only its own kernel's code, and a module holds the index
    /// checks' slot (`cuprum_oob_slot_v`, cuprum/bounds.h) only when that code checks an index.
    pub(super) fn template_prefix(&self) -> String {
        if self.generics.is_empty() {
            "template <typename = void>\n".to_string()
        } else {
            let ps: Vec<String> = self.generics.iter().map(|g| format!("typename {g}")).collect();
            format!("template <{}>\n", ps.join(", "))
        }
    }

    /// The template head of a definition after a declaration ([`Self::template_prefix`]'s,
    /// without the default, which C++ lets only the first declaration give).
    fn template_prefix_again(&self) -> String {
        if self.generics.is_empty() { "template <typename>\n".to_string() } else { self.template_prefix() }
    }

    pub(super) fn params_c(&mut self, extra_first: &[String]) -> String {
        let mut ps: Vec<String> = extra_first.to_vec();
        for p in &self.item.params {
            let t = self.ty(&p.ty);
            ps.push(format!("{t} {}", self.locals[p.local.0 as usize]));
        }
        ps.join(", ")
    }

    // ---- items ------------------------------------------------------------------------------

    pub(crate) fn device_signature(mut self) -> String {
        let ret = self.ty(&self.item.ret.clone());
        let params = self.params_c(&[]);
        format!("{}__device__ {ret} {}({params})", self.template_prefix(), namer::item_name(&self.item.name.text))
    }

    pub(crate) fn device_fn(&mut self) {
        let ret = self.ty(&self.item.ret.clone());
        let params = self.params_c(&[]);
        // Declared first (`device_signature`, write_module).
        let tp = self.template_prefix_again();
        let header = format!("__device__ {ret} {}({params}) {{", namer::item_name(&self.item.name.text));
        self.function(&tp, header, self.item.span, self.item.body.span, Self::body_into_return);
    }

    pub(super) fn body_into_return(&mut self) {
        self.indent += 1;
        let (checked, unchecked_sources) = tensor_entry(self.item);
        if checked {
            self.features.need("cuprum/tensor.h");
            self.line(format!("cuprum::oob_later {LATER}(\"{}\");", self.item.name.text));
        }
        // The sources of `cp_async_unchecked` (parameters, the validator says) must start 16-byte
        // aligned: checked once here, as the only promise of the call its caller cannot keep.
        let ret = if self.item.ret.is_unit() { "return;" } else { "return {};" };
        for p in unchecked_sources {
            let name = self.locals[p.0 as usize].clone();
            self.line(format!("if (!cuprum::cp_async_source_ok({name}, \"{}\")) {ret}", self.item.name.text));
        }
        let body = &self.item.body;
        let dest = if self.item.ret.is_unit() { Dest::Discard } else { Dest::Return };
        self.block_contents(body, &dest);
        self.indent -= 1;
    }

    /// A raw kernel: `NAME_body` holds the user's code; the instantiation macro defines the
    /// `extern "C" __global__` entry point of each instance.
    pub(crate) fn raw_kernel(&mut self) {
        let name = self.item.name.text.clone();
        // `&[T]` parameters read through the read-only data cache (`cuprum::RoSlice`); the launch
        // guarantees that no other argument writes their memory.
        // A `&TensorMap<T>` is a `__grid_constant__` parameter of the entry point, passed to the
        // body by reference: the copies need the parameter's own address.
        let (mut ps, mut entry) = (Vec::new(), Vec::new());
        for p in &self.item.params {
            let t = match &p.ty {
                Ty::Slice { elem, mutable: false } => format!("cuprum::RoSlice<{}>", self.ty(elem)),
                t => self.ty(t),
            };
            let local = self.locals[p.local.0 as usize].clone();
            entry.push(match &p.ty {
                Ty::Ref { inner, .. } if matches!(**inner, Ty::TensorMap(_)) => format!("const __grid_constant__ {} {local}", self.ty(inner)),
                _ => format!("{t} {local}"),
            });
            ps.push(format!("{t} {local}"));
        }
        let params = ps.join(", ");
        let entry_params = entry.join(", ");
        let tp = self.template_prefix();
        let header = format!("__device__ __forceinline__ void {name}_body({params}) {{");
        self.function(&tp, header, self.item.span, self.item.body.span, Self::body_into_return);
        let args: Vec<String> = self.item.params.iter().map(|p| self.locals[p.local.0 as usize].clone()).collect();
        let targs = self.template_args();
        // A kernel that needs a newer architecture says so in its entry point, the one place only
        // its own part of the fat binary (and its NVRTC instance) compiles.
        let assert = match self.arch_need {
            Some((arch, what)) => format!(
                "static_assert(cuprum::arch_at_least<{}>(), \"cuprum: kernel '{name}' uses '{what}', which needs sm_{arch} or newer; this target is older\"); ",
                arch * 10
            ),
            None => String::new(),
        };
        let assert = match (self.arch_need, self.arch_specific) {
            (Some((arch, _)), Some(what)) => format!(
                "{assert}static_assert(cuprum::arch_specific<{}>(), \"cuprum: kernel '{name}' uses '{what}', which needs the arch-specific target sm_{arch}a; build this kernel for sm_{arch}a only\"); ",
                arch * 10
            ),
            _ => assert,
        };
        let bounds = cuprum_abi::elementwise::launch_bounds(self.item.max_threads, self.item.min_blocks);
        self.instantiate_macro(&format!("extern \"C\" __global__ void {bounds}NAME({entry_params}) {{ {assert}{name}_body{targs}({}); }}", args.join(", ")));
    }

    pub(super) fn template_args(&self) -> String {
        if self.generics.is_empty() { String::new() } else { format!("<{}>", self.generics.join(", ")) }
    }

    fn instantiate_macro(&mut self, definition: &str) {
        let mut ps = vec!["NAME".to_string()];
        ps.extend(self.generics.iter().cloned());
        let _ = writeln!(self.out, "#define {}({}) \\\n    {}", mangle::instantiate_macro(&self.item.name.text), ps.join(", "), definition);
    }


    // ---- statements -------------------------------------------------------------------------

    fn block_contents(&mut self, b: &Block, dest: &Dest) {
        for s in &b.stmts {
            self.stmt(s);
        }
        match &b.tail {
            Some(t) => self.at(t.span, |w| w.expr_into(t, dest)),
            None => {
                if let Dest::Return = dest {
                    // A value-returning body ends in a diverging statement; nothing to add.
                }
            }
        }
    }

    fn block_stmt(&mut self, b: &Block, dest: &Dest) {
        self.line("{");
        self.indent += 1;
        self.block_contents(b, dest);
        self.indent -= 1;
        self.line("}");
    }

    fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Let { pat, init, span } => self.at(*span, |w| w.let_stmt(pat, init.as_ref())),
            Stmt::Expr(e) => self.at(e.span, |w| w.expr_into(e, &Dest::Discard)),
        }
    }

    fn let_stmt(&mut self, pat: &Pat, init: Option<&Expr>) {
        match pat {
            Pat::Bind(l, _) => {
                let name = self.locals[l.0 as usize].clone();
                let t = self.types.local(*l).clone();
                // Static shared memory: `let s = shared_array::<T, N>();`, 16-byte aligned so that
                // `ldmatrix_*` and `cp_async` may address any 16-byte row of it; 1024-byte in a
                // function that uses Hopper's copies and multiplies (their swizzled tiles).
                if let Some(Expr { kind: ExprKind::Call { callee: Callee::Intrinsic { intrinsic: Intrinsic::SharedArray, .. }, .. }, .. }) = init {
                    if let Ty::ArrayRef { elem, len, .. } = &t {
                        let et = self.ty(elem);
                        let align = if self.hopper { 1024 } else { 16 };
                        self.line(format!("{} __align__({align}) {et} {name}[{len}];", Intrinsic::SharedArray.c_name()));
                        return;
                    }
                }
                let ct = self.ty(&t);
                match init {
                    None => self.line(format!("{ct} {name};")),
                    Some(e) if !needs_stmts(e) => {
                        let v = self.value(e);
                        self.line(format!("{ct} {name} = {};", strip_parens(&v)));
                    }
                    Some(e) => {
                        self.line(format!("{ct} {name};"));
                        self.expr_into(e, &Dest::Assign(name));
                    }
                }
            }
            Pat::Wild(_) => {
                if let Some(e) = init {
                    self.expr_into(e, &Dest::Discard);
                }
            }
            Pat::Tuple(..) => {
                let Some(e) = init else {
                    self.declare_pat(pat);
                    return;
                };
                let t = self.ty_of(e);
                let ct = self.ty(&t);
                let tmp = self.namer.temp("t");
                if needs_stmts(e) {
                    self.line(format!("{ct} {tmp};"));
                    self.expr_into(e, &Dest::Assign(tmp.clone()));
                } else {
                    let v = self.value(e);
                    self.line(format!("{ct} {tmp} = {v};"));
                }
                self.destructure(pat, &tmp);
            }
        }
    }

    fn declare_pat(&mut self, pat: &Pat) {
        match pat {
            Pat::Bind(l, _) => {
                let name = self.locals[l.0 as usize].clone();
                let t = self.types.local(*l).clone();
                let ct = self.ty(&t);
                self.line(format!("{ct} {name};"));
            }
            Pat::Wild(_) => {}
            Pat::Tuple(ps, _) => ps.iter().for_each(|p| self.declare_pat(p)),
        }
    }

    fn destructure(&mut self, pat: &Pat, src: &str) {
        match pat {
            Pat::Bind(l, _) => {
                let name = self.locals[l.0 as usize].clone();
                let t = self.types.local(*l).clone();
                let ct = self.ty(&t);
                self.line(format!("{ct} {name} = {src};"));
            }
            Pat::Wild(_) => {}
            Pat::Tuple(ps, _) => {
                for (k, p) in ps.iter().enumerate() {
                    self.destructure(p, &format!("{src}._{k}"));
                }
            }
        }
    }

    /// Emits `e` as statements, sending its value to `dest`.
    pub(super) fn expr_into(&mut self, e: &Expr, dest: &Dest) {
        match &e.kind {
            ExprKind::Block(b) => self.block_stmt(b, dest),
            ExprKind::If { cond, then, els } => {
                let c = self.value(cond);
                self.line(format!("if ({}) {{", strip_parens(&c)));
                let mut body = then;
                let mut rest = els.as_deref();
                loop {
                    self.indent += 1;
                    self.block_contents(body, dest);
                    self.indent -= 1;
                    match rest {
                        None => {
                            self.line("}");
                            break;
                        }
                        // `else if` stays a chain when its condition needs no statements.
                        Some(Expr { kind: ExprKind::If { cond, then, els }, .. }) if !needs_stmts(cond) => {
                            let c = self.value(cond);
                            self.line(format!("}} else if ({}) {{", strip_parens(&c)));
                            body = then;
                            rest = els.as_deref();
                        }
                        Some(e) => {
                            self.line("} else {");
                            self.indent += 1;
                            match &e.kind {
                                ExprKind::Block(b) => self.block_contents(b, dest),
                                _ => self.expr_into(e, dest),
                            }
                            self.indent -= 1;
                            self.line("}");
                            break;
                        }
                    }
                }
            }
            ExprKind::Match { scrutinee, arms } => self.match_into(scrutinee, arms, dest),
            ExprKind::While { id, cond, body, .. } => {
                self.enter_loop(*id, None);
                if needs_stmts(cond) {
                    self.line("while (true) {");
                    self.indent += 1;
                    let c = self.value(cond);
                    self.line(format!("if (!{c}) break;"));
                } else {
                    let c = self.value(cond);
                    self.line(format!("while ({}) {{", strip_parens(&c)));
                    self.indent += 1;
                }
                self.loop_body(*id, body);
                self.indent -= 1;
                self.line("}");
                self.exit_loop(*id);
            }
            ExprKind::Loop { id, body, .. } => {
                let value = match dest {
                    Dest::Assign(v) => Some(v.clone()),
                    Dest::Return => {
                        let t = self.ty_of(e);
                        if matches!(t, Ty::Never | Ty::Unit) {
                            None
                        } else {
                            let ct = self.ty(&t);
                            let tmp = self.namer.temp("l");
                            self.line(format!("{ct} {tmp};"));
                            Some(tmp)
                        }
                    }
                    Dest::Discard => None,
                };
                self.enter_loop(*id, value.clone());
                self.line("while (true) {");
                self.indent += 1;
                self.loop_body(*id, body);
                self.indent -= 1;
                self.line("}");
                self.exit_loop(*id);
                if let (Dest::Return, Some(v)) = (dest, value) {
                    self.line(format!("return {v};"));
                }
            }
            ExprKind::For { id, var, range, body, .. } => self.for_loop(*id, *var, range, body),
            ExprKind::Break { target, value } => {
                if let Some(v) = value {
                    let var = self.loops.get(target).and_then(|l| l.value.clone());
                    match var {
                        Some(var) => self.expr_into(v, &Dest::Assign(var)),
                        None => self.expr_into(v, &Dest::Discard),
                    }
                }
                if self.loop_stack.last() == Some(target) {
                    self.line("break;");
                } else {
                    let info = self.loops.get_mut(target).expect("validated loop target");
                    info.used_break_goto = true;
                    let l = info.label.clone();
                    self.line(format!("goto {l}_break;"));
                }
            }
            ExprKind::Continue { target } => {
                if self.loop_stack.last() == Some(target) {
                    self.line("continue;");
                } else {
                    let info = self.loops.get_mut(target).expect("validated loop target");
                    info.used_continue_goto = true;
                    let l = info.label.clone();
                    self.line(format!("goto {l}_continue;"));
                }
            }
            ExprKind::Return(v) => match v {
                Some(v) => self.expr_into(v, &Dest::Return),
                None => self.line("return;"),
            },
            ExprKind::Assign { op, place, value } => self.assign(*op, place, value),
            ExprKind::Print { pieces, args } => {
                self.print(pieces, args);
                if let Dest::Return = dest {
                    self.line("return;");
                }
            }
            // A checked atomic whose result is dropped: `if (cuprum::has(a, "f", i)) atomic(..);`.
            ExprKind::Call { callee: Callee::Intrinsic { intrinsic: Intrinsic::Atomic(_), .. }, args }
                if matches!(dest, Dest::Discard) && self.needs_check(e) && args[1..].iter().all(duplicable) =>
            {
                let vs: Vec<String> = args.iter().map(|a| strip_parens(&self.value(a)).to_string()).collect();
                let bt = self.indexed_ty(&args[0]);
                let has = self.checked_access("has", &bt, &vs[0], &vs[1..2]);
                self.features.need("cuprum/atomic.h");
                let Callee::Intrinsic { intrinsic, .. } = e_callee(e) else { unreachable!() };
                self.line(format!("if ({has}) {}(&{}[{}], {});", intrinsic.c_name(), vs[0], vs[1], vs[2..].join(", ")));
            }
            ExprKind::Tuple(es) if es.is_empty() => {
                if let Dest::Return = dest {
                    self.line("return;");
                }
            }
            _ => {
                let t = self.ty_of(e);
                let v = self.value(e);
                match dest {
                    Dest::Discard => {
                        if !v.is_empty() {
                            self.line(format!("{};", strip_parens(&v)));
                        }
                    }
                    Dest::Assign(name) => self.line(format!("{name} = {};", strip_parens(&v))),
                    Dest::Return => {
                        if matches!(t, Ty::Unit | Ty::Never) {
                            if !v.is_empty() {
                                self.line(format!("{};", strip_parens(&v)));
                            }
                            self.line("return;");
                        } else {
                            self.line(format!("return {};", strip_parens(&v)));
                        }
                    }
                }
            }
        }
    }

    fn enter_loop(&mut self, id: LoopId, value: Option<String>) {
        let label = self.namer.temp("loop");
        self.loops.insert(id, LoopInfo { value, label, used_break_goto: false, used_continue_goto: false });
        self.loop_stack.push(id);
    }

    /// A loop body. When a `continue` of an outer loop jumps to its end (`goto L_continue`), the
    /// body gets its own braces so that the jump crosses no initialization.
    fn loop_body(&mut self, id: LoopId, body: &Block) {
        let start = self.out.len();
        self.block_contents(body, &Dest::Discard);
        if self.loops[&id].used_continue_goto {
            let pad = "    ".repeat(self.indent);
            let inner: String = self.out[start..].lines().map(|l| format!("    {l}\n")).collect();
            self.out.truncate(start);
            self.out.push_str(&format!("{pad}{{\n{inner}"));
            self.line("}");
            let l = self.loops[&id].label.clone();
            self.line(format!("{l}_continue:;"));
        }
    }

    fn exit_loop(&mut self, id: LoopId) {
        self.loop_stack.pop();
        if self.loops[&id].used_break_goto {
            let l = self.loops[&id].label.clone();
            self.line(format!("{l}_break:;"));
        }
    }

    /// Range loops keep Rust's semantics at the ends of the type's range (`0..=255u8` stops,
    /// `.rev()` and `.step_by()` never overflow): an unsigned offset runs from 0 to `last`. The
    /// start, end and step are evaluated once, in that order, as in Rust; a `for mut i` loop
    /// variable is a copy, so assigning it does not change the iteration.
    fn for_loop(&mut self, id: LoopId, var: LocalId, r: &RangeLoop, body: &Block) {
        let t = self.types.local(var).clone();
        let ct = self.ty(&t);
        let v = self.locals[var.0 as usize].clone();
        let konst = if self.item.locals[var.0 as usize].mutable { "" } else { "const " };
        let d = t.scalar().unwrap_or(DType::I32);
        let ut = unsigned_of(d);
        self.line("{");
        self.indent += 1;
        let start = self.value(&r.start);
        let start = if matches!(r.start.kind, ExprKind::Lit(_)) {
            start
        } else {
            let s = self.namer.temp("s");
            self.line(format!("const {ct} {s} = {};", strip_parens(&start)));
            s
        };
        let end = self.value(&r.end);
        let e = self.namer.temp("e");
        self.line(format!("const {ct} {e} = {};", strip_parens(&end)));
        let pragma = match r.unroll {
            None => None,
            Some(0) => Some("#pragma unroll".to_string()),
            Some(n) => Some(format!("#pragma unroll {n}")),
        };
        if !r.inclusive && !r.rev && r.step.is_none() {
            self.enter_loop(id, None);
            if let Some(p) = &pragma {
                self.line(p);
            }
            if konst.is_empty() {
                let k = self.namer.temp("k");
                self.line(format!("for ({ct} {k} = {start}; {k} < {e}; ++{k}) {{"));
                self.indent += 1;
                self.line(format!("{ct} {v} = {k};"));
            } else {
                self.line(format!("for ({ct} {v} = {start}; {v} < {e}; ++{v}) {{"));
                self.indent += 1;
            }
            self.loop_body(id, body);
            self.indent -= 1;
            self.line("}");
            self.exit_loop(id);
            self.indent -= 1;
            self.line("}");
            return;
        }
        let step = match &r.step {
            Some(st) => {
                let sv = self.value(st);
                let name = self.namer.temp("step");
                // `step_by(0)` panics in Rust; here it counts as 1.
                self.line(format!("const u64 {name} = {sv} == 0 ? (u64)1 : (u64){sv};"));
                Some(name)
            }
            None => None,
        };
        let (k, last) = (self.namer.temp("k"), self.namer.temp("last"));
        let (cond, last_expr) = if r.inclusive {
            (format!("{start} <= {e}"), format!("({ut})(({ut}){e} - ({ut}){start})"))
        } else {
            (format!("{start} < {e}"), format!("({ut})(({ut}){e} - ({ut}){start} - 1)"))
        };
        self.line(format!("if ({cond}) {{"));
        self.indent += 1;
        self.line(format!("const {ut} {last} = {last_expr};"));
        self.line(format!("{ut} {k} = 0;"));
        self.enter_loop(id, None);
        if let Some(p) = &pragma {
            self.line(p);
        }
        self.line("do {");
        self.indent += 1;
        let value = match (r.rev, r.inclusive) {
            (true, true) => format!("({ct})(({ut}){e} - {k})"),
            (true, false) => format!("({ct})(({ut}){e} - 1 - {k})"),
            (false, _) => format!("({ct})(({ut}){start} + {k})"),
        };
        self.line(format!("{konst}{ct} {v} = {value};"));
        self.loop_body(id, body);
        self.indent -= 1;
        let advance = match &step {
            Some(st) => format!("(u64)({last} - {k}) >= {st} && (({k} += ({ut}){st}), true)"),
            None => format!("{k} < {last} && ((++{k}), true)"),
        };
        self.line(format!("}} while ({advance});"));
        self.exit_loop(id);
        self.indent -= 1;
        self.line("}");
        self.indent -= 1;
        self.line("}");
    }

    /// `match` as an `if`/`else if` chain on a temporary holding the scrutinee. The type checker
    /// proved the match exhaustive, so a last arm without a guard is the final `else`.
    fn match_into(&mut self, scrutinee: &Expr, arms: &[Arm], dest: &Dest) {
        let st = self.ty_of(scrutinee);
        let ct = self.ty(&st);
        let sv = self.value(scrutinee);
        let s = self.namer.temp("m");
        self.line(format!("const {ct} {s} = {};", strip_parens(&sv)));
        // Bindings (`x => ..`, `x @ 1..=9 => ..`) name the scrutinee.
        let mut binds = Vec::new();
        for arm in arms {
            arm.pat.bindings(&mut binds);
        }
        for l in binds {
            let n = self.locals[l.0 as usize].clone();
            let c = if self.item.locals[l.0 as usize].mutable { "" } else { "const " };
            self.line(format!("{c}{ct} {n} = {s};"));
        }
        for (k, arm) in arms.iter().enumerate() {
            let last = k + 1 == arms.len();
            let mut cond = if last && arm.guard.is_none() { "true".to_string() } else { self.pat_cond(&arm.pat, &s) };
            if let Some(g) = &arm.guard {
                let gv = self.value(g);
                cond = if cond == "true" { gv } else { format!("{cond} && {gv}") };
            }
            let open = match (k, cond.as_str()) {
                (0, "true") => "{".to_string(),
                (0, _) => format!("if ({}) {{", strip_parens(&cond)),
                (_, "true") => "} else {".to_string(),
                _ => format!("}} else if ({}) {{", strip_parens(&cond)),
            };
            self.line(open);
            self.indent += 1;
            match &arm.body.kind {
                ExprKind::Block(b) => self.block_contents(b, dest),
                _ => self.expr_into(&arm.body, dest),
            }
            self.indent -= 1;
            if last || cond == "true" {
                self.line("}");
                break;
            }
        }
    }

    fn pat_cond(&mut self, p: &MatchPat, s: &str) -> String {
        match p {
            MatchPat::Lit(e) => {
                let v = self.value(e);
                format!("({s} == {v})")
            }
            MatchPat::Range { lo, hi, inclusive } => {
                let (l, h) = (self.value(lo), self.value(hi));
                format!("({s} >= {l} && {s} {} {h})", if *inclusive { "<=" } else { "<" })
            }
            MatchPat::Or(ps) => {
                let cs: Vec<String> = ps.iter().map(|p| self.pat_cond(p, s)).collect();
                if cs.iter().any(|c| c == "true") { "true".into() } else { format!("({})", cs.join(" || ")) }
            }
            MatchPat::Bind(_, p) => self.pat_cond(p, s),
            MatchPat::Wild(_) => "true".into(),
        }
    }

    /// `place = value` and `place op= value`. As in Rust (and C++17), the value is evaluated
    /// before the place; a place with a call in it (`a[f(i)] += 1`) is evaluated once, through a
    /// reference, when the operator needs a helper (`p = cuprum::add(p, v)`).
    fn assign(&mut self, op: Option<BinOp>, place: &Expr, value: &Expr) {
        let mut v = self.value(value);
        if !self.place_checks(place) {
            let p = self.value(place);
            return self.assign_to(op, place, &p, value, &v);
        }
        // A checked place (docs/semantics.md, row 18): the store happens only when every index
        // of the place is in range. The value comes first (Rust's order), then the place's
        // indices, each evaluated once.
        if !needs_stmts(value) && !duplicable(value) && !v.is_empty() {
            let t = self.ty_of(value);
            let ct = self.ty(&t);
            let tmp = self.namer.temp("v");
            self.line(format!("const {ct} {tmp} = {};", strip_parens(&v)));
            v = tmp;
        }
        let mut guards = Vec::new();
        let p = self.place_guarded(place, &mut guards);
        let start = self.out.len();
        self.indent += 1;
        self.assign_to(op, place, &p, value, &v);
        self.indent -= 1;
        let inner = self.out.split_off(start);
        let cond = guards.join(" && ");
        if inner.lines().count() == 1 {
            self.line(format!("if ({cond}) {}", inner.trim()));
        } else {
            self.line(format!("if ({cond}) {{"));
            self.out.push_str(&inner);
            self.line("}");
        }
    }

    /// `p = v` / `p op= v` for a place already written as `p`.
    fn assign_to(&mut self, op: Option<BinOp>, place: &Expr, p: &str, value: &Expr, v: &str) {
        let p = p.to_string();
        let v = v.to_string();
        match op {
            None => self.line(format!("{p} = {};", strip_parens(&v))),
            Some(op) => {
                let t = self.ty_of(place);
                let rt = self.ty_of(value);
                let rhs = self.binary_c(op, &t, &p, &v, &rt);
                let rhs = strip_parens(&rhs).to_string();
                let _ = value;
                // `x += y` stays readable when the operator needs no helper.
                let simple = format!("{p} {} {v}", op.symbol());
                if rhs == strip_parens(&simple) {
                    self.line(format!("{p} {}= {};", op.symbol(), strip_parens(&v)));
                } else if has_call(place) {
                    let ct = self.ty(&t);
                    let r = self.namer.temp("p");
                    self.line(format!("{ct}& {r} = {p};"));
                    let rhs = self.binary_c(op, &t, &r, &v, &rt);
                    self.line(format!("{r} = {};", strip_parens(&rhs)));
                } else {
                    self.line(format!("{p} = {rhs};"));
                }
            }
        }
    }

    // ---- expressions ------------------------------------------------------------------------

    /// A C expression for `e`, emitting statements first when `e` needs them.
    fn value(&mut self, e: &Expr) -> String {
        match &e.kind {
            ExprKind::Block(_) | ExprKind::If { .. } | ExprKind::Match { .. } | ExprKind::Loop { .. } => {
                let t = self.ty_of(e);
                if matches!(t, Ty::Unit | Ty::Never) {
                    self.expr_into(e, &Dest::Discard);
                    return String::new();
                }
                let ct = self.ty(&t);
                let tmp = self.namer.temp("v");
                self.line(format!("{ct} {tmp};"));
                self.expr_into(e, &Dest::Assign(tmp.clone()));
                tmp
            }
            ExprKind::While { .. }
            | ExprKind::For { .. }
            | ExprKind::Break { .. }
            | ExprKind::Continue { .. }
            | ExprKind::Return(_)
            | ExprKind::Assign { .. }
            | ExprKind::Print { .. } => {
                self.expr_into(e, &Dest::Discard);
                String::new()
            }
            ExprKind::Error => unreachable!("the back end only runs on modules without errors"),
            ExprKind::Lit(l) => self.lit(l, &self.ty_of(e)),
            ExprKind::Local(l) => self.locals[l.0 as usize].clone(),
            ExprKind::Const { ty, .. } => self.constant(e, ty),
            ExprKind::Unary(op, inner) => self.unary(*op, inner, e),
            ExprKind::Binary(op, l, r) => {
                if op.is_logical() && needs_stmts(r) {
                    // Keep short-circuiting when the right side needs statements.
                    let lv = self.value(l);
                    let tmp = self.namer.temp("b");
                    self.line(format!("bool {tmp} = {};", strip_parens(&lv)));
                    let guard = if *op == BinOp::And { tmp.clone() } else { format!("!{tmp}") };
                    self.line(format!("if ({guard}) {{"));
                    self.indent += 1;
                    self.expr_into(r, &Dest::Assign(tmp.clone()));
                    self.indent -= 1;
                    self.line("}");
                    return tmp;
                }
                let lv = self.value(l);
                let rv = self.value(r);
                let lt = self.ty_of(l);
                let rt = self.ty_of(r);
                self.binary_c(*op, &lt, &lv, &rv, &rt)
            }
            // `Ascribed`: the type checker gave the initializer that type, so no conversion is written.
            ExprKind::Cast(inner, to) | ExprKind::Ascribed(inner, to) => self.cast(inner, to),
            // `&mut a[i]` (to a device function's `&mut T`): out of range, a scratch element.
            ExprKind::Ref { expr, mutable: true } if self.place_checks(expr) => self.place_sink(expr),
            ExprKind::Ref { expr, .. } => self.value(expr),
            ExprKind::Call { callee, args } => self.call(e, callee, args),
            ExprKind::MethodCall { receiver, args, .. } => self.method(e, receiver, args),
            ExprKind::Index { base, indices } => {
                let bt = self.indexed_ty(base);
                let b = self.value(base);
                let is: Vec<String> = indices.iter().map(|i| strip_parens(&self.value(i)).to_string()).collect();
                if self.needs_check(e) {
                    // A checked read: `T{}` out of range (docs/semantics.md, row 18).
                    self.checked_access("get", &bt, &b, &is)
                } else {
                    element(&bt, &b, &is)
                }
            }
            ExprKind::Field { base, field } => {
                if let ExprKind::Call { callee: Callee::Intrinsic { intrinsic, .. }, args } = &base.kind {
                    if let (true, Some(b)) = (args.is_empty(), intrinsic.c_builtin()) {
                        return format!("{b}.{}", field.text);
                    }
                }
                let b = self.value(base);
                self.field_text(base, &b, field)
            }
            ExprKind::StructLit { name, fields } => self.struct_lit(e, name, fields),
            ExprKind::TupleField { base, index } => {
                let b = self.value(base);
                format!("{b}._{index}")
            }
            ExprKind::Tuple(es) => {
                if es.is_empty() {
                    return String::new();
                }
                let t = self.ty_of(e);
                let ct = self.ty(&t);
                let vs: Vec<String> = es.iter().map(|x| strip_parens(&self.value(x)).to_string()).collect();
                format!("{ct}{{{}}}", vs.join(", "))
            }
            ExprKind::ArrayList(es) => {
                let t = self.ty_of(e);
                let ct = self.ty(&t);
                let vs: Vec<String> = es.iter().map(|x| strip_parens(&self.value(x)).to_string()).collect();
                format!("{ct}{{{{{}}}}}", vs.join(", "))
            }
            ExprKind::ArrayRepeat { value, .. } => {
                let t = self.ty_of(e);
                let ct = self.ty(&t);
                let v = self.value(value);
                format!("{ct}::splat({})", strip_parens(&v))
            }
        }
    }

    /// `gpu_print!`: one `printf` (docs/kernel-language.md, Printing). The arguments are evaluated
    /// in order (into temporaries when a later one has a call: C leaves the order of a call's
    /// arguments unspecified).
    fn print(&mut self, pieces: &[PrintPiece], args: &[Expr]) {
        let mut fmt = String::new();
        let mut cargs = Vec::new();
        let ordered = args.len() > 1 && args.iter().any(has_call);
        for p in pieces {
            match p {
                PrintPiece::Text(t) => fmt.push_str(&t.replace('%', "%%")),
                PrintPiece::Arg { arg, spec, .. } => {
                    let a = &args[*arg];
                    let mut t = self.ty_of(a);
                    if let Ty::Ref { inner, .. } = t {
                        t = *inner;
                    }
                    let d = t.scalar().expect("the type checker admits scalars only");
                    let mut v = strip_parens(&self.value(a)).to_string();
                    if ordered {
                        let ct = self.ty(&Ty::Scalar(d));
                        let tmp = self.namer.temp("p");
                        self.line(format!("{ct} {tmp} = {v};"));
                        v = tmp;
                    }
                    let hex = |x: &str| if *spec == PrintSpec::UpperHex { x.to_uppercase() } else { x.to_string() };
                    let (conv, value) = match (d, spec) {
                        (DType::Bool, _) => ("%s".to_string(), format!("({v}) ? \"true\" : \"false\"")),
                        (DType::F16 | DType::BF16 | DType::F8E4M3 | DType::F8E5M2, _) => {
                            self.features.need("cuprum/half.h");
                            (float_conv(*spec), format!("(double)cuprum::to_f32({v})"))
                        }
                        (DType::F32 | DType::F64, _) => (float_conv(*spec), format!("(double)({v})")),
                        (DType::I64, PrintSpec::Display) => ("%lld".into(), format!("(long long)({v})")),
                        (DType::U64, PrintSpec::Display) => ("%llu".into(), format!("(unsigned long long)({v})")),
                        (DType::I64 | DType::U64, _) => (hex("%llx"), format!("(unsigned long long)({v})")),
                        (DType::I8 | DType::I16 | DType::I32, PrintSpec::Display) => ("%d".into(), format!("(int)({v})")),
                        (DType::U8 | DType::U16 | DType::U32, PrintSpec::Display) => ("%u".into(), format!("(unsigned)({v})")),
                        // Two's complement of the value's own width, as Rust's `{:x}` of a negative value.
                        (DType::I8 | DType::U8, _) => (hex("%x"), format!("(unsigned)(unsigned char)({v})")),
                        (DType::I16 | DType::U16, _) => (hex("%x"), format!("(unsigned)(unsigned short)({v})")),
                        (_, _) => (hex("%x"), format!("(unsigned)({v})")),
                    };
                    fmt.push_str(&conv);
                    cargs.push(value);
                }
            }
        }
        let mut call = format!("printf({}", c_string(&fmt));
        for a in cargs {
            call.push_str(", ");
            call.push_str(&a);
        }
        call.push_str(");");
        self.line(call);
    }

    /// `b.field` for a field of `base`'s type (struct fields get their C names).
    fn field_text(&self, base: &Expr, b: &str, field: &Name) -> String {
        let base_ty = match self.ty_of(base) {
            Ty::Ref { inner, .. } => *inner,
            t => t,
        };
        if matches!(base_ty, Ty::Struct(_)) { format!("{b}.{}", namer::field_name(&field.text)) } else { format!("{b}.{}", field.text) }
    }

    // ---- index checks (docs/semantics.md, row 18; abi/include/cuprum/bounds.h) ---------------

    /// Whether the index expression (or atomic call) `e` is emitted with a run-time check.
    fn needs_check(&self, e: &Expr) -> bool {
        self.item.bounds_checks && !self.proven.contains(&e.id)
    }

    /// The type indexed by `base[..]`, through a reference.
    fn indexed_ty(&self, base: &Expr) -> Ty {
        match self.ty_of(base) {
            Ty::Ref { inner, .. } => *inner,
            t => t,
        }
    }

    /// `cuprum::get(b, "fn", i..)` (a read), `cuprum::has(..)` (a write's guard) or
    /// `cuprum::at(..)` (a reference); a shared array gives its length as `<N>`. The name is the
    /// Rust function holding the access, which the first violation reports.
    fn checked_access(&mut self, f: &str, bt: &Ty, b: &str, is: &[String]) -> String {
        self.features.need("cuprum/bounds.h");
        let n = match bt {
            Ty::ArrayRef { len, .. } => format!("<{len}>"),
            _ => String::new(),
        };
        let b = strip_parens(b);
        format!("cuprum::{f}{n}({b}, \"{}\", {})", self.item.name.text, is.join(", "))
    }

    /// Whether writing `place` needs a check: an index of its place (`a[i]`, `a[i].f`, `s.f[k]`)
    /// that is not proven in range.
    fn place_checks(&self, place: &Expr) -> bool {
        match &place.kind {
            ExprKind::Index { base, .. } => self.needs_check(place) || self.place_checks(base),
            ExprKind::Field { base, .. } | ExprKind::TupleField { base, .. } => self.place_checks(base),
            _ => false,
        }
    }

    /// The C place of `place`, pushing onto `guards` a `cuprum::has(..)` per checked index (outer
    /// indices after inner ones, so that `&&` tests them in order). Indices that are not a plain
    /// local or literal are computed once, into a temporary, before the guarded statement.
    fn place_guarded(&mut self, place: &Expr, guards: &mut Vec<String>) -> String {
        match &place.kind {
            ExprKind::Index { base, indices } => {
                let bt = self.indexed_ty(base);
                let b = self.place_guarded(base, guards);
                let check = self.needs_check(place);
                let mut is = Vec::new();
                for i in indices {
                    let v = strip_parens(&self.value(i)).to_string();
                    let v = if check && !plain_index(i) {
                        let t = self.ty_of(i);
                        let ct = self.ty(&t);
                        let tmp = self.namer.temp("i");
                        self.line(format!("const {ct} {tmp} = {v};"));
                        tmp
                    } else {
                        v
                    };
                    is.push(v);
                }
                if check {
                    let g = self.checked_access("has", &bt, &b, &is);
                    guards.push(g);
                }
                element(&bt, &b, &is)
            }
            ExprKind::Field { base, field } => {
                let b = self.place_guarded(base, guards);
                self.field_text(base, &b, field)
            }
            ExprKind::TupleField { base, index } => {
                let b = self.place_guarded(base, guards);
                format!("{b}._{index}")
            }
            _ => self.value(place),
        }
    }

    /// The C place of `place` as a reference that is the element, or a scratch element when an
    /// index is out of range (`cuprum::at`): for `&mut a[i]` inside an expression.
    fn place_sink(&mut self, place: &Expr) -> String {
        match &place.kind {
            ExprKind::Index { base, indices } => {
                let bt = self.indexed_ty(base);
                let b = self.place_sink(base);
                let is: Vec<String> = indices.iter().map(|i| strip_parens(&self.value(i)).to_string()).collect();
                if self.needs_check(place) { self.checked_access("at", &bt, &b, &is) } else { element(&bt, &b, &is) }
            }
            ExprKind::Field { base, field } => {
                let b = self.place_sink(base);
                self.field_text(base, &b, field)
            }
            ExprKind::TupleField { base, index } => {
                let b = self.place_sink(base);
                format!("{b}._{index}")
            }
            _ => self.value(place),
        }
    }

    /// `S{a, b}` in declaration order. Rust evaluates the fields in the order written: when that
    /// differs, each value is computed into a temporary first, in the written order.
    fn struct_lit(&mut self, e: &Expr, name: &Name, fields: &[(Name, Expr)]) -> String {
        let def = self.structs.iter().find(|s| s.name.text == name.text).expect("checked struct literal");
        let ct = self.ty(&self.ty_of(e));
        let in_order = fields.iter().map(|(n, _)| n.text.as_str()).eq(def.fields.iter().map(|f| f.name.text.as_str()));
        let mut values: Vec<(String, String)> = Vec::new();
        for (n, v) in fields {
            let mut c = strip_parens(&self.value(v)).to_string();
            if !in_order {
                let t = self.ty_of(v);
                let vt = self.ty(&t);
                let tmp = self.namer.temp("f");
                self.line(format!("const {vt} {tmp} = {c};"));
                c = tmp;
            }
            values.push((n.text.clone(), c));
        }
        let ordered: Vec<String> = def
            .fields
            .iter()
            .map(|f| values.iter().find(|(n, _)| *n == f.name.text).map(|(_, c)| c.clone()).expect("every field given"))
            .collect();
        format!("{ct}{{{}}}", ordered.join(", "))
    }

    fn lit(&mut self, l: &Lit, t: &Ty) -> String {
        match l {
            Lit::Bool(b) => b.to_string(),
            Lit::Int { value, .. } => int_literal(*value as i128, t.scalar().unwrap_or(DType::I32)),
            Lit::Float { text, .. } => {
                let mut s = text.clone();
                if !s.contains(['.', 'e', 'E']) {
                    s.push_str(".0");
                }
                match t.scalar() {
                    Some(DType::F32) => format!("{s}f"),
                    _ => s,
                }
            }
        }
    }

    fn constant(&mut self, e: &Expr, ty: &Ty) -> String {
        self.features.need("cuprum/math.h");
        let ct = self.ty(ty);
        match self.types.constant(e) {
            AssocConst::Bits => format!("{}u", ty.scalar().map(|d| d.bits()).unwrap_or(32)),
            AssocConst::Num(c) => format!("cuprum::num<{ct}>::{}()", c.c_name()),
        }
    }

    fn unary(&mut self, op: UnOp, inner: &Expr, e: &Expr) -> String {
        let t = self.ty_of(e);
        match op {
            UnOp::Deref => self.value(inner),
            UnOp::Neg => {
                if let (ExprKind::Lit(Lit::Int { value, .. }), Some(d)) = (&inner.kind, t.scalar()) {
                    return int_literal(-(*value as i128), d);
                }
                if let (ExprKind::Lit(Lit::Float { .. }), Some(DType::F32 | DType::F64)) = (&inner.kind, t.scalar()) {
                    let v = self.value(inner);
                    return format!("-{v}");
                }
                let v = self.value(inner);
                if self.int_like(&t) {
                    self.features.need("cuprum/arith.h");
                    format!("cuprum::neg({})", strip_parens(&v))
                } else {
                    format!("(-{v})")
                }
            }
            UnOp::Not => {
                let v = self.value(inner);
                if t == Ty::Scalar(DType::Bool) {
                    format!("(!{v})")
                } else {
                    self.features.need("cuprum/arith.h");
                    format!("cuprum::bit_not({})", strip_parens(&v))
                }
            }
        }
    }

    /// Whether values of `t` may be integers (concrete ints, or a generic whose bound admits them).
    fn int_like(&self, t: &Ty) -> bool {
        match t {
            Ty::Scalar(d) => d.is_int(),
            Ty::Param(p) => self.item.generics[*p as usize].bound != Bound::Float,
            _ => false,
        }
    }

    fn binary_c(&mut self, op: BinOp, lt: &Ty, l: &str, r: &str, _rt: &Ty) -> String {
        let plain = || format!("({l} {} {r})", op.symbol());
        if op.is_comparison() || op.is_logical() {
            return plain();
        }
        let helper = |w: &mut Self, f: &str| {
            w.features.need("cuprum/arith.h");
            format!("cuprum::{f}({}, {})", strip_parens(l), strip_parens(r))
        };
        match op {
            BinOp::Shl => return helper(self, "shl"),
            BinOp::Shr => return helper(self, "shr"),
            _ => {}
        }
        match lt {
            Ty::Scalar(DType::Bool) => plain(),
            Ty::Scalar(d) if d.is_int() => {
                let wide_unsigned = matches!(d, DType::U32 | DType::U64);
                let wide = d.bits() >= 32;
                match op {
                    BinOp::Add | BinOp::Sub | BinOp::Mul if wide_unsigned => plain(),
                    BinOp::Add => helper(self, "add"),
                    BinOp::Sub => helper(self, "sub"),
                    BinOp::Mul => helper(self, "mul"),
                    BinOp::Div => helper(self, "div"),
                    BinOp::Rem => helper(self, "rem"),
                    BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor if wide => plain(),
                    BinOp::BitAnd => helper(self, "bit_and"),
                    BinOp::BitOr => helper(self, "bit_or"),
                    BinOp::BitXor => helper(self, "bit_xor"),
                    _ => plain(),
                }
            }
            Ty::Scalar(_) => match op {
                BinOp::Rem => helper(self, "rem"),
                _ => plain(),
            },
            Ty::Param(p) => {
                let float = self.item.generics[*p as usize].bound == Bound::Float;
                match op {
                    BinOp::Rem => helper(self, "rem"),
                    _ if float => plain(),
                    BinOp::Add => helper(self, "add"),
                    BinOp::Sub => helper(self, "sub"),
                    BinOp::Mul => helper(self, "mul"),
                    BinOp::Div => helper(self, "div"),
                    BinOp::BitAnd => helper(self, "bit_and"),
                    BinOp::BitOr => helper(self, "bit_or"),
                    BinOp::BitXor => helper(self, "bit_xor"),
                    _ => plain(),
                }
            }
            _ => plain(),
        }
    }

    fn cast(&mut self, inner: &Expr, to: &Ty) -> String {
        let from = self.ty_of(inner);
        let v = self.value(inner);
        self.convert(&from, to, &v)
    }

    /// Rust's `v as to` for primitive types: float -> int saturates (NaN -> 0) through a helper;
    /// the other conversions are C's (int -> int wraps or extends, to float rounds to nearest).
    pub(super) fn convert(&mut self, from: &Ty, to: &Ty, v: &str) -> String {
        let (Some(f), Some(t)) = (from.scalar(), to.scalar()) else { return v.to_string() };
        if f == t {
            return v.to_string();
        }
        let ct = self.ty(to);
        if f.is_float() && t.is_int() {
            self.features.need("cuprum/arith.h");
            return format!("cuprum::cast_float<{ct}>({})", strip_parens(v));
        }
        format!("(({ct}){v})")
    }

    fn call(&mut self, e: &Expr, callee: &Callee, args: &[Expr]) -> String {
        match callee {
            Callee::Intrinsic { intrinsic: Intrinsic::Atomic(_), .. } if self.needs_check(e) => self.checked_atomic(e, callee, args),
            Callee::Intrinsic { intrinsic, tys, consts } => self.intrinsic(*intrinsic, tys, consts, args),
            Callee::Device { name, .. } => {
                let callee_item_generics = self.types.call_args.get(&e.id.0).cloned().unwrap_or_default();
                let targs = if callee_item_generics.is_empty() {
                    String::new()
                } else {
                    let ts: Vec<String> = callee_item_generics.iter().map(|t| self.ty(t)).collect();
                    format!("<{}>", ts.join(", "))
                };
                let params: Vec<Ty> = match self.devices.iter().find(|d| d.name.text == name.text) {
                    Some(d) => d.params.iter().map(|p| p.ty.clone()).collect(),
                    None => Vec::new(),
                };
                let vs: Vec<String> = args.iter().enumerate().map(|(k, a)| self.arg_value(a, params.get(k))).collect();
                format!("{}{targs}({})", namer::item_name(&name.text), vs.join(", "))
            }
            Callee::Assoc { ty, .. } => {
                self.features.need("cuprum/math.h");
                let vs: Vec<String> = args.iter().map(|a| strip_parens(&self.value(a)).to_string()).collect();
                let ct = self.ty(ty);
                match (self.types.assoc_fn(e), ty.scalar()) {
                    (AssocFn::FromF32, Some(DType::F16)) => format!("cuprum::half_from_f32({})", vs[0]),
                    (AssocFn::FromF32, Some(DType::BF16)) => format!("cuprum::bf16_from_f32({})", vs[0]),
                    (AssocFn::FromF32, Some(DType::F8E4M3)) => format!("cuprum::f8e4m3_from_f32({})", vs[0]),
                    (AssocFn::FromF32, Some(DType::F8E5M2)) => format!("cuprum::f8e5m2_from_f32({})", vs[0]),
                    (AssocFn::FromBits, Some(DType::F32)) => format!("__uint_as_float({})", vs[0]),
                    (AssocFn::FromBits, Some(DType::F64)) => format!("__longlong_as_double((i64){})", vs[0]),
                    (AssocFn::FromBits, Some(DType::F16)) => format!("cuprum::half_bits({})", vs[0]),
                    (AssocFn::FromBits, Some(DType::BF16)) => format!("cuprum::bf16_bits({})", vs[0]),
                    (AssocFn::FromBits, Some(DType::F8E4M3)) => format!("cuprum::f8e4m3_bits({})", vs[0]),
                    (AssocFn::FromBits, Some(DType::F8E5M2)) => format!("cuprum::f8e5m2_bits({})", vs[0]),
                    (AssocFn::FromF32Pair, Some(DType::F16)) => format!("cuprum::half_pair_from_f32({}, {})", vs[0], vs[1]),
                    (AssocFn::FromF32Pair, Some(DType::BF16)) => format!("cuprum::bf16_pair_from_f32({}, {})", vs[0], vs[1]),
                    (AssocFn::FromF32 | AssocFn::FromBits | AssocFn::FromF32Pair, _) => {
                        unreachable!("the type checker admits `from_f32` on halves, `from_f32_pair` on f16 and bf16 and `from_bits` on floats only")
                    }
                    (AssocFn::Num(f), _) => format!("cuprum::num<{ct}>::{}({})", f.c_name(), vs.join(", ")),
                }
            }
        }
    }

    /// `atomic_op(a, i, v..)` with `i` checked: out of range, nothing is touched and the result is
    /// `T{}`. When the index or the values cannot be evaluated twice or conditionally (a call with
    /// effects), the atomic goes to a scratch element instead (`cuprum::at`), with the same effect
    /// on memory.
    fn checked_atomic(&mut self, e: &Expr, callee: &Callee, args: &[Expr]) -> String {
        let Callee::Intrinsic { intrinsic, .. } = callee else { unreachable!() };
        self.features.need("cuprum/atomic.h");
        let c = intrinsic.c_name();
        let bt = self.indexed_ty(&args[0]);
        let vs: Vec<String> = args.iter().map(|a| strip_parens(&self.value(a)).to_string()).collect();
        let rest: String = vs[2..].iter().map(|v| format!(", {v}")).collect();
        if args[1..].iter().all(duplicable) {
            let has = self.checked_access("has", &bt, &vs[0], &vs[1..2]);
            let t = self.ty_of(e);
            let ct = self.ty(&t);
            format!("({has} ? {c}(&{}[{}]{rest}) : {ct}{{}})", vs[0], vs[1])
        } else {
            let at = self.checked_access("at", &bt, &vs[0], &vs[1..2]);
            format!("{c}(&{at}{rest})")
        }
    }

    /// An argument of a device function: an array reference (a shared array, `&a`, `&mut a`) passed
    /// as a slice where the parameter is a slice, as a pointer where it is `&[T; N]`.
    fn arg_value(&mut self, a: &Expr, param: Option<&Ty>) -> String {
        let t = self.ty_of(a);
        let v = self.value(a);
        let (elem, len, ptr) = match t {
            Ty::ArrayRef { elem, len, .. } => (elem, len, v),
            Ty::Ref { inner, .. } if matches!(*inner, Ty::Array(..)) => {
                let Ty::Array(elem, len) = *inner else { unreachable!() };
                (elem, len, format!("{v}.v"))
            }
            _ => return strip_parens(&v).to_string(),
        };
        match param {
            Some(Ty::Slice { .. }) => {
                let et = self.ty(&elem);
                format!("cuprum::Slice<{et}>{{{ptr}, {len}}}")
            }
            _ => ptr,
        }
    }

    fn intrinsic(&mut self, f: Intrinsic, tys: &[Ty], consts: &[u64], args: &[Expr]) -> String {
        use Intrinsic::*;
        let vs: Vec<String> = args.iter().map(|a| strip_parens(&self.value(a)).to_string()).collect();
        let c = f.c_name();
        match f {
            ThreadIdx | BlockIdx | Index | LoopSize | ReduceIndex => c.into(),
            BlockDim | GridDim | Grid1d | Grid2d | Grid3d | GridSize1d | GridSize2d | GridSize3d | LaneId => {
                self.features.need("cuprum/thread.h");
                format!("{c}()")
            }
            WarpSize => format!("(u32){c}"),
            SyncThreads | ThreadFence | ThreadFenceBlock => format!("{c}()"),
            // The barrier of a cooperative launch (the runtime launches every kernel that reaches
            // it cooperatively: `KernelInfo::cooperative`).
            GridSync => {
                self.features.need("cuprum/grid.h");
                format!("{c}()")
            }
            SyncWarp => format!("{c}({})", vs[0]),
            ComplexNew => {
                self.features.need("cuprum/complex.h");
                format!("{c}({}, {})", vs[0], vs[1])
            }
            DynamicShared => {
                self.features.need("cuprum/thread.h");
                self.features.dynamic_shared = true;
                let et = self.ty(&tys[0]);
                format!("cuprum::Slice<{et}>{{reinterpret_cast<{et}*>({c}), cuprum::dynamic_shared_bytes() / (u32)sizeof({et})}}")
            }
            // Declared by `let_stmt` (the validator admits it only as a `let` initializer); an
            // ignored `let _ = shared_array()` declares nothing.
            SharedArray => String::new(),
            Atomic(_) => {
                self.features.need("cuprum/atomic.h");
                let rest: String = vs[2..].iter().map(|v| format!(", {v}")).collect();
                format!("{c}(&{}[{}]{rest})", vs[0], vs[1])
            }
            Shuffle(_) => {
                self.features.need("cuprum/thread.h");
                format!("{c}({})", vs.join(", "))
            }
            Warp(_) => {
                self.features.need("cuprum/warp.h");
                format!("{c}({})", vs.join(", "))
            }
            Special(_) => {
                self.features.need("cuprum/math.h");
                format!("{c}({})", vs[0])
            }
            // The checked tensor helpers check their ranges and alignment themselves (a misaligned
            // address is a fault, not only a wrong value) and note a violation in the function's
            // `LATER`, which reports it when the function returns.
            CpAsync | CpAsyncUnchecked => {
                self.features.need("cuprum/tensor.h");
                let later = if f == CpAsync { format!("&{LATER}") } else { "nullptr".into() };
                match self.indexed_ty(&args[0]) {
                    Ty::ArrayRef { len, .. } => format!("{c}<{len}, {}>({}, {}, {}, {}, {later})", f == CpAsync, vs[0], vs[1], vs[2], vs[3]),
                    // `dynamic_shared` (the validator admits no other slice): its length is the launch's.
                    _ => format!("{c}_n<{}>({}, {}, {}, {}, {later})", f == CpAsync, self.shared_operand(&args[0], &vs[0]), vs[1], vs[2], vs[3]),
                }
            }
            // Checked as `x[i]` is (`cuprum/vector.h`): a violation is reported at once, the
            // load gives zeros and the store writes nothing.
            Load4 => {
                self.features.need("cuprum/vector.h");
                format!("{c}<{}>({}, \"{}\", {})", self.item.bounds_checks, strip_parens(&vs[0]), self.item.name.text, vs[1])
            }
            Store4 => {
                self.features.need("cuprum/vector.h");
                format!("{c}<{}>({}, \"{}\", {}, {})", self.item.bounds_checks, strip_parens(&vs[0]), self.item.name.text, vs[1], vs[2])
            }
            CpAsyncCommit => {
                self.features.need("cuprum/tensor.h");
                format!("{c}()")
            }
            CpAsyncWait => {
                self.features.need("cuprum/tensor.h");
                format!("{c}<{}>()", consts[0])
            }
            Mma(_) => {
                self.features.need("cuprum/tensor.h");
                format!("{c}({})", vs.join(", "))
            }
            LdMatrix(l) => {
                self.features.need("cuprum/tensor.h");
                let later = if l.checked() { format!("&{LATER}") } else { "nullptr".into() };
                match self.indexed_ty(&args[0]) {
                    Ty::ArrayRef { len, .. } => format!("{c}<{}, {}, {}, {len}>({}, {}, {later})", l.count(), l.trans(), l.checked(), vs[0], vs[1]),
                    // `dynamic_shared` (the validator admits no other slice): its length is the launch's.
                    _ => format!("{c}_n<{}, {}, {}>({}, {}, {later})", l.count(), l.trans(), l.checked(), self.shared_operand(&args[0], &vs[0]), vs[1]),
                }
            }
            Hopper(h) => {
                use crate::lang::HopperOp::*;
                self.features.need("cuprum/hopper.h");
                let later = format!("&{LATER}");
                match h {
                    WgmmaFence | WgmmaCommit => format!("{c}()"),
                    WgmmaWait | RegAlloc | RegDealloc => format!("{c}<{}>({})", consts[0], vs.join(", ")),
                    MbarrierInit | MbarrierArrive | MbarrierArriveExpectTx | MbarrierWait => {
                        let bars = self.shared_operand(&args[0], &vs[0]);
                        let rest = vs[1..].join(", ");
                        format!("{c}({bars}, {rest}, {later})")
                    }
                    TmaLoad2d => {
                        let dst = self.shared_operand(&args[0], &vs[0]);
                        let bars = self.shared_operand(&args[5], &vs[5]);
                        format!("{c}({dst}, {}, {}, {}, {}, {bars}, {}, {later})", vs[1], vs[2], vs[3], vs[4], vs[6])
                    }
                    NamedBarrierSync | NamedBarrierArrive => format!("{c}({}, {})", vs[0], vs[1]),
                    _ if h.wgmma_rs() => {
                        let b = self.shared_operand(&args[2], &vs[2]);
                        format!("{c}<{}, {}>({}, {}, {b}, {}, {later})", h.wgmma_n().unwrap_or(64), h.checked(), vs[0], vs[1], vs[3])
                    }
                    _ => {
                        let (a, b) = (self.shared_operand(&args[1], &vs[1]), self.shared_operand(&args[3], &vs[3]));
                        format!("{c}<{}, {}>({}, {a}, {}, {b}, {}, {later})", h.wgmma_n().unwrap_or(64), h.checked(), vs[0], vs[2], vs[4])
                    }
                }
            }
        }
    }

    /// A shared operand of the Hopper helpers as `pointer, length`: a static shared array's name
    /// and its length, or a `dynamic_shared` slice's two fields.
    fn shared_operand(&self, a: &Expr, v: &str) -> String {
        match self.indexed_ty(a) {
            Ty::ArrayRef { len, .. } => format!("{v}, {len}ull"),
            _ => format!("{v}.ptr, {v}.len"),
        }
    }

    fn method(&mut self, e: &Expr, receiver: &Expr, args: &[Expr]) -> String {
        let rt = match self.ty_of(receiver) {
            Ty::Ref { inner, .. } => *inner,
            t => t,
        };
        let r = self.value(receiver);
        let r = strip_parens(&r).to_string();
        if let Method::GetUnchecked | Method::GetUncheckedMut = self.types.method(e) {
            // The element itself, unchecked (an lvalue: `*a.get_unchecked_mut(i) = v`).
            let ix: &[Expr] = match (&rt, &args[0].kind) {
                (Ty::View { ndim, .. }, ExprKind::ArrayList(ix)) if *ndim > 1 => ix,
                _ => args,
            };
            let is: Vec<String> = ix.iter().map(|i| strip_parens(&self.value(i)).to_string()).collect();
            return element(&rt, &r, &is);
        }
        let vs: Vec<String> = args.iter().map(|a| strip_parens(&self.value(a)).to_string()).collect();
        match self.types.method(e) {
            Method::Len => match &rt {
                Ty::Slice { .. } => format!("{r}.len"),
                Ty::ArrayRef { len, .. } | Ty::Array(_, len) => format!("(u64){len}"),
                Ty::View { .. } => format!("{r}.size()"),
                Ty::Raw(_) => format!("{r}.size"),
                _ => unreachable!("the type checker admits `len` on arrays only"),
            },
            Method::Shape => format!("{r}.shape_array()"),
            Method::Strides => format!("{r}.strides_array()"),
            Method::ToBits => match rt.scalar() {
                Some(DType::F32) => format!("__float_as_uint({r})"),
                Some(DType::F64) => format!("(u64)__double_as_longlong({r})"),
                Some(DType::F16 | DType::BF16 | DType::F8E4M3 | DType::F8E5M2) => format!("{r}.bits"),
                _ => unreachable!("the type checker admits `to_bits` on floats only"),
            },
            Method::ToF32 => {
                self.features.need("cuprum/half.h");
                format!("cuprum::to_f32({r})")
            }
            Method::GetUnchecked | Method::GetUncheckedMut => unreachable!("written above"),
            Method::Math(f) => {
                let complex = rt.scalar().is_some_and(|d| d.is_complex());
                self.features.need(if complex { "cuprum/complex.h" } else { "cuprum/math.h" });
                let mut all = vec![r];
                all.extend(vs);
                format!("cuprum::{}({})", f.c_name(), all.join(", "))
            }
        }
    }
}

/// Whether emitting `e` needs statements (it contains a block, `if`, `match`, a loop, ...).
fn needs_stmts(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Block(_)
        | ExprKind::If { .. }
        | ExprKind::Match { .. }
        | ExprKind::Loop { .. }
        | ExprKind::While { .. }
        | ExprKind::For { .. }
        | ExprKind::Break { .. }
        | ExprKind::Continue { .. }
        | ExprKind::Return(_)
        | ExprKind::Assign { .. }
        | ExprKind::Print { .. } => true,
        _ => {
            let any = std::cell::Cell::new(false);
            visit_children(e, &mut |c| any.set(any.get() || needs_stmts(c)), &mut |_| any.set(true));
            any.get()
        }
    }
}

fn e_callee(e: &Expr) -> &Callee {
    match &e.kind {
        ExprKind::Call { callee, .. } => callee,
        _ => unreachable!("a call"),
    }
}

/// `b[i]`, or `b(i, j, ..)` for a view's multi-index: the element, unchecked.
fn element(bt: &Ty, b: &str, is: &[String]) -> String {
    match bt {
        Ty::View { ndim, .. } if is.len() == *ndim as usize && *ndim > 1 => format!("{b}({})", is.join(", ")),
        _ => format!("{b}[{}]", is[0]),
    }
}

/// An index written twice as it is (in the guard and in the place): locals, literals, casts and
/// arithmetic of those. Others are computed once, into a temporary.
fn plain_index(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Local(_) | ExprKind::Lit(_) => true,
        ExprKind::Cast(a, _) | ExprKind::Unary(_, a) => plain_index(a),
        ExprKind::Binary(_, a, b) => plain_index(a) && plain_index(b),
        _ => false,
    }
}

/// Whether `e` may be evaluated twice, or not at all, with no difference: no call with effects
/// (device functions, atomics, barriers, warp collectives), no statements.
fn duplicable(e: &Expr) -> bool {
    use Intrinsic::*;
    let ok = match &e.kind {
        ExprKind::Call { callee: Callee::Intrinsic { intrinsic, .. }, .. } => matches!(
            intrinsic,
            ThreadIdx | BlockIdx | BlockDim | GridDim | Grid1d | Grid2d | Grid3d | GridSize1d | GridSize2d | GridSize3d | LaneId | WarpSize
                | Index | LoopSize | ReduceIndex | ComplexNew | Special(_)
        ),
        ExprKind::Call { callee: Callee::Assoc { .. }, .. } => true,
        ExprKind::Call { .. } => false,
        _ => !needs_stmts(e),
    };
    if !ok {
        return false;
    }
    let all = std::cell::Cell::new(true);
    visit_children(e, &mut |c| all.set(all.get() && duplicable(c)), &mut |_| all.set(false));
    all.get()
}

/// Whether `e` contains a call (whose side effects must happen once).
fn has_call(e: &Expr) -> bool {
    if matches!(e.kind, ExprKind::Call { .. } | ExprKind::MethodCall { .. }) {
        return true;
    }
    let any = std::cell::Cell::new(false);
    visit_children(e, &mut |c| any.set(any.get() || has_call(c)), &mut |_| any.set(true));
    any.get()
}

/// An integer literal of a given type, valid C for every value including the minimum.
pub(super) fn int_literal(v: i128, d: DType) -> String {
    let (bits, signed) = (d.bits(), d.is_signed_int());
    // Wrap to the type, as `as` would (the type checker rejects out-of-range literals).
    let m = if bits == 128 { v } else { v.rem_euclid(1i128 << bits) };
    let v = if signed && m >= 1i128 << (bits - 1) { m - (1i128 << bits) } else { m };
    match d {
        DType::I32 => {
            if v == i32::MIN as i128 { "(-2147483647 - 1)".into() } else { v.to_string() }
        }
        DType::I64 => {
            if v == i64::MIN as i128 { "(-9223372036854775807ll - 1)".into() } else { format!("{v}ll") }
        }
        DType::U32 => format!("{v}u"),
        DType::U64 => format!("{v}ull"),
        DType::Bool => (v != 0).to_string(),
        DType::F32 => format!("{v}.0f"),
        DType::F64 => format!("{v}.0"),
        _ => format!("(({}){v})", d.short_name()),
    }
}

fn unsigned_of(d: DType) -> &'static str {
    match d.size() {
        1 => "u8",
        2 => "u16",
        4 => "u32",
        _ => "u64",
    }
}

/// Drops one pair of enclosing parentheses when they enclose the whole expression.
fn strip_parens(s: &str) -> &str {
    let b = s.as_bytes();
    if b.len() < 2 || b[0] != b'(' || b[b.len() - 1] != b')' {
        return s;
    }
    let mut depth = 0;
    for (i, c) in b.iter().enumerate() {
        match c {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 && i != b.len() - 1 {
                    return s;
                }
            }
            _ => {}
        }
    }
    &s[1..s.len() - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_literals_are_valid_c_of_their_type() {
        assert_eq!(int_literal(5, DType::I32), "5");
        assert_eq!(int_literal(-5, DType::I32), "-5");
        assert_eq!(int_literal(i32::MIN as i128, DType::I32), "(-2147483647 - 1)");
        assert_eq!(int_literal(i64::MIN as i128, DType::I64), "(-9223372036854775807ll - 1)");
        assert_eq!(int_literal(7, DType::I64), "7ll");
        assert_eq!(int_literal(4294967295, DType::U32), "4294967295u");
        assert_eq!(int_literal(u64::MAX as i128, DType::U64), "18446744073709551615ull");
        assert_eq!(int_literal(200, DType::U8), "((u8)200)");
        assert_eq!(int_literal(-2, DType::I8), "((i8)-2)");
        // Negating an unsigned literal wraps, as `as` would.
        assert_eq!(int_literal(-1, DType::U16), "((u16)65535)");
        assert_eq!(int_literal(3, DType::F64), "3.0");
        assert_eq!(int_literal(3, DType::F32), "3.0f");
    }

    #[test]
    fn strip_parens_drops_one_enclosing_pair_only() {
        assert_eq!(strip_parens("(a + b)"), "a + b");
        assert_eq!(strip_parens("((a + b))"), "(a + b)");
        assert_eq!(strip_parens("(a) + (b)"), "(a) + (b)");
        assert_eq!(strip_parens("f(x)"), "f(x)");
        assert_eq!(strip_parens("()"), "");
        assert_eq!(strip_parens("x"), "x");
    }

    fn emit(src: &str) -> String {
        crate::compile_source(src).expect("compiles").unit.source
    }

    #[test]
    fn rust_semantics_in_the_c() {
        let c = emit("#[device] fn f(a: u8, b: u8, s: u32) -> u8 { (a + b) << s }");
        assert!(c.contains("cuprum::shl(cuprum::add(a, b), s)"), "{c}");
        let c = emit("#[device] fn f(x: f32) -> i16 { x as i16 }");
        assert!(c.contains("cuprum::cast_float<i16>(x)"), "{c}");
        // Wide unsigned arithmetic wraps in C already.
        let c = emit("#[device] fn f(a: u64, b: u64) -> u64 { a * b + 1 }");
        assert!(c.contains("(a * b) + 1ull"), "{c}");
    }

    #[test]
    fn shadowed_locals_get_distinct_c_names() {
        let c = emit("#[device] fn f(x: i32) -> i32 { let x = x + 1; let x = x * 2; x }");
        assert!(c.contains("i32 x_1 = cuprum::add(x, 1);") && c.contains("i32 x_2 = cuprum::mul(x_1, 2);"), "{c}");
    }

    #[test]
    fn helpers_only_when_used() {
        let c = emit("#[device] fn f(x: f32) -> f32 { x * 2.0 }");
        assert!(!c.contains("arith.h") && !c.contains("math.h") && !c.contains("atomic.h"), "{c}");
        let c = emit("#[device] fn f(x: f32) -> f32 { x.sqrt() }");
        assert!(c.contains("#include <cuprum/math.h>"), "{c}");
    }

    #[test]
    fn index_checks_guard_only_the_access() {
        // The value (with its barrier) is computed before the guarded store: an out-of-range
        // thread still reaches every `__syncthreads()`.
        let c = emit("#[rawkernel] fn k(y: &mut [f32]) { let i = grid_1d() as usize; y[i] = { sync_threads(); 1.0 }; }");
        let (sync, guard) = (c.find("__syncthreads();").unwrap(), c.find("if (cuprum::has(y, \"k\", i)) y[i] = _cv0;").expect(&c));
        assert!(sync < guard, "{c}");
        // Reads are expressions giving T{} out of range; the name is the function's.
        let c = emit("#[device] fn f(x: &[f32], i: usize) -> f32 { x[i] * 2.0 }");
        assert!(c.contains("return cuprum::get(x, \"f\", i) * 2.0f;") && c.contains("#include <cuprum/bounds.h>"), "{c}");
        // An index with a call is computed once, after the value (Rust's order).
        let c = emit("#[rawkernel] fn k(y: &mut [u32], n: &mut [u32]) { y[atomic_add(n, 0usize, 1u32) as usize] = atomic_add(n, 1usize, 1u32); }");
        let (v, i) = (c.find("const u32 _cv0 = ").expect(&c), c.find("const u64 _ci0 = ").expect(&c));
        assert!(v < i && c.contains("if (cuprum::has(y, \"k\", _ci0)) y[_ci0] = _cv0;"), "{c}");
    }

    #[test]
    fn unchecked_items_and_get_unchecked_index_plainly() {
        let c = emit("#[rawkernel(unchecked)] fn k(x: &[f32], y: &mut [f32]) { let i = grid_1d() as usize; y[i] = x[i]; }");
        assert!(c.contains("y[i] = x[i];") && !c.contains("bounds.h"), "{c}");
        let c = emit("#[rawkernel] fn k(x: &[f32], y: &mut [f32]) { let i = grid_1d() as usize; unsafe { *y.get_unchecked_mut(i) = *x.get_unchecked(i); } }");
        assert!(c.contains("y[i] = x[i];") && !c.contains("cuprum::get") && !c.contains("cuprum::has"), "{c}");
        // `#[device(unchecked)]` drops a device function's own checks.
        let c = emit("#[device(unchecked)] unsafe fn f(x: &[f32], i: usize) -> f32 { x[i] }");
        assert!(c.contains("return x[i];"), "{c}");
    }
}

/// The `printf` conversion of a float placeholder: `%g` for `{}`, `%.Nf` for `{:.N}`.
fn float_conv(spec: PrintSpec) -> String {
    match spec {
        PrintSpec::Precision(n) => format!("%.{n}f"),
        _ => "%g".into(),
    }
}

/// A C string literal of `s`: quotes, backslashes and control characters escaped, bytes outside
/// printable ASCII as three-digit octal escapes (a following digit cannot extend them).
fn c_string(s: &str) -> String {
    let mut out = String::from("\"");
    for b in s.bytes() {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\t' => out.push_str("\\t"),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\{b:03o}")),
        }
    }
    out.push('"');
    out
}
