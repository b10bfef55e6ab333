//! The kernel a `#[fuse]` function becomes, written as an item of the kernel language (which the
//! pipeline then checks, translates and precompiles like any other).
//!
//! Every node of the graph is one `let v{id} = ..;` (a literal is written in place, so that it
//! takes its neighbour's type; a scalar parameter is its name).

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::graph::{operands, Class, Graph, Op, ReduceOp};

fn v(id: usize) -> syn::Ident {
    format_ident!("v{}", id)
}

/// How node `id` is named where it is used.
fn value(g: &Graph, id: usize) -> TokenStream {
    match &g.nodes[id].op {
        Op::Lit(e) => quote!((#e)),
        Op::Param(k) if !g.params[*k].array => {
            let p = &g.params[*k].name;
            quote!(#p)
        }
        _ => {
            let v = v(id);
            quote!(#v)
        }
    }
}

/// `let v{id} = ..;` for a computed node (`None` for a literal or a parameter).
fn define(g: &Graph, id: usize) -> Option<TokenStream> {
    let name = v(id);
    let val = |n: usize| value(g, n);
    let e = match &g.nodes[id].op {
        Op::Param(_) | Op::Lit(_) | Op::Reduce(_) => return None,
        Op::Binary(op, a, b) => {
            let (a, b) = (val(*a), val(*b));
            quote!(#a #op #b)
        }
        Op::Neg(a) => {
            let a = val(*a);
            quote!(-#a)
        }
        Op::Method(m, a, args) => {
            let a = val(*a);
            let args = args.iter().map(|&n| val(n));
            quote!(#a.#m(#(#args),*))
        }
        Op::Cast(a, t) => {
            let a = val(*a);
            quote!(#a as #t)
        }
        Op::Inline(inline, args) => {
            let binds = inline.params.iter().zip(args).map(|(p, &a)| {
                let a = val(a);
                quote!(let #p = #a;)
            });
            let stmts = &inline.body.stmts;
            quote!({ #(#binds)* #(#stmts)* })
        }
    };
    Some(quote!(let #name = #e;))
}

/// The kernel's signature: the fused function's, each array parameter as its element (an
/// elementwise kernel's or a reduction's per-element input).
fn per_element_fn(f: &syn::ItemFn, g: &Graph, out: &syn::Type, body: TokenStream) -> syn::ItemFn {
    let name = &f.sig.ident;
    let vis = &f.vis;
    let generics = &f.sig.generics;
    let where_clause = &f.sig.generics.where_clause;
    let params = g.params.iter().map(|p| {
        let (n, t) = (&p.name, &p.elem);
        quote!(#n: #t)
    });
    syn::parse_quote!(#vis fn #name #generics (#(#params),*) -> #out #where_clause { #body })
}

/// The definitions `root` needs in a per-element kernel (elementwise, a reduction's map), whose
/// parameters are the elements: `let v{id} = x;` for a parameter, `let v{id} = ..;` for the rest.
fn per_element_defs(g: &Graph, root: usize) -> Vec<TokenStream> {
    g.needed(root, &|n| n.class != Class::Elem)
        .into_iter()
        .filter(|&n| g.nodes[n].class == Class::Elem)
        .filter_map(|n| match &g.nodes[n].op {
            Op::Param(k) => {
                let (v, p) = (v(n), &g.params[*k].name);
                Some(quote!(let #v = #p;))
            }
            _ => define(g, n),
        })
        .collect()
}

/// No reduction: `#[elementwise] fn name(x: T, ..) -> U`.
pub fn elementwise(f: &syn::ItemFn, g: &Graph, out: &syn::Type) -> syn::ItemFn {
    let defs = per_element_defs(g, g.out);
    let result = value(g, g.out);
    per_element_fn(f, g, out, quote!(#(#defs)* #result))
}

/// Where a reduction of `op` starts, for element type `ty`.
fn identity(op: ReduceOp, ty: &syn::Type, float: bool) -> TokenStream {
    match (op, float) {
        (ReduceOp::Sum | ReduceOp::Mean, _) => quote!(#ty::zero()),
        (ReduceOp::Prod, _) => quote!(#ty::one()),
        (ReduceOp::Max, true) => quote!(#ty::neg_infinity()),
        (ReduceOp::Max, false) => quote!(#ty::min_value()),
        (ReduceOp::Min, true) => quote!(#ty::infinity()),
        (ReduceOp::Min, false) => quote!(#ty::max_value()),
    }
}

/// `a` combined with `b`. A float `max`/`min` propagates NaN, as the built-in reductions do
/// (`runtime/kernels/reductions.rs`).
fn combine(op: ReduceOp, float: bool, a: &TokenStream, b: &TokenStream) -> TokenStream {
    match (op, float) {
        (ReduceOp::Sum | ReduceOp::Mean, _) => quote!(#a + #b),
        (ReduceOp::Prod, _) => quote!(#a * #b),
        (ReduceOp::Max, false) => quote!(#a.max(#b)),
        (ReduceOp::Min, false) => quote!(#a.min(#b)),
        (ReduceOp::Max, true) => quote!({ let fused_a = #a; let fused_b = #b; if fused_a.is_nan() || fused_a > fused_b { fused_a } else { fused_b } }),
        (ReduceOp::Min, true) => quote!({ let fused_a = #a; let fused_b = #b; if fused_a.is_nan() || fused_a < fused_b { fused_a } else { fused_b } }),
    }
}

/// Whether `ty` is a float type (a primitive, or a generic parameter bounded by `Float`).
fn is_float(ty: &syn::Type, floats: &[String]) -> bool {
    let syn::Type::Path(p) = ty else { return false };
    let Some(last) = p.path.segments.last() else { return false };
    let name = last.ident.to_string();
    matches!(name.as_str(), "f32" | "f64" | "f16" | "bf16") || (p.path.segments.len() == 1 && floats.contains(&name))
}

/// The node's element type, or an error at its span.
fn type_of(g: &Graph, n: usize) -> Result<syn::Type, syn::Error> {
    g.nodes[n]
        .ty
        .clone()
        .ok_or_else(|| syn::Error::new(g.nodes[n].span, "the element type of this value is not decided: write a typed literal (`2.0f32`) or use a parameter"))
}

/// The result is one reduction: `#[reduction(identity = .., reduce = |a, b| ..)] fn name(x: T, ..) -> U`
/// (the map), and those two attribute arguments.
pub fn reduction(f: &syn::ItemFn, g: &Graph, out: &syn::Type, floats: &[String]) -> Result<(syn::ItemFn, TokenStream), syn::Error> {
    let Op::Reduce(r) = &g.nodes[g.out].op else { unreachable!("the plan is a reduction") };
    let defs = per_element_defs(g, r.arg);
    let mapped = value(g, r.arg);
    let ty = type_of(g, r.arg)?;
    let float = is_float(&ty, floats);
    let id = identity(r.op, &ty, float);
    let reduce = combine(r.op, float, &quote!(a), &quote!(b));
    let kernel = per_element_fn(f, g, out, quote!(#(#defs)* #mapped));
    Ok((kernel, quote!(identity = #id, reduce = |a, b| #reduce)))
}

/// What a pass of a row kernel does with the row of the cached parameter (index into
/// [`Graph::params`]): the first pass that reads it loads the thread's columns of the row into
/// registers (`fused_r0` .. `fused_r{ROW_REGS - 1}`), the later ones read them from there (when the
/// call launched enough threads for that: `fused_cache != 0`).
#[derive(Clone, Copy)]
enum Cache {
    None,
    Store(usize),
    Load(usize),
}

/// Columns per step of a row kernel's element loop: each thread issues this many loads before
/// it computes (one per column at `j`, `j + block`, ...), so that enough bytes are in flight.
/// Measured on an H200 for a softmax of (8192, 8192) f32, blocks of 512:
/// 1 column 0.44 of the copy ceiling, 4 columns 0.68, 8 columns 0.73
/// (`benches/experiments/fuse_rows`).
pub const ROW_UNROLL: usize = 8;

/// Columns of the cached row each thread keeps in registers (`fused_cache != 0`: rows of
/// [`ROW_BLOCK`] to `ROW_BLOCK * ROW_REGS` columns, `runtime::fuse::RowPlan::config`). All of a
/// thread's columns are loaded at once, before the first reduction uses them. A softmax of
/// (8192, 8192) f32 on an H200 (`benches/experiments/fuse_rows/cache.sh`): 0.96 of the copy
/// ceiling (layer norm 0.92), where 8 columns per step with the row kept in shared memory reached
/// 0.77 (layer norm 0.55).
pub const ROW_REGS: usize = 32;

/// The block size of a row kernel holding its row in registers (`fused_cache != 0`): a constant,
/// so that a thread's columns are constant offsets from its first (folded into the loads and
/// stores). With the block size read at run time, the same kernel spent about 30 more integer
/// instructions per element on addresses and tests and reached 0.49 of the copy ceiling instead
/// of 0.89 (a softmax of (8192, 8192) f32 on an H200, `benches/experiments/fuse_rows/vec.cu`).
pub const ROW_BLOCK: usize = 256;

/// Accumulators per thread of a reduction over registers: column `u` goes to partial
/// `u % ROW_PARTIALS`, so that the steps of one thread are not one chain of dependent operations
/// (a NaN-propagating max is three). The loop over memory uses the first only.
const ROW_PARTIALS: usize = 4;

/// The element loop of a row kernel over the columns of row `fused_row`: for each column `c`
/// (`fused_c`), the loads of the array parameters `root` needs, its other element values, then
/// `consume(p)` (which reads `value(root)` and `fused_c`; `p` below [`ROW_PARTIALS`] names the
/// partial accumulator a reduction may use for this column).
///
/// A pass that loads or reads the cached row is written twice: from registers for
/// `fused_cache != 0` ([`row_regs`]), and as a loop reading memory for 0 ([`row_loop_with`]), so
/// that no element pays for the test (a test per element kept the loads of a step apart: 0.50 of
/// the copy ceiling instead of 0.69 for a softmax on an H200, even uncached).
fn row_loop(g: &Graph, root: usize, consume: &dyn Fn(usize) -> TokenStream, cache: Cache) -> TokenStream {
    let reads_cached = match cache {
        Cache::Store(c) | Cache::Load(c) => array_loads(g, root).contains(&c),
        Cache::None => false,
    };
    if !reads_cached {
        return row_loop_with(g, root, consume);
    }
    let cached = row_regs(g, root, consume, cache);
    let plain = row_loop_with(g, root, consume);
    quote! {
        if fused_cache != 0 {
            #cached
        } else {
            #plain
        }
    }
}

/// The element nodes a pass computing `root` defines, and its loads: (node, parameter) for each
/// array parameter it reads.
fn pass_nodes(g: &Graph, root: usize) -> (Vec<usize>, Vec<(usize, usize)>) {
    let nodes: Vec<usize> = g.needed(root, &|n| n.class != Class::Elem).into_iter().filter(|&n| g.nodes[n].class == Class::Elem).collect();
    let loads = nodes
        .iter()
        .filter_map(|&n| match &g.nodes[n].op {
            Op::Param(k) => Some((n, *k)),
            _ => None,
        })
        .collect();
    (nodes, loads)
}

/// Parameter `k`'s element of row `fused_row` at column `col` (a `u32`): its row's first element
/// `fused_base_{p}` plus the column masked by `fused_mask_{p}` (all ones, or 0 where its column
/// stride is 0). Columns are `u32` and the mask stands for the stride (0 or 1), so that a load
/// costs no 64-bit multiplication: indexed as `(row * rs + col * cs) as usize`, a softmax of
/// (8192, 8192) f32 reached 0.52 of the copy ceiling on an H200 where the same kernel indexed in
/// 32 bits reached 0.88 (`benches/experiments/fuse_rows/vec.cu`).
fn global(g: &Graph, k: usize, col: &TokenStream) -> TokenStream {
    let p = &g.params[k].name;
    let (base, mask) = (format_ident!("fused_base_{}", p), format_ident!("fused_mask_{}", p));
    quote!(#p[#base + ((#col & #mask) as usize)])
}

/// [`row_loop`] reading memory: [`ROW_UNROLL`] columns per step, their loads first, then the
/// remaining columns one by one.
fn row_loop_with(g: &Graph, root: usize, consume: &dyn Fn(usize) -> TokenStream) -> TokenStream {
    let consume = consume(0);
    let (nodes, loads) = pass_nodes(g, root);
    let defs: Vec<TokenStream> = nodes.iter().filter_map(|&n| define(g, n)).collect();
    let mut step_loads = Vec::new();
    let mut slots = Vec::new();
    for u in 0..ROW_UNROLL {
        let col = format_ident!("fused_c{}", u);
        let offset = proc_macro2::Literal::u32_unsuffixed(u as u32);
        step_loads.push(quote!(let #col = fused_j + #offset * fused_nt;));
        let mut rebind = Vec::new();
        for &(n, k) in &loads {
            let (slot, v, load) = (format_ident!("v{}_{}", n, u), v(n), global(g, k, &quote!(#col)));
            step_loads.push(quote!(let #slot = #load;));
            rebind.push(quote!(let #v = #slot;));
        }
        slots.push(quote!({
            let fused_c = #col;
            #(#rebind)*
            #(#defs)*
            #consume
        }));
    }
    let one_loads = loads.iter().map(|&(n, k)| {
        let (v, load) = (v(n), global(g, k, &quote!(fused_c)));
        quote!(let #v = #load;)
    });
    let last = proc_macro2::Literal::u32_unsuffixed(ROW_UNROLL as u32 - 1);
    let step = proc_macro2::Literal::u32_unsuffixed(ROW_UNROLL as u32);
    quote! {
        let mut fused_j = fused_tid;
        while fused_j + #last * fused_nt < fused_n {
            #(#step_loads)*
            #(#slots)*
            fused_j += #step * fused_nt;
        }
        while fused_j < fused_n {
            let fused_c = fused_j;
            #(#one_loads)*
            #(#defs)*
            #consume
            fused_j += fused_nt;
        }
    }
}

/// [`row_loop`] over the thread's [`ROW_REGS`] columns `fused_tid + u * ROW_BLOCK`, the cached
/// parameter's in registers `fused_r{u}`: a `Store` pass first loads all of them (those in the
/// row), then, [`ROW_UNROLL`] columns at a time, the loads of the other parameters (a column past
/// the row's end loads the last column: these loads are unconditional) and the columns' work
/// (for columns in the row).
///
/// Written for a thread whose columns are all in the row, without a test per column, and for the
/// others group by group of [`ROW_UNROLL`] columns ([`row_group`]: without a test per column
/// where the group is in the row, with one where the row ends in it). On an H200
/// (`benches/experiments/fuse_rows/cache.sh`), softmax of (8192, 8192) f32 (32 columns per
/// thread): a test per column 0.84 of the copy ceiling, groups 0.89, no test 0.96; rows of 4096
/// columns (16 per thread): a test per column 0.61, groups 0.84.
fn row_regs(g: &Graph, root: usize, consume: &dyn Fn(usize) -> TokenStream, cache: Cache) -> TokenStream {
    let all = row_regs_with(g, root, consume, cache, true);
    let groups = row_regs_with(g, root, consume, cache, false);
    let n = proc_macro2::Literal::u32_unsuffixed(ROW_REGS as u32);
    quote! {
        if fused_live == #n {
            #all
        } else {
            #groups
        }
    }
}

/// [`row_regs`] for a thread whose columns are `all` in the row (no tests), or for any thread
/// (group by group, [`row_group`]).
fn row_regs_with(g: &Graph, root: usize, consume: &dyn Fn(usize) -> TokenStream, cache: Cache, all: bool) -> TokenStream {
    let group_of = |first: usize, body: &dyn Fn(bool) -> TokenStream| if all { body(true) } else { row_group(first, body) };
    let (nodes, loads) = pass_nodes(g, root);
    let defs: Vec<TokenStream> = nodes.iter().filter_map(|&n| define(g, n)).collect();
    let (Cache::Store(cached) | Cache::Load(cached)) = cache else { unreachable!("a pass reading the cached row") };
    let col = |u: usize| {
        let offset = proc_macro2::Literal::u32_unsuffixed((u * ROW_BLOCK) as u32);
        quote!((fused_tid + #offset))
    };
    // `body` where column `u` is in the row (`full`: the whole group is).
    let guard = |full: bool, u: usize, body: TokenStream| {
        let u = proc_macro2::Literal::u32_unsuffixed(u as u32);
        if full { body } else { quote!(if #u < fused_live { #body }) }
    };
    let mut out = Vec::new();
    if let Cache::Store(_) = cache {
        // The cached parameter's column stride is 1 (`RowPlan::config`): its loads are the row's
        // start plus multiples of the block (constants: the compiler folds them into the loads).
        let (p, base) = (&g.params[cached].name, format_ident!("fused_base_{}", g.params[cached].name));
        out.push(quote!(let fused_at = #base + fused_tid as usize;));
        for first in (0..ROW_REGS).step_by(ROW_UNROLL) {
            out.push(group_of(first, &|full| {
                let loads = (first..first + ROW_UNROLL).map(|u| {
                    let r = format_ident!("fused_r{}", u);
                    let offset = proc_macro2::Literal::usize_unsuffixed(u * ROW_BLOCK);
                    guard(full, u, quote!(#r = #p[fused_at + #offset];))
                });
                quote!(#(#loads)*)
            }));
        }
    }
    for first in (0..ROW_REGS).step_by(ROW_UNROLL) {
        out.push(group_of(first, &|full| {
            let mut group = Vec::new();
            let mut work = Vec::new();
            for u in first..first + ROW_UNROLL {
                let c = col(u);
                let mut rebind = Vec::new();
                for &(n, k) in &loads {
                    let v = v(n);
                    if k == cached {
                        let r = format_ident!("fused_r{}", u);
                        rebind.push(quote!(let #v = #r;));
                    } else {
                        let at = if full { c.clone() } else { quote!(#c.min(fused_n - 1)) };
                        let (slot, load) = (format_ident!("v{}_{}", n, u), global(g, k, &at));
                        group.push(quote!(let #slot = #load;));
                        rebind.push(quote!(let #v = #slot;));
                    }
                }
                let consume = consume(u % ROW_PARTIALS);
                work.push(guard(full, u, quote!({
                    let fused_c = #c;
                    #(#rebind)*
                    #(#defs)*
                    #consume
                })));
            }
            group.extend(work);
            quote!(#(#group)*)
        }));
    }
    quote!(#(#out)*)
}

/// The columns `first .. first + ROW_UNROLL` of a thread's [`ROW_REGS`]: `body(true)` when they
/// are all in the row, `body(false)` (a test per column) when the row ends among them, nothing
/// when it ends before.
fn row_group(first: usize, body: &dyn Fn(bool) -> TokenStream) -> TokenStream {
    let (lo, hi) = (proc_macro2::Literal::u32_unsuffixed(first as u32), proc_macro2::Literal::u32_unsuffixed((first + ROW_UNROLL) as u32));
    let (full, part) = (body(true), body(false));
    quote! {
        if fused_live >= #hi {
            #full
        } else if fused_live > #lo {
            #part
        }
    }
}

/// The array parameters (indices into [`Graph::params`]) a pass computing `root` reads.
fn array_loads(g: &Graph, root: usize) -> Vec<usize> {
    g.needed(root, &|n| n.class != Class::Elem)
        .into_iter()
        .filter_map(|n| match g.nodes[n].op {
            Op::Param(k) if g.params[k].array => Some(k),
            _ => None,
        })
        .collect()
}

/// The parameter whose row a row kernel keeps in registers: the first array parameter the first
/// pass reads (softmax's and layer norm's `x`), so that the later passes do not read it from
/// memory again.
pub fn cached_param(g: &Graph) -> usize {
    let first = g.reductions()[0];
    let Op::Reduce(r) = &g.nodes[first].op else { unreachable!("a reduction") };
    array_loads(g, r.arg).into_iter().min().expect("a row pass reads an array parameter (the plan checked it)")
}

/// Reductions over the last axis feeding elementwise work: a `#[rawkernel(unchecked)]` run with
/// one block per row (`grid.x` = rows, `block.x` a multiple of 32 up to 1024). Each reduction is
/// one pass over the row (an unrolled strided loop per thread, a warp shuffle tree, one partial per
/// warp in shared memory); values computed once per row sit in registers; the last pass writes the
/// row, or, for a result that is one value per row (log-sum-exp: the result's class is
/// [`Class::Row`]), thread 0 writes that value once the last reduction is done.
///
/// Parameters: each array parameter `x` as `x: &[T], x_rs: i64, x_cs: i64` (its element at row
/// `r`, column `j` is `x[r * x_rs + j * x_cs]`: 0 for a broadcast axis), each scalar by value,
/// then `fused_out: &mut [U]` (C-contiguous: `rows × fused_cols` elements, or `rows` for a per-row
/// result), `fused_cols: i64` and `fused_cache: i64` (nonzero:
/// the launch has at least `fused_cols / ROW_REGS` threads, so that each thread can hold its
/// columns of the cached parameter's row in registers, [`Cache`]). Unchecked: the caller
/// (`runtime::fuse::RowPlan`, through the generated `call`) guarantees every index is in range.
/// `cached` is [`cached_param`]'s choice, as the plan recorded it.
pub fn rows(f: &syn::ItemFn, g: &Graph, out: &syn::Type, floats: &[String], cached: usize) -> Result<syn::ItemFn, syn::Error> {
    let name = &f.sig.ident;
    let vis = &f.vis;
    let generics = &f.sig.generics;
    let where_clause = &f.sig.generics.where_clause;
    let (fused_out, cols) = (format_ident!("{}", super::ROW_OUT), format_ident!("{}", super::ROW_COLS));
    let mut params = Vec::new();
    for p in &g.params {
        let (n, t) = (&p.name, &p.elem);
        if p.array {
            let (rs, cs) = (format_ident!("{}_rs", n), format_ident!("{}_cs", n));
            params.push(quote!(#n: &[#t], #rs: i64, #cs: i64));
        } else {
            params.push(quote!(#n: #t));
        }
    }
    let needed = g.needed(g.out, &|_| false);
    let mut defined = vec![false; g.nodes.len()];
    let mut body = Vec::new();
    // Values the same for every element, first.
    for &n in &needed {
        if g.nodes[n].class == Class::Uniform {
            body.extend(define(g, n));
            defined[n] = true;
        }
    }
    let ready = |defined: &[bool], n: usize| operands(&g.nodes[n].op).iter().all(|&o| defined[o]);
    let reductions = g.reductions();
    let loads_of = |root: usize| -> Vec<usize> { array_loads(g, root) };
    // The row is worth keeping only when a later pass reads it again.
    let passes = reductions.iter().filter_map(|&n| match &g.nodes[n].op {
        Op::Reduce(r) => Some(r.arg),
        _ => None,
    });
    // The result is the rows' elements (a last pass computes and writes them), or one value per
    // row (computed once the last reduction is done: no pass of its own).
    let elements = g.nodes[g.out].class == Class::Elem;
    let last_pass = elements.then_some(g.out);
    let keep = passes.chain(last_pass).filter(|&root| loads_of(root).contains(&cached)).count() > 1;
    let mut stored = false;
    let mut mode = |root: usize| {
        if !keep || !loads_of(root).contains(&cached) {
            Cache::None
        } else if stored {
            Cache::Load(cached)
        } else {
            stored = true;
            Cache::Store(cached)
        }
    };
    for (k, red) in reductions.iter().copied().enumerate() {
        let Op::Reduce(r) = &g.nodes[red].op else { continue };
        let ty = type_of(g, r.arg)?;
        let float = is_float(&ty, floats);
        if r.op == ReduceOp::Mean && !float {
            return Err(syn::Error::new(g.nodes[red].span, "a `#[fuse]` function takes the mean of floats (cast first: `.astype::<f64>()`)"));
        }
        let id = identity(r.op, &ty, float);
        let (acc, shared, res) = (format_ident!("fused_acc{}", k), format_ident!("fused_red{}", k), v(red));
        let x = value(g, r.arg);
        let partials: Vec<syn::Ident> = (0..ROW_PARTIALS).map(|p| format_ident!("fused_acc{}_{}", k, p)).collect();
        let consume = |p: usize| {
            let a = &partials[p];
            let step = combine(r.op, float, &quote!(#a), &x);
            quote!(#a = #step;)
        };
        let elements = row_loop(g, r.arg, &consume, mode(r.arg));
        let first = &partials[0];
        let gather_partials = partials[1..].iter().map(|p| {
            let c = combine(r.op, float, &quote!(#acc), &quote!(#p));
            quote!(#acc = #c;)
        });
        let shfl = combine(r.op, float, &quote!(#acc), &quote!(shfl_xor_sync(u32::MAX, #acc, fused_m)));
        let gather = combine(r.op, float, &quote!(#res), &quote!(#shared[fused_w]));
        let finish = (r.op == ReduceOp::Mean).then(|| quote!(let #res = #res / #ty::from_i64(#cols);));
        body.push(quote! {
            let #shared = shared_array::<#ty, 32>();
            #(let mut #partials = #id;)*
            #elements
            let mut #acc = #first;
            #(#gather_partials)*
            let mut fused_m = 16u32;
            while fused_m > 0 {
                #acc = #shfl;
                fused_m /= 2;
            }
            if fused_lane == 0 {
                #shared[fused_warp] = #acc;
            }
            sync_threads();
            let mut #res = #id;
            let mut fused_w = 0usize;
            while fused_w < fused_nwarps {
                #res = #gather;
                fused_w += 1;
            }
            #finish
        });
        defined[red] = true;
        // Values per row that are now computable.
        for &n in &needed {
            if !defined[n] && g.nodes[n].class == Class::Row && ready(&defined, n) {
                body.extend(define(g, n));
                defined[n] = true;
            }
        }
    }
    let result = value(g, g.out);
    if elements {
        let last = mode(g.out);
        body.push(row_loop(g, g.out, &|_| quote!(#fused_out[fused_base_out + fused_c as usize] = #result;), last));
    } else {
        // After the last reduction every thread holds the row's value: one writes it.
        body.push(quote! {
            if fused_tid == 0 {
                #fused_out[fused_row as usize] = #result;
            }
        });
    }
    // Where the row's output starts (a per-row result: one element per row, at `fused_row`).
    let base_out = elements.then(|| quote!(let fused_base_out = (fused_row * #cols) as usize;));
    // Where each array parameter's row starts, and its column mask ([`global`]).
    let bases = g.params.iter().filter(|p| p.array).map(|p| {
        let n = &p.name;
        let (rs, cs, base, mask) = (format_ident!("{}_rs", n), format_ident!("{}_cs", n), format_ident!("fused_base_{}", n), format_ident!("fused_mask_{}", n));
        quote! {
            let #base = (fused_row * #rs) as usize;
            let #mask = if #cs != 0 { u32::MAX } else { 0u32 };
        }
    });
    // The registers of the cached row, declared where every pass sees them (starting as the row's
    // first element: any value of the type will do).
    let registers = keep.then(|| {
        let first = global(g, cached, &quote!(0u32));
        let regs = (0..ROW_REGS).map(|u| format_ident!("fused_r{}", u));
        let block = proc_macro2::Literal::u32_unsuffixed(ROW_BLOCK as u32);
        quote! {
            let fused_first = #first;
            #(let mut #regs = fused_first;)*
            // How many of the thread's columns are in the row (with blocks of ROW_BLOCK).
            let fused_live = if fused_tid < fused_n { (fused_n - fused_tid + (#block - 1)) / #block } else { 0u32 };
        }
    });
    Ok(syn::parse_quote! {
        #vis fn #name #generics (#(#params,)* #fused_out: &mut [#out], #cols: i64, fused_cache: i64) #where_clause {
            let fused_row = block_idx().x as i64;
            let fused_tid = thread_idx().x;
            let fused_nt = block_dim().x;
            let fused_n = #cols as u32;
            #base_out
            #(#bases)*
            let fused_lane = lane_id();
            let fused_warp = (fused_tid / 32) as usize;
            let fused_nwarps = ((fused_nt + 31) / 32) as usize;
            #registers
            #(#body)*
        }
    })
}
