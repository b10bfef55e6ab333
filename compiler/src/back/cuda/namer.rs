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
    // cuprum/types.h and generated names
    "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "bf16", "f32", "f64", "c32", "c64", "cuprum",
    "main", "min", "max", "abs", "sqrt", "exp", "log", "sin", "cos", "pow", "fmod", "rem", "div", "add", "sub",
    "mul", "neg", "shl", "shr",
];

#[derive(Default)]
pub struct Namer {
    used: HashMap<String, u32>,
}

impl Namer {
    /// A fresh legal name based on `base`.
    pub fn name(&mut self, base: &str) -> String {
        let mut base = base.trim_start_matches("r#").to_string();
        if base == "_" || base.is_empty() {
            base = "_unused".into();
        }
        // Generated temporaries start with `_c`; user names that do too get a suffix.
        if RESERVED.contains(&base.as_str()) || base.starts_with("_c") || base.starts_with("__") {
            base.push('_');
        }
        let n = self.used.entry(base.clone()).or_insert(0);
        *n += 1;
        if *n == 1 { base } else { format!("{base}_{}", *n - 1) }
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
    }
}
