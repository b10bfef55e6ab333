//! cuprum's attribute macros. Each is three steps: parse, call the compiler, turn its errors into
//! `compile_error!` next to the user's unchanged function (so other errors don't cascade).

use proc_macro::TokenStream;

use cuprum_compiler::front::AttrKind;

fn expand(kind: AttrKind, attr: TokenStream, item: TokenStream) -> TokenStream {
    cuprum_compiler::check_item(kind, attr.into(), item.into()).into()
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
