//! The built-in elementwise kernels (`kernels/elementwise.rs`, precompiled by the root build.rs)
//! and their registration with the runtime, whose array operators and functions
//! (`cuprum_runtime::array::ops`: `&a + &b`, `a.lt(&b)`, `a.astype::<U>()`, `a.sqrt()`, ...) look
//! them up by name. The runtime cannot name macro-generated code (the macros generate
//! `::cuprum::__private` paths and the facade depends on the runtime), so the kernels live here
//! and every one is listed below (a kernel missing from the list is a run-time error naming it).

#[allow(dead_code)]
#[path = "../kernels/elementwise.rs"]
mod kernels;

macro_rules! register {
    ($($name:ident),* $(,)?) => {$(
        inventory::submit! {
            cuprum_runtime::array::BuiltinKernel {
                name: stringify!($name),
                kernel: kernels::$name::kernel,
                signature: kernels::$name::SIGNATURE,
            }
        }
    )*};
}

register!(
    add, sub, mul, div, rem_int, rem_float, neg_float, neg_number,
    lt, le, gt, ge, eq, ne,
    select, copy, minimum, maximum, clip,
    abs_float, abs_int, sqrt, exp, log, sin, cos, tanh,
    cast_bool, cast_i8, cast_i16, cast_i32, cast_i64, cast_u8, cast_u16, cast_u32, cast_u64,
    cast_f16, cast_bf16, cast_f32, cast_f64, nonzero,
);
