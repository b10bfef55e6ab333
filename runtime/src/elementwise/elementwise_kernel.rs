//! `ElementwiseKernel`: CuPy's elementwise kernels from CUDA C text, through the same machinery as
//! `#[elementwise]` kernels (the loops of `elementwise.h`, the planner, the registry's lookup).
//!
//! ```no_run
//! # use cuprum_runtime::{Array, elementwise::ElementwiseKernel};
//! let squared_diff = ElementwiseKernel::new("T x, T y", "T z", "z = (x - y) * (x - y)", "squared_diff")?;
//! let x = Array::<f32>::arange(10)?.reshape([2, 5])?;
//! let y = Array::<f32>::arange(5)?;
//! let z = squared_diff.call().arg(&x).arg(&y).run_one::<f32>()?;       // broadcast, allocated
//! let w = squared_diff.call().arg(&x).arg(5.0f32).run_one::<f32>()?;    // a scalar
//! # Ok::<(), cuprum_runtime::Error>(())
//! ```
//!
//! Each distinct definition (source and options) becomes one generated unit for the life of the
//! process (CuPy memoizes its kernels the same way); each instance (placeholder dtypes, launch
//! variant) is compiled on first use and kept in the kernel cache.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use half::{bf16, f16};
use num_complex::Complex;
use crate::scalar::fp8::{f8e4m3, f8e5m2};

use super::grammar::{self, ParamSpec, TypeSpec};
use super::launch::{self, Options};
use crate::launch::operand::{Arg, ArrayArg, Value};
use crate::launch::signature::{Param, ParamType, Role, Signature};
use crate::sync;
use super::source::{self, SourceSpec};
use crate::array::Array;
use crate::element::ElemType;
use crate::error::{Error, Result};
use crate::scalar::traits::Scalar;
use crate::registry::{Kernel, KernelUnit, UnitRef};
use crate::stream::Stream;
use crate::DType;

/// A defined kernel: shared by every `ElementwiseKernel` with the same definition.
#[derive(Debug)]
struct Definition {
    name: &'static str,
    ins: Vec<ParamSpec>,
    outs: Vec<ParamSpec>,
    placeholders: Vec<char>,
    kernel: &'static Kernel,
}

/// An elementwise kernel defined by CUDA C text with CuPy's signature grammar.
#[derive(Clone, Copy, Debug)]
pub struct ElementwiseKernel {
    def: &'static Definition,
    no_return: bool,
    return_tuple: bool,
}

/// The options of a definition (CuPy's keyword arguments), then [`Builder::finish`].
#[derive(Clone, Debug)]
pub struct Builder {
    in_params: String,
    out_params: String,
    operation: String,
    name: String,
    preamble: String,
    loop_prep: String,
    after_loop: String,
    no_return: bool,
    return_tuple: bool,
    options: Vec<String>,
}

impl Builder {
    /// Code before the kernel (helper functions, `#define`s).
    pub fn preamble(mut self, code: &str) -> Self {
        self.preamble = code.to_string();
        self
    }
    /// Code each thread runs before its loop (its declarations are visible in `operation`).
    pub fn loop_prep(mut self, code: &str) -> Self {
        self.loop_prep = code.to_string();
        self
    }
    /// Code each thread runs after its loop.
    pub fn after_loop(mut self, code: &str) -> Self {
        self.after_loop = code.to_string();
        self
    }
    /// Calls return no arrays (outputs are still written).
    pub fn no_return(mut self, yes: bool) -> Self {
        self.no_return = yes;
        self
    }
    /// Calls return the outputs as a list even when there is one: [`Call::run_one`] then refuses.
    pub fn return_tuple(mut self, yes: bool) -> Self {
        self.return_tuple = yes;
        self
    }
    /// NVRTC options (e.g. `-DN=4`).
    pub fn options<I: IntoIterator<Item = S>, S: AsRef<str>>(mut self, options: I) -> Self {
        self.options = options.into_iter().map(|s| s.as_ref().to_string()).collect();
        self
    }

    /// Checks the definition and generates the kernel (compiled on first call).
    pub fn finish(self) -> Result<ElementwiseKernel> {
        let fail = |detail: String| Error::KernelDefinition { kernel: self.name.clone(), detail };
        let ins = grammar::parse_params(&self.in_params).map_err(|e| fail(format!("in_params: {e}")))?;
        let outs = grammar::parse_params(&self.out_params).map_err(|e| fail(format!("out_params: {e}")))?;
        let all: Vec<&ParamSpec> = ins.iter().chain(&outs).collect();
        grammar::check_names(&self.name, &all).map_err(fail)?;
        if outs.is_empty() && !self.no_return {
            // CuPy allows kernels without outputs; they return nothing.
        }
        let mut placeholders = Vec::new();
        for p in &all {
            if let TypeSpec::Placeholder(c) = p.ty {
                if !placeholders.contains(&c) {
                    placeholders.push(c);
                }
            }
        }
        let src = source::generate(&SourceSpec {
            name: &self.name,
            ins: &ins,
            outs: &outs,
            operation: &self.operation,
            preamble: &self.preamble,
            loop_prep: &self.loop_prep,
            after_loop: &self.after_loop,
            placeholders: &placeholders,
        });
        let def = intern(src, self.options.clone(), || {
            let name: &'static str = Box::leak(self.name.clone().into_boxed_str());
            let signature: Vec<Param> = all
                .iter()
                .enumerate()
                .map(|(k, p)| {
                    let role = match (p.raw, k >= ins.len()) {
                        (true, _) => Role::Raw,
                        (false, false) => Role::In,
                        (false, true) => Role::Out,
                    };
                    let ty = match p.ty {
                        TypeSpec::Placeholder(c) => {
                            ParamType::Generic(placeholders.iter().position(|&x| x == c).unwrap_or(0) as u8)
                        }
                        TypeSpec::Fixed(d) => ParamType::Fixed(ElemType::Scalar(d)),
                    };
                    Param::new(Box::leak(p.name.clone().into_boxed_str()), role, ty)
                })
                .collect();
            (name, ins.clone(), outs.clone(), placeholders.clone(), signature)
        });
        Ok(ElementwiseKernel { def, no_return: self.no_return, return_tuple: self.return_tuple })
    }
}

type Parts = (&'static str, Vec<ParamSpec>, Vec<ParamSpec>, Vec<char>, Vec<Param>);

/// One definition per distinct (source, options), leaked once: the registry's `Kernel` needs a
/// `'static` unit, and CuPy keeps its kernels for the life of the process too.
fn intern(source: String, options: Vec<String>, parts: impl FnOnce() -> Parts) -> &'static Definition {
    static DEFS: OnceLock<Mutex<HashMap<(String, Vec<String>), &'static Definition>>> = OnceLock::new();
    let mut map = sync::lock(DEFS.get_or_init(Default::default));
    let key = (source, options);
    if let Some(d) = map.get(&key) {
        return d;
    }
    let (name, ins, outs, placeholders, signature) = parts();
    let unit: &'static KernelUnit =
        Box::leak(Box::new(KernelUnit::from_source(name, key.0.clone(), false).with_options(key.1.clone())));
    let signature: &'static [Param] = Box::leak(signature.into_boxed_slice());
    let (unit, sig) = (UnitRef::Embedded(unit), Signature::Elementwise(signature));
    // SAFETY: `signature` lists the parameters of the entry points `source::generate` wrote for
    // these specs, in their order (inputs, then outputs; raw ones `Role::Raw`), each with its
    // placeholder's index or fixed dtype. Per-element operands are accessed at the loop's
    // element by the generated loop; text that indexes raw arguments cannot be checked, so
    // such a kernel is `unchecked` (only unsafe launches take it).
    let kernel = unsafe {
        if signature.iter().any(|p| p.role == Role::Raw) {
            Kernel::unchecked(unit, name, sig)
        } else {
            Kernel::new(unit, name, sig)
        }
    };
    let kernel: &'static Kernel = Box::leak(Box::new(kernel));
    let def: &'static Definition = Box::leak(Box::new(Definition { name, ins, outs, placeholders, kernel }));
    map.insert(key, def);
    def
}

impl ElementwiseKernel {
    /// CuPy's `ElementwiseKernel(in_params, out_params, operation, name)`.
    pub fn new(in_params: &str, out_params: &str, operation: &str, name: &str) -> Result<ElementwiseKernel> {
        ElementwiseKernel::build(in_params, out_params, operation, name).finish()
    }

    /// A definition with options: `.preamble(..)`, `.loop_prep(..)`, `.after_loop(..)`,
    /// `.no_return(..)`, `.return_tuple(..)`, `.options(..)`, then `.finish()`.
    pub fn build(in_params: &str, out_params: &str, operation: &str, name: &str) -> Builder {
        Builder {
            in_params: in_params.into(),
            out_params: out_params.into(),
            operation: operation.into(),
            name: name.into(),
            preamble: String::new(),
            loop_prep: String::new(),
            after_loop: String::new(),
            no_return: false,
            return_tuple: false,
            options: Vec::new(),
        }
    }

    /// The kernel's name.
    pub fn name(&self) -> &'static str {
        self.def.name
    }

    /// The generated CUDA C (before instantiation).
    pub fn source(&self) -> &'static str {
        self.def.kernel.embedded_unit().map_or("", |u| u.source())
    }

    /// The registry kernel (its `served` records carry this name). For the tests.
    #[cfg(test)]
    pub(crate) fn kernel(&self) -> &'static Kernel {
        self.def.kernel
    }

    /// A call: add the inputs with [`Call::arg`] (arrays or scalars, in order), optionally every
    /// output with [`Call::out`], then [`Call::run`].
    pub fn call(&self) -> Call<'_> {
        Call { k: *self, args: Vec::new(), outs: Vec::new(), size: None, block_size: None, stream: None }
    }
}

/// An output array of the dtype the call bound.
#[derive(Clone, Debug)]
pub enum Output {
    /// A `bool` output.
    Bool(Array<bool>),
    /// An `i8` output.
    I8(Array<i8>),
    /// An `i16` output.
    I16(Array<i16>),
    /// An `i32` output.
    I32(Array<i32>),
    /// An `i64` output.
    I64(Array<i64>),
    /// A `u8` output.
    U8(Array<u8>),
    /// A `u16` output.
    U16(Array<u16>),
    /// A `u32` output.
    U32(Array<u32>),
    /// A `u64` output.
    U64(Array<u64>),
    /// An `f16` output.
    F16(Array<f16>),
    /// A `bf16` output.
    BF16(Array<bf16>),
    /// An `f32` output.
    F32(Array<f32>),
    /// An `f64` output.
    F64(Array<f64>),
    /// A `Complex<f32>` output.
    C32(Array<Complex<f32>>),
    /// A `Complex<f64>` output.
    C64(Array<Complex<f64>>),
    /// An `f8e4m3` output.
    F8E4M3(Array<f8e4m3>),
    /// An `f8e5m2` output.
    F8E5M2(Array<f8e5m2>),
}

macro_rules! output_conversions {
    ($($v:ident($t:ty)),* $(,)?) => {
        $(
            impl From<Array<$t>> for Output {
                fn from(a: Array<$t>) -> Output {
                    Output::$v(a)
                }
            }
            impl TryFrom<Output> for Array<$t> {
                type Error = Error;
                fn try_from(o: Output) -> Result<Array<$t>> {
                    match o {
                        Output::$v(a) => Ok(a),
                        other => Err(Error::DtypeMismatch {
                            context: "ElementwiseKernel output".into(),
                            expected: DType::$v.into(),
                            found: other.dtype().into(),
                        }),
                    }
                }
            }
        )*
        impl Output {
            fn empty(dtype: DType, shape: &[usize], stream: &Stream) -> Result<Output> {
                Ok(match dtype {
                    $(DType::$v => Output::$v(Array::<$t>::empty_on(shape.to_vec(), stream)?),)*
                })
            }

            /// The array's dtype.
            pub fn dtype(&self) -> DType {
                match self {
                    $(Output::$v(_) => DType::$v,)*
                }
            }

            /// The array's shape.
            pub fn shape(&self) -> &[usize] {
                match self {
                    $(Output::$v(a) => a.shape(),)*
                }
            }

            fn arg(&self) -> ArrayArg<'_> {
                match self {
                    $(Output::$v(a) => ArrayArg::of(a),)*
                }
            }
        }
    };
}

output_conversions!(
    Bool(bool), I8(i8), I16(i16), I32(i32), I64(i64), U8(u8), U16(u16), U32(u32), U64(u64),
    F16(f16), BF16(bf16), F32(f32), F64(f64), C32(Complex<f32>), C64(Complex<f64>),
    F8E4M3(f8e4m3), F8E5M2(f8e5m2),
);

impl Output {
    /// The array as `Array<T>`: an error when the dtype differs.
    pub fn into_array<T: Scalar>(self) -> Result<Array<T>>
    where
        Array<T>: TryFrom<Output, Error = Error>,
    {
        Array::<T>::try_from(self)
    }
}

/// The dtype of an input array of a kernel from CUDA C text, whose parameters are dtypes only.
fn scalar_dtype(x: &ArrayArg<'_>) -> Result<DType> {
    x.elem.dtype().ok_or_else(|| Error::Unsupported {
        what: format!(
            "an ElementwiseKernel (CUDA C text) takes arrays of the dtype table, not of the struct `{}`; \
             write the kernel as a `#[elementwise]` function to take `#[device]` structs",
            x.elem
        ),
    })
}

/// Something [`Call::arg`] accepts: an array (`&Array<T>`) or a scalar (`2.0f32`, `7u8`, ...).
pub trait CallArg<'a> {
    /// The input it stands for.
    fn into_arg(self) -> CallInput<'a>;
}

/// An input of a [`Call`].
#[derive(Clone, Copy, Debug)]
pub enum CallInput<'a> {
    /// An array, broadcast with the others.
    Array(ArrayArg<'a>),
    /// A scalar, passed by value.
    Scalar(Value),
}

impl<'a, T: Scalar> CallArg<'a> for &'a Array<T> {
    fn into_arg(self) -> CallInput<'a> {
        CallInput::Array(ArrayArg::of(self))
    }
}

impl<'a, V: Into<Value>> CallArg<'a> for V {
    fn into_arg(self) -> CallInput<'a> {
        CallInput::Scalar(self.into())
    }
}

/// One call of an [`ElementwiseKernel`] being put together.
#[derive(Debug)]
pub struct Call<'a> {
    k: ElementwiseKernel,
    args: Vec<CallInput<'a>>,
    outs: Vec<Output>,
    size: Option<usize>,
    block_size: Option<u32>,
    stream: Option<&'a Stream>,
}

impl<'a> Call<'a> {
    /// The next input: an array or a scalar.
    pub fn arg(mut self, a: impl CallArg<'a>) -> Self {
        self.args.push(a.into_arg());
        self
    }

    /// The next output, given explicitly (give all of them or none). It takes part in
    /// broadcasting and must have the broadcast shape; it binds type placeholders first.
    pub fn out<T: Scalar>(mut self, a: &Array<T>) -> Self
    where
        Array<T>: Into<Output>,
    {
        self.outs.push(a.clone().into());
        self
    }

    /// The loop size, when every array argument is raw (CuPy's `size=`).
    pub fn size(mut self, n: usize) -> Self {
        self.size = Some(n);
        self
    }

    /// Threads per block (0 is an error).
    pub fn block_size(mut self, n: u32) -> Self {
        self.block_size = Some(n);
        self
    }

    /// The stream (default: the current stream of the arrays' device).
    pub fn stream(mut self, s: &'a Stream) -> Self {
        self.stream = Some(s);
        self
    }

    /// Binds the placeholders: from the given outputs first, then the array inputs, then scalars.
    fn bind(&self) -> Result<Vec<DType>> {
        let def = self.k.def;
        let name = def.name;
        let mut bound: Vec<Option<DType>> = vec![None; def.placeholders.len()];
        let mut bind = |p: &ParamSpec, d: DType, what: &str, strict: bool| -> Result<()> {
            match p.ty {
                TypeSpec::Placeholder(c) => {
                    let k = def.placeholders.iter().position(|&x| x == c).unwrap_or(0);
                    match bound[k] {
                        None => bound[k] = Some(d),
                        Some(b) if b != d && strict => {
                            return Err(Error::DtypeMismatch {
                                context: format!(
                                    "{what} `{}` of ElementwiseKernel `{name}` (type placeholder `{c}` is already {b})",
                                    p.name
                                ),
                                expected: b.into(),
                                found: d.into(),
                            });
                        }
                        _ => {}
                    }
                }
                TypeSpec::Fixed(f) if f != d && strict => {
                    return Err(Error::DtypeMismatch {
                        context: format!("{what} `{}` of ElementwiseKernel `{name}`", p.name),
                        expected: f.into(),
                        found: d.into(),
                    });
                }
                TypeSpec::Fixed(_) => {}
            }
            Ok(())
        };
        for (p, o) in def.outs.iter().zip(&self.outs) {
            bind(p, o.dtype(), "output", true)?;
        }
        for (p, a) in def.ins.iter().zip(&self.args) {
            if let CallInput::Array(x) = a {
                bind(p, scalar_dtype(x)?, "input", true)?;
            }
        }
        for (p, a) in def.ins.iter().zip(&self.args) {
            if let CallInput::Scalar(v) = a {
                bind(p, v.dtype(), "input", false)?;
            }
        }
        bound
            .iter()
            .zip(&def.placeholders)
            .map(|(b, c)| {
                b.ok_or_else(|| Error::KernelDefinition {
                    kernel: name.to_string(),
                    detail: format!(
                        "the type placeholder `{c}` is not bound by any argument: pass an output array \
                         (`.out(&z)`) or an input of that type"
                    ),
                })
            })
            .collect()
    }

    /// Launches; returns the outputs (allocated unless given), none with `no_return`.
    ///
    /// A kernel with `raw` parameters is refused (its text indexes them, which cuprum cannot
    /// check): use [`run_raw`](Call::run_raw).
    pub fn run(self) -> Result<Vec<Output>> {
        if !self.k.def.kernel.is_checked() {
            return Err(launch::unchecked_code(self.k.def.name));
        }
        // SAFETY: the kernel has no raw parameter: its text accesses only the elements the
        // generated loop gives it.
        unsafe { self.run_raw() }
    }

    /// [`run`](Call::run) for a kernel with `raw` parameters (CuPy's `raw`).
    ///
    /// # Safety
    ///
    /// Every index the kernel's text computes into a raw argument must lie inside that array
    /// for these arguments (cuprum checks the operands' kinds, dtypes, devices and shapes, but
    /// not what the CUDA C text does with a raw pointer).
    pub unsafe fn run_raw(mut self) -> Result<Vec<Output>> {
        let def = self.k.def;
        let name = def.name;
        if self.args.len() != def.ins.len() {
            return Err(Error::InvalidLaunch {
                kernel: name.into(),
                detail: format!("{} inputs were given but the kernel takes {}", self.args.len(), def.ins.len()),
            });
        }
        if !self.outs.is_empty() && self.outs.len() != def.outs.len() {
            return Err(Error::InvalidLaunch {
                kernel: name.into(),
                detail: format!(
                    "{} outputs were given but the kernel has {}: give all of them or none",
                    self.outs.len(),
                    def.outs.len()
                ),
            });
        }
        let instance = self.bind()?;
        // Inputs as launch arguments (raw parameters take arrays only).
        let mut inputs: Vec<Arg<'_>> = Vec::with_capacity(def.ins.len() + def.outs.len());
        for (p, a) in def.ins.iter().zip(&self.args) {
            inputs.push(match (p.raw, a) {
                (true, CallInput::Array(x)) => Arg::Raw(*x),
                (false, CallInput::Array(x)) => Arg::In(*x),
                (false, CallInput::Scalar(v)) => Arg::Scalar(*v),
                (true, CallInput::Scalar(v)) => {
                    return Err(Error::InvalidLaunch {
                        kernel: name.into(),
                        detail: format!("raw parameter `{}` needs an array, found the scalar {v:?}", p.name),
                    });
                }
            });
        }
        let allocate = self.outs.is_empty();
        if allocate {
            // Allocate with the loop shape of the inputs (or `[size]`).
            let shape = launch::broadcast_shape(name, &inputs, self.size).map_err(|e| match e {
                Error::InvalidLaunch { detail, .. } if def.ins.is_empty() && self.size.is_none() => Error::InvalidLaunch {
                    kernel: name.into(),
                    detail: format!("{detail}; a kernel without inputs needs its outputs or the size"),
                },
                e => e,
            })?;
            let stream = match (self.stream, inputs.iter().find_map(|a| a.array())) {
                (Some(s), _) => s.clone(),
                (None, Some(x)) => Stream::current_for(&crate::device::Device::get(x.device)?)?,
                (None, None) => Stream::current()?,
            };
            for p in &def.outs {
                let d = match p.ty {
                    TypeSpec::Placeholder(c) => instance[def.placeholders.iter().position(|&x| x == c).unwrap_or(0)],
                    TypeSpec::Fixed(d) => d,
                };
                self.outs.push(Output::empty(d, &shape, &stream)?);
            }
        }
        let outs = std::mem::take(&mut self.outs);
        {
            let mut args = inputs;
            for (p, o) in def.outs.iter().zip(&outs) {
                let a = o.arg();
                args.push(if p.raw { Arg::Raw(a) } else { Arg::Out(a) });
            }
            // Outputs allocated here with `[size]` set the loop shape themselves; a size given
            // next to non-raw arrays of the caller's is an error (launch reports it).
            let size = if allocate && def.outs.iter().any(|p| !p.raw) { None } else { self.size };
            let opts = Options { stream: self.stream, block_size: self.block_size, size };
            // SAFETY: raw arguments are indexed within their sizes: this function's contract.
            unsafe { launch::launch_unchecked(def.kernel, &instance, &args, &opts)? };
        }
        Ok(if self.k.no_return { Vec::new() } else { outs })
    }

    /// [`run`](Self::run) for a kernel with exactly one output, as `Array<T>`.
    pub fn run_one<T: Scalar>(self) -> Result<Array<T>>
    where
        Array<T>: TryFrom<Output, Error = Error>,
    {
        let k = self.k;
        let name = k.def.name;
        if k.no_return || k.return_tuple || k.def.outs.len() != 1 {
            return Err(Error::InvalidLaunch {
                kernel: name.into(),
                detail: format!(
                    "run_one needs a kernel with one returned output (this one has {}{}{}); use `run`",
                    k.def.outs.len(),
                    if k.no_return { ", no_return" } else { "" },
                    if k.return_tuple { ", return_tuple" } else { "" }
                ),
            });
        }
        let mut outs = self.run()?;
        outs.remove(0).into_array::<T>()
    }
}
