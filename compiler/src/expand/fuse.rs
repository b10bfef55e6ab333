//! The Rust side of `#[fuse]`: the user's function unchanged (it runs unfused, one operation at a
//! time), the kernel it desugars to (`crate::fuse`) expanded as any kernel of its kind inside a
//! hidden module `__cuprum_fused_NAME`, and a module `NAME` with the fused entry point:
//!
//! ```text
//! softmax(&x)?          // the function as written: one kernel per operation
//! softmax::call(&x)?    // one fused kernel
//! ```
//!
//! `call` takes the function's parameters and returns `Result<Array<U>>`:
//!
//! | passes | `call` |
//! | --- | --- |
//! | elementwise | the kernel's `call` (broadcasting, scalars by value) |
//! | one reduction | the reduction's `call`, configured with the axes and `keepdims` written, `run` |
//! | rows | `fuse::RowPlan` of the arrays' shapes, the output allocated (the plan's shape, or one value per row: `RowPlan::per_row_shape`), the raw kernel launched with a block per row |

use proc_macro2::TokenStream;
use quote::{format_ident, quote, ToTokens};

use super::Context;
use crate::attr_kind::AttrKind;
use crate::fuse::{Fused, Passes, RowResult, ROW_BLOCK, ROW_COLS, ROW_OUT, ROW_REGS};

/// The expansion of `#[fuse(attr)] item`.
pub fn expand_fuse(attr: TokenStream, item: TokenStream, cx: &Context) -> TokenStream {
    let f: syn::ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(_) => {
            let mut out = syn::Error::new_spanned(&item, "`#[fuse]` applies to functions only").to_compile_error();
            out.extend(item);
            return out;
        }
    };
    let mut out = f.to_token_stream();
    let text = cx.file.as_deref().and_then(|p| std::fs::read_to_string(p).ok());
    let file = text.as_deref().and_then(|t| syn::parse_file(t).ok());
    let lookup = |name: &str| file.as_ref().and_then(|file| crate::front::elementwise_fn(file, name));
    let private = private_path(&attr);
    let fused = match crate::fuse::desugar(&f, attr, &lookup) {
        Ok(d) => d,
        Err(e) => {
            out.extend(e.to_compile_error());
            return out;
        }
    };
    let kernel = super::expand_item(fused.kind, fused.attr.clone(), fused.kernel.to_token_stream(), cx);
    let name = &f.sig.ident;
    let vis = &f.vis;
    let hidden = format_ident!("__cuprum_fused_{}", name);
    let entry = call_fn(&f, &fused, &hidden);
    let doc = format!(
        "The fused form of [`{name}`](fn@super::{name}): `call` runs it as one kernel ({}).",
        match fused.passes {
            Passes::Elementwise => "elementwise",
            Passes::Reduce { .. } => "a reduction",
            Passes::Rows { .. } => "one block per row",
        }
    );
    out.extend(quote! {
        #[doc(hidden)]
        #[allow(non_snake_case, unused_imports, dead_code, clippy::all)]
        #vis mod #hidden {
            use super::*;
            #kernel
        }
        #[doc = #doc]
        #[allow(non_snake_case, unused_imports, clippy::too_many_arguments)]
        #vis mod #name {
            use super::*;
            use #private as __cuprum;
            #entry
        }
    });
    out
}

/// `<crate>::__private`, from the user's `crate = path` if given (`#[fuse]` takes the arguments
/// an `#[elementwise]` kernel takes: `instances`, `crate`).
fn private_path(user_attr: &TokenStream) -> TokenStream {
    let mut diags = crate::diag::Diagnostics::new();
    crate::front::parse_attr(AttrKind::Elementwise, user_attr.clone(), proc_macro2::Span::call_site(), &mut diags).private_path()
}

/// `pub fn call(..) -> Result<Array<U>>`.
fn call_fn(f: &syn::ItemFn, fused: &Fused, hidden: &syn::Ident) -> TokenStream {
    let name = &f.sig.ident;
    let name_str = name.to_string();
    let generics = &f.sig.generics;
    let where_clause = &f.sig.generics.where_clause;
    let params = f.sig.inputs.iter();
    let out = &fused.out;
    let idents: Vec<&syn::Ident> = fused.params.iter().map(|p| &p.name).collect();
    let kernel = quote!(super::#hidden::#name);
    let body = match &fused.passes {
        Passes::Elementwise => quote!(#kernel::call(#(#idents),*)),
        Passes::Reduce { axis, axes, keepdims } => {
            let axis = axis.as_ref().map(|e| quote!(.axis(#e)));
            let axes = axes.as_ref().map(|e| quote!(.axes(#e)));
            let keepdims = keepdims.as_ref().map(|e| quote!(.keepdims(#e)));
            quote!(#kernel::call(#(#idents),*) #axis #axes #keepdims .run())
        }
        Passes::Rows { axes, cached, result } => {
            let cached_ty = &fused.params[*cached].elem;
            let arrays: Vec<&syn::Ident> = fused.params.iter().filter(|p| p.array).map(|p| &p.name).collect();
            let names: Vec<String> = arrays.iter().map(|a| a.to_string()).collect();
            let first = arrays[0];
            let mut prepare = Vec::new();
            let mut args = Vec::new();
            let mut k = 0usize;
            for p in &fused.params {
                let n = &p.name;
                if p.array {
                    let (c, rs, cs) = (format_ident!("__cuprum_c{}", k), format_ident!("{}_rs", n), format_ident!("{}_cs", n));
                    prepare.push(quote! {
                        let #c = __cuprum::fuse::contiguous(#n)?;
                        let #n = #c.as_ref().unwrap_or(#n);
                        let (#rs, #cs) = __cuprum_plan.strides(#k);
                    });
                    args.push(quote!(#n, #rs, #cs));
                    k += 1;
                } else {
                    args.push(quote!(#n));
                }
            }
            let (out_ident, cols) = (format_ident!("{}", ROW_OUT), format_ident!("{}", ROW_COLS));
            let (regs, block) = (proc_macro2::Literal::usize_unsuffixed(ROW_REGS), proc_macro2::Literal::u32_unsuffixed(ROW_BLOCK as u32));
            // The cached parameter's position among the array operands (RowPlan's numbering).
            let cached_k = fused.params[..*cached].iter().filter(|p| p.array).count();
            let shape = match result {
                RowResult::Elements => quote!(__cuprum_plan.shape()),
                RowResult::PerRow { keepdims } => quote!(__cuprum_plan.per_row_shape(#name_str, #keepdims)?),
            };
            quote! {
                let __cuprum_plan = __cuprum::fuse::RowPlan::new(#name_str, &[#(#names),*], &[#(#arrays.shape()),*], &[#((#axes) as isize),*])?;
                let __cuprum_stream = __cuprum::Stream::current_for(#first.device())?;
                let mut #out_ident = __cuprum::Array::<#out>::empty_on(#shape, &__cuprum_stream)?;
                if __cuprum_plan.is_empty() {
                    return ::core::result::Result::Ok(#out_ident);
                }
                #(#prepare)*
                let #cols = __cuprum_plan.cols();
                let (__cuprum_config, __cuprum_cache) = __cuprum_plan.config(#cached_k, ::core::mem::size_of::<#cached_ty>(), #regs, #block);
                // SAFETY: the kernel reads operand `k`'s element (r, j) at `r * rs + j * cs` for r
                // below the plan's rows and j below its columns, and writes the output's at
                // `r * cols + j` (a per-row result: at `r`): `RowPlan::new` checked each operand's
                // shape against the output's (its row stride is 0 or its row length, its column
                // stride 0 or 1, which the kernel takes as a mask of the column: all ones or 0),
                // every operand is C-contiguous, the output has the plan's shape (a per-row result:
                // one element per row, `per_row_shape`), and the plan's launch has one
                // block per row and at most 1024 threads (32 warps, the partials' slots); with
                // `__cuprum_cache` = 1 it has exactly ROW_BLOCK threads, at least `cols / ROW_REGS`
                // (each thread's columns of the cached row fit its registers) and the cached operand's column
                // stride is 1; a column past the row's end is clamped to the last one, which
                // exists: the plan is not empty); the plan has at most `i32::MAX` columns (the kernel counts them in `u32`).
                unsafe { #kernel::launch(&__cuprum_config.stream(&__cuprum_stream), #(#args,)* &mut #out_ident, #cols, __cuprum_cache)? };
                ::core::result::Result::Ok(#out_ident)
            }
        }
    };
    let doc = format!(
        "Runs [`{name_str}`](fn@super::{name_str}) as one fused kernel (precompiled at build time, else compiled at \
         its first use), on the current stream of the arrays' device; the same result as the \
         function, without its intermediate arrays."
    );
    quote! {
        #[doc = #doc]
        pub fn call #generics (#(#params),*) -> __cuprum::Result<__cuprum::Array<#out>> #where_clause {
            #body
        }
    }
}
