//! The Rust side of a `#[device]` struct: the struct unchanged, plus the two unsafe traits that
//! let it cross to the device (`DeviceRepr`: a kernel parameter by value; `Element`: an array
//! element), after the checks that make them sound.
//!
//! The checks: the front end's struct rules (`front::structs`: `#[repr(C)]`, field types, no
//! `bool`, no padding under CUDA's layout) and, in the generated code, rustc's own word that
//! every field type is an `Element` and that `size_of` is the size the compiler computed (so
//! the C struct in the kernel's unit and the Rust struct agree byte for byte).

use proc_macro2::TokenStream;
use quote::{quote, ToTokens};

use crate::diag::Diagnostics;
use crate::attr_kind::AttrKind;
use crate::front::{self, FileScope};
use crate::layout;

pub(super) fn expand(s: &syn::ItemStruct, attr: &TokenStream, cx: &super::Context) -> TokenStream {
    let mut out = s.to_token_stream();
    let mut diags = Diagnostics::new();
    // `crate = path` only.
    let mut attr_diags = Diagnostics::new();
    let parsed = front::parse_attr(AttrKind::Device, attr.clone(), proc_macro2::Span::call_site(), &mut attr_diags);
    if !attr_diags.is_empty() || parsed.unchecked {
        diags.error(syn::spanned::Spanned::span(attr), "`#[device]` on a struct takes no arguments");
    }
    let private = parsed.private_path();
    let mut scope = FileScope::for_macro(cx.file.as_deref());
    if !scope.has_struct(&s.ident.to_string()) {
        scope.structs.push(s.clone());
    }
    // The other structs of the file (their errors are theirs to report), then this one.
    let others: Vec<_> = scope.structs.iter().filter(|o| o.ident != s.ident).filter_map(|o| front::structs::lower(o, &scope, &mut Diagnostics::new())).collect();
    let def = front::structs::lower(s, &scope, &mut diags);
    let mut all = others;
    if let Some(d) = &def {
        all.push(d.clone());
        front::structs::check_layout(d, &all, &mut diags);
    }
    if let Err(e) = diags.finish() {
        out.extend(e.to_compile_error());
        return out;
    }
    let Some(def) = def else { return out };
    let Some(l) = layout::of_struct(&def, &all) else { return out };

    let name = &s.ident;
    let name_str = name.to_string();
    let (size, align) = (l.layout.size as usize, l.layout.align as usize);
    let field_elems = s.fields.iter().map(|f| innermost(&f.ty));
    let size_msg = format!("`{name_str}`: rustc's size differs from the CUDA struct's {size} bytes; report this as a cuprum bug");
    quote! {
        #out
        const _: () = {
            fn __cuprum_fields_are_elements() {
                fn element<T: #private::Element>() {}
                #(element::<#field_elems>();)*
            }
            assert!(::core::mem::size_of::<#name>() == #size, #size_msg);
        };
        // SAFETY: `#[device]` checked that the struct is `#[repr(C)]`, that its fields are
        // elements (numbers other than bool, arrays of them, other `#[device]` structs: rustc
        // checks the bound above), and that CUDA C lays it out with no padding, so every field is
        // at the same offset on both sides, there are no uninitialised bytes, and every bit
        // pattern is a valid value; the assertion above checks the size.
        unsafe impl #private::DeviceRepr for #name {}
        // SAFETY: as above.
        unsafe impl #private::Element for #name {
            const ELEM: #private::ElemType = #private::ElemType::Struct(
                #private::StructType { name: #name_str, size: #size, align: #align },
            );
        }
    }
}

/// `[[T; N]; M]` -> `T`.
fn innermost(t: &syn::Type) -> &syn::Type {
    match t {
        syn::Type::Array(a) => innermost(&a.elem),
        syn::Type::Paren(p) => innermost(&p.elem),
        other => other,
    }
}
