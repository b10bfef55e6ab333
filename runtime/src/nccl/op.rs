//! The reduction operators of NCCL's reducing collectives.

use std::ffi::c_int;

use cudarc::nccl::sys::ncclRedOp_t;

/// How a reducing collective (`all_reduce`, `reduce`, `reduce_scatter`) combines the ranks'
/// elements, element by element.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// The sum.
    Sum,
    /// The product.
    Prod,
    /// The minimum.
    Min,
    /// The maximum.
    Max,
    /// The mean: the sum divided by the number of ranks (for integers NCCL's integer division).
    Avg,
}

impl ReduceOp {
    /// NCCL's `ncclRedOp_t` (the `int` NCCL's functions take).
    pub(super) fn raw(self) -> c_int {
        (match self {
            ReduceOp::Sum => ncclRedOp_t::ncclSum,
            ReduceOp::Prod => ncclRedOp_t::ncclProd,
            ReduceOp::Min => ncclRedOp_t::ncclMin,
            ReduceOp::Max => ncclRedOp_t::ncclMax,
            ReduceOp::Avg => ncclRedOp_t::ncclAvg,
        }) as c_int
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ops_are_nccl_s_numbers() {
        // nccl.h: ncclSum 0, ncclProd 1, ncclMax 2, ncclMin 3, ncclAvg 4.
        let ops = [(ReduceOp::Sum, 0), (ReduceOp::Prod, 1), (ReduceOp::Max, 2), (ReduceOp::Min, 3), (ReduceOp::Avg, 4)];
        for (op, n) in ops {
            assert_eq!(op.raw(), n, "{op:?}");
        }
    }
}
