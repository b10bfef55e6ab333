//! Launch variants: a kernel of some kinds has several entry points per instance, one per launch
//! strategy, and the runtime's planner picks one per launch. The variant is part of the symbol
//! (`cuprum_elementwise_add_contig__f32`) and of the instantiation macro's name
//! (`CUPRUM_INSTANTIATE_add_contig`).

use std::fmt;

use crate::kind::KernelKind;

/// An entry point of an elementwise kernel (`include/cuprum/elementwise.h` defines a tag type
/// `cuprum::ew::<name>` per variant).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ElementwiseVariant {
    /// Every array operand C-contiguous with the same layout: a 1-D loop, vector accesses when
    /// aligned.
    Contig,
    /// Strided or broadcast operands, 32-bit index arithmetic.
    S32,
    /// Strided or broadcast operands, 64-bit index arithmetic.
    S64,
    /// A 2-D loop with an operand contiguous along the outer axis (a transposed input or
    /// output), 32-bit index arithmetic: visited by 32 x 32 tiles, those operands exchanged
    /// through shared memory (its own entry point, so that the strided loops' registers do not
    /// limit its occupancy).
    T32,
}

impl ElementwiseVariant {
    /// Every variant, in entry-point order.
    pub const ALL: [ElementwiseVariant; 4] =
        [ElementwiseVariant::Contig, ElementwiseVariant::S32, ElementwiseVariant::S64, ElementwiseVariant::T32];

    /// The name in symbols and in C (`contig`, `s32`, `s64`, `t32`).
    pub const fn name(self) -> &'static str {
        match self {
            ElementwiseVariant::Contig => "contig",
            ElementwiseVariant::S32 => "s32",
            ElementwiseVariant::S64 => "s64",
            ElementwiseVariant::T32 => "t32",
        }
    }

    /// The position in [`ElementwiseVariant::ALL`].
    pub const fn index(self) -> usize {
        self as usize
    }
}

/// An entry point of a reduction: one loop of `include/cuprum/reduction.h` with one index type.
/// `rows` (a block per output, rows split over the grid when outputs are few; the full
/// reduction), `warps` (a warp per output), `cols` (a thread per output, the reduced axis split
/// over blocks when outputs are few); the `64` variants index with 64-bit integers, the others
/// with 32-bit ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ReductionVariant {
    /// A block per output, 32-bit indices.
    Rows,
    /// A warp per output, 32-bit indices.
    Warps,
    /// A thread per output, 32-bit indices.
    Cols,
    /// A block per output, 64-bit indices.
    Rows64,
    /// A warp per output, 64-bit indices.
    Warps64,
    /// A thread per output, 64-bit indices.
    Cols64,
}

impl ReductionVariant {
    /// Every variant, in entry-point order.
    pub const ALL: [ReductionVariant; 6] = [
        ReductionVariant::Rows,
        ReductionVariant::Warps,
        ReductionVariant::Cols,
        ReductionVariant::Rows64,
        ReductionVariant::Warps64,
        ReductionVariant::Cols64,
    ];

    /// The name in symbols (`rows`, ..., `cols64`).
    pub const fn name(self) -> &'static str {
        match self {
            ReductionVariant::Rows => "rows",
            ReductionVariant::Warps => "warps",
            ReductionVariant::Cols => "cols",
            ReductionVariant::Rows64 => "rows64",
            ReductionVariant::Warps64 => "warps64",
            ReductionVariant::Cols64 => "cols64",
        }
    }

    /// The loop of `include/cuprum/reduction.h` it runs (`cuprum::reduce_<strategy>`): `rows`,
    /// `warps` or `cols`.
    pub const fn strategy(self) -> &'static str {
        match self {
            ReductionVariant::Rows | ReductionVariant::Rows64 => "rows",
            ReductionVariant::Warps | ReductionVariant::Warps64 => "warps",
            ReductionVariant::Cols | ReductionVariant::Cols64 => "cols",
        }
    }

    /// Whether it indexes with 64-bit integers.
    pub const fn wide(self) -> bool {
        matches!(self, ReductionVariant::Rows64 | ReductionVariant::Warps64 | ReductionVariant::Cols64)
    }

    /// The C index type of its loop (`i32` or `i64`).
    pub const fn index_type(self) -> &'static str {
        if self.wide() { "i64" } else { "i32" }
    }
}

/// A launch variant of any kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Variant {
    /// An elementwise kernel's variant.
    Elementwise(ElementwiseVariant),
    /// A reduction's variant.
    Reduction(ReductionVariant),
}

impl Variant {
    /// The name in symbols.
    pub const fn name(self) -> &'static str {
        match self {
            Variant::Elementwise(v) => v.name(),
            Variant::Reduction(v) => v.name(),
        }
    }

    /// Whether it indexes with 64-bit integers (`s64`, `rows64`, ...): needed only for arrays
    /// whose offsets pass 2^31 elements.
    pub const fn wide(self) -> bool {
        match self {
            Variant::Elementwise(v) => matches!(v, ElementwiseVariant::S64),
            Variant::Reduction(v) => v.wide(),
        }
    }

    /// Whether builds precompile it (nvcc, into the fat binary): every variant except the 64-bit
    /// index ones and `t32`, which NVRTC compiles at first use (docs/building.md, "What is
    /// precompiled": `t32` serves only transposed 2-D operands and would add 12% to the built-ins).
    pub const fn precompiled(self) -> bool {
        !self.wide() && !matches!(self, Variant::Elementwise(ElementwiseVariant::T32))
    }

    /// The kind of kernel that has this variant.
    pub const fn kind(self) -> KernelKind {
        match self {
            Variant::Elementwise(_) => KernelKind::Elementwise,
            Variant::Reduction(_) => KernelKind::Reduction,
        }
    }
}

const ELEMENTWISE: [Variant; 4] = [
    Variant::Elementwise(ElementwiseVariant::Contig),
    Variant::Elementwise(ElementwiseVariant::S32),
    Variant::Elementwise(ElementwiseVariant::S64),
    Variant::Elementwise(ElementwiseVariant::T32),
];

const REDUCTION: [Variant; 6] = [
    Variant::Reduction(ReductionVariant::Rows),
    Variant::Reduction(ReductionVariant::Warps),
    Variant::Reduction(ReductionVariant::Cols),
    Variant::Reduction(ReductionVariant::Rows64),
    Variant::Reduction(ReductionVariant::Warps64),
    Variant::Reduction(ReductionVariant::Cols64),
];

impl KernelKind {
    /// The launch variants of a kernel of this kind, one entry point each; empty for a raw
    /// kernel (its one entry point has no variant).
    pub const fn variants(self) -> &'static [Variant] {
        match self {
            KernelKind::RawKernel => &[],
            KernelKind::Elementwise => &ELEMENTWISE,
            KernelKind::Reduction => &REDUCTION,
        }
    }
}

impl From<ElementwiseVariant> for Variant {
    fn from(v: ElementwiseVariant) -> Variant {
        Variant::Elementwise(v)
    }
}

impl From<ReductionVariant> for Variant {
    fn from(v: ReductionVariant) -> Variant {
        Variant::Reduction(v)
    }
}

impl fmt::Display for ElementwiseVariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for ReductionVariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reduction_variants_name_their_loop_and_index() {
        let table: Vec<(&str, &str, &str)> = ReductionVariant::ALL.iter().map(|v| (v.name(), v.strategy(), v.index_type())).collect();
        assert_eq!(
            table,
            [
                ("rows", "rows", "i32"),
                ("warps", "warps", "i32"),
                ("cols", "cols", "i32"),
                ("rows64", "rows", "i64"),
                ("warps64", "warps", "i64"),
                ("cols64", "cols", "i64"),
            ]
        );
    }

    #[test]
    fn elementwise_variants_in_order() {
        assert_eq!(ElementwiseVariant::ALL.map(ElementwiseVariant::name), ["contig", "s32", "s64", "t32"]);
        assert!(ElementwiseVariant::ALL.iter().enumerate().all(|(i, v)| v.index() == i));
        assert_eq!(Variant::from(ReductionVariant::Cols64).to_string(), "cols64");
        let wide: Vec<&str> = [KernelKind::Elementwise, KernelKind::Reduction]
            .iter()
            .flat_map(|k| k.variants())
            .filter(|v| v.wide())
            .map(|v| v.name())
            .collect();
        assert_eq!(wide, ["s64", "rows64", "warps64", "cols64"]);
        let compiled_at_first_use: Vec<&str> = [KernelKind::Elementwise, KernelKind::Reduction]
            .iter()
            .flat_map(|k| k.variants())
            .filter(|v| !v.precompiled())
            .map(|v| v.name())
            .collect();
        assert_eq!(compiled_at_first_use, ["s64", "t32", "rows64", "warps64", "cols64"]);
    }

    #[test]
    fn variants_belong_to_their_kind() {
        assert!(KernelKind::RawKernel.variants().is_empty());
        for k in [KernelKind::Elementwise, KernelKind::Reduction] {
            assert!(!k.variants().is_empty());
            assert!(k.variants().iter().all(|v| v.kind() == k));
        }
        assert_eq!(KernelKind::Elementwise.variants().len(), ElementwiseVariant::ALL.len());
        assert_eq!(KernelKind::Reduction.variants().len(), ReductionVariant::ALL.len());
    }
}
