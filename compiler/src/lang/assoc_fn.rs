//! Associated functions of types, called as `T::f(..)` or `f32::f(..)`: the numeric traits'
//! functions ([`NumFn`]) and the float conversions from other representations.
//!
//! The type checker resolves `Ty::name(..)` to an [`AssocFn`] and records it; the CUDA writer
//! spells the recorded function.

use cuprum_abi::dtype::DType;
use super::Bound;

vocabulary! {
    /// An associated function.
    pub enum AssocFn {
        /// `f16::from_f32(x)` / `bf16::from_f32(x)`.
        FromF32 = "from_f32",
        /// `f32::from_bits(u)`: a float of the given bits (the unsigned integer of its width).
        FromBits = "from_bits",
        /// `bf16::from_f32_pair(a, b) -> [bf16; 2]` / `f16::from_f32_pair(..)`: two `f32`s rounded
        /// as `from_f32` does, every NaN to the NaN `0x7fff`, without `bf16::from_f32`'s check
        /// for NaNs (`cuprum/half.h`).
        FromF32Pair = "from_f32_pair",
        ;
        /// A function of the numeric traits.
        Num(NumFn),
    }
}

vocabulary! {
    /// The functions of the prelude's numeric traits, valid on a generic `T` as on concrete
    /// types; spelled `cuprum::num<T>::name(..)` (`include/cuprum/math.h`).
    pub enum NumFn {
        Zero = "zero",
        One = "one",
        FromF64 = "from_f64",
        FromI64 = "from_i64",
        MinValue = "min_value",
        MaxValue = "max_value",
        Infinity = "infinity",
        NegInfinity = "neg_infinity",
        Nan = "nan",
        Epsilon = "epsilon",
        /// `T::from_bits_u64(b)` of a real type: the value whose bits are the low bits of `b`
        /// (as many as the type has): the inverse of `x.to_bits_u64()`.
        FromBitsU64 = "from_bits_u64",
        Pi = "pi",
        E = "e",
    }
}

impl NumFn {
    /// The trait that provides it: the bound a generic `T` needs, the types a concrete one must be.
    pub fn bound(self) -> Bound {
        use NumFn::*;
        match self {
            Zero | One | FromF64 | FromI64 => Bound::Number,
            MinValue | MaxValue | FromBitsU64 => Bound::Real,
            Infinity | NegInfinity | Nan | Epsilon | Pi | E => Bound::Float,
        }
    }

    /// The type of its one argument; `None` for the constants, which take none.
    pub fn arg(self) -> Option<DType> {
        use NumFn::*;
        match self {
            FromF64 => Some(DType::F64),
            FromI64 => Some(DType::I64),
            FromBitsU64 => Some(DType::U64),
            Zero | One | MinValue | MaxValue | Infinity | NegInfinity | Nan | Epsilon | Pi | E => None,
        }
    }

    /// The member of `cuprum::num<T>`: the Rust name, by the header's convention.
    pub fn c_name(self) -> &'static str {
        self.rust_name()
    }
}
