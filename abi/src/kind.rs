//! The kinds of generated kernels. The kind is part of every kernel symbol
//! (`cuprum_<kind>_<name>...`, see [`crate::mangle`]) and decides which launch variants a kernel
//! has ([`KernelKind::variants`], defined with the variants in `variant.rs`, the module above).

use std::fmt;

/// What generated a kernel: which attribute (`#[rawkernel]`, `#[elementwise]`, `#[reduction]`) or
/// which run-time definition (`ElementwiseKernel`, `ReductionKernel`) of the same shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum KernelKind {
    /// `#[rawkernel]`: the user manages the parallelism; one entry point per instance.
    RawKernel,
    /// `#[elementwise]` / `ElementwiseKernel`: one entry point per [`ElementwiseVariant`](crate::variant::ElementwiseVariant).
    Elementwise,
    /// `#[reduction]` / `ReductionKernel`: one entry point per [`ReductionVariant`](crate::variant::ReductionVariant).
    Reduction,
}

impl KernelKind {
    /// Every kind.
    pub const ALL: [KernelKind; 3] = [KernelKind::RawKernel, KernelKind::Elementwise, KernelKind::Reduction];

    /// The name in symbols, which is also the attribute's name: `rawkernel`, `elementwise`,
    /// `reduction`.
    pub const fn name(self) -> &'static str {
        match self {
            KernelKind::RawKernel => "rawkernel",
            KernelKind::Elementwise => "elementwise",
            KernelKind::Reduction => "reduction",
        }
    }

    /// The kind named `name` ([`KernelKind::name`]).
    pub fn from_name(name: &str) -> Option<KernelKind> {
        KernelKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// [`KernelKind::from_name`] in constant context, for tables that generated code initializes
    /// with the kind's name. Panics (a compile error in a `static`) on an unknown name.
    pub const fn from_name_const(name: &str) -> KernelKind {
        let b = name.as_bytes();
        if bytes_eq(b, b"rawkernel") {
            KernelKind::RawKernel
        } else if bytes_eq(b, b"elementwise") {
            KernelKind::Elementwise
        } else if bytes_eq(b, b"reduction") {
            KernelKind::Reduction
        } else {
            panic!("not a cuprum kernel kind (rawkernel, elementwise, reduction)")
        }
    }
}

const fn bytes_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

impl fmt::Display for KernelKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Compares with the kind's name (`kind == "reduction"`), as tables keyed by name do.
impl PartialEq<&str> for KernelKind {
    fn eq(&self, other: &&str) -> bool {
        self.name() == *other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for k in KernelKind::ALL {
            assert_eq!(KernelKind::from_name(k.name()), Some(k));
            assert_eq!(KernelKind::from_name_const(k.name()), k);
        }
        assert_eq!(KernelKind::from_name("device"), None);
        const R: KernelKind = KernelKind::from_name_const("reduction");
        assert_eq!(R, KernelKind::Reduction);
    }
}
