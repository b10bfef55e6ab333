//! Associated constants of concrete types: `f32::INFINITY`, `i32::MAX`, `u32::BITS`, and the
//! `std::f64::consts` items (`f64::consts::PI`, or `PI` once imported).
//!
//! The type checker resolves `Ty::NAME` to an [`AssocConst`] and records it; the CUDA writer
//! spells the recorded constant.

use super::NumFn;

vocabulary! {
    /// An associated constant.
    pub enum AssocConst {
        /// `u32::BITS`: the width of an integer type, a `u32`.
        Bits = "BITS",
        ;
        /// A value of the type itself.
        Num(NumConst),
    }
}

impl AssocConst {
    /// Whether float types have it.
    pub fn on_float(self) -> bool {
        match self {
            AssocConst::Bits => false,
            AssocConst::Num(_) => true,
        }
    }

    /// Whether integer types have it.
    pub fn on_int(self) -> bool {
        match self {
            AssocConst::Bits => true,
            AssocConst::Num(c) => c.on_int(),
        }
    }
}

vocabulary! {
    /// The constants whose value has the type itself, spelled `cuprum::num<T>::name()`
    /// (`include/cuprum/math.h`). Every one exists on the float types.
    pub enum NumConst {
        Infinity = "INFINITY",
        NegInfinity = "NEG_INFINITY",
        Nan = "NAN",
        Epsilon = "EPSILON",
        Max = "MAX",
        Min = "MIN",
        MinPositive = "MIN_POSITIVE",
        Pi = "PI",
        E = "E",
        Tau = "TAU",
        Sqrt2 = "SQRT_2",
        Ln2 = "LN_2",
        Ln10 = "LN_10",
        FracPi2 = "FRAC_PI_2",
        FracPi4 = "FRAC_PI_4",
        Frac1Pi = "FRAC_1_PI",
        Frac1Sqrt2 = "FRAC_1_SQRT_2",
        Log2E = "LOG2_E",
        Log10E = "LOG10_E",
    }
}

impl NumConst {
    /// Whether integer types have it too.
    pub fn on_int(self) -> bool {
        use NumConst::*;
        match self {
            Max | Min => true,
            Infinity | NegInfinity | Nan | Epsilon | MinPositive | Pi | E | Tau | Sqrt2 | Ln2 | Ln10 | FracPi2 | FracPi4 | Frac1Pi
            | Frac1Sqrt2 | Log2E | Log10E => false,
        }
    }

    /// Whether it lives in the `std::f32::consts` / `std::f64::consts` modules (which a glob
    /// `use` imports) rather than on the type.
    pub fn in_consts_module(self) -> bool {
        use NumConst::*;
        match self {
            Infinity | NegInfinity | Nan | Epsilon | Max | Min | MinPositive => false,
            Pi | E | Tau | Sqrt2 | Ln2 | Ln10 | FracPi2 | FracPi4 | Frac1Pi | Frac1Sqrt2 | Log2E | Log10E => true,
        }
    }

    /// The numeric-trait function with the same value, which a generic `T` calls instead
    /// (`T::max_value()` for `MAX`).
    pub fn trait_fn(self) -> Option<NumFn> {
        use NumConst::*;
        match self {
            Infinity => Some(NumFn::Infinity),
            NegInfinity => Some(NumFn::NegInfinity),
            Nan => Some(NumFn::Nan),
            Epsilon => Some(NumFn::Epsilon),
            Max => Some(NumFn::MaxValue),
            Min => Some(NumFn::MinValue),
            Pi => Some(NumFn::Pi),
            E => Some(NumFn::E),
            MinPositive | Tau | Sqrt2 | Ln2 | Ln10 | FracPi2 | FracPi4 | Frac1Pi | Frac1Sqrt2 | Log2E | Log10E => None,
        }
    }

    /// The member of `cuprum::num<T>`.
    pub fn c_name(self) -> &'static str {
        use NumConst::*;
        match self {
            Infinity => "infinity",
            NegInfinity => "neg_infinity",
            Nan => "nan",
            Epsilon => "epsilon",
            Max => "max_value",
            Min => "min_value",
            MinPositive => "min_positive",
            Pi => "pi",
            E => "e",
            Tau => "tau",
            Sqrt2 => "sqrt_2",
            Ln2 => "ln_2",
            Ln10 => "ln_10",
            FracPi2 => "frac_pi_2",
            FracPi4 => "frac_pi_4",
            Frac1Pi => "frac_1_pi",
            Frac1Sqrt2 => "frac_1_sqrt_2",
            Log2E => "log2_e",
            Log10E => "log10_e",
        }
    }
}
