//! Raw kernels with barriers, split into regions for the CPU device (docs/cpu.md, "Raw kernels
//! on the CPU"): when every `sync_threads()` of a kernel is a statement of its body's top level
//! (and it has no warp operation and calls no device function that has one), the body is cut at
//! those statements into barrier-free regions, and the block runs each region as a plain loop
//! over its threads: what `sync_threads()` means. A `let` of the top level whose name a later
//! region uses is carried from one region to the next in per-thread storage (`Vec<Option<_>>`,
//! its type inferred by rustc); a thread that returns is not run in later regions (on a GPU, an
//! exited thread counts as arrived at the barriers). Other kernels with barriers run each CUDA
//! thread as a coroutine (`cpu::grid`), which costs a stack switch per thread and barrier.

use std::collections::HashSet;

use proc_macro2::{TokenStream, TokenTree};
use quote::{format_ident, quote};
use syn::visit_mut::{self, VisitMut};
use syn::{Stmt, parse_quote};

/// `f` (a kernel's host copy) as a block function `name(__b, params..)` running its regions, or
/// `None` when its barriers are not all top-level statements.
pub(super) fn split(f: &syn::ItemFn, name: &syn::Ident) -> Option<syn::ItemFn> {
    let stmts = &f.block.stmts;
    let is_barrier = |s: &Stmt| match s {
        Stmt::Expr(syn::Expr::Call(c), Some(_)) => {
            matches!(&*c.func, syn::Expr::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "sync_threads"))
        }
        _ => false,
    };
    let barriers = stmts.iter().filter(|s| is_barrier(s)).count();
    if barriers == 0 || count_ident(&quote!(#(#stmts)*), "sync_threads") != barriers {
        return None;
    }
    // A top-level binding of shared memory is the same for every thread of the block: the block
    // function makes it once (`BlockRun::once`) instead of each thread, and no region stores it.
    let params: HashSet<String> = f.sig.inputs.iter().flat_map(|a| match a {
        syn::FnArg::Typed(t) => super::host_kernel::bound_names(&t.pat),
        syn::FnArg::Receiver(_) => Vec::new(),
    }).collect();
    let declarations = |name: &str| {
        stmts.iter().filter(|s| matches!(s, Stmt::Local(l) if super::host_kernel::bound_names(&l.pat).iter().any(|n| n == name))).count()
    };
    let mut once = Vec::new();
    let mut regions: Vec<Vec<Stmt>> = vec![Vec::new()];
    for s in stmts {
        if is_barrier(s) {
            regions.push(Vec::new());
        } else if block_uniform(s).is_some_and(|n| !params.contains(&n) && declarations(&n) == 1) {
            once.push(s.clone());
        } else {
            regions.last_mut()?.push(s.clone());
        }
    }
    let once: Vec<TokenStream> = once
        .iter()
        .map(|s| match s {
            Stmt::Local(l) => {
                let (pat, init) = (&l.pat, &l.init.as_ref().expect("block_uniform checked it").expr);
                quote!(let #pat = __b.once(|| #init);)
            }
            _ => unreachable!("block_uniform accepts only `let`s"),
        })
        .collect();
    // Each region's top-level bindings (in order) and the names it mentions.
    let mut declared: Vec<Vec<String>> = Vec::new();
    for r in &regions {
        let mut names = Vec::new();
        for s in r {
            if let Stmt::Local(l) = s {
                if l.init.is_none() || !simple_pattern(&l.pat) {
                    return None;
                }
                names.extend(super::host_kernel::bound_names(&l.pat));
            }
        }
        declared.push(names);
    }
    let mentioned: Vec<HashSet<String>> = regions.iter().map(|r| idents(&quote!(#(#r)*))).collect();

    // The bindings a later region uses are carried over each barrier together: region `r`
    // ends by saving them in `__cuprum_c{r}[thread]` (one tuple per thread; rustc infers its
    // type), and region `r + 1` starts by taking them back. A thread that returned saved
    // nothing: it finds `None` and returns again; a region that takes nothing back checks
    // `__cuprum_live` instead.
    let mut visible: Vec<String> = Vec::new(); // the top-level bindings in scope, in order
    let mut carried: Vec<String> = Vec::new(); // saved at the previous barrier
    let mut storages = Vec::new();
    let mut bodies = Vec::new();
    for (r, stmts) in regions.iter().enumerate() {
        let later_use = |n: &str| mentioned[r + 1..].iter().any(|m| m.contains(n));
        let entry = if carried.is_empty() {
            (r > 0).then(|| quote!(if !__cuprum_live[__k] { return; }))
        } else {
            let c = format_ident!("__cuprum_c{}", r - 1);
            let names = carried.iter().map(|n| format_ident!("{}", n));
            Some(quote!(let (#(mut #names,)*) = match #c[__k].take() { ::core::option::Option::Some(v) => v, ::core::option::Option::None => return };))
        };
        for n in &declared[r] {
            visible.retain(|m| m != n);
            visible.push(n.clone());
        }
        carried = visible.iter().filter(|n| later_use(n)).cloned().collect();
        let save = (!carried.is_empty()).then(|| {
            let c = format_ident!("__cuprum_c{}", r);
            storages.push(c.clone());
            let names = carried.iter().map(|n| format_ident!("{}", n));
            quote!(#c[__k] = ::core::option::Option::Some((#(#names,)*));)
        });
        let mut stmts = stmts.clone();
        for s in stmts.iter_mut() {
            Returns.visit_stmt_mut(s);
            Uniform.visit_stmt_mut(s);
            if let Stmt::Expr(e, semi @ None) = s {
                let _ = e;
                *semi = Some(Default::default());
            }
        }
        bodies.push(quote! {
            __b.each(|__k: usize, __t| {
                #entry
                #(#stmts)*
                #save
            });
        });
    }
    let storage_decls = storages.iter().map(|c| {
        quote!(let mut #c: ::std::vec::Vec<::core::option::Option<_>> = (0..__cuprum_n).map(|_| ::core::option::Option::None).collect();)
    });
    let mut g = f.clone();
    g.sig.ident = name.clone();
    g.sig.inputs.insert(0, parse_quote!(__b: &__cuprum::cpu::grid::BlockRun<'_>));
    g.block = parse_quote!({
        let __cuprum_n = __b.threads();
        let mut __cuprum_live: ::std::vec::Vec<bool> = ::std::vec![true; __cuprum_n];
        #(#once)*
        #(#storage_decls)*
        #(#bodies)*
    });
    Some(g)
}

/// The name a statement binds to shared memory, if it is `let name = <path>::shared_array::<..>(site)`
/// or `let name = <path>::dynamic_shared::<..>()` (the host copy's spelling; the site is a literal).
fn block_uniform(s: &Stmt) -> Option<String> {
    let Stmt::Local(l) = s else { return None };
    let init = l.init.as_ref().filter(|i| i.diverge.is_none())?;
    let syn::Pat::Ident(p) = &l.pat else { return None };
    if p.by_ref.is_some() || p.subpat.is_some() {
        return None;
    }
    let syn::Expr::Call(c) = &*init.expr else { return None };
    let syn::Expr::Path(f) = &*c.func else { return None };
    let last = f.path.segments.last()?;
    let shared = last.ident == "shared_array" || last.ident == "dynamic_shared";
    (shared && c.args.iter().all(|a| matches!(a, syn::Expr::Lit(_)))).then(|| p.ident.to_string())
}

/// In a region, the block's uniform intrinsics read the block (`__b`) and `thread_idx()` the
/// running thread's index (`__t`, passed by `BlockRun::each`) instead of the thread-local context.
struct Uniform;

impl VisitMut for Uniform {
    fn visit_macro_mut(&mut self, m: &mut syn::Macro) {
        super::host_body::rewrite_print_args(m, &mut |e| self.visit_expr_mut(e));
    }

    fn visit_expr_mut(&mut self, e: &mut syn::Expr) {
        visit_mut::visit_expr_mut(self, e);
        let syn::Expr::Call(c) = e else { return };
        let syn::Expr::Path(f) = &*c.func else { return };
        if !c.args.is_empty() || f.path.segments.len() < 2 {
            return;
        }
        let segs = &f.path.segments;
        if segs[segs.len() - 2].ident != "cpu" {
            return;
        }
        *e = match segs[segs.len() - 1].ident.to_string().as_str() {
            "thread_idx" => parse_quote!(__t),
            "block_idx" => parse_quote!(__b.block_idx()),
            "block_dim" => parse_quote!(__b.block_dim()),
            "grid_dim" => parse_quote!(__b.grid_dim()),
            _ => return,
        };
    }
}

/// A pattern of names only (`x`, `mut x`, `x: T`, tuples of them).
fn simple_pattern(p: &syn::Pat) -> bool {
    match p {
        syn::Pat::Ident(i) => i.subpat.is_none() && i.by_ref.is_none(),
        syn::Pat::Type(t) => simple_pattern(&t.pat),
        syn::Pat::Tuple(t) => t.elems.iter().all(simple_pattern),
        syn::Pat::Paren(p) => simple_pattern(&p.pat),
        syn::Pat::Wild(_) => true,
        _ => false,
    }
}

/// Every identifier in `t`.
fn idents(t: &TokenStream) -> HashSet<String> {
    let mut out = HashSet::new();
    fn walk(t: TokenStream, out: &mut HashSet<String>) {
        for tt in t {
            match tt {
                TokenTree::Ident(i) => {
                    out.insert(i.to_string());
                }
                TokenTree::Group(g) => walk(g.stream(), out),
                _ => {}
            }
        }
    }
    walk(t.clone(), &mut out);
    out
}

/// How often the identifier `name` occurs in `t`.
fn count_ident(t: &TokenStream, name: &str) -> usize {
    fn walk(t: TokenStream, name: &str) -> usize {
        t.into_iter()
            .map(|tt| match tt {
                TokenTree::Ident(i) => usize::from(i == name),
                TokenTree::Group(g) => walk(g.stream(), name),
                _ => 0,
            })
            .sum()
    }
    walk(t.clone(), name)
}

/// `return` ends the thread: it is not run in later regions.
struct Returns;

impl VisitMut for Returns {
    fn visit_expr_mut(&mut self, e: &mut syn::Expr) {
        visit_mut::visit_expr_mut(self, e);
        if matches!(e, syn::Expr::Return(r) if r.expr.is_none()) {
            *e = parse_quote!({
                __cuprum_live[__k] = false;
                return;
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proc_macro2::Span;

    #[test]
    fn top_level_barriers_split_the_body_and_carry_its_bindings() {
        let f: syn::ItemFn = parse_quote! {
            fn k(x: Slice<f32>, y: Slice<f32>, n: u32) {
                let tile = cpu::shared_array::<f32, 258>(0usize);
                let t = cpu::thread_idx().x;
                let unused = 3;
                if t >= n { return; }
                cpu::sync_threads();
                let v = t + 1;
                cpu::sync_threads();
                y[0] = tile[v]
            }
        };
        let g = split(&f, &syn::Ident::new("b", Span::call_site())).expect("splits");
        let text = quote!(#g).to_string().replace(' ', "");
        assert!(text.starts_with("fnb(__b:&__cuprum::cpu::grid::BlockRun<'_>,x:Slice<f32>"), "{text}");
        assert_eq!(text.matches("__b.each(").count(), 3, "{text}");
        // `tile` is made once per block, `t` is saved after the first region, `unused` is not.
        assert!(text.contains("lettile=__b.once(||cpu::shared_array::<f32,258>(0usize));"), "{text}");
        assert!(!text.contains("Some(tile)"), "{text}");
        assert!(text.contains("__cuprum_c0[__k]=::core::option::Option::Some((t,));"), "{text}");
        assert!(!text.contains("Some(unused)"), "{text}");
        assert!(text.contains("{__cuprum_live[__k]=false;return;}"), "{text}");
        // `thread_idx()` is the thread's index passed to the region.
        assert!(text.contains("lett=__t.x;"), "{text}");
        // The second region takes `t` back and carries `v` (not `t`, unused later) over.
        assert!(text.contains("let(mutt,)=match__cuprum_c0[__k].take()"), "{text}");
        assert!(text.contains("__cuprum_c1[__k]=::core::option::Option::Some((v,));"), "{text}");
        assert!(text.contains("let(mutv,)=match__cuprum_c1[__k].take()"), "{text}");
    }

    #[test]
    fn a_barrier_inside_a_branch_is_not_split() {
        let f: syn::ItemFn = parse_quote! {
            fn k(n: u32) {
                if n > 0 { cpu::sync_threads(); }
                cpu::sync_threads();
            }
        };
        assert!(split(&f, &syn::Ident::new("b", Span::call_site())).is_none());
    }
}
