//! Raw kernels with barriers, split into regions for the CPU device (docs/cpu.md, "Raw kernels
//! on the CPU"): when every `sync_threads()` of a kernel is a statement of its body's top level
//! (and it has no warp operation and calls no device function that has one), the body is cut at
//! those statements into barrier-free regions, and the block runs each region as a plain loop
//! over its threads: what `sync_threads()` means. A `let` of the top level whose name a later
//! region uses is carried from one region to the next in per-thread storage (`Vec<Option<_>>`,
//! its type inferred by rustc); a thread that returns is not run in later regions (on a GPU, an
//! exited thread counts as arrived at the barriers). Other kernels with barriers run each CUDA
//! thread as a coroutine (`launch::grid`), which costs a stack switch per thread and barrier.

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
    let mut regions: Vec<Vec<Stmt>> = vec![Vec::new()];
    for s in stmts {
        if is_barrier(s) {
            regions.push(Vec::new());
        } else {
            regions.last_mut()?.push(s.clone());
        }
    }
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

    // A binding is carried from the region that declares it (its last declaration there) to
    // every later region until one declares the name again; storage `__cuprum_s{id}`.
    let mut storages = Vec::new();
    let mut visible: Vec<(String, usize)> = Vec::new(); // (name, storage) at a region's start
    let mut bodies = Vec::new();
    for (r, stmts) in regions.iter().enumerate() {
        let later_use = |n: &str| mentioned[r + 1..].iter().any(|m| m.contains(n));
        let restore: Vec<TokenStream> = visible
            .iter()
            .filter(|(n, _)| mentioned[r..].iter().any(|m| m.contains(n)))
            .map(|(n, id)| {
                let (v, s) = (format_ident!("{}", n), format_ident!("__cuprum_s{}", id));
                quote!(let mut #v = match #s[__k].take() { ::core::option::Option::Some(v) => v, ::core::option::Option::None => return };)
            })
            .collect();
        for n in &declared[r] {
            visible.retain(|(m, _)| m != n);
            // Storage only for a binding a later region uses (rustc infers its type from the
            // value saved in it).
            if later_use(n) {
                let id = storages.len();
                storages.push(id);
                visible.push((n.clone(), id));
            }
        }
        let save: Vec<TokenStream> = visible
            .iter()
            .filter(|(n, _)| later_use(n))
            .map(|(n, id)| {
                let (v, s) = (format_ident!("{}", n), format_ident!("__cuprum_s{}", id));
                quote!(#s[__k] = ::core::option::Option::Some(#v);)
            })
            .collect();
        let mut stmts = stmts.clone();
        for s in stmts.iter_mut() {
            Returns.visit_stmt_mut(s);
            if let Stmt::Expr(e, semi @ None) = s {
                let _ = e;
                *semi = Some(Default::default());
            }
        }
        bodies.push(quote! {
            __b.each(|__k: usize| {
                if !__cuprum_live[__k] {
                    return;
                }
                #(#restore)*
                #(#stmts)*
                #(#save)*
            });
        });
    }
    let storage_decls = storages.iter().map(|id| {
        let s = format_ident!("__cuprum_s{}", id);
        quote!(let mut #s: ::std::vec::Vec<::core::option::Option<_>> = (0..__cuprum_n).map(|_| ::core::option::Option::None).collect();)
    });
    let mut g = f.clone();
    g.sig.ident = name.clone();
    g.sig.inputs.insert(0, parse_quote!(__b: &__cuprum::launch::grid::BlockRun<'_>));
    g.block = parse_quote!({
        let __cuprum_n = __b.threads();
        let mut __cuprum_live: ::std::vec::Vec<bool> = ::std::vec![true; __cuprum_n];
        #(#storage_decls)*
        #(#bodies)*
    });
    Some(g)
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
        assert!(text.starts_with("fnb(__b:&__cuprum::launch::grid::BlockRun<'_>,x:Slice<f32>"), "{text}");
        assert_eq!(text.matches("__b.each(").count(), 3, "{text}");
        // `tile` and `t` are saved after the first region, `unused` is not.
        assert!(text.contains("__cuprum_s0[__k]=::core::option::Option::Some(tile);"), "{text}");
        assert!(text.contains("__cuprum_s1[__k]=::core::option::Option::Some(t);"), "{text}");
        assert!(!text.contains("Some(unused)"), "{text}");
        assert!(text.contains("{__cuprum_live[__k]=false;return;}"), "{text}");
        // The last region restores `tile` and `v`.
        assert!(text.contains("letmuttile=match__cuprum_s0[__k].take()"), "{text}");
        assert!(text.contains("letmutv=match__cuprum_s2[__k].take()"), "{text}");
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
