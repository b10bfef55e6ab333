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

/// A CuPy-style elementwise kernel: the parameters are per-element inputs, the return value the output.
#[proc_macro_attribute]
pub fn elementwise(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand(AttrKind::Elementwise, attr, item)
}

/// A CuPy-style reduction: the body is the map; `identity`, `reduce`, `post`, `acc` on the attribute.
#[proc_macro_attribute]
pub fn reduction(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand(AttrKind::Reduction, attr, item)
}

/// A raw kernel (cupyx.jit.rawkernel in Rust syntax): the caller gives grid and block.
#[proc_macro_attribute]
pub fn rawkernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand(AttrKind::RawKernel, attr, item)
}

/// A function callable from kernels (`__device__`).
#[proc_macro_attribute]
pub fn device(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand(AttrKind::Device, attr, item)
}

/// A function over arrays, written with cuprum's array operations, that also runs as one fused
/// kernel generated at build time: `NAME::call(..)` (docs/fusion.md).
#[proc_macro_attribute]
pub fn fuse(attr: TokenStream, item: TokenStream) -> TokenStream {
    cuprum_compiler::expand::expand_fuse(attr.into(), item.into(), &context()).into()
}
