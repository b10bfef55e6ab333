//! The one map from checked IR types to the Rust types the generated API names.
//!
//! Scalars are Rust's primitives, the non-primitive dtypes are named through `__cuprum` (the
//! prelude's `f16`, `bf16`, `Complex<f32>`, `Complex<f64>`), generic parameters and `#[device]`
//! structs by their names. Where the user wrote the type ([`crate::front::Written`]), each name carries the span
//! of the user's token (rustc's messages about the generated API point there) and a 64-bit integer
//! written `usize` / `isize` keeps that spelling (the same C type, not the same Rust type).

use proc_macro2::{Literal, Span, TokenStream};
use quote::{quote, quote_spanned};

use cuprum_abi::dtype::DType;
use crate::front::Leaf;
use crate::ir::{Generic, Ty};
use crate::signature::Typed;

/// Rust tokens for a type the host passes by value or as an array element (scalars, generic
/// parameters, structs, and tuples and fixed-size arrays of them); `None` for any other type (a
/// type the checked API has no host name for, such as one that is `Ty::Error` because it could not
/// be known under the macro).
pub(super) fn tokens(t: &Typed, generics: &[Generic]) -> Option<TokenStream> {
    let mut leaves = t.written.leaves.iter();
    walk(&t.ty, generics, &mut leaves)
}

/// [`tokens`], or a `compile_error!` where the type has no host name (not a clean kernel's
/// parameter or output type: a cuprum bug).
pub(super) fn named(t: &Typed, generics: &[Generic]) -> TokenStream {
    tokens(t, generics).unwrap_or_else(|| quote!(::core::compile_error!("cuprum: a kernel type has no host name; report this as a cuprum bug")))
}

/// [`tokens`] of a type the user did not write (the type checker's): names at the call site,
/// generic parameters at their declarations.
pub(super) fn checked(t: &Ty, generics: &[Generic]) -> Option<TokenStream> {
    walk(t, generics, &mut [].iter())
}

fn walk<'a>(t: &Ty, generics: &[Generic], leaves: &mut impl Iterator<Item = &'a Leaf>) -> Option<TokenStream> {
    Some(match t {
        Ty::Unit => quote!(()),
        Ty::Scalar(d) => {
            let leaf = leaves.next();
            scalar(*d, leaf.map_or_else(Span::call_site, |l| l.span), leaf.is_some_and(|l| l.pointer_sized))
        }
        Ty::Param(k) => {
            let g = generics.get(*k as usize)?;
            let span = leaves.next().map_or(g.name.span, |l| l.span);
            let id = syn::Ident::new(&g.name.text, span);
            quote!(#id)
        }
        Ty::Struct(name) => {
            let span = leaves.next().map_or_else(Span::call_site, |l| l.span);
            let id = syn::Ident::new(name, span);
            quote!(#id)
        }
        Ty::Tuple(ts) => {
            let ts = ts.iter().map(|t| walk(t, generics, leaves)).collect::<Option<Vec<_>>>()?;
            quote!((#(#ts,)*))
        }
        Ty::Array(elem, len) => {
            let elem = walk(elem, generics, leaves)?;
            let len = Literal::u64_unsuffixed(*len);
            quote!([#elem; #len])
        }
        _ => return None,
    })
}

pub(super) fn scalar(d: DType, span: Span, pointer_sized: bool) -> TokenStream {
    match d {
        DType::F16 => quote_spanned!(span=> __cuprum::lang::prelude::f16),
        DType::BF16 => quote_spanned!(span=> __cuprum::lang::prelude::bf16),
        DType::F8E4M3 => quote_spanned!(span=> __cuprum::lang::prelude::f8e4m3),
        DType::F8E5M2 => quote_spanned!(span=> __cuprum::lang::prelude::f8e5m2),
        DType::C32 => quote_spanned!(span=> __cuprum::lang::prelude::Complex<f32>),
        DType::C64 => quote_spanned!(span=> __cuprum::lang::prelude::Complex<f64>),
        DType::U64 if pointer_sized => quote_spanned!(span=> usize),
        DType::I64 if pointer_sized => quote_spanned!(span=> isize),
        d => {
            let id = syn::Ident::new(d.rust_name(), span);
            quote!(#id)
        }
    }
}

/// `ParamType::Generic(k)` for the k-th generic type parameter, else `Fixed(dtype)`.
pub(super) fn param_type(t: &Typed, generics: &[Generic]) -> TokenStream {
    if let Ty::Param(k) = t.ty {
        let k = k as u8;
        return quote!(__cuprum::launch::signature::ParamType::Generic(#k));
    }
    let ty = named(t, generics);
    quote!(__cuprum::launch::signature::ParamType::Fixed(<#ty as __cuprum::Element>::ELEM))
}

/// [`param_type`] of a type the caller has already named as Rust tokens (`ty`).
pub(super) fn param_type_of(t: &Ty, ty: &TokenStream) -> TokenStream {
    if let Ty::Param(k) = t {
        let k = *k as u8;
        return quote!(__cuprum::launch::signature::ParamType::Generic(#k));
    }
    quote!(__cuprum::launch::signature::ParamType::Fixed(<#ty as __cuprum::Element>::ELEM))
}
