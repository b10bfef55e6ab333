//! Rust types as written -> [`Ty`]. Types outside the kernel language are rejected here with what
//! to use instead.

use syn::spanned::Spanned;

use super::FileScope;
use crate::diag::Diagnostics;
use cuprum_abi::dtype::DType;
use crate::ir::Ty;

/// Where a type appears: references are allowed on parameters only.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Position {
    Param,
    Return,
    Local,
}

/// A dtype from its Rust spelling: `f32`, `half::f16`, `Complex<f64>`, `usize` (64-bit on the GPU).
pub fn dtype_of_path(path: &syn::Path) -> Option<DType> {
    let last = path.segments.last()?;
    let name = last.ident.to_string();
    match name.as_str() {
        "usize" => return Some(DType::U64),
        "isize" => return Some(DType::I64),
        "Complex" => {
            let syn::PathArguments::AngleBracketed(args) = &last.arguments else { return None };
            let Some(syn::GenericArgument::Type(syn::Type::Path(inner))) = args.args.first() else { return None };
            return match dtype_of_path(&inner.path)? {
                DType::F32 => Some(DType::C32),
                DType::F64 => Some(DType::C64),
                _ => None,
            };
        }
        _ => {}
    }
    if !last.arguments.is_empty() {
        return None;
    }
    DType::from_rust_name(&name)
}

pub fn lower(t: &syn::Type, generics: &[String], scope: &FileScope, pos: Position, diags: &mut Diagnostics) -> Option<Ty> {
    lower_in(t, generics, scope, pos, diags, &mut Written::default())
}

/// How a type was written, leaf by leaf: one [`Leaf`] per scalar, generic parameter and struct
/// name, in the order a walk of its [`Ty`] meets them (tuple and array elements in order, the
/// element of a slice, reference, `Raw` or view). The generated host API names the types the
/// IR holds with these spans and spellings, so that rustc's messages about them point at the
/// user's tokens.
#[derive(Debug, Clone, Default)]
pub struct Written {
    /// The leaves, in walk order.
    pub leaves: Vec<Leaf>,
}

impl Written {
    /// How each element of a tuple type written this way was written.
    pub fn split(&self, elems: &[Ty]) -> Vec<Written> {
        let mut rest = self.leaves.as_slice();
        elems
            .iter()
            .map(|t| {
                let (these, others) = rest.split_at(leaf_count(t).min(rest.len()));
                rest = others;
                Written { leaves: these.to_vec() }
            })
            .collect()
    }
}

/// How many leaves a type written by the user has.
fn leaf_count(t: &Ty) -> usize {
    match t {
        Ty::Scalar(_) | Ty::Param(_) | Ty::Struct(_) => 1,
        Ty::Tuple(ts) => ts.iter().map(leaf_count).sum(),
        Ty::Ref { inner, .. } => leaf_count(inner),
        other => other.elem().map_or(0, leaf_count),
    }
}

/// One leaf of a written type.
#[derive(Debug, Clone, Copy)]
pub struct Leaf {
    /// Where the leaf was written.
    pub span: proc_macro2::Span,
    /// A 64-bit integer written `usize` / `isize` (the same C type; not the same Rust type).
    pub pointer_sized: bool,
}

/// [`lower`], also recording how the type was written.
pub fn lower_written(t: &syn::Type, generics: &[String], scope: &FileScope, pos: Position, diags: &mut Diagnostics) -> (Option<Ty>, Written) {
    let mut written = Written::default();
    let ty = lower_in(t, generics, scope, pos, diags, &mut written);
    (ty, written)
}

fn lower_in(t: &syn::Type, generics: &[String], scope: &FileScope, pos: Position, diags: &mut Diagnostics, w: &mut Written) -> Option<Ty> {
    let lower = |t: &syn::Type, pos: Position, diags: &mut Diagnostics, w: &mut Written| lower_in(t, generics, scope, pos, diags, w);
    match t {
        syn::Type::Paren(p) => lower(&p.elem, pos, diags, w),
        syn::Type::Group(g) => lower(&g.elem, pos, diags, w),
        syn::Type::Tuple(tt) => {
            if tt.elems.is_empty() {
                return Some(Ty::Unit);
            }
            let elems: Vec<Option<Ty>> = tt.elems.iter().map(|e| lower(e, pos, diags, w)).collect();
            elems.into_iter().collect::<Option<Vec<_>>>().map(Ty::Tuple)
        }
        syn::Type::Array(a) => {
            let elem = lower(&a.elem, Position::Local, diags, w)?;
            let len = const_len(&a.len, scope, diags)?;
            Some(Ty::Array(Box::new(elem), len))
        }
        syn::Type::Reference(r) => {
            if pos != Position::Param {
                diags.error(r.span(), "references are only allowed as kernel and device-function parameters; use a value type here");
                return None;
            }
            let mutable = r.mutability.is_some();
            match &*r.elem {
                syn::Type::Slice(s) => {
                    let elem = lower(&s.elem, Position::Local, diags, w)?;
                    Some(Ty::Slice { elem: Box::new(elem), mutable })
                }
                syn::Type::Array(a) => {
                    let elem = lower(&a.elem, Position::Local, diags, w)?;
                    let len = const_len(&a.len, scope, diags)?;
                    Some(Ty::ArrayRef { elem: Box::new(elem), len, mutable })
                }
                syn::Type::Path(p) if p.path.is_ident("str") => {
                    diags.error(r.span(), "strings are not available in kernels; pass numbers, or a `&[u8]` of bytes");
                    None
                }
                inner => {
                    let inner = lower(inner, Position::Local, diags, w)?;
                    match inner {
                        // `&Raw<T>` (callable on the host without a move) is the same argument.
                        Ty::Raw(_) if !mutable => Some(inner),
                        Ty::Raw(_) => {
                            diags.error(r.span(), "a `Raw<T>` argument is read-only; take it as `Raw<T>` or `&Raw<T>`");
                            None
                        }
                        _ => Some(Ty::Ref { inner: Box::new(inner), mutable }),
                    }
                }
            }
        }
        syn::Type::Slice(s) => {
            diags.error(s.span(), "an unsized slice cannot be a value; take it by reference: `&[T]` or `&mut [T]`");
            None
        }
        syn::Type::Ptr(p) => {
            diags.error(p.span(), "raw pointers are not available in kernels; use a slice `&[T]` / `&mut [T]` or a `View`");
            None
        }
        syn::Type::TraitObject(o) => {
            diags.error(o.span(), "trait objects (`dyn Trait`) are not available in kernels; use a generic parameter with a prelude bound");
            None
        }
        syn::Type::ImplTrait(i) => {
            diags.error(i.span(), "`impl Trait` is not available in kernels; use a generic parameter with a prelude bound");
            None
        }
        syn::Type::BareFn(f) => {
            diags.error(f.span(), "function pointers are not available in kernels; call a `#[device]` function directly");
            None
        }
        syn::Type::Never(n) => {
            diags.error(n.span(), "`!` is not available as a kernel type");
            None
        }
        syn::Type::Infer(i) => {
            diags.error(i.span(), "write the type out; `_` is not allowed here");
            None
        }
        syn::Type::Path(p) => lower_path(p, generics, scope, diags, w),
        other => {
            diags.error(other.span(), "this type is not available in kernels");
            None
        }
    }
}

fn lower_path(p: &syn::TypePath, generics: &[String], scope: &FileScope, diags: &mut Diagnostics, w: &mut Written) -> Option<Ty> {
    if p.qself.is_some() {
        diags.error(p.span(), "qualified paths (`<T as Trait>::X`) are not available in kernels");
        return None;
    }
    let path = &p.path;
    if let Some(id) = path.get_ident() {
        if let Some(i) = generics.iter().position(|g| id == g) {
            w.leaves.push(Leaf { span: id.span(), pointer_sized: false });
            return Some(Ty::Param(i as u32));
        }
    }
    if let Some(d) = dtype_of_path(path) {
        let pointer_sized = path.segments.last().is_some_and(|s| s.ident == "usize" || s.ident == "isize");
        w.leaves.push(Leaf { span: p.span(), pointer_sized });
        return Some(Ty::Scalar(d));
    }
    let last = path.segments.last()?;
    let name = last.ident.to_string();
    let type_args = || -> Vec<&syn::GenericArgument> {
        match &last.arguments {
            syn::PathArguments::AngleBracketed(a) => {
                a.args.iter().filter(|g| !matches!(g, syn::GenericArgument::Lifetime(_))).collect()
            }
            _ => Vec::new(),
        }
    };
    if path.segments.len() == 1 && last.arguments.is_empty() && scope.has_struct(&name) {
        w.leaves.push(Leaf { span: last.ident.span(), pointer_sized: false });
        return Some(Ty::Struct(name));
    }
    match name.as_str() {
        "Dim3" => Some(Ty::Dim3),
        "Raw" => {
            let args = type_args();
            match args.as_slice() {
                [syn::GenericArgument::Type(t)] => {
                    let elem = lower_in(t, generics, scope, Position::Local, diags, w)?;
                    Some(Ty::Raw(Box::new(elem)))
                }
                _ => {
                    diags.error(last.span(), "write `Raw<T>` with one element type");
                    None
                }
            }
        }
        "TensorMap" => {
            let args = type_args();
            match args.as_slice() {
                [syn::GenericArgument::Type(t)] => {
                    let elem = lower_in(t, generics, scope, Position::Local, diags, w)?;
                    Some(Ty::TensorMap(Box::new(elem)))
                }
                _ => {
                    diags.error(last.span(), "write `TensorMap<T>` with one element type");
                    None
                }
            }
        }
        "View" | "ViewMut" => {
            let args = type_args();
            match args.as_slice() {
                [syn::GenericArgument::Type(t), syn::GenericArgument::Const(n)] => {
                    let elem = lower_in(t, generics, scope, Position::Local, diags, w)?;
                    let ndim = const_len(n, scope, diags)? as u32;
                    Some(Ty::View { elem: Box::new(elem), ndim, mutable: name == "ViewMut" })
                }
                [syn::GenericArgument::Type(t), syn::GenericArgument::Type(syn::Type::Path(n))] => {
                    // `View<f32, 2>` parses its `2` as a const argument; a named const is a path.
                    let _ = n;
                    diags.error(t.span(), format!("write the number of dimensions as a literal: `{name}<T, 2>`"));
                    None
                }
                _ => {
                    diags.error(last.span(), format!("write `{name}<T, N>` with an element type and a number of dimensions"));
                    None
                }
            }
        }
        "Vec" | "Box" | "Rc" | "Arc" | "HashMap" | "BTreeMap" | "VecDeque" => {
            diags.error(
                p.span(),
                format!("`{name}` is not available in kernels (no heap on the GPU); use a `&[T]` / `&mut [T]` argument or a local `[T; N]` array"),
            );
            None
        }
        "String" => {
            diags.error(p.span(), "`String` is not available in kernels; pass numbers, or a `&[u8]` of bytes");
            None
        }
        "Option" | "Result" => {
            diags.error(p.span(), format!("`{name}` is not available in kernels; return a value and a `bool` flag in a tuple"));
            None
        }
        "Self" => {
            diags.error(p.span(), "`Self` is not available in kernels");
            None
        }
        "Complex" => {
            diags.error(p.span(), "write `Complex<f32>` or `Complex<f64>`");
            None
        }
        _ => {
            diags.error(
                p.span(),
                format!("unknown type `{}` in a kernel; kernels use scalars (`f32`, `i64`, `f16`, `Complex<f64>`, ...), generic parameters, tuples, `[T; N]`, slices, `View`/`ViewMut`, `Raw<T>`, `Dim3`, and `#[device] #[repr(C)]` structs declared in the same file", quote::ToTokens::to_token_stream(path)),
            );
            None
        }
    }
}

/// An array length or dimension count: an integer literal, or the name of a file-level `const`
/// whose value is one. Under a macro (one item, the file unknown) a name gives `None` silently:
/// rustc checks it, and no C is generated there.
pub fn const_len(e: &syn::Expr, scope: &FileScope, diags: &mut Diagnostics) -> Option<u64> {
    match e {
        syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(i), .. }) => match i.base10_parse::<u64>() {
            Ok(v) => Some(v),
            Err(err) => {
                diags.push(err);
                None
            }
        },
        syn::Expr::Block(b) if b.block.stmts.len() == 1 => match &b.block.stmts[0] {
            syn::Stmt::Expr(e, None) => const_len(e, scope, diags),
            _ => {
                diags.error(e.span(), "write the length as an integer literal or a `const` name");
                None
            }
        },
        syn::Expr::Path(p) if p.path.get_ident().is_some() => {
            let name = p.path.get_ident().map(|i| i.to_string()).unwrap_or_default();
            match scope.consts.get(&name) {
                Some((_, init)) => match const_len(init, scope, diags) {
                    Some(v) => Some(v),
                    None => {
                        diags.error(e.span(), format!("`{name}` is not an integer literal constant; write the length as an integer literal"));
                        None
                    }
                },
                None if !scope.whole_file => None,
                None => {
                    diags.error(e.span(), format!("cannot find constant `{name}`; write the length as an integer literal or the name of a `const` of this file"));
                    None
                }
            }
        }
        syn::Expr::Paren(p) => const_len(&p.expr, scope, diags),
        // `N as usize`: lengths are non-negative integers whatever the constant's type.
        syn::Expr::Cast(c) => const_len(&c.expr, scope, diags),
        syn::Expr::Binary(b) => {
            let (l, r) = (const_len(&b.left, scope, diags)?, const_len(&b.right, scope, diags)?);
            let v = match b.op {
                syn::BinOp::Add(_) => l.checked_add(r),
                syn::BinOp::Sub(_) => l.checked_sub(r),
                syn::BinOp::Mul(_) => l.checked_mul(r),
                syn::BinOp::Div(_) => l.checked_div(r),
                syn::BinOp::Rem(_) => l.checked_rem(r),
                syn::BinOp::Shl(_) => u32::try_from(r).ok().and_then(|r| l.checked_shl(r)),
                _ => {
                    diags.error(b.op.span(), "array lengths use `+ - * / % <<` of integer constants");
                    return None;
                }
            };
            if v.is_none() {
                diags.error(e.span(), "this length overflows or divides by zero");
            }
            v
        }
        other => {
            diags.error(other.span(), "write the length as an integer literal or the name of a `const` of this file");
            None
        }
    }
}
