//! cuprum's attribute macros. Each is three steps: gather the context (the item's file, the
//! crate's `OUT_DIR`), call the compiler's `expand_item`, return its tokens: the user's unchanged
//! function, plus its errors as `compile_error!` or, when clean, the kernel's typed entry points.

#![warn(missing_docs)]

use proc_macro::TokenStream;

use cuprum_compiler::AttrKind;

fn context() -> cuprum_compiler::expand::Context {
    cuprum_compiler::expand::Context {
        file: Some(proc_macro::Span::call_site().local_file()).flatten(),
        out_dir: std::env::var_os("OUT_DIR").map(Into::into),
    }
}

fn expand(kind: AttrKind, attr: TokenStream, item: TokenStream) -> TokenStream {
    cuprum_compiler::expand::expand_item(kind, attr.into(), item.into(), &context()).into()
}

/// A CuPy-style elementwise kernel: the parameters are per-element inputs, the return value the
/// output (a tuple for several), computed over the broadcast shape of the array arguments.
///
/// ```ignore
/// use cuprum::prelude::*;
///
/// #[elementwise]
/// pub fn squared_diff<T: Float>(x: T, y: T) -> T {
///     let d = x - y;
///     d * d
/// }
///
/// let z = squared_diff::call(&x, &y)?;          // broadcast, the output allocated
/// let w = squared_diff::call(&x, 2.0)?;         // any input may be a scalar
/// squared_diff::call_into(&x, &y, &mut z)?;     // into a given output
/// let v = squared_diff::call_with(&Options::new().block_size(128).stream(&s), &x, &y)?;
/// ```
///
/// The function stays callable on the host (the reference for tests), and a module of the same
/// name is added:
///
/// - `NAME::call(args..) -> Result<Out>`: one argument per parameter, an `&Array<T>` or a scalar
///   (`impl Into<Input<T>>`); generic parameters are inferred from them and pick the instance;
///   the outputs are allocated with the broadcast shape (a tuple of arrays for a tuple result).
/// - `NAME::call_into(args.., &mut out..)`: into given outputs, which must have the broadcast
///   shape; `NAME::call_with(&Options, args..)` and `call_into_with`: with a stream, a block size
///   (1 to 1024) or, when every array argument is `Raw<T>`, the loop size.
/// - Parameters: `T` (a per-element input), `Raw<T>` (the whole array, indexed with `index()` and
///   `loop_size()`), `&mut T` (an extra output).
///
/// Attribute arguments: `instances = [f32, f64]` (the instantiations precompiled by `build.rs`;
/// each bound's defaults otherwise; the others are compiled by NVRTC at first use and cached),
/// `crate = path` (where the facade is, default `::cuprum`). The whole guide: the `cuprum` crate's
/// module `guide::elementwise` (docs/elementwise.md) and `guide::kernel_language`.
#[proc_macro_attribute]
pub fn elementwise(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand(AttrKind::Elementwise, attr, item)
}

/// A CuPy-style reduction: the body is the map; `identity`, `reduce`, `post`, `acc` on the attribute.
///
/// ```ignore
/// use cuprum::prelude::*;
///
/// #[reduction(identity = T::zero(), reduce = |a, b| a + b, post = |a| a.sqrt())]
/// pub fn l2norm<T: Float>(x: T) -> T {
///     x * x
/// }
///
/// let n = l2norm::call(&x).axis(1).run()?;                  // over axis 1
/// let k = l2norm::call(&x).axes([0, 2]).keepdims(true).run()?;
/// l2norm::call(&x).axis(-1).out(&mut y).stream(&s).run()?;  // a given output, a stream
/// ```
///
/// - Attribute: `identity = e` (the value of an empty reduction; a true identity of `reduce`;
///   optional, then an empty reduction is an error), `reduce = |a, b| ..` (combines two
///   accumulators; must be associative and commutative), `post = |a| ..` (maps each result;
///   optional), `acc = T` (the accumulator type, default the map's result; a `#[device]` struct
///   is allowed), `instances = [..]`, `crate = path`.
/// - `NAME::call(&x, ..) -> ReductionCall<'_, Out>`: one array per parameter; the builder takes
///   `.axis(k)`, `.axes([..])` (default: every axis), `.keepdims(b)`, `.out(&mut y)`, `.stream(&s)`,
///   and `.run() -> Result<Array<Out>>` launches it.
/// - `NAME::identity_host()`, `NAME::reduce_host(a, b)`, `NAME::post_host(a)`: the attribute's
///   parts on the host, for references.
///
/// The whole guide: the `cuprum` crate's module `guide::reduction` (docs/reduction.md).
#[proc_macro_attribute]
pub fn reduction(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand(AttrKind::Reduction, attr, item)
}

/// A raw kernel (cupyx.jit.rawkernel in Rust syntax): the caller gives grid and block.
///
/// ```ignore
/// use cuprum::prelude::*;
///
/// #[rawkernel]
/// pub fn copy<T: Scalar>(x: &[T], y: &mut [T], n: u32) {
///     let mut i = grid_1d();
///     while i < n {
///         y[i as usize] = x[i as usize];
///         i += grid_size_1d();
///     }
/// }
///
/// copy::launch(&LaunchConfig::new(4, 256), &x, &mut y, 1000)?;   // T = f32, inferred
/// let cfg = LaunchConfig::new((8, 8), (16, 16)).shared_mem(4096).stream(&stream);
/// ```
///
/// - `NAME::launch(&LaunchConfig, args..) -> Result<()>`: `&[T]`/`&mut [T]` parameters take a
///   C-contiguous `&Array<T>`/`&mut Array<T>`, `View<T, N>`/`ViewMut<T, N>` any layout of N
///   dimensions, scalars by value, `&TensorMap<T>` a TMA map; rustc checks the list, the launch
///   checks devices, contiguity and the configuration against the device's limits.
/// - Attribute: `instances = [..]`, `fast_math`, `max_threads = N` (CUDA's `__launch_bounds__`),
///   `unchecked` (no index checks in the body; `launch` becomes an `unsafe fn`), `crate = path`.
/// - Intrinsics (`thread_idx()`, `sync_threads()`, `shared_array::<T, N>()`, atomics, shuffles,
///   warp collectives, tensor cores, TMA and wgmma, `grid_sync()`, `gpu_println!`) come from
///   `cuprum::prelude`; each also runs on the CPU device.
///
/// The whole guide: the `cuprum` crate's module `guide::kernel_language`
/// (docs/kernel-language.md, "Launching a `#[rawkernel]`").
#[proc_macro_attribute]
pub fn rawkernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand(AttrKind::RawKernel, attr, item)
}

/// A function callable from kernels (`__device__`), generic or not (no recursion), or a
/// `#[repr(C)]` struct usable in kernels and as an array element. `#[device(unchecked)] unsafe fn`
/// leaves out the index checks of its body (its callers use `unsafe`). The guide: the `cuprum`
/// crate's module `guide::kernel_language` (docs/kernel-language.md, "Structs").
#[proc_macro_attribute]
pub fn device(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand(AttrKind::Device, attr, item)
}

/// A function over arrays, written with cuprum's array operations, that also runs as one fused
/// kernel generated at build time: `NAME::call(..)` (docs/fusion.md).
///
/// ```ignore
/// use cuprum::prelude::*;
/// use cuprum::runtime::{Array, Result};
///
/// #[fuse(instances = [f32, f64])]
/// pub fn softmax<T: Float>(x: &Array<T>) -> Result<Array<T>> {
///     let m = x.max().axis(-1).keepdims(true).run()?;
///     let e = (x - &m)?.exp()?;
///     let s = e.sum().axis(-1).keepdims(true).run()?;
///     &e / &s
/// }
///
/// let y = softmax(&x)?;        // as written: one kernel per operation
/// let y = softmax::call(&x)?;  // one kernel (here one block per row), precompiled
/// ```
///
/// The body may hold elementwise operators and functions, scalars, broadcasting, and reductions
/// along the last axis whose results feed later operations (row plans); what cannot be fused is
/// a compile error that says why. The guide: the `cuprum` crate's module `guide::fusion`.
#[proc_macro_attribute]
pub fn fuse(attr: TokenStream, item: TokenStream) -> TokenStream {
    cuprum_compiler::expand::expand_fuse(attr.into(), item.into(), &context()).into()
}
