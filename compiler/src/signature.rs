//! The host signature of a kernel: each parameter's name, role and element type, and an
//! elementwise kernel's returned outputs, read from its typed IR.

use crate::diag::Diagnostics;
use crate::front;
use crate::ir::{self, Ty};

/// What the host API of a kernel is made of.
#[derive(Debug, Default)]
pub(crate) struct Signature {
    pub params: Vec<SigParam>,
    /// An elementwise kernel's returned outputs: the tuple's elements, the one type, or none.
    pub outputs: Vec<Typed>,
}

/// A checked type, with how the user wrote it (spans, `usize` spellings) when they did.
#[derive(Debug, Clone)]
pub(crate) struct Typed {
    pub ty: Ty,
    pub written: front::Written,
}

#[derive(Debug)]
pub(crate) struct SigParam {
    pub name: syn::Ident,
    pub role: Role,
    /// The element type the API names: of the slice, view, `Raw` or `&mut`, else the type itself.
    pub elem: Typed,
}

/// How a kernel parameter is passed (the kind-specific rules were checked by `valid`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// `&[T]` / `&mut [T]` (raw kernels).
    Slice { mutable: bool },
    /// `View<T, N>` / `ViewMut<T, N>` (raw kernels).
    View { ndim: u32, mutable: bool },
    /// A scalar type or a generic parameter: by value (raw kernels), a per-element input
    /// (elementwise), a reduced array (reductions).
    Scalar,
    /// A `#[device]` struct: by value (raw kernels), a per-element input from an array
    /// (elementwise).
    Struct,
    /// `Raw<T>` / `&Raw<T>`: an array indexed by the kernel (elementwise, reductions).
    Raw,
    /// `&mut T`: an elementwise parameter read and written.
    InOut,
    /// `&TensorMap<T>` (raw kernels): a TMA descriptor of a 2-D array.
    TensorMap,
}

/// The host signature of a clean kernel, read from its typed IR.
pub(crate) fn signature(
    item: &ir::Item,
    params_written: Vec<front::Written>,
    ret_written: front::Written,
) -> Result<Signature, syn::Error> {
    let mut diags = Diagnostics::new();
    let mut params = Vec::new();
    for (p, written) in item.params.iter().zip(params_written) {
        let local = &item.locals[p.local.0 as usize].name;
        let name = match local.text.strip_prefix("r#") {
            Some(raw) => syn::Ident::new_raw(raw, local.span),
            None => syn::Ident::new(&local.text, local.span),
        };
        let (role, elem) = match &p.ty {
            Ty::Slice { elem, mutable } => (Role::Slice { mutable: *mutable }, (**elem).clone()),
            Ty::View {
                elem,
                ndim,
                mutable,
            } => (
                Role::View {
                    ndim: *ndim,
                    mutable: *mutable,
                },
                (**elem).clone(),
            ),
            Ty::Raw(elem) => (Role::Raw, (**elem).clone()),
            Ty::Ref { inner, mutable: false } if matches!(**inner, Ty::TensorMap(_)) => match &**inner {
                Ty::TensorMap(elem) => (Role::TensorMap, (**elem).clone()),
                _ => unreachable!(),
            },
            Ty::Ref {
                inner,
                mutable: true,
            } => (Role::InOut, (**inner).clone()),
            t @ (Ty::Scalar(_) | Ty::Param(_)) => (Role::Scalar, t.clone()),
            t @ Ty::Struct(_) => (Role::Struct, t.clone()),
            // Under a macro a length or dimension count named by a `const` of the file cannot be
            // read (the file's consts are not in scope): the type is unknown, silently.
            Ty::Error => {
                diags.error(p.span, "this parameter's type names a `const` of the file, which the macro cannot read; write the number as an integer literal (`View<T, 2>`)");
                continue;
            }
            _ => {
                diags.error(
                    p.span,
                    "cuprum: no host type for this parameter; report this as a cuprum bug",
                );
                continue;
            }
        };
        params.push(SigParam {
            name,
            role,
            elem: Typed { ty: elem, written },
        });
    }
    diags.finish()?;
    let outputs = match (&item.kind, &item.ret) {
        (ir::ItemKind::Elementwise, Ty::Unit) => Vec::new(),
        (ir::ItemKind::Elementwise, Ty::Tuple(ts)) => ts
            .iter()
            .cloned()
            .zip(ret_written.split(ts))
            .map(|(ty, written)| Typed { ty, written })
            .collect(),
        (ir::ItemKind::Elementwise, t) => vec![Typed {
            ty: t.clone(),
            written: ret_written,
        }],
        _ => Vec::new(),
    };
    Ok(Signature { params, outputs })
}

