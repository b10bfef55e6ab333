//! The kernel language's vocabulary: the prelude's intrinsics, the numeric methods and the
//! associated constants the compiler understands, with their default precompiled instances.
//!
//! The host definitions live in `cuprum_runtime::lang` under the same names; this table is what the
//! front end, the type checker and the CUDA writer agree on.

use crate::dtype::DType;
use crate::ir::Bound;

/// Free functions of the prelude callable in kernels.
pub const INTRINSICS: &[&str] = &[
    "thread_idx",
    "block_idx",
    "block_dim",
    "grid_dim",
    "grid_1d",
    "grid_2d",
    "grid_3d",
    "grid_size_1d",
    "grid_size_2d",
    "grid_size_3d",
    "lane_id",
    "warp_size",
    "sync_threads",
    "sync_warp",
    "thread_fence",
    "thread_fence_block",
    "shared_array",
    "dynamic_shared",
    "atomic_add",
    "atomic_sub",
    "atomic_exch",
    "atomic_min",
    "atomic_max",
    "atomic_inc",
    "atomic_dec",
    "atomic_and",
    "atomic_or",
    "atomic_xor",
    "atomic_cas",
    "shfl_sync",
    "shfl_up_sync",
    "shfl_down_sync",
    "shfl_xor_sync",
    "shfl_sync_width",
    "shfl_up_sync_width",
    "shfl_down_sync_width",
    "shfl_xor_sync_width",
    "index",
    "loop_size",
];

pub fn intrinsic(name: &str) -> Option<&'static str> {
    INTRINSICS.iter().copied().find(|n| *n == name)
}

/// Float methods `x.m()` returning the receiver's type, with their C name in `cuprum/math.h`.
pub const FLOAT_UNARY: &[&str] = &[
    "sqrt", "cbrt", "exp", "exp2", "exp_m1", "ln", "ln_1p", "log2", "log10", "sin", "cos", "tan",
    "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "abs", "floor",
    "ceil", "round", "trunc", "fract", "signum", "recip", "to_degrees", "to_radians",
];

/// Float methods `x.m(y)` with `y` of the receiver's type.
pub const FLOAT_BINARY: &[&str] = &["powf", "atan2", "hypot", "copysign", "min", "max"];

/// Float predicates `x.m() -> bool`.
pub const FLOAT_PREDICATES: &[&str] = &["is_nan", "is_finite", "is_infinite", "is_sign_negative"];

/// Integer methods `x.m(y)` with `y` of the receiver's type.
pub const INT_BINARY: &[&str] =
    &["wrapping_add", "wrapping_sub", "wrapping_mul", "saturating_add", "saturating_sub", "min", "max"];

/// Integer methods `x.m() -> u32`.
pub const INT_COUNT: &[&str] = &["count_ones", "count_zeros", "leading_zeros", "trailing_zeros"];

/// Integer methods `x.m() -> Self`.
pub const INT_UNARY: &[&str] = &["wrapping_neg", "swap_bytes", "reverse_bits", "abs"];

/// Integer methods `x.m(n: u32) -> Self`.
pub const INT_U32_ARG: &[&str] = &["rotate_left", "rotate_right", "pow"];

/// Associated functions of the numeric traits, callable as `T::f(..)` or `f32::f(..)`.
pub const ASSOC_FNS: &[(&str, Bound)] = &[
    ("zero", Bound::Number),
    ("one", Bound::Number),
    ("from_f64", Bound::Number),
    ("from_i64", Bound::Number),
    ("min_value", Bound::Real),
    ("max_value", Bound::Real),
    ("infinity", Bound::Float),
    ("neg_infinity", Bound::Float),
    ("nan", Bound::Float),
    ("epsilon", Bound::Float),
    ("pi", Bound::Float),
    ("e", Bound::Float),
];

/// Associated constants of concrete float types (`f32::INFINITY`, `f64::consts::PI`).
pub const FLOAT_CONSTS: &[&str] = &[
    "INFINITY",
    "NEG_INFINITY",
    "NAN",
    "EPSILON",
    "MAX",
    "MIN",
    "MIN_POSITIVE",
    "PI",
    "E",
    "TAU",
    "SQRT_2",
    "LN_2",
    "LN_10",
    "FRAC_PI_2",
    "FRAC_PI_4",
    "FRAC_1_PI",
    "FRAC_1_SQRT_2",
    "LOG2_E",
    "LOG10_E",
];

/// Associated constants of integer types.
pub const INT_CONSTS: &[&str] = &["MAX", "MIN", "BITS"];

/// The instantiations precompiled for a generic parameter when the attribute names none.
pub fn default_instances(bound: Bound) -> &'static [DType] {
    match bound {
        Bound::Float => &[DType::F32, DType::F64],
        Bound::Int => &[DType::I32, DType::I64, DType::U32, DType::U64],
        Bound::Real | Bound::Number | Bound::Scalar => &[DType::I32, DType::I64, DType::F32, DType::F64],
    }
}
