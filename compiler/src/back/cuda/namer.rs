//! Makes user identifiers legal and unique C++ names: one C name per local of an item, so that
//! Rust shadowing (`let x = ..; let x = ..;`) never redeclares a C++ variable, and no name collides
//! with a C++ keyword, a CUDA builtin or a typedef of `cuprum/types.h`.

use std::collections::HashMap;

/// Names generated code must not take.
const RESERVED: &[&str] = &[
    // C++ keywords
    "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch",
    "char", "char16_t", "char32_t", "class", "compl", "const", "constexpr", "const_cast", "continue", "decltype",
    "default", "delete", "do", "double", "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false",
    "float", "for", "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept",
    "not", "not_eq", "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register",
    "reinterpret_cast", "return", "short", "signed", "sizeof", "static", "static_assert", "static_cast",
    "struct", "switch", "template", "this", "thread_local", "throw", "true", "try", "typedef", "typeid",
    "typename", "union", "unsigned", "using", "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq",
    // CUDA builtins
    "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "dim3", "uint3",
    // cuprum/types.h and generated names (`NAME` is the instantiation macro's parameter)
    "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "bf16", "f32", "f64", "c32", "c64", "cuprum",
    "NAME", "main", "rem", "div", "add", "sub", "mul", "neg", "shl", "shr",
    // global functions of the CUDA toolkit's device runtime and math library
    "printf", "malloc", "free", "memcpy", "memset", "assert", "clock", "clock64", "make_uint3", "acos", "acosh",
    "asin", "asinh", "atan", "atan2", "atanh", "cbrt", "ceil", "copysign", "cos", "cosh", "erf", "erfc", "exp",
    "exp2", "exp10", "expm1", "fabs", "fdim", "floor", "fma", "fmax", "fmin", "fmod", "frexp", "hypot", "ilogb",
    "isfinite", "isinf", "isnan", "ldexp", "lgamma", "llrint", "llround", "log", "log10", "log1p", "log2", "logb",
    "lrint", "lround", "modf", "nan", "nearbyint", "nextafter", "norm", "pow", "rcbrt", "remainder", "remquo",
    "rint", "round", "rsqrt", "scalbn", "signbit", "sin", "sincos", "sinh", "sinpi", "cospi", "sqrt", "tan", "tanh",
    "tgamma", "trunc", "abs", "labs", "llabs", "min", "max", "umin", "umax", "llmin", "llmax", "erfinv", "erfcinv",
    "erfcx", "normcdf", "normcdfinv",
];

/// Whether `name` may not be used as is for a generated C++ name.
fn reserved(name: &str) -> bool {
    RESERVED.contains(&name) || name.starts_with("_c") || name.starts_with("__")
}

/// The C++ name of a `#[device]` function: its Rust name, unless that is reserved (`fn new`,
/// `fn sqrt`), then `cuprum_fn_<name>`. Every call site uses this same function.
pub fn item_name(name: &str) -> String {
    let name = name.trim_start_matches("r#");
    if reserved(name) { format!("cuprum_fn_{name}") } else { name.to_string() }
}

/// The C++ name of a `#[device]` struct: its Rust name, or `cuprum_struct_<name>` when reserved.
pub fn struct_name(name: &str) -> String {
    let name = name.trim_start_matches("r#");
    if reserved(name) { format!("cuprum_struct_{name}") } else { name.to_string() }
}

/// The C++ name of a struct field: its Rust name, with a `_` appended when reserved (`new`,
/// `default`, `float`). Field names live in their struct's scope, so nothing else can clash.
pub fn field_name(name: &str) -> String {
    let name = name.trim_start_matches("r#");
    if reserved(name) { format!("{name}_") } else { name.to_string() }
}

#[derive(Default)]
pub struct Namer {
    used: HashMap<String, u32>,
    /// Every name handed out or reserved: a renamed `x` (`x_1`) must not be a name the user also
    /// wrote (`let x_1`).
    taken: std::collections::HashSet<String>,
}

impl Namer {
    /// A fresh legal name based on `base`.
    pub fn name(&mut self, base: &str) -> String {
        let mut base = base.trim_start_matches("r#").to_string();
        if base == "_" || base.is_empty() {
            base = "_unused".into();
        }
        // Generated temporaries start with `_c`; user names that do too get a suffix.
        if reserved(&base) {
            base.push('_');
        }
        loop {
            let n = self.used.entry(base.clone()).or_insert(0);
            *n += 1;
            let name = if *n == 1 { base.clone() } else { format!("{base}_{}", *n - 1) };
            if self.taken.insert(name.clone()) {
                return name;
            }
        }
    }

    /// Marks `name` as taken (a device function's name), so that a local of that name is renamed
    /// and does not hide the function in C++.
    pub fn reserve(&mut self, name: &str) {
        *self.used.entry(name.to_string()).or_insert(0) += 1;
        self.taken.insert(name.to_string());
    }

    /// A compiler temporary (`_c0`, `_c1`, ...).
    pub fn temp(&mut self, what: &str) -> String {
        let n = self.used.entry(format!("_c{what}")).or_insert(0);
        *n += 1;
        format!("_c{what}{}", *n - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::Namer;

    #[test]
    fn shadowing_and_keywords() {
        let mut n = Namer::default();
        assert_eq!(n.name("x"), "x");
        assert_eq!(n.name("x"), "x_1");
        assert_eq!(n.name("int"), "int_");
        assert_eq!(n.name("f32"), "f32_");
        assert_eq!(n.name("_cfoo"), "_cfoo_");
        assert_eq!(n.temp("t"), "_ct0");
        assert_eq!(n.temp("t"), "_ct1");
        assert_eq!(n.name("_"), "_unused");
        assert_eq!(n.name("_"), "_unused_1");
        assert_eq!(n.name("r#loop"), "loop");
        assert_eq!(n.name("NAME"), "NAME_");
        assert_eq!(n.name("__x"), "__x_");
    }

    #[test]
    fn device_functions_keep_their_names_or_are_prefixed() {
        assert_eq!(super::item_name("lerp"), "lerp");
        assert_eq!(super::item_name("new"), "cuprum_fn_new");
        assert_eq!(super::item_name("sqrt"), "cuprum_fn_sqrt");
        assert_eq!(super::item_name("float"), "cuprum_fn_float");
        let mut n = Namer::default();
        n.reserve("square");
        assert_eq!(n.name("square"), "square_1");
    }
}
