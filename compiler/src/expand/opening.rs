//! The opening every kernel module shares: the names, the runtime path, the statics and the
//! generic parameters, each also `Scalar`, with the dtype expressions that pick the instance.

use proc_macro2::TokenStream;
use quote::quote;

use super::unit::UnitInfo;
use crate::checked::Checked;

/// What the module of every kernel kind starts from.
pub(super) struct Opening<'f> {
    /// The kernel's (and its module's) name.
    pub name: &'f syn::Ident,
    /// The same as a string.
    pub name_str: String,
    /// The function's visibility, which the module gets.
    pub vis: &'f syn::Visibility,
    /// `<crate>::__private`, aliased `__cuprum` inside the module.
    pub private: TokenStream,
    /// The kernel's statics (`kernel_statics`).
    pub statics: TokenStream,
    /// The function's generic parameters, each with `__cuprum::Scalar` added to its bounds.
    pub generics: syn::Generics,
    /// `<T as __cuprum::Scalar>::DTYPE` for each type parameter, in order: the instance's dtypes.
    pub dtypes: Vec<TokenStream>,
}

impl<'f> Opening<'f> {
    /// The opening of `f`'s module; `signature` and `host` as for `kernel_statics`.
    pub fn new(f: &'f syn::ItemFn, checked: &Checked, unit: &UnitInfo, signature: TokenStream, host: Option<TokenStream>) -> Self {
        let name = &f.sig.ident;
        let name_str = name.to_string();
        let statics = super::kernel_statics(&name_str, unit, signature, host);
        // Generic parameters keep their bounds and are also `Scalar` (their dtype picks the instance).
        let mut generics = f.sig.generics.clone();
        let mut dtypes = Vec::new();
        for gp in generics.params.iter_mut() {
            if let syn::GenericParam::Type(tp) = gp {
                tp.bounds.push(syn::parse_quote!(__cuprum::Scalar));
                let t = &tp.ident;
                dtypes.push(quote!(<#t as __cuprum::Scalar>::DTYPE));
            }
        }
        Opening { name, name_str, vis: &f.vis, private: checked.attr.private_path(), statics, generics, dtypes }
    }
}
