//! docs/array-api.md, generated from the rows below: every attribute, method and routine of
//! CuPy's overview (the seeds; its list is `tests/fixtures/cupy-overview.txt`) and issue 36's
//! additions, with cuprum's form of it, the element types it takes and where it differs from
//! NumPy. Each row's cuprum form is Rust that compiles here (the `row!` macro puts the expression
//! in a closure of this file and its text in the table), so a row cannot name something that does
//! not exist. The tests fail when a name of the overview has no row, or when the committed page
//! differs from the generated one (`CUPRUM_BLESS=1 cargo test -p cuprum-testsuite --test
//! array_api` rewrites it).

#![allow(clippy::redundant_closure_call, unused_variables, unused_mut)]

use cuprum::runtime::array::{self as arr, Idx, Sections};
use cuprum::runtime::random::Generator;
use cuprum::runtime::{Array, Result, Side};

/// The arrays the rows' expressions use (never run: the rows are only compiled).
#[allow(dead_code)]
struct Ctx {
    x: Array<f32>,
    y: Array<f32>,
    d: Array<f64>,
    i: Array<i64>,
    j: Array<i32>,
    u: Array<u8>,
    b: Array<bool>,
    c: Array<bool>,
}

struct Row {
    numpy: &'static str,
    cuprum: Option<String>,
    takes: &'static str,
    note: &'static str,
}

/// A row whose cuprum form is `$e` (compiled in a closure over `Ctx`, never called).
macro_rules! row {
    ($np:literal, none, $note:literal) => {
        Row { numpy: $np, cuprum: None, takes: "", note: $note }
    };
    ($np:literal, $takes:expr, $note:literal, |$c:ident| $e:expr) => {{
        let _compiled = |$c: &mut Ctx| -> Result<()> {
            let _ = $e;
            Ok(())
        };
        Row { numpy: $np, cuprum: Some(tidy(stringify!($e))), takes: $takes, note: $note }
    }};
}

/// `stringify!`'s text of an expression without the context's `c.` and with Rust's usual spacing.
fn tidy(s: &str) -> String {
    s.replace("c.", "").replace(" ?", "?").replace("& ", "&").replace(" (", "(").replace("( ", "(").replace(" )", ")")
}

const ALL: &str = "all";
const NUM: &str = "numbers";
const REAL: &str = "integers, floats";
const FLT: &str = "floats";
const INT: &str = "integers";

fn sections() -> Vec<(&'static str, Vec<Row>)> {
    vec![
        ("ndarray: memory layout", vec![
            row!("base", "all", "`shares_buffer(&other)`: whether two arrays view one buffer (cuprum arrays own an `Arc` of their buffer, there is no base object)", |c| c.x.shares_buffer(&c.y)),
            row!("ctypes", none, "no Python `ctypes`; `device_ptr()` is the address, `buffer()` the allocation"),
            row!("itemsize", "all", "", |c| c.x.itemsize()),
            row!("flags", "all", "c/f contiguity, owndata, writeable", |c| c.x.flags()),
            row!("nbytes", "all", "", |c| c.x.nbytes()),
            row!("shape", "all", "", |c| c.x.shape()),
            row!("size", "all", "", |c| c.x.size()),
            row!("strides", "all", "`strides()` counts elements, `byte_strides()` bytes (NumPy's)", |c| c.x.byte_strides()),
        ]),
        ("ndarray: conversion", vec![
            row!("tolist", "all", "a `List<T>` (nested; `Debug` prints Python's list)", |c| c.x.tolist()?),
            row!("tofile", "all", "raw bytes in C order, as NumPy's", |c| c.x.tofile("x.bin")?),
            row!("dump dumps", none, "pickle is Python's format: use `save`/`savez` (NumPy's .npy/.npz)"),
            row!("astype", "all but structs", "Rust's `as` (floats to integers saturate, NaN to 0)", |c| c.x.astype::<f64>()?),
            row!("copy", "all", "C-contiguous", |c| c.x.copy()?),
            row!("view", "all", "a view of the bytes as another type (the last axis rescaled)", |c| c.x.view::<u32>()?),
            row!("fill", "all", "", |c| c.x.fill(1.0)?),
        ]),
        ("ndarray: shape", vec![
            row!("reshape", "all", "a view; `Error::NeedsCopy` where NumPy would copy (call `copy()` first)", |c| c.x.reshape([4, 1])?),
            row!("transpose", "all", "`permute(&axes)` for an order", |c| c.x.transpose()),
            row!("swapaxes", "all", "", |c| c.x.swapaxes(0, -1)?),
            row!("ravel", "all", "a view when C-contiguous, else a copy", |c| c.x.ravel()?),
            row!("squeeze", "all", "`squeeze_axis(k)` for one axis", |c| c.x.squeeze()),
        ]),
        ("ndarray: item selection", vec![
            row!("take", "all", "NumPy's mode='raise' (checked on the device first; CuPy wraps)", |c| c.x.take(&c.i, Some(0))?),
            row!("diagonal", "all", "a writable view (NumPy's is read-only)", |c| c.x.diagonal(0, 0, 1)?),
        ]),
        ("ndarray: calculation", vec![
            row!("max amax", REAL, "a builder: `.axis(k)`, `.keepdims(true)`, then `.run()`; NaN propagates (NumPy's)", |c| c.x.max().axis(0).run()?),
            row!("min amin", REAL, "as `max`", |c| c.x.min().run()?),
            row!("argmax", REAL, "", |c| c.x.argmax().run()?),
            row!("argmin", REAL, "", |c| c.x.argmin().run()?),
            row!("clip", REAL, "", |c| c.x.clip(0.0, 1.0)?),
            row!("trace", NUM, "", |c| c.x.trace(0, 0, 1)?),
            row!("sum", NUM, "integers wrap", |c| c.x.sum().run()?),
            row!("mean", NUM, "integers give f64", |c| c.x.mean().run()?),
            row!("var", REAL, "`.ddof(k)`", |c| c.x.var().run()?),
            row!("std", REAL, "", |c| c.x.std().run()?),
            row!("prod", NUM, "", |c| c.x.prod().run()?),
            row!("count_nonzero", ALL, "", |c| c.x.count_nonzero(None)?),
        ]),
        ("ndarray: arithmetic, comparison, bitwise operators", vec![
            row!("__lt__ __le__ __gt__ __ge__ less less_equal greater greater_equal", REAL, "also `le gt ge` and NumPy's names", |c| c.x.lt(&c.y)?),
            row!("__eq__ __ne__ equal not_equal", ALL, "`eq`/`ne` (Rust's `==` compares whole arrays' identity: not an operator here)", |c| c.x.equal(&c.y)?),
            row!("__nonzero__", none, "an array has no truth value in Rust: `x.item()?` of a 1-element array, or `any`/`all`"),
            row!("__neg__ negative", NUM, "integers wrap", |c| (-&c.x)?),
            row!("__pos__", ALL, "`clone()`: a view (NumPy's `+x` copies)", |c| c.x.clone()),
            row!("__abs__ absolute", NUM, "`abs()`; `|MIN|` is `MIN`", |c| c.x.abs()?),
            row!("__invert__ invert", "integers, bool", "`!`", |c| (!&c.i)?),
            row!("__add__ add", NUM, "operators return `Result`: `(&a + &b)?`", |c| (&c.x + &c.y)?),
            row!("__sub__ subtract", NUM, "", |c| (&c.x - &c.y)?),
            row!("__mul__ multiply", NUM, "", |c| (&c.x * 2.0)?),
            row!("__div__ __truediv__ divide true_divide", NUM, "integers divide as Rust's `/` (truncating; by zero gives 0): NumPy's true division of integers is `astype::<f64>()` first", |c| (&c.x / &c.y)?),
            row!("__floordiv__ floor_divide", REAL, "", |c| c.x.floor_divide(&c.y)?),
            row!("__mod__ mod remainder", REAL, "`remainder` is NumPy's floored `%`; Rust's `%` operator is truncated (`fmod`)", |c| c.x.remainder(&c.y)?),
            row!("__divmod__", REAL, "", |c| c.x.divmod(&c.y)?),
            row!("__pow__ power", REAL, "integer powers wrap", |c| c.x.power(&c.y)?),
            row!("__lshift__ left_shift", INT, "the shift amount wraps modulo the width (Rust's rule)", |c| (&c.i << 2)?),
            row!("__rshift__ right_shift", INT, "", |c| (&c.i >> 2)?),
            row!("__and__ bitwise_and", "integers, bool", "", |c| (&c.i & 0xff)?),
            row!("__or__ bitwise_or", "integers, bool", "", |c| c.i.bitwise_or(&c.i)?),
            row!("__xor__ bitwise_xor", "integers, bool", "", |c| (&c.b ^ &c.c)?),
            row!("__iadd__", NUM, "in place: a method returning `Result<()>` (Rust's `+=` cannot fail)", |c| c.x.add_assign(&c.y)?),
            row!("__isub__", NUM, "", |c| c.x.sub_assign(&c.y)?),
            row!("__imul__", NUM, "", |c| c.x.mul_assign(2.0)?),
            row!("__idiv__ __itruediv__", NUM, "", |c| c.x.div_assign(&c.y)?),
            row!("__ifloordiv__", REAL, "", |c| c.x.floor_divide_assign(&c.y)?),
            row!("__imod__", REAL, "NumPy's floored remainder (`rem_assign` is Rust's `%`)", |c| c.x.remainder_assign(&c.y)?),
            row!("__ipow__", REAL, "", |c| c.x.pow_assign(2.0)?),
            row!("__ilshift__", INT, "", |c| c.i.shl_assign(1)?),
            row!("__irshift__", INT, "", |c| c.i.shr_assign(1)?),
            row!("__iand__", "integers, bool", "", |c| c.i.bitand_assign(&c.i.clone())?),
            row!("__ior__", "integers, bool", "", |c| c.b.bitor_assign(&c.c)?),
            row!("__ixor__", "integers, bool", "", |c| c.i.bitxor_assign(3)?),
        ]),
        ("ndarray: special methods", vec![
            row!("__copy__ __deepcopy__", ALL, "`copy()`; `clone()` is a view", |c| c.x.copy()?),
            row!("__reduce__", none, "pickling is Python's: `save`/`savez`"),
            row!("__array__", ALL, "to the host as `ndarray` (`to_ndarray`, `get`)", |c| c.x.to_ndarray()?),
            row!("__len__", ALL, "the first axis: `shape()[0]`; `len()` is the number of elements", |c| c.x.shape()[0]),
            row!("__getitem__", ALL, "basic indexing: `Idx::Int`, slices, `Idx::NewAxis`, `Idx::Ellipsis`", |c| c.x.index(&[Idx::Int(0), Idx::Ellipsis])?),
            row!("__setitem__", ALL, "`assign_index` (broadcast), `fill_index`", |c| c.x.fill_index(&[Idx::Int(-1)], 0.0)?),
            row!("__int__ __long__ __float__", ALL, "`item()` of a 1-element array, then Rust's `as`", |c| c.x.item()?),
            row!("__oct__ __hex__", none, "`format!(\"{:o}\", x.item()?)`, `{:x}`: Rust's formatting"),
            row!("__repr__ array_repr", ALL, "NumPy's layout", |c| c.x.array_repr()),
            row!("__str__ array_str", ALL, "", |c| c.x.array_str()),
        ]),
        ("ndarray: memory transfer", vec![
            row!("get", ALL, "an `ndarray::ArrayD`", |c| c.x.get()?),
            row!("set", ALL, "from any `ndarray` array of the same shape", |c| c.x.set(&cuprum::runtime::ndarray::Array2::<f32>::zeros((2, 2)))?),
        ]),
        ("creation", vec![
            row!("empty", ALL, "", |c| Array::<f32>::empty([2, 3])?),
            row!("empty_like", ALL, "on the prototype's device", |c| Array::<f64>::empty_like(&c.x)?),
            row!("eye", NUM, "", |c| Array::<f32>::eye(3, 4, 1)?),
            row!("identity", NUM, "", |c| Array::<f32>::identity(3)?),
            row!("ones", NUM, "", |c| Array::<f32>::ones([2, 3])?),
            row!("ones_like", NUM, "", |c| Array::<f32>::ones_like(&c.x)?),
            row!("zeros", ALL, "a memset", |c| Array::<f32>::zeros([2, 3])?),
            row!("zeros_like", ALL, "", |c| Array::<i64>::zeros_like(&c.x)?),
            row!("full", ALL, "", |c| Array::full([2, 3], 7.0f32)?),
            row!("full_like", ALL, "", |c| Array::full_like(&c.x, 7i32)?),
            row!("array", ALL, "always a new buffer", |c| Array::<f32>::array(vec![1.0, 2.0])?),
            row!("asarray", ALL, "a view of an `Array`, a copy of host data", |c| Array::<f32>::asarray(&c.x)?),
            row!("ascontiguousarray", ALL, "", |c| c.x.ascontiguousarray()?),
            row!("copy", ALL, "", |c| c.x.copy()?),
            row!("arange", NUM, "`arange_step(start, stop, step)` for NumPy's three arguments", |c| Array::<f32>::arange_step(0.0, 1.0, 0.25)?),
            row!("linspace", FLT, "", |c| Array::<f64>::linspace(0.0, 1.0, 11)?),
            row!("diag", ALL, "", |c| Array::diag(&c.x, 0)?),
            row!("diagflat", ALL, "", |c| Array::diagflat(&c.x, 1)?),
        ]),
        ("manipulation", vec![
            row!("reshape ravel", ALL, "as the methods; `reshape_infer` takes one -1", |c| c.x.reshape_infer(&[-1])?),
            row!("rollaxis", ALL, "", |c| c.x.rollaxis(1, 0)?),
            row!("moveaxis", ALL, "", |c| c.x.moveaxis(&[0], &[-1])?),
            row!("atleast_1d atleast_2d atleast_3d", ALL, "", |c| c.x.atleast_3d()),
            row!("broadcast", ALL, "shape, ndim, size, numiter (no iteration)", |c| arr::broadcast(&[&c.x, &c.y])?),
            row!("broadcast_arrays", ALL, "views", |c| arr::broadcast_arrays(&[&c.x, &c.y])?),
            row!("broadcast_to", ALL, "a view", |c| c.x.broadcast_to([4, 2, 2])?),
            row!("expand_dims", ALL, "", |c| c.x.expand_dims(0)?),
            row!("column_stack", ALL, "", |c| arr::column_stack(&[&c.x, &c.y])?),
            row!("concatenate", ALL, "one copy per input into its slice of the result", |c| arr::concatenate(&[&c.x, &c.y], 0)?),
            row!("stack", ALL, "", |c| arr::stack(&[&c.x, &c.y], 0)?),
            row!("dstack", ALL, "", |c| arr::dstack(&[&c.x, &c.y])?),
            row!("hstack", ALL, "", |c| arr::hstack(&[&c.x, &c.y])?),
            row!("vstack", ALL, "", |c| arr::vstack(&[&c.x, &c.y])?),
            row!("split array_split", ALL, "views; `Sections::Count(n)` or `Sections::At(indices)`", |c| arr::array_split(&c.x, Sections::Count(3), 0)?),
            row!("dsplit hsplit vsplit", ALL, "", |c| arr::hsplit(&c.x, Sections::At(vec![1]))?),
        ]),
        ("input and output", vec![
            row!("save", "all but bf16", "NumPy's .npy", |c| arr::save("x.npy", &c.x)?),
            row!("load", "all but bf16", "the element type is the caller's (a mismatch is an error); C and Fortran order, either byte order", |c| arr::load::<f32>("x.npy")?),
            row!("savez savez_compressed", "all but bf16", "NumPy's .npz; `load_npz(path)?.get::<T>(name)`", |c| arr::savez_compressed("x.npz", &[("x", &c.x)])?),
        ]),
        ("linear algebra", vec![
            row!("dot", NUM, "NumPy's rules (N-d with M-d sums over the last and the second-to-last axes); a GPU calls cuBLAS for floats and complex numbers (TF32 only with `CUPY_TF32=1`) and a built-in kernel for integers", |c| c.x.dot(&c.y)?),
            row!("vdot", NUM, "a 0-d array; the first operand conjugated for complex numbers", |c| c.x.vdot(&c.y)?),
            row!("inner", NUM, "", |c| c.x.inner(&c.y)?),
            row!("outer", NUM, "", |c| c.x.outer(&c.y)?),
            row!("tensordot", NUM, "`tensordot(&b, &axes_a, &axes_b)`; `tensordot_n(&b, n)` for `axes=n`", |c| c.x.tensordot(&c.y, &[1], &[0])?),
        ]),
        ("logic", vec![
            row!("isfinite isinf isnan", FLT, "integers: all finite", |c| c.x.isnan()?),
            row!("logical_and logical_or logical_xor", ALL, "non-zero is true", |c| c.x.logical_and(&c.y)?),
            row!("logical_not", ALL, "", |c| c.x.logical_not()?),
        ]),
        ("mathematics", vec![
            row!("sin cos tan arcsin arccos arctan sinh cosh tanh arcsinh arccosh arctanh", FLT, "the device's math functions (host's on the CPU device: last-bit differences)", |c| c.x.arcsinh()?),
            row!("hypot arctan2", FLT, "", |c| c.x.arctan2(&c.y)?),
            row!("deg2rad rad2deg degrees radians", FLT, "", |c| c.x.deg2rad()?),
            row!("rint floor ceil trunc", FLT, "`rint` rounds half to even", |c| c.x.rint()?),
            row!("exp expm1 exp2 log log10 log2 log1p", FLT, "", |c| c.x.log1p()?),
            row!("logaddexp logaddexp2", FLT, "", |c| c.x.logaddexp(&c.y)?),
            row!("signbit copysign", FLT, "", |c| c.x.copysign(&c.y)?),
            row!("ldexp frexp", FLT, "`frexp` gives `(mantissa, i32 exponent)`", |c| c.x.ldexp(&c.j)?),
            row!("nextafter", "f32, f64", "", |c| c.x.nextafter(&c.y)?),
            row!("reciprocal square", NUM, "integer reciprocal truncates (NumPy's)", |c| c.x.reciprocal()?),
            row!("fmod", REAL, "truncated (C's `fmod`, Rust's `%`)", |c| c.x.fmod(&c.y)?),
            row!("modf", FLT, "`(fraction, integral part)`", |c| c.x.modf()?),
            row!("sqrt", FLT, "", |c| c.x.sqrt()?),
            row!("sign", NUM, "", |c| c.x.sign()?),
            row!("maximum minimum", REAL, "NaN propagates (NumPy's)", |c| c.x.maximum(&c.y)?),
            row!("fmax fmin", REAL, "NaN ignored", |c| c.x.fmax(&c.y)?),
        ]),
        ("sorting, searching, counting", vec![
            row!("where", ALL, "`where_(&cond, x, y)`; the one-argument `where(cond)` is `cond.nonzero()?` (below)", |c| cuprum::runtime::where_(&c.b, &c.x, 0.0)?),
        ]),
        ("beyond the overview (issue 36)", vec![
            row!("matmul", NUM, "batched, NumPy's broadcasting of the batch axes and 1-d operands; cuBLAS on a GPU (f16 and bf16 accumulate in f32), matrixmultiply on the CPU device", |c| c.x.matmul(&c.y)?),
            row!("cumsum", "i32 u32 i64 u64 f32 f64", "one pass (decoupled look-back); the result keeps the element type (NumPy sums small integers in int64)", |c| c.x.cumsum(Some(1))?),
            row!("cumprod", "i32 u32 i64 u64 f32 f64", "", |c| c.x.cumprod(None)?),
            row!("bincount", INT, "`bincount_weighted(&w, minlength)` for weights", |c| c.u.bincount(0)?),
            row!("histogram", "f32, f64", "equal bins; NumPy's edges and bin arithmetic", |c| c.x.histogram(10, Some((0.0, 1.0)))?),
            row!("searchsorted", REAL, "`Side::Left`/`Side::Right`; NaN last", |c| c.x.searchsorted(&c.y, Side::Left)?),
            row!("sort", "i32 u32 i64 u64 f32 f64", "stable radix sort; `None` flattens (NumPy's `axis=None`); NaN last, -0.0 and 0.0 kept in input order", |c| c.x.sort(Some(-1))?),
            row!("argsort", "i32 u32 i64 u64 f32 f64", "`kind='stable'` always", |c| c.x.argsort(None)?),
            row!("nonzero", ALL, "a `Vec` of `i64` arrays, one per axis; a 0-d array is an error (NumPy >= 2.1); the count is read back (a synchronisation)", |c| c.x.nonzero()?),
            row!("flatnonzero", ALL, "", |c| c.b.flatnonzero()?),
            row!("argwhere", ALL, "`[count, ndim]` `i64`", |c| c.x.argwhere()?),
            row!("unique", "i32 u32 i64 u64 f32 f64", "one NaN (`equal_nan=True`); no `axis`; `return_index`, `return_inverse`, `return_counts`: `unique_all()?`, a `Unique` with the fields `values`, `indices`, `inverse` (the input's shape), `counts`", |c| c.i.unique()?),
            row!("unique_all", "i32 u32 i64 u64 f32 f64", "the array API's; NumPy's `unique` with its three `return_` options", |c| c.x.unique_all()?.counts),
            row!("random.uniform", FLT, "`Generator` (Philox4x32-10): the same numbers on every device for one seed", |c| Generator::new(7).uniform(0.0f32, 1.0, [4])?),
            row!("random.normal", FLT, "", |c| Generator::new(7).normal(0.0f64, 1.0, [4])?),
            row!("random.integers", INT, "in `[low, high)`", |c| Generator::new(7).integers::<i64>(0, 10, [4])?),
        ]),
    ]
}

/// The page the rows make.
fn page() -> String {
    let mut s = String::from(
        "# The array API\n\n\
         <!-- Generated by testsuite/tests/array_api.rs from its rows (each a Rust expression that \
         compiles there): `CUPRUM_BLESS=1 cargo test -p cuprum-testsuite --test array_api`. -->\n\n\
         Every attribute, method and routine of CuPy's overview, and issue 36's additions, with \
         cuprum's form (`x`, `y`: `Array<f32>`; `d`: `Array<f64>`; `i`: `Array<i64>`; `j`: \
         `Array<i32>`; `u`: `Array<u8>`; `b`, `c`: `Array<bool>`; `arr` is \
         `cuprum::runtime::array`), the element types it takes and where it differs from NumPy. \
         Every routine runs on both devices (the CPU device runs the same kernels, except for the \
         scans and the radix sort under `cumsum`, `cumprod`, `sort`, `argsort` and `unique`, which \
         have host versions there: docs/cpu.md). Rules that hold \
         throughout (docs/semantics.md): integers wrap, and the result of a binary operation has \
         the element type of its operands (no type promotion: convert with `astype` first).\n",
    );
    for (section, rows) in sections() {
        s.push_str(&format!("\n## {section}\n\n| NumPy | cuprum | takes | differences |\n| --- | --- | --- | --- |\n"));
        for r in rows {
            let names = r.numpy.split(' ').map(|n| format!("`{n}`")).collect::<Vec<_>>().join(" ");
            let form = r.cuprum.as_deref().map_or("—".to_string(), |f| format!("`{f}`"));
            s.push_str(&format!("| {names} | {form} | {} | {} |\n", r.takes, r.note));
        }
    }
    s
}

fn root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

#[test]
fn every_name_of_the_overview_has_a_row() {
    let listed = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cupy-overview.txt")).unwrap();
    let mut covered = std::collections::HashSet::new();
    for (_, rows) in sections() {
        for r in rows {
            assert!(r.cuprum.is_some() || !r.note.is_empty(), "the row of {} has neither a cuprum form nor a reason", r.numpy);
            covered.extend(r.numpy.split(' ').map(str::to_string));
        }
    }
    let missing: Vec<&str> = listed
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with('['))
        .flat_map(|l| l.split_whitespace())
        .filter(|n| !covered.contains(*n))
        .collect();
    assert!(missing.is_empty(), "names of the overview without a row in docs/array-api.md: {missing:?}");
}

#[test]
fn the_page_is_generated_from_the_rows() {
    let path = root().join("docs/array-api.md");
    let want = page();
    if std::env::var_os("CUPRUM_BLESS").is_some() {
        std::fs::write(&path, &want).unwrap();
    }
    let got = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(got == want, "docs/array-api.md is not what the rows give: run `CUPRUM_BLESS=1 cargo test -p cuprum-testsuite --test array_api`");
}
