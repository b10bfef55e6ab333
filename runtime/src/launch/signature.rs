//! Kernel signatures: what the erased launches (`elementwise::launch`, `reduction::launch`)
//! check their operands against. A signature is part of a generated kernel
//! ([`crate::registry::Kernel`]), written by the code generator next to the entry points it
//! describes, so a caller cannot pass one that disagrees with the code.

use crate::elem_type::ElemType;
use cuprum_abi::{DType, KernelKind};

/// How a parameter takes part in the loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// A per-element input: an array (broadcast) or, for elementwise kernels, a scalar (by value).
    In,
    /// A `&mut T` output parameter: an array of the loop shape, read and written.
    InOut,
    /// A raw argument (`Raw<T>`, CuPy's `raw`): an array indexed by the kernel.
    Raw,
    /// A returned output: an array of the loop shape, written.
    Out,
}

/// The element type of a parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ParamType {
    /// The kernel's generic parameter number k: `instance[k]` (always a dtype).
    Generic(u8),
    /// A fixed element type: a dtype or a `#[device]` struct (the generated code writes
    /// `Fixed(<Ty as Element>::ELEM)`).
    Fixed(ElemType),
}

impl ParamType {
    /// The element type for `instance` (one dtype per generic parameter); `None` when the
    /// instance has no entry for a generic parameter.
    pub fn resolve(self, instance: &[DType]) -> Option<ElemType> {
        match self {
            ParamType::Generic(k) => instance.get(k as usize).copied().map(ElemType::Scalar),
            ParamType::Fixed(e) => Some(e),
        }
    }
}

/// One parameter of a kernel's entry point.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Param {
    /// The parameter's name in the kernel.
    pub name: &'static str,
    /// How it takes part in the loop.
    pub role: Role,
    /// Its element type.
    pub ty: ParamType,
}

impl Param {
    /// A parameter from its parts.
    pub const fn new(name: &'static str, role: Role, ty: ParamType) -> Param {
        Param { name, role, ty }
    }
}

/// A reduction's parameters: the map's (each [`Role::In`] or [`Role::Raw`]), the output's type,
/// the accumulator's type (it sizes the partial results of split reductions), and whether an
/// empty reduction has a value (`post(identity)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReductionSignature {
    /// The map's parameters, in order.
    pub params: &'static [Param],
    /// The output's element type.
    pub out: ParamType,
    /// The accumulator's type.
    pub acc: ParamType,
    /// Whether an empty reduction has a value (`post(identity)`).
    pub has_identity: bool,
    /// The map reads the loop index (`index()`): the reduced axes are walked in C order, never
    /// reordered by their strides (the index of an element is its position in C order).
    pub positional: bool,
}

/// What a kernel's launches are checked against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signature {
    /// A `#[rawkernel]`: its generated launch function is typed (rustc checks the arguments);
    /// there is no erased launch.
    RawKernel,
    /// An elementwise kernel's entry point parameters: the kernel's, then its returned outputs.
    Elementwise(&'static [Param]),
    /// A reduction's.
    Reduction(&'static ReductionSignature),
}

impl Signature {
    /// The kernel kind the signature belongs to.
    pub const fn kind(&self) -> KernelKind {
        match self {
            Signature::RawKernel => KernelKind::RawKernel,
            Signature::Elementwise(_) => KernelKind::Elementwise,
            Signature::Reduction(_) => KernelKind::Reduction,
        }
    }
}
