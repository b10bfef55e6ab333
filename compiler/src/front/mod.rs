//! Front end: Rust syntax (syn) -> IR.
//!
//! One entry point per input shape: [`lower_file`] for a whole source file (the build crate and
//! `cuprum emit`), [`lower_item`] for one function under an attribute (the macros). Names are
//! resolved here (locals, loop labels, intrinsics); types are left to `typeck`. Every unsupported
//! construct is reported at its span with what to write instead, and lowering continues so that
//! all mistakes of a file are reported in one run.

mod attr;
mod expr;
pub mod structs;
mod ty;

use std::collections::HashMap;

use proc_macro2::{Span, TokenStream};
use syn::spanned::Spanned;

use cuprum_abi::dtype::DType;

use crate::attr_kind::AttrKind;
use crate::diag::Diagnostics;
use crate::ir::{self, Generic, Item, ItemKind, Local, LocalId, Module, Name, Param, Ty};
use crate::lang::Bound;

pub use attr::KernelAttr;
pub use ty::{dtype_of_path, Leaf, Written};

/// What a kernel sees of its file besides its own tokens: the file's `const` items and its
/// `use std::f32::consts::..` imports. Under a macro only the item is known (`whole_file` false):
/// names the item does not define are then left to rustc and report nothing here.
#[derive(Default)]
pub struct FileScope {
    /// The whole file was read (the CLI, the build crate, a macro that could read its file).
    pub whole_file: bool,
    /// `const NAME: T = init;` items of the file: the type and the initializer, inlined at uses.
    pub consts: HashMap<String, (syn::Type, syn::Expr)>,
    /// Float constants imported by `use std::f32::consts::{PI, E as EULER};`: the name in scope ->
    /// (the float type, the constant's name).
    pub float_consts: HashMap<String, (DType, String)>,
    /// Names imported by name (a glob import does not hide them).
    named_imports: std::collections::HashSet<String>,
    /// The file's `#[device]` structs, in file order (known under a macro too: the macro reads
    /// the item's file for them).
    pub structs: Vec<syn::ItemStruct>,
    /// The file's top-level functions without a cuprum attribute (known under a macro too): a
    /// kernel that calls one is told to mark it `#[device]`.
    pub plain_fns: std::collections::HashSet<String>,
}

/// Whether `attrs` hold one of cuprum's attributes (`#[elementwise]`, ..., `#[device]`, `#[fuse]`).
fn has_cuprum_attr(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| AttrKind::from_path(a.path()).is_some() || a.path().segments.last().is_some_and(|s| s.ident == "fuse"))
}

impl FileScope {
    /// The scope of a whole file: its `const` items and float-constant imports.
    pub fn of_file(file: &syn::File) -> FileScope {
        let mut scope = FileScope { whole_file: true, ..FileScope::default() };
        for item in &file.items {
            match item {
                syn::Item::Const(c) => {
                    scope.consts.insert(c.ident.to_string(), ((*c.ty).clone(), (*c.expr).clone()));
                }
                syn::Item::Use(u) => scope.add_use(&u.tree, &mut Vec::new()),
                syn::Item::Struct(s) if structs::is_device(&s.attrs) => scope.structs.push(s.clone()),
                syn::Item::Fn(f) if !has_cuprum_attr(&f.attrs) => {
                    scope.plain_fns.insert(f.sig.ident.to_string());
                }
                _ => {}
            }
        }
        scope
    }

    /// What a macro sees of its item's file: only the `#[device]` structs and the names of the
    /// plain functions (the rest of the scope stays unknown, `whole_file` false). An unreadable
    /// file gives an empty scope.
    ///
    /// Every annotated item of a file asks for this: the file is parsed once per compiler process
    /// and text, and its structs kept as source (syn's trees cannot live in a static).
    pub fn for_macro(file: Option<&std::path::Path>) -> FileScope {
        let Some(path) = file else { return FileScope::default() };
        let Ok(text) = std::fs::read_to_string(path) else { return FileScope::default() };
        FileScope::for_source(path, &text)
    }

    /// [`FileScope::for_macro`] of a file already read: `text` is the file at `path`.
    pub fn for_source(path: &std::path::Path, text: &str) -> FileScope {
        use std::collections::HashMap;
        use std::path::PathBuf;
        use std::sync::Mutex;
        type Cached = (String, Vec<String>, std::collections::HashSet<String>);
        static STRUCTS: Mutex<Option<HashMap<PathBuf, Cached>>> = Mutex::new(None);
        let mut scope = FileScope::default();
        let mut cache = STRUCTS.lock().unwrap_or_else(|e| e.into_inner());
        let cache = cache.get_or_insert_with(HashMap::new);
        let (sources, plain_fns) = match cache.get(path) {
            Some((t, s, p)) if t == text => (s.clone(), p.clone()),
            _ => {
                let whole = syn::parse_file(text).map(|f| FileScope::of_file(&f)).unwrap_or_default();
                let s: Vec<String> = whole.structs.iter().map(|s| quote::ToTokens::to_token_stream(s).to_string()).collect();
                cache.insert(path.to_path_buf(), (text.to_string(), s.clone(), whole.plain_fns.clone()));
                (s, whole.plain_fns)
            }
        };
        scope.structs = sources.iter().filter_map(|s| syn::parse_str(s).ok()).collect();
        scope.plain_fns = plain_fns;
        scope
    }

    /// Whether the file declares a `#[device]` struct named `name`.
    pub fn has_struct(&self, name: &str) -> bool {
        self.structs.iter().any(|s| s.ident == name)
    }

    /// The file's structs lowered (their errors are reported into `diags`).
    pub fn lower_structs(&self, diags: &mut Diagnostics) -> Vec<ir::StructDef> {
        let defs: Vec<ir::StructDef> = self.structs.iter().filter_map(|s| structs::lower(s, self, diags)).collect();
        structs::check_layouts(&defs, diags);
        defs
    }

    /// Records the float constants a `use` tree imports (`std|core::f32|f64::consts::X`).
    fn add_use(&mut self, tree: &syn::UseTree, path: &mut Vec<String>) {
        let float = |path: &[String]| match path {
            [root, f, consts] if (root == "std" || root == "core") && consts == "consts" => match f.as_str() {
                "f32" => Some(DType::F32),
                "f64" => Some(DType::F64),
                _ => None,
            },
            _ => None,
        };
        match tree {
            syn::UseTree::Path(p) => {
                path.push(p.ident.to_string());
                self.add_use(&p.tree, path);
                path.pop();
            }
            syn::UseTree::Group(g) => g.items.iter().for_each(|t| self.add_use(t, path)),
            syn::UseTree::Name(n) => {
                if let Some(d) = float(path) {
                    self.named_imports.insert(n.ident.to_string());
                    self.float_consts.insert(n.ident.to_string(), (d, n.ident.to_string()));
                }
            }
            syn::UseTree::Rename(r) => {
                if let Some(d) = float(path) {
                    self.named_imports.insert(r.rename.to_string());
                    self.float_consts.insert(r.rename.to_string(), (d, r.ident.to_string()));
                }
            }
            syn::UseTree::Glob(_) => {
                if let Some(d) = float(path) {
                    // A glob import never hides a name imported by name, as in Rust.
                    for c in crate::lang::NumConst::ALL.iter().filter(|c| c.in_consts_module()).map(|c| c.rust_name()) {
                        if !self.named_imports.contains(c) {
                            self.float_consts.insert(c.to_string(), (d, c.to_string()));
                        }
                    }
                }
            }
        }
    }
}

/// Lowers every annotated function and `#[device]` struct of a file. Unannotated items are
/// ignored (a kernel file is an ordinary Rust module); other annotated items are errors.
pub fn lower_file(file: &syn::File, diags: &mut Diagnostics) -> Module {
    let scope = FileScope::of_file(file);
    let mut module = Module { structs: scope.lower_structs(diags), ..Module::default() };
    for item in &file.items {
        let (attrs, span) = match item {
            syn::Item::Fn(f) => (&f.attrs, f.sig.ident.span()),
            syn::Item::Struct(s) => (&s.attrs, s.ident.span()),
            syn::Item::Const(c) => (&c.attrs, c.ident.span()),
            syn::Item::Static(s) => (&s.attrs, s.ident.span()),
            syn::Item::Mod(m) => (&m.attrs, m.ident.span()),
            _ => continue,
        };
        for a in attrs {
            if a.path().segments.last().is_some_and(|s| s.ident == "fuse") {
                lower_fused(file, item, a, &scope, &mut module, diags);
                continue;
            }
            let Some(kind) = AttrKind::from_path(a.path()) else { continue };
            if kind == AttrKind::Device && matches!(item, syn::Item::Struct(_)) {
                continue; // lowered above
            }
            let syn::Item::Fn(f) = item else {
                diags.error(span, format!("`#[{}]` applies to functions only", a.path().segments.last().unwrap().ident));
                continue;
            };
            let Some(args) = attr_args(a, diags) else { continue };
            if let Some(item) = lower_item(kind, args, a.span(), f, &scope, diags) {
                module.items.push(item);
            }
        }
    }
    module
}

/// An attribute's arguments (empty for `#[name]`); `#[name = ..]` is an error.
fn attr_args(a: &syn::Attribute, diags: &mut Diagnostics) -> Option<TokenStream> {
    match &a.meta {
        syn::Meta::Path(_) => Some(TokenStream::new()),
        syn::Meta::List(l) => Some(l.tokens.clone()),
        syn::Meta::NameValue(nv) => {
            let name = a.path().segments.last().map(|s| s.ident.to_string()).unwrap_or_default();
            diags.error(nv.span(), format!("write the attribute's arguments in parentheses: `#[{name}(..)]`"));
            None
        }
    }
}

/// A `#[fuse]` function: desugared to the kernel it becomes (`crate::fuse`), which is lowered
/// like a kernel written by hand.
fn lower_fused(file: &syn::File, item: &syn::Item, a: &syn::Attribute, scope: &FileScope, module: &mut Module, diags: &mut Diagnostics) {
    let syn::Item::Fn(f) = item else {
        diags.error(a.span(), "`#[fuse]` applies to functions only");
        return;
    };
    let Some(args) = attr_args(a, diags) else { return };
    match crate::fuse::desugar(f, args, &|name| elementwise_fn(file, name)) {
        Ok(d) => {
            if let Some(item) = lower_item(d.kind, d.attr, a.span(), &d.kernel, scope, diags) {
                module.items.push(item);
            }
        }
        Err(e) => diags.push(e),
    }
}

/// The `#[elementwise]` function `name` of `file`, if there is one (a `#[fuse]` body inlines it).
pub fn elementwise_fn(file: &syn::File, name: &str) -> Option<syn::ItemFn> {
    file.items.iter().find_map(|item| match item {
        syn::Item::Fn(f) if f.sig.ident == name && f.attrs.iter().any(|a| AttrKind::from_path(a.path()) == Some(AttrKind::Elementwise)) => Some(f.clone()),
        _ => None,
    })
}

/// The arguments of an attribute of `kind`, parsed and checked (every error into `diags`).
pub fn parse_attr(kind: AttrKind, args: TokenStream, attr_span: Span, diags: &mut Diagnostics) -> KernelAttr {
    attr::parse(kind, args, attr_span, diags)
}

/// Lowers one annotated function. `attr_span` is the attribute's (errors about missing arguments
/// point there). Returns `None` only when nothing usable could be lowered (the errors are in
/// `diags`).
pub fn lower_item(
    kind: AttrKind,
    args: TokenStream,
    attr_span: Span,
    f: &syn::ItemFn,
    scope: &FileScope,
    diags: &mut Diagnostics,
) -> Option<Item> {
    lower_kernel(kind, args, attr_span, f, scope, diags).map(|l| l.item)
}

/// One annotated function lowered, with what the macro's host API needs besides the IR: the
/// attribute's arguments as parsed (a reduction's host parts are its closures, as Rust) and how
/// each parameter and the return type were written (spans and `usize` spellings).
pub struct Lowered {
    /// The function's IR.
    pub item: Item,
    /// The attribute's arguments.
    pub attr: KernelAttr,
    /// One per `item.params` entry.
    pub params_written: Vec<Written>,
    /// How the return type was written.
    pub ret_written: Written,
}

/// [`lower_item`], keeping the attribute and the written types.
pub fn lower_kernel(
    kind: AttrKind,
    args: TokenStream,
    attr_span: Span,
    f: &syn::ItemFn,
    scope: &FileScope,
    diags: &mut Diagnostics,
) -> Option<Lowered> {
    let attr = attr::parse(kind, args, attr_span, diags);
    let mut cx = expr::Lowerer::new(diags, scope);
    let sig = &f.sig;
    if let Some(c) = &sig.constness {
        cx.diags.error(c.span, "kernels cannot be `const fn`; remove `const`");
    }
    if let Some(a) = &sig.asyncness {
        cx.diags.error(a.span, "kernels cannot be `async`; remove `async`");
    }
    if let Some(u) = &sig.unsafety {
        if kind != AttrKind::RawKernel && kind != AttrKind::Device {
            cx.diags.error(u.span, "`unsafe` is not needed on this kernel; remove it");
        }
        cx.unsafe_depth = 1;
    }
    if kind == AttrKind::Device && attr.unchecked && sig.unsafety.is_none() {
        cx.diags.error(
            sig.ident.span(),
            "`#[device(unchecked)]` indexes without checks, so a call can reach outside its arrays: declare it `unsafe fn` (callers then call it in an `unsafe` block)",
        );
    }
    if let Some(v) = &sig.variadic {
        cx.diags.error(v.span(), "variadic functions are not available in kernels");
    }
    // A call `erf(x)` in a kernel is the prelude's intrinsic, whatever the file defines: a device
    // function of that name would run on the host (Rust's local item shadows the glob import) but
    // not on the GPU.
    let fn_name = sig.ident.to_string();
    if kind == AttrKind::Device && crate::lang::Intrinsic::from_name(&fn_name).is_some() {
        cx.diags.error(
            sig.ident.span(),
            format!("`{fn_name}` is the name of a prelude intrinsic, which kernels' calls of `{fn_name}(..)` reach; rename this `#[device]` function"),
        );
    }

    // Generic parameters become C++ template parameters with a prelude bound.
    let mut generics = Vec::new();
    for gp in &sig.generics.params {
        match gp {
            syn::GenericParam::Type(tp) => {
                let errors = cx.diags.len();
                let bound = generic_bound(tp, sig.generics.where_clause.as_ref(), cx.diags);
                let unchecked = cx.diags.len() > errors;
                generics.push(Generic { name: Name { text: tp.ident.to_string(), span: tp.ident.span() }, bound, unchecked });
            }
            syn::GenericParam::Lifetime(_) => {}
            syn::GenericParam::Const(c) => {
                cx.diags.error(c.span(), "const generic parameters are not supported in kernels yet; use a fixed size or pass the value as an argument");
            }
        }
    }
    cx.generics = generics.iter().map(|g| g.name.text.clone()).collect();

    // Parameters.
    let mut params = Vec::new();
    let mut params_written = Vec::new();
    cx.push_scope();
    for input in &sig.inputs {
        match input {
            syn::FnArg::Receiver(r) => {
                cx.diags.error(r.span(), "kernels are free functions; `self` parameters are not available");
            }
            syn::FnArg::Typed(pt) => {
                let (t, written) = ty::lower_written(&pt.ty, &cx.generics, scope, ty::Position::Param, cx.diags);
                match &*pt.pat {
                    syn::Pat::Ident(pi) => {
                        if let Some(r) = &pi.by_ref {
                            cx.diags.error(r.span, "`ref` bindings are not supported in kernel parameters");
                        }
                        let local = cx.declare(&pi.ident, pi.mutability.is_some(), t.clone());
                        if t.is_none() {
                            cx.poisoned.insert(local);
                        }
                        params.push(Param { local, ty: t.unwrap_or(Ty::Error), span: pt.span() });
                        params_written.push(written);
                    }
                    other => {
                        cx.diags.error(other.span(), "kernel parameters must be plain names (`x: f32`)");
                    }
                }
            }
        }
    }

    let (ret, ret_span, ret_written) = match &sig.output {
        syn::ReturnType::Default => (Ty::Unit, sig.ident.span(), Written::default()),
        syn::ReturnType::Type(_, t) => {
            let (ty, written) = ty::lower_written(t, &cx.generics, scope, ty::Position::Return, cx.diags);
            (ty.unwrap_or(Ty::Error), t.span(), written)
        }
    };

    // The reduction's attribute closures see the item's generics; their parameters are locals.
    let kind_ir = match kind {
        AttrKind::Elementwise => ItemKind::Elementwise,
        AttrKind::RawKernel => ItemKind::RawKernel { fast_math: attr.fast_math },
        AttrKind::Device => ItemKind::Device,
        AttrKind::Reduction => match attr::lower_reduction(&attr, &mut cx) {
            Some(parts) => ItemKind::Reduction(parts),
            None => ItemKind::Reduction(ir::ReductionParts {
                identity: None,
                reduce: placeholder_closure(&mut cx),
                post: None,
                acc: None,
            }),
        },
    };

    let body = cx.block(&f.block);
    cx.pop_scope();

    let instances = attr::instances(&attr, &generics, cx.diags);
    let expr_count = cx.next_expr;
    let locals: Vec<Local> = std::mem::take(&mut cx.locals);
    let item = Item {
        kind: kind_ir,
        name: Name { text: sig.ident.to_string(), span: sig.ident.span() },
        generics,
        params,
        ret,
        ret_span,
        body,
        locals,
        expr_count,
        instances,
        bounds_checks: !attr.unchecked,
        max_threads: attr.max_threads,
        min_blocks: attr.min_blocks,
        span: sig.ident.span(),
    };
    Some(Lowered { item, attr, params_written, ret_written })
}

fn placeholder_closure(cx: &mut expr::Lowerer<'_>) -> ir::Closure {
    let e = cx.mk(ir::ExprKind::Error, Span::call_site());
    ir::Closure { params: Vec::new(), body: Box::new(e), span: Span::call_site() }
}

/// The strongest prelude bound on a type parameter, from `T: Bound` or a where clause.
fn generic_bound(tp: &syn::TypeParam, wc: Option<&syn::WhereClause>, diags: &mut Diagnostics) -> Bound {
    let mut bounds: Vec<&syn::TypeParamBound> = tp.bounds.iter().collect();
    if let Some(wc) = wc {
        for pred in &wc.predicates {
            if let syn::WherePredicate::Type(pt) = pred {
                if let syn::Type::Path(p) = &pt.bounded_ty {
                    if p.path.is_ident(&tp.ident) {
                        bounds.extend(pt.bounds.iter());
                    }
                }
            }
        }
    }
    let mut best: Option<Bound> = None;
    for b in bounds {
        match b {
            syn::TypeParamBound::Trait(t) => {
                let name = t.path.segments.last().map(|s| s.ident.to_string()).unwrap_or_default();
                let found = match name.as_str() {
                    "Scalar" => Some(Bound::Scalar),
                    "Number" => Some(Bound::Number),
                    "Real" => Some(Bound::Real),
                    "Float" => Some(Bound::Float),
                    "Int" => Some(Bound::Int),
                    "Copy" | "Clone" | "Send" | "Sync" | "Default" | "Debug" | "PartialEq" | "PartialOrd" => None,
                    _ => {
                        diags.error(
                            t.span(),
                            format!("`{name}` is not a kernel bound; use one of the prelude's `Scalar`, `Number`, `Real`, `Float` or `Int`"),
                        );
                        None
                    }
                };
                if let Some(f) = found {
                    best = Some(match best {
                        None => f,
                        Some(b) if f.implies(b) => f,
                        Some(b) if b.implies(f) => b,
                        Some(b) => {
                            diags.error(t.span(), format!("`{}` and `{}` cannot both bound one parameter: no dtype is both", b.name(), f.name()));
                            b
                        }
                    });
                }
            }
            syn::TypeParamBound::Lifetime(_) => {}
            other => diags.error(other.span(), "unsupported bound; use one of `Scalar`, `Number`, `Real`, `Float`, `Int`"),
        }
    }
    match best {
        Some(b) => b,
        None => {
            diags.error(
                tp.ident.span(),
                format!("generic parameter `{}` needs a prelude bound (`{}: Float`, `Int`, `Real`, `Number` or `Scalar`) so the compiler knows which operations it allows", tp.ident, tp.ident),
            );
            Bound::Scalar
        }
    }
}

/// Used by the lowering of locals: the binding table of an item.
pub(crate) fn new_local(locals: &mut Vec<Local>, name: &syn::Ident, mutable: bool, declared: Option<Ty>) -> LocalId {
    let id = LocalId(locals.len() as u32);
    locals.push(Local { name: Name { text: name.to_string(), span: name.span() }, declared, mutable });
    id
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{ExprKind, Lit, Stmt, UnOp};

    fn lower(src: &str) -> (Module, Diagnostics) {
        let file = syn::parse_file(src).expect("valid Rust");
        let mut diags = Diagnostics::new();
        let module = lower_file(&file, &mut diags);
        (module, diags)
    }

    fn let_init(item: &Item, k: usize) -> &ir::Expr {
        match &item.body.stmts[k] {
            Stmt::Let { init: Some(e), .. } => e,
            other => panic!("statement {k} is not a `let` with an initializer: {other:?}"),
        }
    }

    #[test]
    fn shadowing_makes_new_locals_and_uses_resolve_to_the_latest() {
        let (m, d) = lower("#[device] fn f(x: i32) -> i32 { let x = x + 1; let x = x * 2; x }");
        assert!(d.is_empty());
        let item = &m.items[0];
        // The parameter and the two `let`s are three locals named `x`.
        assert_eq!(item.locals.iter().filter(|l| l.name.text == "x").count(), 3);
        let ExprKind::Binary(_, lhs, _) = &let_init(item, 0).kind else { panic!() };
        assert!(matches!(lhs.kind, ExprKind::Local(LocalId(0))), "the first initializer reads the parameter");
        let ExprKind::Binary(_, lhs, _) = &let_init(item, 1).kind else { panic!() };
        assert!(matches!(lhs.kind, ExprKind::Local(LocalId(1))), "the second reads the first `let`");
        assert!(matches!(item.body.tail.as_ref().unwrap().kind, ExprKind::Local(LocalId(2))));
    }

    #[test]
    fn block_scopes_end() {
        let (m, d) = lower("#[device] fn f(a: i32) -> i32 { let b = { let a = 1; a }; a + b }");
        assert!(d.is_empty());
        let tail = m.items[0].body.tail.as_ref().unwrap();
        let ExprKind::Binary(_, lhs, _) = &tail.kind else { panic!() };
        assert!(matches!(lhs.kind, ExprKind::Local(LocalId(0))), "`a` after the block is the parameter again");
    }

    #[test]
    fn labels_resolve_to_their_loop() {
        let src = "#[device] fn f(n: u32) { 'outer: for i in 0..n { loop { if i > 2 { break 'outer; } continue 'outer; } } }";
        let (m, d) = lower(src);
        assert!(d.is_empty());
        let Some(outer) = m.items[0].body.tail.as_ref() else { panic!("the loop is the tail") };
        let ExprKind::For { id: outer_id, body, .. } = &outer.kind else { panic!() };
        let ExprKind::Loop { id: inner_id, body: inner, .. } = &body.tail.as_ref().unwrap().kind else { panic!() };
        assert_ne!(outer_id, inner_id);
        let Stmt::Expr(if_expr) = &inner.stmts[0] else { panic!() };
        let ExprKind::If { then, .. } = &if_expr.kind else { panic!() };
        let Stmt::Expr(brk) = &then.stmts[0] else { panic!() };
        assert!(matches!(brk.kind, ExprKind::Break { target, .. } if target == *outer_id));
        let cont = inner.stmts.get(1).map(|s| match s {
            Stmt::Expr(e) => e,
            _ => panic!(),
        });
        assert!(matches!(cont.unwrap().kind, ExprKind::Continue { target } if target == *outer_id));
    }

    #[test]
    fn unknown_labels_and_loose_breaks_are_errors() {
        let (_, d) = lower("#[device] fn f() { loop { break 'nowhere; } }");
        assert_eq!(d.len(), 1);
        let (_, d) = lower("#[device] fn f() { break; }");
        assert_eq!(d.len(), 1);
    }

    #[test]
    fn literals() {
        let (m, d) = lower("#[device] fn f() { let a = -5; let b = b'a'; let c = 2f32; let d = 0x10u8; }");
        assert!(d.is_empty());
        let item = &m.items[0];
        let ExprKind::Unary(UnOp::Neg, inner) = &let_init(item, 0).kind else { panic!() };
        assert!(matches!(inner.kind, ExprKind::Lit(Lit::Int { value: 5, suffix: None })));
        assert!(matches!(let_init(item, 1).kind, ExprKind::Lit(Lit::Int { value: 97, suffix: Some(cuprum_abi::dtype::DType::U8) })));
        assert!(matches!(&let_init(item, 2).kind, ExprKind::Lit(Lit::Float { suffix: Some(cuprum_abi::dtype::DType::F32), .. })));
        assert!(matches!(let_init(item, 3).kind, ExprKind::Lit(Lit::Int { value: 16, .. })));
    }

    #[test]
    fn negative_literal_patterns_are_negations() {
        let (m, d) = lower("#[device] fn f(x: i32) -> i32 { match x { -1 => 0, -3..=-2 => 1, _ => 2 } }");
        assert!(d.is_empty(), "{d:?}");
        let ExprKind::Match { arms, .. } = &m.items[0].body.tail.as_ref().unwrap().kind else { panic!() };
        assert!(matches!(&arms[0].pat, ir::MatchPat::Lit(e) if matches!(e.kind, ExprKind::Unary(UnOp::Neg, _))));
    }

    #[test]
    fn rejected_constructs_become_error_nodes() {
        let (m, d) = lower("#[device] fn f() -> f32 { let v = vec![1.0]; 0.0 }");
        assert_eq!(d.len(), 1);
        assert!(matches!(let_init(&m.items[0], 0).kind, ExprKind::Error));
    }

    #[test]
    fn attribute_instances_parse_complex_types() {
        let (m, d) = lower("#[elementwise(instances = [Complex<f32>, (f64)])] fn f<T: Number>(x: T) -> T { x }");
        assert!(d.is_empty(), "{d:?}");
        assert_eq!(m.items[0].instances, vec![vec![cuprum_abi::dtype::DType::C32], vec![cuprum_abi::dtype::DType::F64]]);
    }
}
