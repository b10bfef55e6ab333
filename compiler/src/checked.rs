//! What the macros' expansion starts from: a kernel or device function checked ([`Checked`]), and
//! what the expanders ask of it.

use crate::ir::{self, Ty};
use crate::signature::Signature;
use crate::{front, typeck};

/// A kernel or device function as `pipeline::check_fn` checked it: its typed IR, and the host signature
/// read from that IR. The expanders take parameter roles and types from here only; of the user's
/// tokens they keep the function's name, visibility and generics (passed through as written) and
/// a reduction's closure bodies (its host parts).
#[derive(Debug)]
pub(crate) struct Checked {
    pub item: ir::Item,
    /// The type checker's table for `item`.
    pub types: typeck::Types,
    /// The attribute's arguments as parsed (a reduction's host parts are its closures).
    pub attr: front::KernelAttr,
    /// Empty for a `#[device]` function.
    pub sig: Signature,
}

impl Checked {
    /// Whether the item's body reads the loop index (`index()` or `reduce_index()`): a reduction
    /// whose map does must walk its reduced axes in C order (`ReductionSignature::positional`).
    pub fn uses_index(&self) -> bool {
        self.calls_intrinsic(|i| matches!(i, crate::lang::Intrinsic::Index | crate::lang::Intrinsic::ReduceIndex))
    }

    /// Whether the item's body reads its elementwise loop position (`index()` or `loop_size()`):
    /// the CPU device's loop then sets them for each call of the body.
    pub fn uses_loop_position(&self) -> bool {
        self.calls_intrinsic(|i| matches!(i, crate::lang::Intrinsic::Index | crate::lang::Intrinsic::LoopSize))
    }

    /// Whether the item's body calls an intrinsic `which` accepts.
    fn calls_intrinsic(&self, which: impl Fn(crate::lang::Intrinsic) -> bool) -> bool {
        let mut found = false;
        ir::each_expr_of_item(&self.item, &mut |e| {
            if let ir::ExprKind::Call { callee: ir::Callee::Intrinsic { intrinsic, .. }, .. } = &e.kind {
                found |= which(*intrinsic);
            }
        });
        found
    }

    /// A reduction's accumulator and output types, as the type checker found them.
    pub fn reduction_types(&self) -> Option<ReductionTypes> {
        let ir::ItemKind::Reduction(parts) = &self.item.kind else {
            return None;
        };
        let acc = self
            .types
            .acc
            .clone()
            .unwrap_or_else(|| self.item.ret.clone());
        let out = match &parts.post {
            Some(p) => self.types.of(&p.body).clone(),
            None => acc.clone(),
        };
        Some(ReductionTypes { acc, out })
    }
}

/// A reduction's accumulator and output types ([`Checked::reduction_types`]).
#[derive(Debug)]
pub(crate) struct ReductionTypes {
    /// The accumulator: `acc = T`, else the map's return type.
    pub acc: Ty,
    /// The post-map's result type, the accumulator's without `post`.
    pub out: Ty,
}

