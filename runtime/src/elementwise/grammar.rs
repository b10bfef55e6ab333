//! CuPy's parameter grammar of `ElementwiseKernel` ("Basics of elementwise kernels", "Type-generic
//! kernels", "Raw argument specifiers" in the seeds): a comma-separated list of `[raw] TYPE NAME`,
//! where TYPE is a one-letter type placeholder (`T`) or a NumPy dtype name (`float32`, `int64`,
//! `complex64`, `bool`, ...; cuprum also knows `bfloat16`). `i`, `n` and names starting with `_`
//! are reserved.

use crate::DType;

/// A parameter's type as written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TypeSpec {
    /// A one-letter type placeholder, bound at the call.
    Placeholder(char),
    /// A dtype named in the definition (`float`, `int32`, ...).
    Fixed(DType),
}

/// One parsed parameter.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ParamSpec {
    /// The parameter's name in the kernel body.
    pub name: String,
    /// Its element type.
    pub ty: TypeSpec,
    /// `raw`: indexed by hand, not broadcast.
    pub raw: bool,
}

/// The dtype of a NumPy dtype name (canonical names only, as CuPy requires).
pub fn dtype_of(name: &str) -> Option<DType> {
    DType::ALL.iter().copied().find(|d| d.numpy_name() == name)
}

/// Whether `s` is a C identifier.
pub fn is_identifier(s: &str) -> bool {
    let mut cs = s.chars();
    matches!(cs.next(), Some(c) if c.is_ascii_alphabetic() || c == '_') && cs.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

const C_KEYWORDS: &[&str] = &[
    "auto", "bool", "break", "case", "char", "class", "const", "continue", "default", "delete", "do", "double", "else",
    "enum", "extern", "false", "float", "for", "goto", "if", "inline", "int", "long", "namespace", "new", "operator",
    "private", "public", "register", "return", "short", "signed", "sizeof", "static", "struct", "switch", "template",
    "this", "true", "typedef", "typename", "union", "unsigned", "using", "virtual", "void", "volatile", "while",
];

/// Parses a parameter list (`"T x, raw T y"`; empty for none).
pub fn parse_params(s: &str) -> Result<Vec<ParamSpec>, String> {
    if s.trim().is_empty() {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for item in s.split(',') {
        let words: Vec<&str> = item.split_whitespace().collect();
        let (raw, ty, name) = match words.as_slice() {
            [ty, name] => (false, *ty, *name),
            ["raw", ty, name] => (true, *ty, *name),
            [kw, _, _] => return Err(format!("unknown keyword `{kw}` in parameter `{}`: the only keyword is `raw`", item.trim())),
            _ => {
                return Err(format!(
                    "syntax error in parameter `{}`: write `TYPE NAME` or `raw TYPE NAME` (e.g. `float32 x`, `raw T y`)",
                    item.trim()
                ));
            }
        };
        let ty = if ty.chars().count() == 1 {
            let c = ty.chars().next().unwrap_or('?');
            if !c.is_ascii_alphabetic() {
                return Err(format!("type placeholder `{ty}` of parameter `{name}` must be a letter"));
            }
            TypeSpec::Placeholder(c)
        } else {
            TypeSpec::Fixed(dtype_of(ty).ok_or_else(|| {
                format!(
                    "unknown type `{ty}` of parameter `{name}`: use a one-letter type placeholder or a \
                     NumPy dtype name (bool, int8..int64, uint8..uint64, float16, bfloat16, float32, \
                     float64, complex64, complex128)"
                )
            })?)
        };
        out.push(ParamSpec { name: name.to_string(), ty, raw });
    }
    Ok(out)
}

/// Checks parameter names (valid, not reserved, distinct) and the kernel name.
pub fn check_names(kernel: &str, params: &[&ParamSpec]) -> Result<(), String> {
    if !is_identifier(kernel) || C_KEYWORDS.contains(&kernel) {
        return Err(format!("invalid kernel name `{kernel}`: it must be a C identifier (letters, digits, `_`, not starting with a digit)"));
    }
    for (k, p) in params.iter().enumerate() {
        let n = p.name.as_str();
        if !is_identifier(n) || C_KEYWORDS.contains(&n) {
            return Err(format!("invalid parameter name `{n}`: it must be a C identifier that is not a keyword"));
        }
        if n == "i" || n == "n" || n.starts_with('_') {
            return Err(format!(
                "parameter name `{n}` is reserved (`i` is the loop index, `n` and names starting with `_` \
                 are internal); rename it"
            ));
        }
        if params[..k].iter().any(|q| q.name == n) {
            return Err(format!("parameter name `{n}` is used twice"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_cupy_lists() {
        let ps = parse_params("T x, raw T y ,float32  z").unwrap();
        assert_eq!(ps[0], ParamSpec { name: "x".into(), ty: TypeSpec::Placeholder('T'), raw: false });
        assert_eq!(ps[1], ParamSpec { name: "y".into(), ty: TypeSpec::Placeholder('T'), raw: true });
        assert_eq!(ps[2].ty, TypeSpec::Fixed(DType::F32));
        assert!(parse_params("").unwrap().is_empty());
        assert!(parse_params("float x").unwrap_err().contains("unknown type `float`"));
        assert!(parse_params("x").unwrap_err().contains("syntax error"));
        assert!(parse_params("const T x").unwrap_err().contains("unknown keyword `const`"));
        assert_eq!(parse_params("complex128 c").unwrap()[0].ty, TypeSpec::Fixed(DType::C64));
    }
}
