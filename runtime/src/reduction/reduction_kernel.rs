//! `ReductionKernel`: CuPy's reduction kernel from CUDA C text (seeds: "Reduction kernels"),
//! run by the same loops as `#[reduction]` items.
//!
//! The parameter lists follow CuPy's grammar: comma-separated `[raw] TYPE NAME`, where `TYPE` is
//! a NumPy dtype name (`float32`, `int8`, `bool`, ...) or one character, a type placeholder
//! bound at the call (from the output when given, then from the inputs). The expressions become
//! functions whose parameters are declared with the user's names, so the names bind by C++
//! scoping, never by text substitution:
//!
//! ```text
//! ACC NAME_map(u64 _ci, u64 _cn, T x, cuprum::Raw<T> w) { const u64 i = _ci; return (ACC)(MAP); }
//! ACC NAME_reduce(ACC a, ACC b) { return (ACC)(REDUCE); }
//! void NAME_post(ACC a, OUT& y) { POST; }
//! ACC NAME_identity() { return (ACC)(IDENTITY); }
//! ```
//!
//! `ACC` is `reduce_type` (default: the output's type). `i` in the map is the element's index in
//! the loop (output index * reduced size + reduced index, axes in the array's order), for raw
//! arguments.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::{Mutex, OnceLock};

use cuprum_abi::reduction::{PostStyle, ReductionEntry, ReductionInput, entry_points};

use crate::DType;
use crate::elem_type::ElemType;
use crate::error::{Error, Result};
use crate::launch::operand::Arg;
use crate::launch::signature::{
    Param as SigParam, ParamType as SigType, ReductionSignature, Role, Signature,
};
use crate::registry::{Kernel, KernelUnit, UnitRef};
use crate::sync;

/// A parameter's type: a dtype, or a placeholder bound at the call.
#[derive(Clone, Debug, PartialEq, Eq)]
enum ParamType {
    Fixed(DType),
    Placeholder(char),
}

#[derive(Clone, Debug)]
struct Param {
    name: String,
    ty: ParamType,
    raw: bool,
}

/// A reduction kernel defined by CUDA C expressions (CuPy's `cupy.ReductionKernel`).
///
/// ```no_run
/// # use cuprum_runtime::{Array, reduction::{Arg, ReductionKernel}};
/// let l2norm = ReductionKernel::new("T x", "T y", "x * x", "a + b", "y = sqrt(a)", Some("0"), "l2norm")?;
/// let x = Array::<f32>::arange(10)?.reshape([2, 5])?;
/// let n: Array<f32> = l2norm.call(&[Arg::input(&x)]).axis(1).run()?;
/// # Ok::<(), cuprum_runtime::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct ReductionKernel {
    spec: Spec,
    kernel: &'static Kernel,
}

/// The parsed definition.
#[derive(Clone, Debug)]
struct Spec {
    name: String,
    inputs: Vec<Param>,
    output: Param,
    map_expr: String,
    reduce_expr: String,
    post_map_expr: String,
    identity: Option<String>,
    reduce_type: Option<ParamType>,
    preamble: String,
    fast_math: bool,
    /// The placeholders, in order of first appearance: the instance's dtypes follow it.
    placeholders: Vec<char>,
}

/// NumPy's dtype names (and the short ones of cuprum).
fn parse_dtype(t: &str) -> Option<DType> {
    Some(match t {
        "bool" | "bool_" | "?" => DType::Bool,
        "int8" | "i8" => DType::I8,
        "int16" | "i16" => DType::I16,
        "int32" | "i32" => DType::I32,
        "int64" | "i64" => DType::I64,
        "uint8" | "u8" => DType::U8,
        "uint16" | "u16" => DType::U16,
        "uint32" | "u32" => DType::U32,
        "uint64" | "u64" => DType::U64,
        "float16" | "f16" => DType::F16,
        "bfloat16" | "bf16" => DType::BF16,
        "float32" | "f32" => DType::F32,
        "float64" | "f64" | "float" | "double" => DType::F64,
        "complex64" | "c32" => DType::C32,
        "complex128" | "c64" | "complex" => DType::C64,
        _ => return None,
    })
}

fn parse_type(kernel: &str, t: &str) -> Result<ParamType> {
    let mut chars = t.chars();
    if let (Some(c), None) = (chars.next(), chars.next()) {
        if c.is_ascii_alphabetic() {
            if matches!(c, 'a' | 'b' | 'i') {
                return Err(Error::Reduction {
                    kernel: kernel.to_string(),
                    detail: format!(
                        "`{c}` cannot be a type placeholder: `a`, `b` and `i` are the kernel's variables; use another letter"
                    ),
                });
            }
            return Ok(ParamType::Placeholder(c));
        }
    }
    parse_dtype(t).map(ParamType::Fixed).ok_or_else(|| Error::Reduction {
        kernel: kernel.to_string(),
        detail: format!(
            "unknown type `{t}`: use a NumPy dtype name (bool, int8..int64, uint8..uint64, float16, \
             float32, float64, complex64, complex128) or one letter for a type placeholder"
        ),
    })
}

const C_KEYWORDS: &[&str] = &[
    "auto",
    "bool",
    "break",
    "case",
    "char",
    "const",
    "continue",
    "default",
    "do",
    "double",
    "else",
    "enum",
    "extern",
    "false",
    "float",
    "for",
    "goto",
    "if",
    "int",
    "long",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "struct",
    "switch",
    "template",
    "true",
    "typedef",
    "typename",
    "union",
    "unsigned",
    "void",
    "volatile",
    "while",
    "class",
    "namespace",
    "new",
    "delete",
    "this",
    "operator",
    "cuprum",
    "NAME",
    "i8",
    "i16",
    "i32",
    "i64",
    "u8",
    "u16",
    "u32",
    "u64",
    "f16",
    "bf16",
    "f32",
    "f64",
    "c32",
    "c64",
];

fn check_name(kernel: &str, name: &str, what: &str) -> Result<()> {
    let bad = |why: &str| Error::Reduction {
        kernel: kernel.to_string(),
        detail: format!("{what} `{name}` {why}"),
    };
    let mut chars = name.chars();
    let legal = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !legal {
        return Err(bad("is not a C identifier"));
    }
    if name.starts_with('_') || name == "i" {
        return Err(bad(
            "is reserved (`i` and names starting with `_` are the kernel's own, as in CuPy); rename it",
        ));
    }
    if C_KEYWORDS.contains(&name) {
        return Err(bad("is a C++ keyword or a cuprum type name; rename it"));
    }
    Ok(())
}

fn parse_params(kernel: &str, list: &str, what: &str) -> Result<Vec<Param>> {
    let mut out = Vec::new();
    for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let words: Vec<&str> = item.split_whitespace().collect();
        let (raw, ty, name) = match words.as_slice() {
            ["raw", ty, name] => (true, *ty, *name),
            [ty, name] => (false, *ty, *name),
            _ => {
                return Err(Error::Reduction {
                    kernel: kernel.to_string(),
                    detail: format!(
                        "cannot parse the {what} parameter `{item}`: write `[raw] TYPE NAME`, e.g. `T x` or `raw float32 w`"
                    ),
                });
            }
        };
        check_name(kernel, name, &format!("{what} parameter"))?;
        if out.iter().any(|p: &Param| p.name == name) {
            return Err(Error::Reduction {
                kernel: kernel.to_string(),
                detail: format!("parameter `{name}` is declared twice"),
            });
        }
        out.push(Param {
            name: name.to_string(),
            ty: parse_type(kernel, ty)?,
            raw,
        });
    }
    Ok(out)
}

/// One leaked unit and kernel per distinct source (reduction kernels are few; a program that
/// creates the same one again reuses it).
fn register(
    name: &str,
    source: String,
    fast_math: bool,
    signature: impl FnOnce() -> (ReductionSignature, bool),
) -> &'static Kernel {
    static UNITS: OnceLock<Mutex<HashMap<(String, bool), &'static Kernel>>> = OnceLock::new();
    let mut units = sync::lock(UNITS.get_or_init(Default::default));
    if let Some(k) = units.get(&(source.clone(), fast_math)) {
        return k;
    }
    let name: &'static str = Box::leak(name.to_string().into_boxed_str());
    let unit: &'static KernelUnit = Box::leak(Box::new(KernelUnit::from_source(
        name,
        source.clone(),
        fast_math,
    )));
    let (sig, has_raw) = signature();
    let sig = Signature::Reduction(Box::leak(Box::new(sig)));
    let unit = UnitRef::Embedded(unit);
    // SAFETY: the signature lists the parameters of the entry points `Spec::generate` wrote for
    // this source (`cuprum_abi::reduction::entry_points`: one operand per map parameter, raw
    // ones `Raw<T>`), with each placeholder's index or fixed dtype, and the output's and the
    // accumulator's types. Map arguments are read at the element the loop gives; text that
    // indexes raw arguments cannot be checked, so such a kernel is `unchecked`.
    let kernel = unsafe {
        if has_raw {
            Kernel::unchecked(unit, name, sig)
        } else {
            Kernel::new(unit, name, sig)
        }
    };
    let kernel: &'static Kernel = Box::leak(Box::new(kernel));
    units.insert((source, fast_math), kernel);
    kernel
}

impl ReductionKernel {
    /// A reduction kernel: input and output parameter lists, the map expression (of the inputs
    /// and `i`), the reduce expression (of `a` and `b`), the post-map statement (of `a` and the
    /// output's name), the identity (`None`: an empty reduction is an error), and the name.
    /// Only one output parameter is supported. Errors name the part that is wrong.
    pub fn new(
        in_params: &str,
        out_params: &str,
        map_expr: &str,
        reduce_expr: &str,
        post_map_expr: &str,
        identity: Option<&str>,
        name: &str,
    ) -> Result<ReductionKernel> {
        let fail = |detail: String| Error::Reduction {
            kernel: name.to_string(),
            detail,
        };
        check_name(name, name, "the kernel name")?;
        let inputs = parse_params(name, in_params, "input")?;
        let mut outputs = parse_params(name, out_params, "output")?;
        if outputs.len() != 1 {
            return Err(fail(format!(
                "a reduction has exactly one output parameter, found {} in `{out_params}`",
                outputs.len()
            )));
        }
        let output = outputs.remove(0);
        if output.raw {
            return Err(fail("the output parameter cannot be `raw`".into()));
        }
        if inputs.iter().any(|p| p.name == output.name) {
            return Err(fail(format!(
                "`{}` is both an input and the output",
                output.name
            )));
        }
        if output.name == "a" {
            return Err(fail(
                "the output may not be named `a`: the post-map's `a` is the reduced value".into(),
            ));
        }
        if !inputs.iter().any(|p| !p.raw) {
            return Err(fail("at least one input must be an array that is not `raw` (it gives the shape to reduce)".into()));
        }
        let spec = Spec {
            name: name.to_string(),
            inputs,
            output,
            map_expr: map_expr.to_string(),
            reduce_expr: reduce_expr.to_string(),
            post_map_expr: post_map_expr.to_string(),
            identity: identity.map(str::to_string),
            reduce_type: None,
            preamble: String::new(),
            fast_math: false,
            placeholders: Vec::new(),
        };
        Ok(ReductionKernel::build(spec))
    }

    fn build(mut spec: Spec) -> ReductionKernel {
        spec.collect_placeholders();
        let kernel = register(&spec.name, spec.generate(), spec.fast_math, || {
            spec.signature()
        });
        ReductionKernel { spec, kernel }
    }

    /// The type of the reduced values (`a`, `b`): a dtype name or a placeholder (CuPy's
    /// `reduce_type`); default: the output's type.
    pub fn reduce_type(self, t: &str) -> Result<ReductionKernel> {
        let mut spec = self.spec;
        spec.reduce_type = Some(parse_type(&spec.name, t)?);
        Ok(ReductionKernel::build(spec))
    }

    /// C code placed before the kernel's functions (CuPy's `preamble`).
    pub fn preamble(self, code: &str) -> ReductionKernel {
        let mut spec = self.spec;
        spec.preamble = code.to_string();
        ReductionKernel::build(spec)
    }

    /// NVRTC options (CuPy's `options`); `--use_fast_math` is supported.
    pub fn options(self, options: &[&str]) -> Result<ReductionKernel> {
        let mut spec = self.spec;
        for o in options {
            match *o {
                "--use_fast_math" | "-use_fast_math" => spec.fast_math = true,
                other => {
                    return Err(Error::Unsupported {
                        what: format!(
                            "ReductionKernel option `{other}` (only `--use_fast_math` is supported)"
                        ),
                    });
                }
            }
        }
        Ok(ReductionKernel::build(spec))
    }

    /// The generated CUDA C (without instantiations).
    pub fn source(&self) -> &str {
        self.kernel.embedded_unit().map_or("", |u| u.source())
    }

    /// The kernel's name.
    pub fn name(&self) -> &str {
        &self.spec.name
    }

    /// The registry kernel.
    pub(crate) fn kernel(&self) -> &'static Kernel {
        self.kernel
    }

    /// The instance for `inputs` and an output of dtype `out` (placeholders bound from the
    /// output, then the inputs, as CuPy does).
    pub(crate) fn bind(&self, inputs: &[Arg<'_>], out: DType) -> Result<Vec<DType>> {
        self.spec
            .bind(inputs, Some(out))
            .map(|(instance, _, _)| instance)
    }
}

impl Spec {
    /// The signature of the entry points `generate` writes, and whether some parameter is raw.
    fn signature(&self) -> (ReductionSignature, bool) {
        let ty = |t: &ParamType| match t {
            ParamType::Fixed(d) => SigType::Fixed(ElemType::Scalar(*d)),
            ParamType::Placeholder(c) => {
                SigType::Generic(self.placeholders.iter().position(|p| p == c).unwrap_or(0) as u8)
            }
        };
        let params: Vec<SigParam> = self
            .inputs
            .iter()
            .map(|p| {
                SigParam::new(
                    Box::leak(p.name.clone().into_boxed_str()),
                    if p.raw { Role::Raw } else { Role::In },
                    ty(&p.ty),
                )
            })
            .collect();
        let sig = ReductionSignature {
            params: Box::leak(params.into_boxed_slice()),
            out: ty(&self.output.ty),
            acc: ty(&self.acc_type()),
            has_identity: self.identity.is_some(),
            // The map text names the loop index `i` (`_ci` in the generated code).
            positional: self
                .map_expr
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .any(|w| w == "i" || w == "_ci"),
        };
        (sig, self.inputs.iter().any(|p| p.raw))
    }

    fn acc_type(&self) -> ParamType {
        self.reduce_type
            .clone()
            .unwrap_or_else(|| self.output.ty.clone())
    }

    fn collect_placeholders(&mut self) {
        let mut placeholders = Vec::new();
        let acc = self.acc_type();
        for t in self
            .inputs
            .iter()
            .map(|p| &p.ty)
            .chain([&self.output.ty, &acc])
        {
            if let ParamType::Placeholder(c) = t {
                if !placeholders.contains(c) {
                    placeholders.push(*c);
                }
            }
        }
        self.placeholders = placeholders;
    }

    fn c_type(t: &ParamType, headers: &mut Vec<&'static str>) -> String {
        match t {
            ParamType::Placeholder(c) => c.to_string(),
            ParamType::Fixed(d) => {
                if d.is_half() && !headers.contains(&"cuprum/half.h") {
                    headers.push("cuprum/half.h");
                }
                if d.is_complex() && !headers.contains(&"cuprum/complex.h") {
                    headers.push("cuprum/complex.h");
                }
                d.short_name().to_string()
            }
        }
    }

    fn generate(&self) -> String {
        let mut headers = vec!["cuprum/types.h"];
        let acc = Self::c_type(&self.acc_type(), &mut headers);
        let out = Self::c_type(&self.output.ty, &mut headers);
        let inputs: Vec<ReductionInput> = self
            .inputs
            .iter()
            .map(|p| ReductionInput {
                name: p.name.clone(),
                ty: Self::c_type(&p.ty, &mut headers),
                raw: p.raw,
            })
            .collect();
        headers.push("cuprum/reduction.h");
        let generics: Vec<String> = self.placeholders.iter().map(char::to_string).collect();
        let tp = if generics.is_empty() {
            String::new()
        } else {
            format!(
                "template <{}>\n",
                generics
                    .iter()
                    .map(|g| format!("typename {g}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        let name = &self.name;
        let mut s = String::from("// Generated by cuprum's ReductionKernel. Do not edit.\n");
        for h in &headers {
            let _ = writeln!(s, "#include <{h}>");
        }
        if !self.preamble.is_empty() {
            let _ = writeln!(s, "{}", self.preamble);
        }
        let params: Vec<String> = inputs
            .iter()
            .map(|p| {
                if p.raw {
                    format!("cuprum::Raw<{}> {}", p.ty, p.name)
                } else {
                    format!("{} {}", p.ty, p.name)
                }
            })
            .collect();
        let mut map_params = vec!["u64 _ci".to_string(), "u64 _cj".to_string(), "u64 _cn".to_string()];
        map_params.extend(params);
        let _ = write!(
            s,
            "{tp}__device__ __forceinline__ {acc} {name}_map({}) {{\n    const u64 i = _ci;\n    (void)i;\n    return ({acc})({});\n}}\n",
            map_params.join(", "),
            self.map_expr
        );
        let _ = write!(
            s,
            "{tp}__device__ __forceinline__ {acc} {name}_reduce({acc} a, {acc} b) {{\n    return ({acc})({});\n}}\n",
            self.reduce_expr
        );
        let _ = write!(
            s,
            "{tp}__device__ __forceinline__ void {name}_post({acc} a, {out}& {}) {{\n    {};\n}}\n",
            self.output.name, self.post_map_expr
        );
        if let Some(id) = &self.identity {
            let _ = write!(
                s,
                "{tp}__device__ __forceinline__ {acc} {name}_identity() {{\n    return ({acc})({id});\n}}\n"
            );
        }
        s.push_str(&entry_points(&ReductionEntry {
            name: name.clone(),
            generics,
            inputs,
            acc,
            out,
            map_to_acc: (String::new(), String::new()),
            has_identity: self.identity.is_some(),
            post: PostStyle::Assign,
        }));
        s
    }

    /// Binds the placeholders from the output (when given) then the inputs, as CuPy does; the
    /// instance's dtypes and the output's dtype.
    fn bind(&self, inputs: &[Arg<'_>], out: Option<DType>) -> Result<(Vec<DType>, DType, usize)> {
        let fail = |detail: String| Error::Reduction {
            kernel: self.name.clone(),
            detail,
        };
        if inputs.len() != self.inputs.len() {
            return Err(fail(format!(
                "takes {} input(s), {} given",
                self.inputs.len(),
                inputs.len()
            )));
        }
        let mut bound: Vec<Option<DType>> = vec![None; self.placeholders.len()];
        let mut bind_one = |t: &ParamType, d: DType, who: &str| -> Result<()> {
            match t {
                ParamType::Fixed(f) if *f == d => Ok(()),
                ParamType::Fixed(f) => Err(Error::DtypeMismatch {
                    context: format!("{who} of ReductionKernel `{}` (declared {f:?})", self.name),
                    expected: (*f).into(),
                    found: d.into(),
                }),
                ParamType::Placeholder(c) => {
                    let k = self
                        .placeholders
                        .iter()
                        .position(|p| p == c)
                        .expect("collected");
                    match bound[k] {
                        None => {
                            bound[k] = Some(d);
                            Ok(())
                        }
                        Some(b) if b == d => Ok(()),
                        Some(b) => Err(Error::DtypeMismatch {
                            context: format!(
                                "{who} of ReductionKernel `{}`: placeholder `{c}` is already bound",
                                self.name
                            ),
                            expected: b.into(),
                            found: d.into(),
                        }),
                    }
                }
            }
        };
        if let Some(d) = out {
            bind_one(
                &self.output.ty,
                d,
                &format!("the output `{}`", self.output.name),
            )?;
        }
        for (p, a) in self.inputs.iter().zip(inputs) {
            let (Some(x), false) = (a.array(), matches!(a, Arg::Out(_))) else {
                return Err(fail(format!(
                    "argument `{}` must be an array (`Arg::input` or `Arg::raw`), found {}",
                    p.name,
                    a.describe()
                )));
            };
            if p.raw != matches!(a, Arg::Raw(_)) {
                return Err(fail(format!(
                    "argument `{}` is declared {}raw but passed as {}",
                    p.name,
                    if p.raw { "" } else { "not " },
                    if p.raw {
                        "`Arg::input`; pass `Arg::raw`"
                    } else {
                        "`Arg::raw`; pass `Arg::input`"
                    }
                )));
            }
            let d = x.elem().dtype().ok_or_else(|| {
                fail(format!(
                    "argument `{}` holds structs; a ReductionKernel takes dtypes",
                    p.name
                ))
            })?;
            bind_one(&p.ty, d, &format!("input `{}`", p.name))?;
        }
        let resolve = |t: &ParamType| -> Result<DType> {
            match t {
                ParamType::Fixed(d) => Ok(*d),
                ParamType::Placeholder(c) => {
                    let k = self
                        .placeholders
                        .iter()
                        .position(|p| p == c)
                        .expect("collected");
                    bound[k].ok_or_else(|| {
                        fail(format!("type placeholder `{c}` is not bound by any argument; pass the output (`.out(&mut y)`) or declare its type"))
                    })
                }
            }
        };
        let instance = self
            .placeholders
            .iter()
            .map(|c| resolve(&ParamType::Placeholder(*c)))
            .collect::<Result<Vec<_>>>()?;
        let out_dtype = resolve(&self.output.ty)?;
        let acc = resolve(&self.acc_type())?;
        Ok((instance, out_dtype, acc.size()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cupy_grammar() {
        let k = ReductionKernel::new(
            "T x",
            "T y",
            "x * x",
            "a + b",
            "y = sqrt(a)",
            Some("0"),
            "l2norm",
        )
        .unwrap();
        let s = k.source();
        assert!(s.contains("template <typename T>\n__device__ __forceinline__ T l2norm_map(u64 _ci, u64 _cj, u64 _cn, T x)"), "{s}");
        assert!(s.contains("return (T)(x * x);"), "{s}");
        assert!(s.contains("T l2norm_reduce(T a, T b)"), "{s}");
        assert!(
            s.contains("void l2norm_post(T a, T& y) {\n    y = sqrt(a);\n}"),
            "{s}"
        );
        assert!(s.contains("CUPRUM_INSTANTIATE_l2norm_rows(NAME, T)"), "{s}");
        assert_eq!(k.spec.placeholders, vec!['T']);
    }

    #[test]
    fn raw_fixed_types_and_reduce_type() {
        let k = ReductionKernel::new(
            "float32 x, raw float32 w",
            "float64 y",
            "x * w[i % w.size]",
            "a + b",
            "y = a",
            None,
            "wsum",
        )
        .unwrap()
        .reduce_type("float64")
        .unwrap();
        let s = k.source();
        assert!(
            s.contains("f64 wsum_map(u64 _ci, u64 _cj, u64 _cn, f32 x, cuprum::Raw<f32> w)"),
            "{s}"
        );
        assert!(
            s.contains("cuprum::Raw<f32> w, cuprum::ReduceOperand<f64> _cout"),
            "{s}"
        );
        assert!(!s.contains("wsum_identity"), "{s}");
        assert!(k.spec.placeholders.is_empty());
    }

    #[test]
    fn grammar_errors_name_the_part() {
        let e = |r: Result<ReductionKernel>| r.unwrap_err().to_string();
        assert!(
            e(ReductionKernel::new(
                "T", "T y", "x", "a + b", "y = a", None, "k"
            ))
            .contains("`[raw] TYPE NAME`")
        );
        assert!(
            e(ReductionKernel::new(
                "floaty x", "T y", "x", "a + b", "y = a", None, "k"
            ))
            .contains("unknown type `floaty`")
        );
        assert!(
            e(ReductionKernel::new(
                "T i", "T y", "i", "a + b", "y = a", None, "k"
            ))
            .contains("reserved")
        );
        assert!(
            e(ReductionKernel::new(
                "T x", "T y, T z", "x", "a + b", "y = a", None, "k"
            ))
            .contains("exactly one output")
        );
        assert!(
            e(ReductionKernel::new(
                "raw T x", "T y", "x[i]", "a + b", "y = a", None, "k"
            ))
            .contains("not `raw`")
        );
        assert!(
            e(ReductionKernel::new(
                "T x, T x", "T y", "x", "a + b", "y = a", None, "k"
            ))
            .contains("twice")
        );
        assert!(
            e(ReductionKernel::new(
                "T x", "T a", "x", "a + b", "a = a", None, "k"
            ))
            .contains("`a`")
        );
        assert!(
            e(
                ReductionKernel::new("T x", "T y", "x", "a + b", "y = a", None, "k")
                    .unwrap()
                    .options(&["-O3"])
            )
            .contains("-O3")
        );
    }

    #[test]
    fn same_source_same_kernel() {
        let a = ReductionKernel::new("T x", "T y", "x", "a + b", "y = a", Some("0"), "sum_same")
            .unwrap();
        let b = ReductionKernel::new("T x", "T y", "x", "a + b", "y = a", Some("0"), "sum_same")
            .unwrap();
        assert!(std::ptr::eq(a.kernel, b.kernel));
    }
}
