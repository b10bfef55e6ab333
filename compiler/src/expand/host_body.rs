//! The host copy of a kernel's function for the CPU device (docs/cpu.md): the function as the user
//! wrote it (the one the pipeline checked), renamed and private, with every arithmetic operator
//! replaced by the runtime's `lang::kernel_ops` function of the same name (`a + b` is
//! `kernel_ops::add(a, b)`, `x /= y` is `kernel_ops::div_assign(&mut x, y)`, `-x` is
//! `kernel_ops::neg(x)`), so that rustc compiles for the host what the GPU computes: integers wrap
//! in every build profile, division by zero gives 0, shift amounts are masked
//! (docs/semantics.md). Types are left alone (an array length stays a constant expression).

use quote::quote;
use syn::visit_mut::{self, VisitMut};
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

/// `e` with its operators rewritten (a reduction's closure body).
pub(super) fn host_expr(e: &Expr) -> Expr {
    let mut e = e.clone();
    Operators.visit_expr_mut(&mut e);
    e
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
                    (_, Some(f)) => Some(parse_quote!(#ops::#f(&mut #l, #r))),
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
        assert!(text.contains("kernel_ops::add_assign(&mut*acc,__cuprum::lang::kernel_ops::mul(x,__cuprum::lang::kernel_ops::neg(x)))"), "{text}");
        assert!(text.contains("lety=-1;"), "{text}");
        assert!(text.contains("kernel_ops::shl((__cuprum::lang::kernel_ops::div(x,T::one())),2u32)"), "{text}");
    }
}
