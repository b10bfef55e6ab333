//! The Rust side of a kernel: what an attribute macro puts next to the user's function.
//!
//! Entry point: [`expand_item`]. It checks the item (every error at its span, as
//! `compile_error!`), and for a clean kernel adds a module of the same name as the function (a
//! function and a module live in different namespaces, so `copy(..)` still calls the Rust function
//! and `copy::launch(..)` launches the kernel) holding:
//!
//! - the kernel's translation unit ([`unit::UnitInfo`]): the CUDA C of the kernel's whole file, as
//!   `cuprum emit` and the build crate produce it, and the fat binary the build crate compiled from
//!   exactly that source when there is one (found under `OUT_DIR` by [`cuprum_abi::mangle::unit_id`]);
//! - a `registry::Kernel` static, the per-device table of loaded instances;
//! - an `inventory` entry, so the program can list its kernels;
//! - the typed entry points of the kernel's kind (`rawkernel::launch_module`,
//!   `elementwise::call_module`).
//!
//! Generated code reaches the runtime only through `<crate>::__private` (`crate = path` on the
//! attribute; `::cuprum` by default), aliased `__cuprum` inside the module.

mod elementwise;
mod fuse;
mod host_body;
mod host_kernel;
mod host_regions;
mod opening;
mod rawkernel;
mod reduction;
mod rust_types;
mod structs;
#[cfg(test)]
mod tests;
pub mod unit;

use std::path::PathBuf;

use proc_macro2::TokenStream;
use quote::{quote, ToTokens};

use crate::attr_kind::AttrKind;

pub use fuse::expand_fuse;

/// What the macro knows besides the tokens: the file the item is in (to translate it whole, so
/// that `#[device]` functions and consts of the file are part of the unit) and the crate's
/// `OUT_DIR` (where the build crate wrote fat binaries).
#[derive(Debug, Clone, Default)]
pub struct Context {
    /// The item's source file (`Span::local_file`), when the compiler knows it.
    pub file: Option<PathBuf>,
    /// The crate's `OUT_DIR`, when it has a build script.
    pub out_dir: Option<PathBuf>,
}

/// The expansion of `#[elementwise]`, `#[reduction]`, `#[rawkernel]` or `#[device]` on `item`.
pub fn expand_item(kind: AttrKind, attr: TokenStream, item: TokenStream, cx: &Context) -> TokenStream {
    if kind == AttrKind::Device {
        if let Ok(s) = syn::parse2::<syn::ItemStruct>(item.clone()) {
            return structs::expand(&s, &attr, cx);
        }
    }
    let f: syn::ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(_) => return crate::check_item(kind, attr, item),
    };
    let mut out = if kind == AttrKind::Device {
        f.to_token_stream()
    } else {
        // Often only launched, never called on the host: not dead code.
        quote!(#[allow(dead_code)] #f)
    };
    // The item's file, read once for this call: its structs (the scope) and its whole unit.
    let text = cx.file.as_deref().and_then(|p| std::fs::read_to_string(p).ok());
    let scope = match (cx.file.as_deref(), text.as_deref()) {
        (Some(path), Some(text)) => crate::front::FileScope::for_source(path, text),
        _ => crate::front::FileScope::default(),
    };
    let checked = match crate::pipeline::check_fn(kind, attr.clone(), &f, &scope) {
        Ok(c) => c,
        Err(e) => {
            let mut out = without_body(&f).to_token_stream();
            out.extend(e.to_compile_error());
            return out;
        }
    };
    // The whole file's mistakes in this item that its own check cannot see.
    if let (Some(path), Some(text)) = (cx.file.as_deref(), text.as_deref())
        && !unit::file_translates(path, text)
    {
        let mistakes = crate::pipeline::file_mistakes_in(&unit::display_path(path), text, &f.sig.ident.to_string());
        if !mistakes.is_empty() {
            let mut out = without_body(&f).to_token_stream();
            for m in mistakes {
                out.extend(syn::Error::new(f.sig.ident.span(), m).to_compile_error());
            }
            return out;
        }
    }
    if kind == AttrKind::Device {
        // The host copy that raw kernels call on the CPU device (`host_kernel`).
        let private = checked.attr.private_path();
        let copy = host_kernel::host_kernel(&f, &host_kernel::device_copy_name(&f.sig.ident), &quote!(#private::cpu::lang));
        let mut item = copy.item;
        item.vis = f.vis.clone();
        // The operators' rewrite names the runtime `__cuprum`, as inside a kernel's module.
        item.block.stmts.insert(0, syn::parse_quote!(use #private as __cuprum;));
        // An index out of range in it is reported with its name, as on the GPU.
        let name = f.sig.ident.to_string();
        item.block.stmts.insert(1, syn::parse_quote!(let __cuprum_in_fn = __cuprum::cpu::lang::in_function(#name);));
        item.attrs.push(syn::parse_quote!(#[doc(hidden)]));
        out.extend(quote!(#item));
        return out;
    }
    let unit = unit::unit_for(cx, text.as_deref(), || item_source(kind, &attr, &f));
    out.extend(match kind {
        AttrKind::RawKernel => rawkernel::launch_module(&f, &checked, &unit, host_kernel::device_fns_synchronize(text.as_deref())),
        AttrKind::Elementwise => elementwise::call_module(&f, &checked, &unit),
        AttrKind::Reduction => reduction::reduction_module(&f, &checked, &unit),
        AttrKind::Device => unreachable!("returned above"),
    });
    out
}

/// `f` with its body replaced by `unreachable!()`: what a kernel with mistakes expands to next to
/// their `compile_error!`s, so that rustc reports each mistake once, cuprum's message at its
/// token, and not again as its own errors in the body (a method the kernel language has but Rust's
/// traits lack, an iterator's bounds); callers still find the function with its signature.
fn without_body(f: &syn::ItemFn) -> syn::ItemFn {
    let mut f = f.clone();
    f.attrs.push(syn::parse_quote!(#[allow(unused_variables, unused_mut, dead_code)]));
    f.block = Box::new(syn::parse_quote!({ ::core::unreachable!() }));
    f
}

/// The item alone, with its attribute, as source text (the unit when the file cannot be read).
fn item_source(kind: AttrKind, attr: &TokenStream, f: &syn::ItemFn) -> String {
    let attr_name = syn::Ident::new(crate::pipeline::attr_name(kind), proc_macro2::Span::call_site());
    quote!(#[#attr_name(#attr)] #f).to_string()
}

/// The statics every kernel module starts with: its `registry::Kernel` and its inventory entry,
/// and, in the file's owner kernel only, the unit (source, fat binary and build record, embedded
/// once per file) with its entry in the runtime's unit table. The file's other kernels find the unit by id.
///
/// `signature` is the kernel's `launch::signature::Signature` (an expression of the generated
/// module); the kernel's `static` is made with `Kernel::new`, whose contract (the signature
/// describes the entry points this unit's code defines) the code generator keeps.
fn kernel_statics(name: &str, unit: &unit::UnitInfo, signature: TokenStream, host: Option<TokenStream>) -> TokenStream {
    let host = host.map(|h| quote!(.with_host(#h)));
    let file = &unit.file;
    let id = unit.id();
    let kernel = if unit.embeds(name) {
        let source = &unit.source;
        let fast_math = unit.fast_math;
        let fatbin = match &unit.fatbin {
            Some(p) => {
                let p = p.display().to_string();
                quote!(::core::option::Option::Some(include_bytes!(#p)))
            }
            None => quote!(::core::option::Option::None),
        };
        let targets = &unit.targets;
        let precompiled = &unit.precompiled;
        let build = &unit.build;
        let parts = unit.parts.iter().map(|p| {
            let (kernel, offset, len) = (&p.kernel, p.offset, p.len);
            quote!((#kernel, #offset, #len))
        });
        // The audit record (`cuprum_abi::record`), referenced from the unit so that the linker
        // keeps it exactly when it keeps the unit (a `#[used]` static alone may be dropped).
        let record = syn::LitByteStr::new(&unit.record(), proc_macro2::Span::call_site());
        quote! {
            static __CUPRUM_UNIT: __cuprum::registry::KernelUnit = __cuprum::registry::KernelUnit::new(
                #id, #file, #source, #fast_math, #fatbin, &[#(#targets),*], &[#(#precompiled),*], #build,
                &[#(#parts),*],
            )
            .with_record(#record);
            // SAFETY: the fat binary and its parts were compiled by cuprum-build from this source.
            __cuprum::inventory::submit! { unsafe { __cuprum::registry::UnitEntry::new(&__CUPRUM_UNIT) } }
            // SAFETY: the signature is the one the code generator wrote this kernel's entry
            // points with, and their code indexes only through checked accesses.
            static __CUPRUM_KERNEL: __cuprum::registry::Kernel = unsafe {
                __cuprum::registry::Kernel::new(__cuprum::registry::UnitRef::Embedded(&__CUPRUM_UNIT), #name, #signature)#host
            };
        }
    } else {
        quote! {
            // SAFETY: as for the file's first kernel, which embeds the unit found by `id`.
            static __CUPRUM_KERNEL: __cuprum::registry::Kernel = unsafe {
                __cuprum::registry::Kernel::new(__cuprum::registry::UnitRef::Shared { id: #id, file: #file }, #name, #signature)#host
            };
        }
    };
    quote! {
        #kernel
        __cuprum::inventory::submit! { __cuprum::registry::KernelEntry::new(&__CUPRUM_KERNEL) }
    }
}
