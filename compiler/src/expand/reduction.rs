//! The typed API of a `#[reduction]`: `NAME::call(args..)` returning a builder
//! (`.axis(k)`, `.axes([..])`, `.keepdims(b)`, `.out(&mut y)`, `.stream(&s)`, `.run()`), and the
//! attribute's parts as host functions (`NAME::identity_host()`, `NAME::reduce_host(a, b)`,
//! `NAME::post_host(a)`) for a host reference; the map is the user's function itself.
//!
//! | kernel parameter | `call` argument | passed as |
//! | --- | --- | --- |
//! | a scalar type or a generic `T` | `impl Into<Input<'a, T>>`: `&Array<T>` (broadcast with the other arrays) or a `T` (uploaded once per call, a 0-d array) | `Arg::In` / `Arg::Scalar` |
//! | `Raw<T>` | `&Array<T>` (whole, not broadcast) | `reduction::Arg::Raw` |
//!
//! The builder is `cuprum::ReductionCall<'a, Out>` (one generic type for every reduction), where
//! `Out` is the post-map's result type (the accumulator's when there is no `post`), as the type
//! checker found it. Generic parameters are inferred from the arguments; their dtypes pick the
//! instance.

use proc_macro2::{TokenStream, TokenTree};
use quote::{format_ident, quote};

use super::opening::Opening;
use super::rust_types;
use super::unit::UnitInfo;
use crate::ir::{ItemKind, LocalId, ReductionParts, Ty};
use crate::typeck::IdentityLiteral;
use crate::checked::{Checked, ReductionTypes};
use crate::signature::Role;

/// Whether `ident` occurs anywhere in `tokens`.
fn mentions(tokens: &TokenStream, ident: &syn::Ident) -> bool {
    tokens.clone().into_iter().any(|t| match t {
        TokenTree::Ident(i) => i == *ident,
        TokenTree::Group(g) => mentions(&g.stream(), ident),
        _ => false,
    })
}

/// `mod NAME { statics; host parts; pub fn call(..) -> ReductionCall }`.
pub(super) fn reduction_module(f: &syn::ItemFn, checked: &Checked, unit: &UnitInfo) -> TokenStream {
    let open = Opening::new(
        f,
        checked,
        unit,
        quote!(__cuprum::launch::signature::Signature::Reduction(
            &__CUPRUM_SIGNATURE
        )),
        Some(quote!(__cuprum::cpu::HostEntry::Reduction(__cuprum_host_entry))),
    );
    let Opening { name, name_str, vis, private, statics, generics, dtypes } = &open;
    let item = &checked.item;
    let (ItemKind::Reduction(parts), Some(types)) = (&item.kind, checked.reduction_types()) else {
        return quote!(::core::compile_error!("cuprum: a reduction without its parts; report this as a cuprum bug"););
    };
    let (acc, out) = match acc_and_out(checked, &types, name_str) {
        Ok(t) => t,
        Err(e) => return e,
    };
    let where_clause = &generics.where_clause;
    let (acc_pty, out_pty) = (
        rust_types::param_type_of(&types.acc, &acc),
        rust_types::param_type_of(&types.out, &out),
    );
    let (params, args, sig) = call_params(checked);
    let gparams = generics.params.iter();
    let call_generics = quote!(<'__a, #(#gparams),*>);
    let host_parts = host_parts(f, checked, parts, &types, &acc, &out, where_clause);
    let has_identity = checked.attr.identity.is_some();
    let positional = checked.uses_index();

    let host = host_entry(f, checked, generics, &acc, &out, parts, &types);

    let doc_mod = format!(
        "Runs the `#[reduction]` [`{name_str}`](fn@super::{name_str}) on the GPU (`call`), and its \
         parts on the host (`identity_host`, `reduce_host`, `post_host`; the map is `{name_str}` itself)."
    );
    let doc_call = format!(
        "A reduction of `{name_str}` over the given arrays: set `.axis(k)` / `.axes([..])` (default: \
         all), `.keepdims(true)`, `.out(&mut y)`, `.stream(&s)`, then `.run()`.\n\n\
         Array arguments broadcast together; `Raw` ones are passed whole. Generic parameters are \
         inferred from the arguments and pick the instance, which is loaded on first use \
         (precompiled fat binary, else the kernel cache, else NVRTC)."
    );
    quote! {
        #[doc = #doc_mod]
        #[allow(non_snake_case, unused_imports, unused_variables, clippy::too_many_arguments)]
        #vis mod #name {
            use super::*;
            use #private as __cuprum;

            #statics

            /// The map's parameters, the output's and the accumulator's types: what launches of
            /// this reduction are checked against.
            static __CUPRUM_SIGNATURE: __cuprum::launch::signature::ReductionSignature =
                __cuprum::launch::signature::ReductionSignature {
                    params: &[#(#sig),*],
                    out: #out_pty,
                    acc: #acc_pty,
                    has_identity: #has_identity,
                    positional: #positional,
                };

            /// Whether the reduction has an identity (an empty reduction is then `post(identity)`).
            #[doc(hidden)]
            pub const __HAS_IDENTITY: bool = #has_identity;

            /// The kernel (its per-device instances), for type-erased callers.
            #[doc(hidden)]
            pub fn __kernel() -> &'static __cuprum::registry::Kernel {
                &__CUPRUM_KERNEL
            }

            #host_parts

            #[doc = #doc_call]
            #[inline]
            pub fn call #call_generics (#(#params),*) -> __cuprum::ReductionCall<'__a, #out> #where_clause {
                __cuprum::ReductionCall::new(&__CUPRUM_KERNEL, &[#(#dtypes),*], ::std::vec![#(#args),*])
            }

            #host
        }
    }
}

/// The accumulator's and the output's Rust types, or the `compile_error!` that says they could
/// not be determined.
fn acc_and_out(checked: &Checked, types: &ReductionTypes, name_str: &str) -> Result<(TokenStream, TokenStream), TokenStream> {
    let item = &checked.item;
    // The output is a scalar or a generic parameter, the accumulator one of those or a
    // `#[device]` struct (a part typed `Ty::Error` calls a function this check cannot see).
    let element = |t: &Ty, structs: bool| {
        (matches!(t, Ty::Scalar(_) | Ty::Param(_)) || (structs && matches!(t, Ty::Struct(_))))
            .then(|| rust_types::checked(t, &item.generics))
            .flatten()
    };
    let (Some(acc), Some(out)) = (element(&types.acc, true), element(&types.out, false)) else {
        let msg = format!(
            "cuprum: could not determine the accumulator and output types of reduction `{name_str}`: \
             a macro sees one item, not the `#[device]` functions beside it, so give a part that \
             calls one its type with `as` (`post = |a| f(a) as f64`) or an `acc = T` argument"
        );
        return Err(quote!(::core::compile_error!(#msg);));
    };
    Ok((acc, out))
}

/// `call`'s parameters (arrays, or a scalar for a per-element one), the launch's arguments and the
/// signature's parameters.
fn call_params(checked: &Checked) -> (Vec<TokenStream>, Vec<TokenStream>, Vec<TokenStream>) {
    let item = &checked.item;
    let mut params = Vec::new();
    let mut args = Vec::new();
    let mut sig = Vec::new();
    for p in &checked.sig.params {
        let ident = &p.name;
        let ident_str = ident.to_string();
        let elem = rust_types::named(&p.elem, &item.generics);
        let pty = rust_types::param_type(&p.elem, &item.generics);
        let (param, arg, role) = match p.role {
            Role::Raw => (
                quote!(#ident: &'__a __cuprum::Array<#elem>),
                quote!(__cuprum::launch::operand::Arg::raw(#ident)),
                quote!(Raw),
            ),
            Role::Scalar => (
                quote!(#ident: impl ::core::convert::Into<__cuprum::elementwise::Input<'__a, #elem>>),
                quote!(::core::convert::Into::<__cuprum::elementwise::Input<'__a, #elem>>::into(#ident).arg()),
                quote!(In),
            ),
            _ => (
                quote!(#ident: &'__a __cuprum::Array<#elem>),
                quote!(__cuprum::launch::operand::Arg::input(#ident)),
                quote!(In),
            ),
        };
        params.push(param);
        args.push(arg);
        sig.push(quote!(__cuprum::launch::signature::Param::new(#ident_str, __cuprum::launch::signature::Role::#role, #pty)));
    }
    (params, args, sig)
}

/// The host parts (`identity_host`, `reduce_host`, `post_host`), each generic over the
/// parameters it mentions: the attribute's Rust, with the closures' parameters (locals of the
/// checked item) as the functions' parameters.
fn host_parts(
    f: &syn::ItemFn,
    checked: &Checked,
    parts: &ReductionParts,
    types: &ReductionTypes,
    acc: &TokenStream,
    out: &TokenStream,
    where_clause: &Option<syn::WhereClause>,
) -> TokenStream {
    let item = &checked.item;
    let name_str = f.sig.ident.to_string();
    let attr = &checked.attr;
    let local = |l: &LocalId| {
        let name = &item.locals[l.0 as usize].name;
        syn::Ident::new(&name.text, name.span)
    };
    let closure_body = |e: &Option<syn::Expr>| match e {
        Some(syn::Expr::Closure(c)) => Some(c.body.clone()),
        _ => None,
    };
    let host_fn =
        |fn_name: &str, inputs: TokenStream, ret: &TokenStream, body: TokenStream, doc: String| {
            let fn_name = format_ident!("{}", fn_name);
            let all = quote!(#inputs #ret #body);
            let used: Vec<&syn::GenericParam> = f
                .sig
                .generics
                .params
                .iter()
                .filter(|gp| match gp {
                    syn::GenericParam::Type(tp) => mentions(&all, &tp.ident),
                    _ => false,
                })
                .collect();
            let g = if used.is_empty() {
                quote!()
            } else {
                quote!(<#(#used),*>)
            };
            quote! {
                #[doc = #doc]
                #[inline]
                pub fn #fn_name #g (#inputs) -> #ret #where_clause { #body }
            }
        };
    let host_identity = |e: &syn::Expr| literal_identity(parts, &types.acc, acc).unwrap_or_else(|| quote!(#e));
    let identity_fn = attr.identity.as_ref().map(|e| {
        host_fn(
            "identity_host",
            quote!(),
            acc,
            host_identity(e),
            format!("The identity of `{name_str}` on the host (the attribute's `identity`)."),
        )
    });
    let reduce_fn = closure_body(&attr.reduce).and_then(|body| {
        let (a, b) = (
            local(parts.reduce.params.first()?),
            local(parts.reduce.params.get(1)?),
        );
        Some(host_fn(
            "reduce_host",
            quote!(#a: #acc, #b: #acc),
            acc,
            quote!(#body),
            format!("The reduce function of `{name_str}` on the host (the attribute's `reduce`)."),
        ))
    });
    let post_fn = match (&parts.post, closure_body(&attr.post)) {
        (Some(c), Some(body)) => c.params.first().map(local).map(|a| {
            host_fn(
                "post_host",
                quote!(#a: #acc),
                out,
                quote!(#body),
                format!("The post-map of `{name_str}` on the host (the attribute's `post`)."),
            )
        }),
        _ => Some(host_fn(
            "post_host",
            quote!(a: #acc),
            out,
            quote!(a),
            format!(
                "The post-map of `{name_str}` on the host: `{name_str}` has no `post`, so the accumulator itself."
            ),
        )),
    };
    quote! {
        #identity_fn
        #reduce_fn
        #post_fn
    }
}

/// The reduction on the CPU device (`cpu::ReduceLoop`, docs/cpu.md): copies of the map,
/// `identity`, `reduce` and `post` with the device's arithmetic (`host_body`), the map's value
/// converted to the accumulator as the GPU converts it, for every instance the bounds admit. A
/// conversion the host cannot write (`f16` to `f32`, complex ones) leaves the entry without
/// instances: such a reduction reports that it does not run on the CPU.
fn host_entry(
    f: &syn::ItemFn,
    checked: &Checked,
    generics: &syn::Generics,
    acc: &TokenStream,
    out: &TokenStream,
    parts: &ReductionParts,
    types: &ReductionTypes,
) -> TokenStream {
    let name = &f.sig.ident;
    let item = &checked.item;
    let attr = &checked.attr;
    let tf = super::host_body::turbofish(&item.generics);
    let (impl_generics, _, where_clause) = generics.split_for_impl();
    let local = |l: &LocalId| {
        let name = &item.locals[l.0 as usize].name;
        syn::Ident::new(&name.text, name.span)
    };
    let closure_body = |e: &Option<syn::Expr>| match e {
        Some(syn::Expr::Closure(c)) => Some(super::host_body::host_expr(&c.body)),
        _ => None,
    };

    // The map's value as the accumulator (what the GPU's conversion does), when the host can
    // write it.
    let m = quote!(__m);
    let convert = if item.ret == types.acc {
        Some(m.clone())
    } else {
        let primitive = |t: &Ty| matches!(t, Ty::Scalar(d) if d.is_int() || (d.is_float() && d.size() >= 4));
        match (&item.ret, &types.acc) {
            (r, a) if primitive(r) && primitive(a) => Some(quote!(#m as #acc)),
            (Ty::Param(k), Ty::Scalar(cuprum_abi::dtype::DType::F64))
                if item.generics.get(*k as usize).is_some_and(|g| g.bound.implies(crate::lang::Bound::Real)) =>
            {
                Some(quote!(__cuprum::Real::to_f64(#m)))
            }
            (Ty::Scalar(cuprum_abi::dtype::DType::F64), Ty::Param(_)) => Some(quote!(<#acc as __cuprum::Number>::from_f64(#m))),
            _ => None,
        }
    };
    let Some(convert) = convert else {
        return quote! {
            /// The reduction on the CPU device: its map's value cannot be converted to the
            /// accumulator on the host, so no instance runs there.
            #[doc(hidden)]
            pub fn __cuprum_host_entry(__l: &__cuprum::cpu::ReduceLoop<'_>) -> __cuprum::Result<()> {
                ::core::result::Result::Err(__l.not_compiled())
            }
        };
    };

    let mut prepare = Vec::new();
    let mut reads = Vec::new();
    let mut call_args = Vec::new();
    // The same over a run of consecutive elements (`ReduceLoop::run_fast`).
    let (mut run_ptrs, mut run_reads) = (Vec::new(), Vec::new());
    let inputs: Vec<&syn::FnArg> = f.sig.inputs.iter().collect();
    for (k, p) in checked.sig.params.iter().enumerate() {
        let ident = format_ident!("__cuprum_a{}", k);
        let elem = rust_types::named(&p.elem, &item.generics);
        if p.role != Role::Raw {
            let ptr = format_ident!("__cuprum_p{}", k);
            run_ptrs.push(quote!(let #ptr = __run.ptr(#k) as *const #elem;));
            run_reads.push(quote!(let #ident: #elem = #ptr.add(__j).read();));
        }
        match p.role {
            Role::Raw => {
                prepare.push(quote!(let #ident: __cuprum::lang::views::Raw<#elem> = unsafe { __l.raw::<#elem>(#k) }?;));
                let by_ref = matches!(inputs.get(k), Some(syn::FnArg::Typed(t)) if matches!(*t.ty, syn::Type::Reference(_)));
                call_args.push(if by_ref { quote!(&#ident) } else { quote!(#ident.clone()) });
            }
            _ => {
                reads.push(quote!(let #ident: #elem = unsafe { __e.get::<#elem>(#k) };));
                call_args.push(quote!(#ident));
            }
        }
    }
    let host_fn = format_ident!("__cuprum_host_{}", name);
    let copy = super::host_body::host_copy(f, &host_fn);
    let mut call = quote!(#host_fn #tf (#(#call_args),*));
    let positional = checked.uses_index() || checked.uses_loop_position();
    let fold_run = if positional {
        quote!(::core::option::Option::None)
    } else {
        quote!(::core::option::Option::Some(&|__run: &__cuprum::cpu::Run<'_>, __acc: ::core::option::Option<#acc>| -> ::core::option::Option<#acc> {
            // SAFETY: each pointer is its input's first element of the run, followed by `len()`
            // consecutive elements of its parameter's type for this instance.
            unsafe {
                #(#run_ptrs)*
                let mut __j = 0usize;
                let mut __a: #acc = match __acc {
                    ::core::option::Option::Some(__a) => __a,
                    ::core::option::Option::None => {
                        #(#run_reads)*
                        let __m = #call;
                        __j = 1;
                        #convert
                    }
                };
                while __j < __run.len() {
                    #(#run_reads)*
                    let __m = #call;
                    __a = __reduce(__a, #convert);
                    __j += 1;
                }
                ::core::option::Option::Some(__a)
            }
        }))
    };
    if positional {
        call = quote!(__cuprum::lang::intrinsics::with_reduce_index(__e.reduce_index(), || {
            __cuprum::lang::intrinsics::with_elementwise_index(__e.index(), __e.size(), || #call)
        }));
    }
    let identity = match &attr.identity {
        Some(e) => {
            let e = literal_identity(parts, &types.acc, &acc).unwrap_or_else(|| {
                let e = super::host_body::host_expr(e);
                quote!(#e)
            });
            quote!(::core::option::Option::Some({ let __i: #acc = #e; __i }))
        }
        None => quote!(::core::option::Option::None),
    };
    let Some(reduce_body) = closure_body(&attr.reduce) else {
        return quote!(::core::compile_error!("cuprum: a reduction without its `reduce` closure; report this as a cuprum bug"););
    };
    let (Some(ra), Some(rb)) = (parts.reduce.params.first().map(local), parts.reduce.params.get(1).map(local)) else {
        return quote!(::core::compile_error!("cuprum: a `reduce` closure without two parameters; report this as a cuprum bug"););
    };
    let post = match (&parts.post, closure_body(&attr.post)) {
        (Some(c), Some(body)) => match c.params.first().map(local) {
            Some(pa) => quote!(|#pa: #acc| -> #out { #body }),
            None => quote!(|__a: #acc| -> #out { __a }),
        },
        _ => quote!(|__a: #acc| -> #out { __a }),
    };
    let entry = super::host_body::entry(checked, quote!(ReduceLoop));
    quote! {
        /// The map with the device's arithmetic (`host_body`), for the CPU device.
        #copy

        #[allow(clippy::let_unit_value, clippy::redundant_clone, unused_parens)]
        fn __cuprum_host #impl_generics (__l: &__cuprum::cpu::ReduceLoop<'_>) -> __cuprum::Result<()> #where_clause {
            #(#prepare)*
            let __map = |__e: &__cuprum::cpu::Element<'_>| -> #acc {
                // SAFETY (each read): the argument's type is its parameter's for this instance,
                // checked by the launch against the signature.
                #(#reads)*
                let __m = #call;
                #convert
            };
            let __reduce = |#ra: #acc, #rb: #acc| -> #acc { #reduce_body };
            let __post = #post;
            // SAFETY: the output's element type is `#out` for this instance (checked by the launch).
            unsafe { __l.run_fast::<#acc, #out>(#identity, &__map, &__reduce, &__post, #fold_run) }
        }

        #entry
    }
}

/// A literal identity for an accumulator no Rust literal types (a generic parameter, `f16`,
/// `bf16`; typeck/identity.rs) on the host: converted by `from_i64` / `from_f64`, as on the device.
fn literal_identity(parts: &ReductionParts, acc_ty: &Ty, acc: &TokenStream) -> Option<TokenStream> {
    let lit = IdentityLiteral::for_accumulator(parts.identity.as_deref()?, acc_ty)?;
    Some(match lit.as_i64() {
        Some(v) => {
            let v = proc_macro2::Literal::i64_suffixed(v);
            quote!(<#acc as __cuprum::Number>::from_i64(#v))
        }
        None => {
            let v = proc_macro2::Literal::f64_suffixed(lit.as_f64());
            quote!(<#acc as __cuprum::Number>::from_f64(#v))
        }
    })
}
