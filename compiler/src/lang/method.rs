//! Methods kernels call on values: `x.sqrt()`, `x.min(y)`, `n.count_ones()`, `a.len()`, ...
//!
//! As naga's `MathFunction`, one variant per name whatever the receiver: `min` is one
//! [`MathFn`] for floats and integers. Each method states its signature ([`MethodSig`]) and the
//! receivers that have it ([`Receiver`]); the type checker resolves `x.name(..)` against the
//! receiver's type to a [`Method`] and records it, and the CUDA writer spells the recorded method.

vocabulary! {
    /// A method of the kernel language.
    pub enum Method {
        /// `a.len() -> usize` of slices, arrays, `Raw` and views.
        Len = "len",
        /// `v.shape() -> [usize; N]` of a view.
        Shape = "shape",
        /// `v.strides() -> [i64; N]` of a view (in elements).
        Strides = "strides",
        /// `x.to_bits()` of a float: its bits as the unsigned integer of its width.
        ToBits = "to_bits",
        /// `x.to_f32()` of `f16` / `bf16`.
        ToF32 = "to_f32",
        /// `unsafe { a.get_unchecked(i) } -> &T` of slices, arrays, `Raw` and views (a view also
        /// takes a multi-index `[i, j]`): the element without the run-time index check.
        GetUnchecked = "get_unchecked",
        /// `unsafe { a.get_unchecked_mut(i) } -> &mut T` of writable slices, arrays and views.
        GetUncheckedMut = "get_unchecked_mut",
        ;
        /// A function of `cuprum/math.h` (or `cuprum/complex.h`) called as a method.
        Math(MathFn),
    }
}

impl Method {
    /// The method's signature shape.
    pub fn sig(self) -> MethodSig {
        match self {
            Method::Len => MethodSig::Len,
            Method::Shape => MethodSig::Shape,
            Method::Strides => MethodSig::Strides,
            Method::ToBits => MethodSig::ToBits,
            Method::ToF32 => MethodSig::ToF32,
            Method::GetUnchecked => MethodSig::GetUnchecked { mutable: false },
            Method::GetUncheckedMut => MethodSig::GetUnchecked { mutable: true },
            Method::Math(f) => f.sig(),
        }
    }

    /// The receivers that have the method (any one of them will do).
    pub fn receivers(self) -> &'static [Receiver] {
        match self {
            Method::Len | Method::GetUnchecked | Method::GetUncheckedMut => &[Receiver::Array],
            Method::Shape | Method::Strides => &[Receiver::View],
            Method::ToBits => &[Receiver::ConcreteFloat],
            Method::ToF32 => &[Receiver::Half],
            Method::Math(f) => f.receivers(),
        }
    }
}

/// The argument and result types of a method, in terms of the receiver's type `Self`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MethodSig {
    /// `x.f() -> Self`
    Unary,
    /// `x.f(y: Self) -> Self`
    Binary,
    /// `x.f(a: Self, b: Self) -> Self`
    Ternary,
    /// `x.f(n: u32) -> Self`
    ByU32,
    /// `x.f(n: i32) -> Self`
    ByI32,
    /// `x.f() -> bool`
    Predicate,
    /// `x.f() -> u32`
    Count,
    /// `x.f() -> f32`
    ToF32,
    /// `x.f() -> f64`
    ToF64,
    /// `x.f() -> uN`, the unsigned integer of the receiver's width.
    ToBits,
    /// `x.f() -> u64`
    ToU64,
    /// `z.f() -> F`, the part type of a complex receiver.
    Part,
    /// `a.len() -> usize`
    Len,
    /// `v.shape() -> [usize; N]`
    Shape,
    /// `v.strides() -> [i64; N]`
    Strides,
    /// `a.get_unchecked(i) -> &T` / `a.get_unchecked_mut(i) -> &mut T`: an index as `a[i]` takes.
    GetUnchecked {
        /// `get_unchecked_mut`.
        mutable: bool,
    },
}

impl MethodSig {
    /// The number of arguments after the receiver.
    pub fn arity(self) -> usize {
        match self {
            MethodSig::Binary | MethodSig::ByU32 | MethodSig::ByI32 | MethodSig::GetUnchecked { .. } => 1,
            MethodSig::Ternary => 2,
            MethodSig::Unary
            | MethodSig::Predicate
            | MethodSig::Count
            | MethodSig::ToF32
            | MethodSig::ToF64
            | MethodSig::ToBits
            | MethodSig::ToU64
            | MethodSig::Part
            | MethodSig::Len
            | MethodSig::Shape
            | MethodSig::Strides => 0,
        }
    }
}

/// The kinds of receiver a method can be defined on. Float, integer and real receivers may be
/// generic (`T: Float` has the float methods); the others are concrete types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Receiver {
    /// Float types, or a generic parameter bounded by `Float`.
    Float,
    /// Integer types, or a generic parameter bounded by `Int`.
    Int,
    /// Integer and float types, or a generic parameter bounded by `Real` (or stronger).
    Real,
    /// `Complex<f32>`, `Complex<f64>`.
    Complex,
    /// `f16`, `bf16`.
    Half,
    /// `f16`, `bf16`, `f32`, `f64`: methods whose result type depends on the width.
    ConcreteFloat,
    /// The unsigned integer types.
    Unsigned,
    /// Slices, arrays, shared arrays, `Raw` and views.
    Array,
    /// Views.
    View,
}

vocabulary! {
    /// The numeric methods spelled `cuprum::name(x, args..)`: `cuprum/math.h` names its functions
    /// after Rust's methods (and `cuprum/complex.h` its complex ones).
    pub enum MathFn {
        Sqrt = "sqrt",
        Cbrt = "cbrt",
        Exp = "exp",
        Exp2 = "exp2",
        ExpM1 = "exp_m1",
        Ln = "ln",
        Ln1p = "ln_1p",
        Log2 = "log2",
        Log10 = "log10",
        Sin = "sin",
        Cos = "cos",
        Tan = "tan",
        Asin = "asin",
        Acos = "acos",
        Atan = "atan",
        Sinh = "sinh",
        Cosh = "cosh",
        Tanh = "tanh",
        Asinh = "asinh",
        Acosh = "acosh",
        Atanh = "atanh",
        /// Floats and signed integers (the type checker rejects unsigned receivers).
        Abs = "abs",
        Floor = "floor",
        Ceil = "ceil",
        Round = "round",
        Trunc = "trunc",
        Fract = "fract",
        Signum = "signum",
        Recip = "recip",
        ToDegrees = "to_degrees",
        ToRadians = "to_radians",
        Powf = "powf",
        Atan2 = "atan2",
        Hypot = "hypot",
        Copysign = "copysign",
        Min = "min",
        Max = "max",
        IsNan = "is_nan",
        IsFinite = "is_finite",
        IsInfinite = "is_infinite",
        IsSignNegative = "is_sign_negative",
        Powi = "powi",
        MulAdd = "mul_add",
        Clamp = "clamp",
        WrappingAdd = "wrapping_add",
        WrappingSub = "wrapping_sub",
        WrappingMul = "wrapping_mul",
        SaturatingAdd = "saturating_add",
        SaturatingSub = "saturating_sub",
        CountOnes = "count_ones",
        CountZeros = "count_zeros",
        LeadingZeros = "leading_zeros",
        TrailingZeros = "trailing_zeros",
        /// `x.low_u32()` of any integer: its low 32 bits as `u32` (Rust's `x as u32`; the way
        /// from a generic `T: Int` to an index without a trip through `f64`).
        LowU32 = "low_u32",
        /// `x.to_bits_u64()` of any real value: its bits, zero-extended to 64 (`f32::to_bits`
        /// or `x as u32` widened to `u64`); `T::from_bits_u64` takes them back. The way to pack
        /// a generic value with a flag into one 64-bit word that an atomic writes at once.
        ToBitsU64 = "to_bits_u64",
        WrappingNeg = "wrapping_neg",
        SwapBytes = "swap_bytes",
        ReverseBits = "reverse_bits",
        RotateLeft = "rotate_left",
        RotateRight = "rotate_right",
        Pow = "pow",
        IsPowerOfTwo = "is_power_of_two",
        /// `x.to_f64()` of any real value (the way out of a generic `T: Real`).
        ToF64 = "to_f64",
        Conj = "conj",
        Norm = "norm",
        NormSqr = "norm_sqr",
        Arg = "arg",
    }
}

impl MathFn {
    /// The function's signature shape.
    pub fn sig(self) -> MethodSig {
        use MathFn::*;
        match self {
            Sqrt | Cbrt | Exp | Exp2 | ExpM1 | Ln | Ln1p | Log2 | Log10 | Sin | Cos | Tan | Asin | Acos | Atan | Sinh | Cosh | Tanh
            | Asinh | Acosh | Atanh | Abs | Floor | Ceil | Round | Trunc | Fract | Signum | Recip | ToDegrees | ToRadians | WrappingNeg
            | SwapBytes | ReverseBits | Conj => MethodSig::Unary,
            Powf | Atan2 | Hypot | Copysign | Min | Max | WrappingAdd | WrappingSub | WrappingMul | SaturatingAdd | SaturatingSub => {
                MethodSig::Binary
            }
            MulAdd | Clamp => MethodSig::Ternary,
            RotateLeft | RotateRight | Pow => MethodSig::ByU32,
            Powi => MethodSig::ByI32,
            IsNan | IsFinite | IsInfinite | IsSignNegative | IsPowerOfTwo => MethodSig::Predicate,
            CountOnes | CountZeros | LeadingZeros | TrailingZeros | LowU32 => MethodSig::Count,
            ToF64 => MethodSig::ToF64,
            ToBitsU64 => MethodSig::ToU64,
            Norm | NormSqr | Arg => MethodSig::Part,
        }
    }

    /// The receivers that have the method (any one of them will do).
    pub fn receivers(self) -> &'static [Receiver] {
        use MathFn::*;
        use Receiver as R;
        match self {
            Cbrt | Exp2 | ExpM1 | Ln1p | Log2 | Log10 | Sin | Cos | Tan | Asin | Acos | Atan | Sinh | Cosh | Tanh | Asinh | Acosh | Atanh
            | Floor | Ceil | Round | Trunc | Fract | Signum | Recip | ToDegrees | ToRadians | Powf | Atan2 | Hypot | Copysign | IsNan
            | IsFinite | IsInfinite | IsSignNegative | Powi | MulAdd => &[R::Float],
            Sqrt | Exp | Ln => &[R::Float, R::Complex],
            Abs | Clamp => &[R::Float, R::Int],
            Min | Max | ToF64 | ToBitsU64 => &[R::Real],
            WrappingAdd | WrappingSub | WrappingMul | SaturatingAdd | SaturatingSub | CountOnes | CountZeros | LeadingZeros
            | TrailingZeros | LowU32 | WrappingNeg | SwapBytes | ReverseBits | RotateLeft | RotateRight | Pow => &[R::Int],
            IsPowerOfTwo => &[R::Unsigned],
            Conj | Norm | NormSqr | Arg => &[R::Complex],
        }
    }

    /// The function's name in namespace `cuprum`: the Rust name, by the headers' convention.
    pub fn c_name(self) -> &'static str {
        self.rust_name()
    }
}
