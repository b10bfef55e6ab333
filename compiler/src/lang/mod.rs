//! The kernel language's vocabulary: the prelude's intrinsics, the methods, the associated
//! functions and constants the compiler understands, with their default precompiled instances.
//!
//! Each family is an enum whose variants know their Rust name, their signature class and their C
//! spelling. Names meet the compiler once: the front end and the type checker resolve them with
//! `from_name`, and the IR (or the type checker's side table, where the receiver's type decides)
//! holds the variant from then on. The validator and the CUDA writer `match` on the variants
//! exhaustively, so a new variant does not compile until every phase handles it.
//!
//! The host definitions live in `cuprum_runtime::lang` under the same names.

#[macro_use]
mod vocabulary;
mod assoc_const;
mod assoc_fn;
mod bound;
mod intrinsic;
mod method;

pub use assoc_const::{AssocConst, NumConst};
pub use assoc_fn::{AssocFn, NumFn};
pub use bound::Bound;
pub use intrinsic::{AtomicOp, HopperOp, Intrinsic, LdMatrix, Mma, Shuffle, SpecialFn, WarpOp};
pub use method::{MathFn, Method, MethodSig, Receiver};

use cuprum_abi::dtype::DType;

/// The instantiations precompiled for a generic parameter when the attribute names none.
pub fn default_instances(bound: Bound) -> &'static [DType] {
    match bound {
        Bound::Float => &[DType::F32, DType::F64],
        Bound::Int => &[DType::I32, DType::I64, DType::U32, DType::U64],
        Bound::Real | Bound::Number | Bound::Scalar => &[DType::I32, DType::I64, DType::F32, DType::F64],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for f in MathFn::ALL {
            assert_eq!(Method::from_name(f.rust_name()), Some(Method::Math(*f)));
        }
        for m in Method::ALL {
            assert_eq!(Method::from_name(m.rust_name()), Some(*m));
        }
        for op in AtomicOp::ALL {
            assert_eq!(Intrinsic::from_name(op.rust_name()), Some(Intrinsic::Atomic(*op)));
        }
        for s in Shuffle::ALL {
            assert_eq!(Intrinsic::from_name(s.rust_name()), Some(Intrinsic::Shuffle(*s)));
        }
        for w in WarpOp::ALL {
            assert_eq!(Intrinsic::from_name(w.rust_name()), Some(Intrinsic::Warp(*w)));
        }
        for m in Mma::ALL {
            assert_eq!(
                Intrinsic::from_name(m.rust_name()),
                Some(Intrinsic::Mma(*m))
            );
        }
        for l in LdMatrix::ALL {
            assert_eq!(
                Intrinsic::from_name(l.rust_name()),
                Some(Intrinsic::LdMatrix(*l))
            );
        }
        for h in HopperOp::ALL {
            assert_eq!(Intrinsic::from_name(h.rust_name()), Some(Intrinsic::Hopper(*h)));
        }
        for f in SpecialFn::ALL {
            assert_eq!(Intrinsic::from_name(f.rust_name()), Some(Intrinsic::Special(*f)));
        }
        for i in Intrinsic::ALL {
            assert_eq!(Intrinsic::from_name(i.rust_name()), Some(*i));
        }
        for f in NumFn::ALL {
            assert_eq!(AssocFn::from_name(f.rust_name()), Some(AssocFn::Num(*f)));
        }
        for c in NumConst::ALL {
            assert_eq!(AssocConst::from_name(c.rust_name()), Some(AssocConst::Num(*c)));
        }
        assert_eq!(Intrinsic::from_name("sigmoid"), None);
    }
}
