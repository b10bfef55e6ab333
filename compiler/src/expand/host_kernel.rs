//! The host copy of a `#[rawkernel]` or `#[device]` function for the CPU device (docs/cpu.md,
//! "Raw kernels on the CPU"): the function as the user wrote it (the one the pipeline checked),
//! rewritten so that many CUDA threads can run it on the host without a Rust reference to memory
//! they share:
//!
//! - slice parameters (`&[T]`, `&mut [T]`) become `cpu::lang::Slice<T>` handles and view
//!   parameters (`View<T, N>`, `ViewMut<T, N>`) `cpu::lang::View<T, N>`; so do the names bound to
//!   `shared_array::<T, N>()` (numbered by call site: one array per site and block, as on the
//!   GPU) and `dynamic_shared::<T>()`. These names are the *memory*, tracked through scopes (a
//!   `let` that shadows one ends it);
//! - `m[i]` of memory becomes `Load::load(&m, i)`, `m[i] = v` `Store::store(&m, i, v)`, `m[i] op= v`
//!   a load and a store of `i` evaluated once, `*m.get_unchecked(i)` the same as `m[i]`, and
//!   `&mut m[i]` passed to a call a local copy written back after it;
//! - every intrinsic call is `cpu::lang`'s function of the same name, a call of a `#[device]`
//!   function is a call of its host copy (`__cuprum_cpu_<name>`);
//! - arithmetic operators call `lang::kernel_ops` ([`super::host_body::host_copy`]).
//!
//! [`HostKernel::lockstep`] says whether the code has a barrier or a warp operation (then the
//! runner makes each CUDA thread a coroutine).

use std::collections::HashSet;

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::visit_mut::{self, VisitMut};
use syn::{Expr, parse_quote};

use crate::lang::Intrinsic;

/// A function's host copy and what the rewrite found.
pub(super) struct HostKernel {
    pub item: syn::ItemFn,
    /// A barrier or warp operation is called directly.
    pub lockstep: bool,
    /// A warp operation (`sync_warp`, a shuffle) is called directly.
    pub warp: bool,
    /// A `#[device]` function is called (which may have barriers of its own).
    pub calls_device: bool,
    /// `grid_sync()` is called directly (its device calls are the unit's to tell:
    /// `UnitInfo::cooperative`).
    pub grid: bool,
}

/// The name of a `#[device]` function's host copy.
pub(super) fn device_copy_name(name: &syn::Ident) -> syn::Ident {
    format_ident!("__cuprum_cpu_{}", name)
}

/// `f` rewritten for the CPU device as `name` (see the module); `cpu` is the path of the
/// runtime's `cpu::lang` module as the generated code names it.
pub(super) fn host_kernel(f: &syn::ItemFn, name: &syn::Ident, cpu: &TokenStream) -> HostKernel {
    let mut g = f.clone();
    let mut memory = HashSet::new();
    let mut refs = HashSet::new();
    for input in g.sig.inputs.iter_mut() {
        if let syn::FnArg::Typed(t) = input {
            if let Some(ty) = handle_type(&t.ty, cpu) {
                t.ty = ty;
                memory.extend(bound_names(&t.pat));
            } else if matches!(&*t.ty, syn::Type::Reference(r) if r.mutability.is_some()) {
                refs.extend(bound_names(&t.pat));
            }
        }
    }
    // Shared arrays are keyed by function and site: a device function's sites are not its
    // caller's (`cpu::lang::shared_array`).
    let site_base = f.sig.ident.to_string().bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3));
    let mut rw = Rewrite { cpu: cpu.clone(), memory, refs, site_base, site: 0, lockstep: false, warp: false, calls_device: false, grid: false };
    rw.visit_block_mut(&mut g.block);
    let mut item = super::host_body::host_copy(&g, name);
    item.attrs.push(parse_quote!(#[allow(unused_mut, unused_variables, unused_unsafe, dead_code, non_snake_case, clippy::all)]));
    HostKernel { item, lockstep: rw.lockstep, warp: rw.warp, calls_device: rw.calls_device, grid: rw.grid }
}

/// The handle type of a slice or view parameter type, `None` for any other type.
fn handle_type(ty: &syn::Type, cpu: &TokenStream) -> Option<Box<syn::Type>> {
    match ty {
        syn::Type::Reference(r) => match &*r.elem {
            syn::Type::Slice(s) => {
                let e = &s.elem;
                Some(parse_quote!(#cpu::Slice<'_, #e>))
            }
            // `&TensorMap<T>`: the CPU device's map, by value.
            syn::Type::Path(p) if p.path.segments.last().is_some_and(|l| l.ident == "TensorMap") => {
                let last = p.path.segments.last()?;
                let syn::PathArguments::AngleBracketed(args) = &last.arguments else { return None };
                let args = &args.args;
                Some(parse_quote!(#cpu::TensorMap<'_, #args>))
            }
            _ => None,
        },
        syn::Type::Path(p) => {
            let last = p.path.segments.last()?;
            if last.ident != "View" && last.ident != "ViewMut" {
                return None;
            }
            let syn::PathArguments::AngleBracketed(args) = &last.arguments else { return None };
            let args = &args.args;
            Some(parse_quote!(#cpu::View<'_, #args>))
        }
        _ => None,
    }
}

/// The names a pattern binds.
pub(super) fn bound_names(p: &syn::Pat) -> Vec<String> {
    let mut out = Vec::new();
    fn walk(p: &syn::Pat, out: &mut Vec<String>) {
        match p {
            syn::Pat::Ident(i) => out.push(i.ident.to_string()),
            syn::Pat::Type(t) => walk(&t.pat, out),
            syn::Pat::Tuple(t) => t.elems.iter().for_each(|e| walk(e, out)),
            syn::Pat::Paren(t) => walk(&t.pat, out),
            syn::Pat::Reference(r) => walk(&r.pat, out),
            syn::Pat::Slice(s) => s.elems.iter().for_each(|e| walk(e, out)),
            syn::Pat::TupleStruct(t) => t.elems.iter().for_each(|e| walk(e, out)),
            syn::Pat::Struct(s) => s.fields.iter().for_each(|f| walk(&f.pat, out)),
            _ => {}
        }
    }
    walk(p, &mut out);
    out
}

/// The single name a call's function path is (`f` or `f::<T>`), with its generic arguments.
fn call_name(func: &Expr) -> Option<(&syn::Ident, &syn::PathArguments)> {
    let Expr::Path(p) = func else { return None };
    if p.qself.is_some() || p.path.leading_colon.is_some() || p.path.segments.len() != 1 {
        return None;
    }
    let s = &p.path.segments[0];
    Some((&s.ident, &s.arguments))
}

/// Whether `e` calls `shared_array` or `dynamic_shared` (a `let` of it binds shared memory).
fn is_shared_call(e: &Expr) -> bool {
    match e {
        Expr::Call(c) => matches!(call_name(&c.func), Some((n, _)) if n == "shared_array" || n == "dynamic_shared"),
        Expr::Paren(p) => is_shared_call(&p.expr),
        _ => false,
    }
}

struct Rewrite {
    cpu: TokenStream,
    memory: HashSet<String>,
    /// Parameters of a `&mut` type (a device function's `acc: &mut [[f32; 4]; 8]`): a place
    /// rooted at one is reborrowed (`&mut *acc`), its binding not being `mut`.
    refs: HashSet<String>,
    site_base: u64,
    site: u64,
    lockstep: bool,
    warp: bool,
    calls_device: bool,
    grid: bool,
}

impl Rewrite {
    /// `(base, index)` when `e` is an access of memory: `m[i]` or `*m.get_unchecked(i)`.
    fn access(&self, e: &Expr) -> Option<(Expr, Expr)> {
        let is_memory = |b: &Expr| matches!(b, Expr::Path(p) if p.path.get_ident().is_some_and(|i| self.memory.contains(&i.to_string())));
        match e {
            Expr::Index(ix) if is_memory(&ix.expr) => Some(((*ix.expr).clone(), (*ix.index).clone())),
            Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => match &*u.expr {
                Expr::MethodCall(m)
                    if is_memory(&m.receiver) && (m.method == "get_unchecked" || m.method == "get_unchecked_mut") && m.args.len() == 1 =>
                {
                    Some(((*m.receiver).clone(), m.args[0].clone()))
                }
                _ => None,
            },
            Expr::Paren(p) => self.access(&p.expr),
            _ => None,
        }
    }

    /// A place inside an element of memory (`m[i].f`, `m[i].v[k]`): the access `(m, i)` and the
    /// place with `m[i]` replaced by `elem`. `None` for any other expression, and for an exact
    /// access (see [`Rewrite::access`]).
    fn inner_place(&self, e: &Expr, elem: &syn::Ident) -> Option<(Expr, Expr, Expr)> {
        let (base, index, place) = match e {
            Expr::Field(f) => {
                let (b, i, inner) = self.access(&f.base).map(|(b, i)| (b, i, parse_quote!(#elem))).or_else(|| self.inner_place(&f.base, elem))?;
                let mut f = f.clone();
                f.base = Box::new(inner);
                (b, i, Expr::Field(f))
            }
            Expr::Index(ix) => {
                let (b, i, inner) = self.access(&ix.expr).map(|(b, i)| (b, i, parse_quote!(#elem))).or_else(|| self.inner_place(&ix.expr, elem))?;
                let mut ix = ix.clone();
                ix.expr = Box::new(inner);
                (b, i, Expr::Index(ix))
            }
            Expr::Paren(p) => return self.inner_place(&p.expr, elem),
            _ => return None,
        };
        Some((base, index, place))
    }

    /// `place op value` (`=` or a compound assignment) where `place` lies inside an element of
    /// memory: the value, then a load of the element, the assignment to the copy, a store.
    fn element_update(&mut self, left: &Expr, op: TokenStream, right: &Expr) -> Option<Expr> {
        let elem = format_ident!("__cuprum_e");
        let (base, index, place) = self.inner_place(left, &elem)?;
        let cpu = self.cpu.clone();
        let index = self.rewritten(index);
        let value = self.rewritten(right.clone());
        // The copy's place is local: an index in it is checked as a local array's.
        let assign = self.rewritten(parse_quote!(#place #op __cuprum_v));
        Some(parse_quote!({
            let __cuprum_v = #value;
            let __cuprum_i = #index;
            let mut #elem = #cpu::Load::load(&#base, __cuprum_i);
            #assign;
            #cpu::Store::store(&#base, __cuprum_i, #elem)
        }))
    }

    /// `place` with the index expressions inside it rewritten and its own indexing left as it
    /// is: a place that is borrowed (`&mut a[i]`: Rust's own check) or written through.
    fn place_indices(&mut self, mut place: Expr) -> Expr {
        fn walk(rw: &mut Rewrite, e: &mut Expr) {
            match e {
                Expr::Index(ix) => {
                    walk(rw, &mut ix.expr);
                    rw.visit_expr_mut(&mut ix.index);
                }
                Expr::Field(f) => walk(rw, &mut f.base),
                Expr::Paren(p) => walk(rw, &mut p.expr),
                Expr::Path(_) => {}
                other => rw.visit_expr_mut(other),
            }
        }
        walk(self, &mut place);
        place
    }

    /// A local place with an index in it (`a[i]`, `a[i][j]`, `s.v[k]`, `a[i].f`) as an
    /// `Option<&mut T>` expression (`cpu::lang::local_slot`): `None` when an index is out of
    /// range. `None` for a place without an index, or not local.
    fn local_slot(&mut self, place: &Expr) -> Option<Expr> {
        let cpu = self.cpu.clone();
        match place {
            Expr::Index(ix) if self.access(place).is_none() && !self.is_memory(&ix.expr) => {
                let base = match self.local_slot(&ix.expr) {
                    Some(b) => b,
                    None => self.root_slot(&ix.expr)?,
                };
                let i = self.rewritten((*ix.index).clone());
                Some(parse_quote!(#cpu::local_slot(#base, #i)))
            }
            Expr::Field(f) => {
                let b = self.local_slot(&f.base)?;
                let m = &f.member;
                Some(parse_quote!((#b).map(|__cuprum_r| &mut __cuprum_r.#m)))
            }
            Expr::Paren(p) => self.local_slot(&p.expr),
            _ => None,
        }
    }

    /// `Some(&mut e)` for a place without an index (a local, its fields, `*r`): the start of a
    /// [`Rewrite::local_slot`] chain; `Some(&mut *e)` for a `&mut` parameter.
    fn root_slot(&self, e: &Expr) -> Option<Expr> {
        if matches!(e, Expr::Path(p) if p.path.get_ident().is_some_and(|i| self.refs.contains(&i.to_string()))) {
            return Some(parse_quote!(::core::option::Option::Some(&mut *#e)));
        }
        plain_place(e).then(|| parse_quote!(::core::option::Option::Some(&mut #e)))
    }

    fn is_memory(&self, e: &Expr) -> bool {
        matches!(e, Expr::Path(p) if p.path.get_ident().is_some_and(|i| self.memory.contains(&i.to_string())))
    }

    /// `e` rewritten (a sub-expression the caller moved out of the tree).
    fn rewritten(&mut self, mut e: Expr) -> Expr {
        self.visit_expr_mut(&mut e);
        e
    }

    fn load(&self, base: &Expr, index: &Expr) -> Expr {
        let cpu = &self.cpu;
        parse_quote!(#cpu::Load::load(&#base, #index))
    }
}

/// Whether `e` is a place without an index (a local, its fields, `*r`).
fn plain_place(e: &Expr) -> bool {
    match e {
        Expr::Path(p) => p.path.get_ident().is_some(),
        Expr::Field(f) => plain_place(&f.base),
        Expr::Paren(p) => plain_place(&p.expr),
        Expr::Unary(u) => matches!(u.op, syn::UnOp::Deref(_)) && plain_place(&u.expr),
        _ => false,
    }
}

/// The binary operator of a compound assignment (`+=` -> `+`).
fn compound(op: &syn::BinOp) -> Option<syn::BinOp> {
    use syn::BinOp::*;
    Some(match op {
        AddAssign(_) => parse_quote!(+),
        SubAssign(_) => parse_quote!(-),
        MulAssign(_) => parse_quote!(*),
        DivAssign(_) => parse_quote!(/),
        RemAssign(_) => parse_quote!(%),
        BitAndAssign(_) => parse_quote!(&),
        BitOrAssign(_) => parse_quote!(|),
        BitXorAssign(_) => parse_quote!(^),
        ShlAssign(_) => parse_quote!(<<),
        ShrAssign(_) => parse_quote!(>>),
        _ => return None,
    })
}

impl VisitMut for Rewrite {
    fn visit_block_mut(&mut self, b: &mut syn::Block) {
        let outer = self.memory.clone();
        for stmt in b.stmts.iter_mut() {
            match stmt {
                syn::Stmt::Local(local) => {
                    let shared = local.init.as_ref().is_some_and(|i| is_shared_call(&i.expr));
                    if let Some(init) = &mut local.init {
                        self.visit_expr_mut(&mut init.expr);
                        if let Some((_, d)) = &mut init.diverge {
                            self.visit_expr_mut(d);
                        }
                    }
                    let names = bound_names(&local.pat);
                    if shared {
                        // The handle's type is not the `&mut [T; N]` one may have written.
                        if let syn::Pat::Type(t) = &local.pat {
                            local.pat = (*t.pat).clone();
                        }
                        self.memory.extend(names);
                    } else {
                        for n in names {
                            self.memory.remove(&n);
                        }
                    }
                }
                other => self.visit_stmt_mut(other),
            }
        }
        self.memory = outer;
    }

    fn visit_expr_mut(&mut self, e: &mut Expr) {
        let cpu = self.cpu.clone();
        // Writes first: their left side is a place, not a load.
        if let Expr::Assign(a) = e {
            if let Some((base, index)) = self.access(&a.left) {
                let index = self.rewritten(index);
                let value = self.rewritten((*a.right).clone());
                *e = parse_quote!(#cpu::Store::store(&#base, #index, #value));
                return;
            }
        }
        if let Expr::Assign(a) = e {
            if let Some(new) = self.element_update(&a.left.clone(), quote!(=), &a.right.clone()) {
                *e = new;
                return;
            }
        }
        if let Expr::Binary(b) = e {
            if compound(&b.op).is_some() {
                let op = b.op;
                if let Some(new) = self.element_update(&b.left.clone(), quote!(#op), &b.right.clone()) {
                    *e = new;
                    return;
                }
            }
            if let (Some(op), Some((base, index))) = (compound(&b.op), self.access(&b.left)) {
                let index = self.rewritten(index);
                let value = self.rewritten((*b.right).clone());
                let i = format_ident!("__cuprum_i");
                let old = self.load(&base, &parse_quote!(#i));
                let new: Expr = parse_quote!((#old) #op (#value));
                *e = parse_quote!({ let #i = #index; #cpu::Store::store(&#base, #i, #new) });
                return;
            }
        }
        if let Some((base, index)) = self.access(e) {
            let index = self.rewritten(index);
            *e = self.load(&base, &index);
            return;
        }
        // Local arrays: checked as on the GPU (`cpu::lang::local`). `place = v` or `place op= v`:
        // the value, then a write through the place's slot when it is in range.
        let write = match &*e {
            Expr::Assign(a) => Some(((*a.left).clone(), (*a.right).clone(), None)),
            Expr::Binary(b) => compound(&b.op).map(|op| ((*b.left).clone(), (*b.right).clone(), Some(op))),
            _ => None,
        };
        if let Some((left, right, op)) = write {
            if let Some(slot) = self.local_slot(&left) {
                let v = self.rewritten(right);
                let new: Expr = match op {
                    None => parse_quote!(__cuprum_v),
                    Some(op) => parse_quote!((*__cuprum_s) #op __cuprum_v),
                };
                *e = parse_quote!({
                    let __cuprum_v = #v;
                    if let ::core::option::Option::Some(__cuprum_s) = #slot {
                        *__cuprum_s = #new;
                    }
                });
                return;
            }
        }
        if let Expr::Reference(r) = e {
            let place = self.place_indices((*r.expr).clone());
            r.expr = Box::new(place);
            return;
        }
        if let Expr::Index(ix) = e {
            if !self.is_memory(&ix.expr) {
                visit_mut::visit_expr_index_mut(self, ix);
                let (b, i) = (&ix.expr, &ix.index);
                // SAFETY (of the generated call): a kernel's local values are numbers, bools,
                // arrays, tuples and `#[device]` structs of them: zero bytes are valid.
                *e = parse_quote!(unsafe { #cpu::local_get(&#b, #i) });
                return;
            }
        }
        if let Expr::Call(c) = e {
            // `&mut m[i]` arguments: a local copy, written back after the call.
            let mut copies = Vec::new();
            for (k, arg) in c.args.iter_mut().enumerate() {
                if let Expr::Reference(r) = arg {
                    let t = format_ident!("__cuprum_t{}", k);
                    if let Some((base, index, place)) = self.inner_place(&r.expr, &t) {
                        let index = self.rewritten(index);
                        let place = self.place_indices(place);
                        let i = format_ident!("__cuprum_j{}", k);
                        let m = r.mutability;
                        copies.push((base, t.clone(), i, index, m.is_some()));
                        *arg = parse_quote!(&#m #place);
                        continue;
                    }
                    if let Some((base, index)) = self.access(&r.expr) {
                        let index = self.rewritten(index);
                        let (t, i) = (format_ident!("__cuprum_t{}", k), format_ident!("__cuprum_j{}", k));
                        let m = r.mutability;
                        copies.push((base, t.clone(), i.clone(), index, m.is_some()));
                        *arg = parse_quote!(&#m #t);
                    }
                }
            }
            visit_mut::visit_expr_call_mut(self, c);
            if let Some((name, args)) = call_name(&c.func) {
                let name = name.clone();
                let args = args.clone();
                match Intrinsic::from_name(&name.to_string()) {
                    Some(Intrinsic::SharedArray) => {
                        let site = self.site_base.wrapping_add(self.site);
                        self.site += 1;
                        *c.func = parse_quote!(#cpu::#name #args);
                        c.args = parse_quote!(#site);
                    }
                    Some(i) => {
                        if suspends(i) {
                            self.lockstep = true;
                        }
                        if i.grid_wide() {
                            self.grid = true;
                        }
                        // A barrier wait suspends in a loop: each thread a coroutine, never the
                        // barrier-free regions.
                        if i.warp_collective() || waits_in_loop(i) {
                            self.warp = true;
                        }
                        *c.func = parse_quote!(#cpu::#name #args);
                    }
                    None => {
                        self.calls_device = true;
                        let copy = device_copy_name(&name);
                        *c.func = parse_quote!(#copy #args);
                    }
                }
            }
            if !copies.is_empty() {
                let (mut pre, mut post) = (Vec::new(), Vec::new());
                for (base, t, i, index, written) in copies {
                    pre.push(quote!(let #i = #index; let mut #t = #cpu::Load::load(&#base, #i);));
                    if written {
                        post.push(quote!(#cpu::Store::store(&#base, #i, #t);));
                    }
                }
                let call = e.clone();
                *e = parse_quote!({ #(#pre)* let __cuprum_r = #call; #(#post)* __cuprum_r });
            }
            return;
        }
        visit_mut::visit_expr_mut(self, e);
    }

    fn visit_macro_mut(&mut self, m: &mut syn::Macro) {
        super::host_body::rewrite_print_args(m, &mut |e| self.visit_expr_mut(e));
    }

    fn visit_type_mut(&mut self, _: &mut syn::Type) {}
}

/// Whether a call of the intrinsic suspends the CUDA thread on the CPU device (a barrier, a warp
/// operation, `grid_sync()`): code that calls one runs each CUDA thread as a coroutine.
fn suspends(i: Intrinsic) -> bool {
    i == Intrinsic::SyncThreads || i.warp_collective() || i.grid_wide() || waits_in_loop(i)
}

/// Whether the call suspends until another thread's progress (`mbarrier_wait`,
/// `named_barrier_sync`), looking again
/// after each stop.
fn waits_in_loop(i: Intrinsic) -> bool {
    matches!(i, Intrinsic::Hopper(crate::lang::HopperOp::MbarrierWait | crate::lang::HopperOp::NamedBarrierSync))
}

/// Whether a `#[device]` function of the file (`None`: unknown) calls a barrier, a warp
/// operation or `grid_sync()`: a kernel that calls device functions then runs in lockstep
/// (conservatively: any such function, called or not).
pub(super) fn device_fns_synchronize(file: Option<&str>) -> bool {
    struct Find {
        in_device: bool,
        found: bool,
    }
    impl<'ast> syn::visit::Visit<'ast> for Find {
        fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
            let outer = self.in_device;
            self.in_device = f.attrs.iter().any(|a| a.path().is_ident("device"));
            syn::visit::visit_item_fn(self, f);
            self.in_device = outer;
        }
        fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
            if self.in_device && call_name(&c.func).and_then(|(n, _)| Intrinsic::from_name(&n.to_string())).is_some_and(suspends) {
                self.found = true;
            }
            syn::visit::visit_expr_call(self, c);
        }
    }
    let Some(file) = file.and_then(|t| syn::parse_file(t).ok()) else { return true };
    let mut find = Find { in_device: false, found: false };
    syn::visit::Visit::visit_file(&mut find, &file);
    find.found
}

#[cfg(test)]
mod tests {
    use super::*;
    use proc_macro2::Span;

    fn text(f: syn::ItemFn) -> (String, bool, bool) {
        let h = host_kernel(&f, &syn::Ident::new("h", Span::call_site()), &quote!(cpu));
        let item = h.item;
        (quote!(#item).to_string().replace(' ', ""), h.lockstep, h.calls_device)
    }

    #[test]
    fn memory_accesses_become_loads_and_stores() {
        let (t, lockstep, device) = text(parse_quote! {
            fn k(x: &[f32], y: &mut [f32], mut v: ViewMut<f32, 2>, n: u32) {
                let buf = shared_array::<f32, 256>();
                let t = thread_idx().x as usize;
                buf[t] = x[t];
                sync_threads();
                y[t] += buf[255 - t];
                v[[t, 0usize]] = helper(&mut y[t], n);
                let x = [1.0f32, 2.0];
                y[0] = x[1];
            }
        });
        assert!(t.contains("x:cpu::Slice<'_,f32>") && t.contains("mutv:cpu::View<'_,f32,2>"), "{t}");
        assert!(t.contains("letbuf=cpu::shared_array::<f32,256>(12638198195671924106u64)"), "{t}"); // FNV-1a of "k", site 0
        assert!(t.contains("cpu::Store::store(&buf,t,cpu::Load::load(&x,t))"), "{t}");
        assert!(t.contains("cpu::thread_idx()") && t.contains("cpu::sync_threads()"), "{t}");
        assert!(t.contains("let__cuprum_i=t;cpu::Store::store(&y,__cuprum_i,"), "{t}");
        assert!(t.contains("__cuprum_cpu_helper(&mut__cuprum_t0,n)") && t.contains("cpu::Store::store(&y,__cuprum_j0,__cuprum_t0)"), "{t}");
        // A local array that shadows `x` is indexed as Rust does.
        assert!(t.contains("cpu::Load::load(&y") && t.contains("cpu::Store::store(&y,0,unsafe{cpu::local_get(&x,1)})"), "{t}");
        assert!(lockstep && device);
    }

    #[test]
    fn fields_of_elements_are_loaded_updated_and_stored() {
        let (t, _, _) = text(parse_quote! {
            fn k(b: &mut [Body], n: usize) {
                b[n].mass *= 0.5;
                b[n].pos.v[1] = 2.0;
                let m = b[n].mass;
                bump(&mut b[n].mass);
            }
        });
        assert!(t.contains("let__cuprum_v=0.5;let__cuprum_i=n;letmut__cuprum_e=cpu::Load::load(&b,__cuprum_i);"), "{t}");
        assert!(t.contains("kernel_ops::mul_assign(&mut__cuprum_e.mass,__cuprum_rhs)};cpu::Store::store(&b,__cuprum_i,__cuprum_e)"), "{t}");
        // An index inside the element is checked as a local array's.
        assert!(t.contains("cpu::local_slot(::core::option::Option::Some(&mut__cuprum_e.pos.v),1){*__cuprum_s=__cuprum_v;}"), "{t}");
        assert!(t.contains("letm=cpu::Load::load(&b,n).mass;"), "{t}");
        assert!(t.contains("__cuprum_cpu_bump(&mut__cuprum_t0.mass)") && t.contains("cpu::Store::store(&b,__cuprum_j0,__cuprum_t0)"), "{t}");
    }

    #[test]
    fn local_arrays_are_checked_and_borrows_keep_rusts_check() {
        let (t, _, _) = text(parse_quote! {
            fn k(y: &mut [f32], i: usize) {
                let mut a = [[0.0f32; 4]; 4];
                a[i][1] = y[i];
                a[0][i] += 1.0;
                let v = a[i][i + 1];
                bump(&mut a[i][0]);
            }
        });
        assert!(t.contains("cpu::local_slot(cpu::local_slot(::core::option::Option::Some(&muta),i),1){*__cuprum_s=__cuprum_v;}"), "{t}");
        assert!(t.contains("cpu::local_slot(cpu::local_slot(::core::option::Option::Some(&muta),0),i){*__cuprum_s=__cuprum::lang::kernel_ops::add((*__cuprum_s),__cuprum_v);}"), "{t}");
        assert!(t.contains("letv=unsafe{cpu::local_get(&unsafe{cpu::local_get(&a,i)},__cuprum::lang::kernel_ops::add(i,1))};"), "{t}");
        assert!(t.contains("__cuprum_cpu_bump(&muta[i][0])"), "{t}");
    }

    #[test]
    fn device_functions_that_suspend_are_found_by_their_calls() {
        let file = |body: &str| format!("use cuprum::prelude::*;\n/// calls sync_threads() in its docs only\n#[device]\nfn f(x: f32) -> f32 {{ {body} }}\n#[rawkernel]\npub fn k(y: &mut [f32]) {{ sync_threads(); y[0] = f(y[0]); }}");
        assert!(!device_fns_synchronize(Some(&file("x + 1.0"))));
        for body in ["sync_threads(); x", "shfl_xor_sync(u32::MAX, x, 1)", "grid_sync(); x", "mma_m16n8k8_tf32([x; 4], [x; 2], [x; 4])[0]"] {
            assert!(device_fns_synchronize(Some(&file(body))), "{body}");
        }
        // A barrier in a raw kernel is not a device function's.
        assert!(!device_fns_synchronize(Some("#[rawkernel] pub fn k() { grid_sync(); }")));
        assert!(device_fns_synchronize(None));
    }

    #[test]
    fn no_barrier_no_lockstep() {
        let (t, lockstep, device) = text(parse_quote! {
            fn k<T: Scalar>(x: &[T], y: &mut [T], n: u32) {
                let i = grid_1d();
                if i < n { y[i as usize] = x[i as usize]; }
            }
        });
        assert!(t.contains("cpu::Store::store(&y,iasusize,cpu::Load::load(&x,iasusize))"), "{t}");
        assert!(!lockstep && !device);
    }
}
