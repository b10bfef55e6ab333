//! The typed API of a `#[reduction]`: `NAME::call(args..)` returning a builder
//! (`.axis(k)`, `.axes([..])`, `.keepdims(b)`, `.out(&mut y)`, `.stream(&s)`, `.run()`), and the
//! attribute's parts as host functions (`NAME::identity_host()`, `NAME::reduce_host(a, b)`,
//! `NAME::post_host(a)`) for a host reference; the map is the user's function itself.
//!
//! | kernel parameter | `call` argument | passed as |
//! | --- | --- | --- |
//! | a scalar type or a generic `T` | `&Array<T>` (broadcast with the other arrays) | `reduction::Arg::Array` |
//! | `Raw<T>` | `&Array<T>` (whole, not broadcast) | `reduction::Arg::Raw` |
//!
//! The builder is `cuprum::ReductionCall<'a, Out>` (one generic type for every reduction), where
//! `Out` is the post-map's result type (the accumulator's when there is no `post`), as the type
//! checker found it. Generic parameters are inferred from the arguments; their dtypes pick the
//! instance.

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::{format_ident, quote};

use super::unit::UnitInfo;
use crate::diag::Diagnostics;
use crate::dtype::DType;
use crate::front::{self, AttrKind};
use crate::ir::{ItemKind, Ty};

/// The types the expansion needs from the type checker: the accumulator's and the output's.
struct PartTypes {
    acc: TokenStream,
    out: TokenStream,
}

/// Rust tokens for a checked type (generic parameters by name, the non-primitive dtypes through
/// `__cuprum`); `None` for a type a reduction's accumulator or output cannot have.
fn ty_tokens(t: &Ty, generics: &[syn::Ident]) -> Option<TokenStream> {
    match t {
        Ty::Param(k) => generics.get(*k as usize).map(|g| quote!(#g)),
        Ty::Scalar(d) => Some(match d {
            DType::F16 => quote!(__cuprum::lang::prelude::f16),
            DType::BF16 => quote!(__cuprum::lang::prelude::bf16),
            DType::C32 => quote!(__cuprum::lang::prelude::Complex<f32>),
            DType::C64 => quote!(__cuprum::lang::prelude::Complex<f64>),
            d => {
                let i = syn::Ident::new(d.rust_name(), Span::call_site());
                quote!(#i)
            }
        }),
        _ => None,
    }
}

/// Lowers and type-checks the (already checked, clean) item again to read the accumulator and
/// post-map types.
fn part_types(attr: &TokenStream, f: &syn::ItemFn, generics: &[syn::Ident]) -> Option<PartTypes> {
    let mut diags = Diagnostics::new();
    let scope = front::FileScope::default();
    let item = front::lower_item(AttrKind::Reduction, attr.clone(), Span::call_site(), f, &scope, &mut diags)?;
    let module = crate::ir::Module { items: vec![item], structs: Vec::new() };
    let types = crate::typeck::check(&module, &mut diags).pop()?;
    let item = &module.items[0];
    let ItemKind::Reduction(parts) = &item.kind else { return None };
    let acc_ty = types.acc.clone().unwrap_or_else(|| item.ret.clone());
    let out_ty = match &parts.post {
        Some(p) => types.of(&p.body).clone(),
        None => acc_ty.clone(),
    };
    Some(PartTypes { acc: ty_tokens(&acc_ty, generics)?, out: ty_tokens(&out_ty, generics)? })
}

/// Whether `ident` occurs anywhere in `tokens`.
fn mentions(tokens: &TokenStream, ident: &syn::Ident) -> bool {
    tokens.clone().into_iter().any(|t| match t {
        TokenTree::Ident(i) => i == *ident,
        TokenTree::Group(g) => mentions(&g.stream(), ident),
        _ => false,
    })
}

/// The attribute's `name = value` arguments that the host parts need.
#[derive(Default)]
struct HostParts {
    identity: Option<syn::Expr>,
    reduce: Option<syn::ExprClosure>,
    post: Option<syn::ExprClosure>,
}

/// One `name = value` argument; `instances` and `acc` take types (`acc = Complex<f32>` is not
/// an expression), the others expressions. The front end has checked the arguments already.
struct NamedArg {
    name: syn::Ident,
    value: Option<syn::Expr>,
}

impl syn::parse::Parse for NamedArg {
    fn parse(input: syn::parse::ParseStream) -> syn::Result<Self> {
        let name: syn::Ident = input.parse()?;
        if !input.peek(syn::Token![=]) {
            return Ok(NamedArg { name, value: None });
        }
        input.parse::<syn::Token![=]>()?;
        match name.to_string().as_str() {
            "instances" => {
                let content;
                syn::bracketed!(content in input);
                content.parse::<TokenStream>()?;
                Ok(NamedArg { name, value: None })
            }
            "acc" => {
                input.parse::<syn::Type>()?;
                Ok(NamedArg { name, value: None })
            }
            _ => Ok(NamedArg { name, value: Some(input.parse()?) }),
        }
    }
}

fn host_parts(attr: &TokenStream) -> HostParts {
    let mut out = HostParts::default();
    let parser = syn::punctuated::Punctuated::<NamedArg, syn::Token![,]>::parse_terminated;
    let Ok(list) = syn::parse::Parser::parse2(parser, attr.clone()) else { return out };
    for arg in list {
        match (arg.name.to_string().as_str(), arg.value) {
            ("identity", Some(v)) => out.identity = Some(v),
            ("reduce", Some(syn::Expr::Closure(c))) => out.reduce = Some(c),
            ("post", Some(syn::Expr::Closure(c))) => out.post = Some(c),
            _ => {}
        }
    }
    out
}

/// The name of a closure parameter (`a` or `a: f64`).
fn closure_param(p: &syn::Pat) -> Option<syn::Ident> {
    match p {
        syn::Pat::Ident(pi) => Some(pi.ident.clone()),
        syn::Pat::Type(pt) => closure_param(&pt.pat),
        _ => None,
    }
}

/// The module of a clean `#[reduction]` item, with the translation unit of its file.
pub(super) fn expand(f: &syn::ItemFn, attr: &TokenStream, cx: &super::Context) -> TokenStream {
    let unit = super::unit::unit_for(cx, || super::item_source(AttrKind::Reduction, attr, f));
    reduction_module(f, attr, &unit)
}

/// `mod NAME { statics; host parts; pub fn call(..) -> ReductionCall }`.
pub(super) fn reduction_module(f: &syn::ItemFn, attr: &TokenStream, unit: &UnitInfo) -> TokenStream {
    let name = &f.sig.ident;
    let name_str = name.to_string();
    let vis = &f.vis;
    let statics = super::kernel_statics("reduction", &name_str, unit);

    // Generic parameters keep their bounds and are also `Scalar` (their dtype picks the instance).
    let mut generics = f.sig.generics.clone();
    let mut dtypes = Vec::new();
    let mut idents = Vec::new();
    for gp in generics.params.iter_mut() {
        if let syn::GenericParam::Type(tp) = gp {
            tp.bounds.push(syn::parse_quote!(__cuprum::Scalar));
            let t = &tp.ident;
            idents.push(t.clone());
            dtypes.push(quote!(<#t as __cuprum::Scalar>::DTYPE));
        }
    }
    let Some(PartTypes { acc, out }) = part_types(attr, f, &idents) else {
        let msg = format!("cuprum: could not determine the accumulator and output types of reduction `{name_str}`");
        return quote!(::core::compile_error!(#msg););
    };
    let where_clause = &generics.where_clause;

    // `call`'s parameters: every kernel parameter as an array.
    let mut params = Vec::new();
    let mut args = Vec::new();
    for (k, input) in f.sig.inputs.iter().enumerate() {
        let syn::FnArg::Typed(pt) = input else { continue };
        let ident = match &*pt.pat {
            syn::Pat::Ident(p) => p.ident.clone(),
            _ => format_ident!("arg{}", k),
        };
        match raw_elem(&pt.ty) {
            Some(elem) => {
                params.push(quote!(#ident: &'__a __cuprum::Array<#elem>));
                args.push(quote!(__cuprum::reduction::Arg::raw(#ident)));
            }
            None => {
                let ty = &pt.ty;
                params.push(quote!(#ident: &'__a __cuprum::Array<#ty>));
                args.push(quote!(__cuprum::reduction::Arg::array(#ident)));
            }
        }
    }
    let gparams = generics.params.iter();
    let call_generics = quote!(<'__a, #(#gparams),*>);

    // The host parts, each generic over the parameters it mentions.
    let parts = host_parts(attr);
    let host_fn = |fn_name: &str, inputs: TokenStream, ret: &TokenStream, body: TokenStream, doc: String| {
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
        let g = if used.is_empty() { quote!() } else { quote!(<#(#used),*>) };
        quote! {
            #[doc = #doc]
            #[inline]
            pub fn #fn_name #g (#inputs) -> #ret #where_clause { #body }
        }
    };
    let has_identity = parts.identity.is_some();
    let identity_fn = parts.identity.as_ref().map(|e| {
        host_fn(
            "identity_host",
            quote!(),
            &acc,
            quote!(#e),
            format!("The identity of `{name_str}` on the host (the attribute's `identity`)."),
        )
    });
    let reduce_fn = parts.reduce.as_ref().and_then(|c| {
        let (a, b) = (closure_param(c.inputs.first()?)?, closure_param(c.inputs.get(1)?)?);
        let body = &c.body;
        Some(host_fn(
            "reduce_host",
            quote!(#a: #acc, #b: #acc),
            &acc,
            quote!(#body),
            format!("The reduce function of `{name_str}` on the host (the attribute's `reduce`)."),
        ))
    });
    let post_fn = match &parts.post {
        Some(c) => c.inputs.first().and_then(closure_param).map(|a| {
            let body = &c.body;
            host_fn(
                "post_host",
                quote!(#a: #acc),
                &out,
                quote!(#body),
                format!("The post-map of `{name_str}` on the host (the attribute's `post`)."),
            )
        }),
        None => Some(host_fn(
            "post_host",
            quote!(a: #acc),
            &out,
            quote!(a),
            format!("The post-map of `{name_str}` on the host: `{name_str}` has no `post`, so the accumulator itself."),
        )),
    };

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
            use ::cuprum::__private as __cuprum;

            #statics

            /// Whether the reduction has an identity (an empty reduction is then `post(identity)`).
            #[doc(hidden)]
            pub const __HAS_IDENTITY: bool = #has_identity;

            /// The kernel (its per-device instances), for type-erased callers.
            #[doc(hidden)]
            pub fn __kernel() -> &'static __cuprum::registry::Kernel {
                &__CUPRUM_KERNEL
            }

            #identity_fn
            #reduce_fn
            #post_fn

            #[doc = #doc_call]
            #[inline]
            pub fn call #call_generics (#(#params),*) -> __cuprum::ReductionCall<'__a, #out> #where_clause {
                let __info = __cuprum::reduction::ReductionInfo {
                    has_identity: #has_identity,
                    acc_bytes: ::core::mem::size_of::<#acc>(),
                };
                // SAFETY: the arguments are the map's parameters in order, `Arg::Raw` exactly for
                // its `Raw<T>` parameters, with the element types rustc checked against the
                // instance chosen from the generic parameters; the output type is the kernel's
                // output type for that instance (the post-map's result type, as the compiler's
                // type checker found it).
                unsafe {
                    __cuprum::ReductionCall::new(
                        &__CUPRUM_KERNEL,
                        __info,
                        &[#(#dtypes),*],
                        ::std::vec![#(#args),*],
                    )
                }
            }
        }
    }
}

/// `T` of a `Raw<T>` parameter type.
fn raw_elem(ty: &syn::Type) -> Option<syn::Type> {
    let syn::Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    if last.ident != "Raw" {
        return None;
    }
    let syn::PathArguments::AngleBracketed(a) = &last.arguments else { return None };
    match a.args.first()? {
        syn::GenericArgument::Type(t) => Some(t.clone()),
        _ => None,
    }
}
