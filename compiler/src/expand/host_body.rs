//! The host code of a kernel for the CPU device (docs/cpu.md), shared by the elementwise and
//! reduction expanders: the entry that picks an instance ([`entry`]), and the host copy of a
//! kernel's function ([`host_copy`]): the function as the user
//! wrote it (the one the pipeline checked), renamed and private, with every arithmetic operator
//! replaced by the runtime's `lang::kernel_ops` function of the same name (`a + b` is
//! `kernel_ops::add(a, b)`, `x /= y` is `kernel_ops::div_assign(&mut x, y)`, `-x` is
//! `kernel_ops::neg(x)`), so that rustc compiles for the host what the GPU computes: integers wrap
//! in every build profile, division by zero gives 0, shift amounts are masked
//! (docs/semantics.md). Types are left alone (an array length stays a constant expression).

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::visit_mut::{self, VisitMut};

use cuprum_abi::dtype::DType;
use crate::checked::Checked;
use syn::{BinOp, Expr, UnOp, parse_quote};

/// `f` as `name`: private, its attributes dropped but for `allow`, its operators rewritten.
pub(super) fn host_copy(f: &syn::ItemFn, name: &syn::Ident) -> syn::ItemFn {
    let mut g = f.clone();
    g.attrs.retain(|a| a.path().is_ident("allow"));
    g.attrs.push(parse_quote!(#[allow(unused_parens, clippy::all)]));
    g.vis = syn::Visibility::Inherited;
    g.sig.ident = name.clone();
    Operators.visit_block_mut(&mut g.block);
    g
}

/// `::<T, U>` naming the item's generic parameters (nothing for a non-generic item).
pub(super) fn turbofish(generics: &[crate::ir::Generic]) -> TokenStream {
    if generics.is_empty() {
        return quote!();
    }
    let ids = generics.iter().map(|g| syn::Ident::new(&g.name.text, proc_macro2::Span::call_site()));
    quote!(::<#(#ids),*>)
}

/// The instances the CPU code is compiled for: every combination of dtypes the generic
/// parameters' bounds admit (what NVRTC would compile on a GPU), unless that is more than
/// [`MAX_HOST_INSTANCES`]; then the instances the kernel precompiles for the GPU.
fn host_instances(checked: &Checked) -> Vec<Vec<DType>> {
    let mut combos: Vec<Vec<DType>> = vec![Vec::new()];
    for g in &checked.item.generics {
        let admitted: Vec<DType> = DType::ALL.iter().copied().filter(|d| g.bound.admits(*d)).collect();
        combos = combos
            .into_iter()
            .flat_map(|c| {
                admitted.iter().map(move |d| {
                    let mut c = c.clone();
                    c.push(*d);
                    c
                })
            })
            .collect();
        if combos.len() > MAX_HOST_INSTANCES {
            return checked.item.instances.clone();
        }
    }
    combos
}

/// The most instances a kernel's CPU code is compiled for (each is a monomorphized body).
const MAX_HOST_INSTANCES: usize = 64;

/// `__cuprum_host_entry(l)`: calls `__cuprum_host::<types>(l)` for the loop's instance (`l` a
/// `cpu::<looptype>`), an error for another.
pub(super) fn entry(checked: &Checked, looptype: TokenStream) -> TokenStream {
    let arms = host_instances(checked).into_iter().map(|inst| {
        let variants = inst.iter().map(|d| format_ident!("{}", format!("{d:?}")));
        let types = inst.iter().map(|d| super::rust_types::scalar(*d, proc_macro2::Span::call_site(), false));
        let host = if inst.is_empty() { quote!(__cuprum_host) } else { quote!(__cuprum_host::<#(#types),*>) };
        quote!([#(__cuprum::DType::#variants),*] => #host(__l),)
    });
    quote! {
        /// The kernel on the CPU device (docs/cpu.md).
        #[doc(hidden)]
        pub fn __cuprum_host_entry(__l: &__cuprum::cpu::#looptype<'_>) -> __cuprum::Result<()> {
            match __l.instance() {
                #(#arms)*
                _ => ::core::result::Result::Err(__l.not_compiled()),
            }
        }
    }
}

/// `e` with its operators rewritten (a reduction's closure body).
pub(super) fn host_expr(e: &Expr) -> Expr {
    let mut e = e.clone();
    Operators.visit_expr_mut(&mut e);
    e
}

/// A `gpu_print!`/`gpu_println!` call with each argument rewritten by `f` (a visitor sees a
/// macro's tokens only; the host macro is `print!`, docs/kernel-language.md, Printing). Other
/// macros are left alone (the front end rejects them).
pub(super) fn rewrite_print_args(m: &mut syn::Macro, f: &mut dyn FnMut(&mut Expr)) {
    use syn::parse::Parser;
    let name = m.path.segments.last().map(|s| s.ident.to_string()).unwrap_or_default();
    if name != "gpu_print" && name != "gpu_println" {
        return;
    }
    let parser = |input: syn::parse::ParseStream| -> syn::Result<(syn::LitStr, syn::punctuated::Punctuated<Expr, syn::Token![,]>)> {
        let lit: syn::LitStr = input.parse()?;
        if input.is_empty() {
            return Ok((lit, Default::default()));
        }
        input.parse::<syn::Token![,]>()?;
        Ok((lit, syn::punctuated::Punctuated::parse_terminated(input)?))
    };
    let Ok((lit, mut args)) = parser.parse2(m.tokens.clone()) else { return };
    for a in args.iter_mut() {
        f(a);
    }
    let args = args.iter();
    m.tokens = quote!(#lit #(, #args)*);
}

struct Operators;

impl VisitMut for Operators {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        visit_mut::visit_expr_mut(self, e);
        let ops = quote!(__cuprum::lang::kernel_ops);
        let new: Option<Expr> = match e {
            Expr::Binary(b) => {
                let (l, r) = (&b.left, &b.right);
                let f = match b.op {
                    BinOp::Add(_) => Some(quote!(add)),
                    BinOp::Sub(_) => Some(quote!(sub)),
                    BinOp::Mul(_) => Some(quote!(mul)),
                    BinOp::Div(_) => Some(quote!(div)),
                    BinOp::Rem(_) => Some(quote!(rem)),
                    BinOp::Shl(_) => Some(quote!(shl)),
                    BinOp::Shr(_) => Some(quote!(shr)),
                    _ => None,
                };
                let assign = match b.op {
                    BinOp::AddAssign(_) => Some(quote!(add_assign)),
                    BinOp::SubAssign(_) => Some(quote!(sub_assign)),
                    BinOp::MulAssign(_) => Some(quote!(mul_assign)),
                    BinOp::DivAssign(_) => Some(quote!(div_assign)),
                    BinOp::RemAssign(_) => Some(quote!(rem_assign)),
                    BinOp::ShlAssign(_) => Some(quote!(shl_assign)),
                    BinOp::ShrAssign(_) => Some(quote!(shr_assign)),
                    _ => None,
                };
                match (f, assign) {
                    (Some(f), _) => Some(parse_quote!(#ops::#f(#l, #r))),
                    // The value first, as Rust evaluates `a op= b` on primitives (and so `v +=
                    // f(v)` borrows `v` only once `f(v)` is computed).
                    (_, Some(f)) => Some(parse_quote!({ let __cuprum_rhs = #r; #ops::#f(&mut #l, __cuprum_rhs) })),
                    _ => None,
                }
            }
            // A negative literal stays one (it cannot overflow but for `MIN`, which Rust spells so).
            Expr::Unary(u) if matches!(u.op, UnOp::Neg(_)) && !matches!(*u.expr, Expr::Lit(_)) => {
                let x = &u.expr;
                Some(parse_quote!(#ops::neg(#x)))
            }
            _ => None,
        };
        if let Some(n) = new {
            *e = n;
        }
    }

    fn visit_macro_mut(&mut self, m: &mut syn::Macro) {
        rewrite_print_args(m, &mut |e| self.visit_expr_mut(e));
    }

    // An array length is a constant: `[0.0; N + 1]` stays as written.
    fn visit_expr_repeat_mut(&mut self, r: &mut syn::ExprRepeat) {
        self.visit_expr_mut(&mut r.expr);
    }

    fn visit_type_mut(&mut self, _: &mut syn::Type) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operators_become_kernel_ops_calls() {
        let f: syn::ItemFn = parse_quote! {
            /// Doc.
            #[inline]
            pub fn k<T: Int>(x: T, acc: &mut T) -> T {
                let a: [f32; 2 + 1] = [0.0; 3 - 1 + 1];
                *acc += x * -x;
                let y = -1;
                (x / T::one()) << 2u32
            }
        };
        let g = host_copy(&f, &syn::Ident::new("host_k", proc_macro2::Span::call_site()));
        let text = quote!(#g).to_string().replace(' ', "");
        assert!(text.starts_with("#[allow(unused_parens,clippy::all)]fnhost_k<T:Int>"), "{text}");
        assert!(text.contains("[f32;2+1]") && text.contains("[0.0;3-1+1]"), "{text}");
        assert!(text.contains("{let__cuprum_rhs=__cuprum::lang::kernel_ops::mul(x,__cuprum::lang::kernel_ops::neg(x));__cuprum::lang::kernel_ops::add_assign(&mut*acc,__cuprum_rhs)}"), "{text}");
        assert!(text.contains("lety=-1;"), "{text}");
        assert!(text.contains("kernel_ops::shl((__cuprum::lang::kernel_ops::div(x,T::one())),2u32)"), "{text}");
    }
}
