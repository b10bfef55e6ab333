//! The typed call API of an `#[elementwise]` kernel: `NAME::call(args...)` and its forms.
//!
//! Each kernel parameter becomes a call parameter whose type rustc checks at the call:
//!
//! | kernel parameter | call argument | role |
//! | --- | --- | --- |
//! | a scalar type or a generic `T` | `impl Into<Input<'a, T>>`: `&Array<T>` (broadcast) or a `T` (by value) | `In` |
//! | a `#[device]` struct `S` | `&Array<S>` (broadcast) | `In` |
//! | `Raw<T>` / `&Raw<T>` | `&Array<T>` (indexed by the kernel, not broadcast) | `Raw` |
//! | `&mut T` | `&mut Array<T>` of the broadcast shape (read and written) | `InOut` |
//! | the return value (a tuple for several) | allocated and returned, or given to `call_into` | `Out` |
//!
//! The module has, besides the statics of every kernel:
//!
//! - `SIGNATURE`: the entry point's parameters (`launch::signature::Param`), kernel parameters then
//!   returned outputs, for `elementwise::launch`;
//! - `kernel()`: the kernel's `registry::Kernel`;
//! - `call(args..) -> Result<outputs>`: broadcast, allocate the outputs on the current stream of
//!   the arrays' device, launch;
//! - `call_with(&Options, args..)`: the same with a stream, a block size, or the loop size of an
//!   all-raw call;
//! - `call_into(args.., outs..)` and `call_into_with(&Options, args.., outs..)` (kernels that
//!   return something): the outputs given by the caller.
//!
//! Generic parameters keep their bounds (plus `Scalar`); rustc infers them from the arguments
//! and their dtypes pick the instance.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::opening::Opening;
use super::rust_types;
use super::unit::UnitInfo;

use crate::checked::Checked;
use crate::signature::Role;

/// `mod NAME { statics; SIGNATURE; kernel(); call..; }`.
pub(super) fn call_module(f: &syn::ItemFn, checked: &Checked, unit: &UnitInfo) -> TokenStream {
    let open = Opening::new(
        f,
        checked,
        unit,
        quote!(__cuprum::launch::signature::Signature::Elementwise(SIGNATURE)),
        Some(quote!(__cuprum::cpu::HostEntry::Elementwise(__cuprum_host_entry))),
    );
    let mut call = CallParams::of(checked);
    let outs = Outputs::of(checked, &mut call);
    let options = format_ident!("{}", fresh("options".into(), &call.taken));
    let host = host_entry(f, checked, &open.generics);
    let fns = call_fns(&open, &call, &outs, &options);
    let Opening { name, name_str, vis, private, statics, .. } = &open;
    let nsig = call.sig.len();
    let sig = &call.sig;
    let doc_mod = format!("Calls the `#[elementwise]` kernel [`{name_str}`](fn@super::{name_str}) on the GPU (see `call`).");
    quote! {
        #[doc = #doc_mod]
        #[allow(non_snake_case, unused_imports, unused_mut, clippy::too_many_arguments, clippy::needless_lifetimes)]
        #vis mod #name {
            use super::*;
            use #private as __cuprum;

            #statics

            /// The entry point's parameters: the kernel's, then its returned outputs.
            pub const SIGNATURE: &[__cuprum::launch::signature::Param; #nsig] = &[#(#sig),*];

            /// The kernel's per-device table of loaded instances (for `elementwise::launch`).
            pub fn kernel() -> &'static __cuprum::registry::Kernel {
                &__CUPRUM_KERNEL
            }

            #fns

            #host
        }
    }
}

/// `base`, with `_` appended until no name of `taken` is it.
fn fresh(base: String, taken: &[String]) -> String {
    let mut n = base;
    while taken.contains(&n) {
        n.push('_');
    }
    n
}

/// The call functions' parameters, from the kernel's, and what each becomes.
struct CallParams {
    /// The names in use (parameters, then outputs).
    taken: Vec<String>,
    /// `x: impl Into<Input<'a, T>>`, ...
    params: Vec<TokenStream>,
    /// The same names, passed on.
    forward: Vec<TokenStream>,
    /// `let x = x.into();`
    converts: Vec<TokenStream>,
    /// `x.arg()` / `Arg::raw(y)` / `Arg::output(acc)`, then the returned outputs'.
    args: Vec<TokenStream>,
    /// The same, for the shape (shared borrows).
    shape_args: Vec<TokenStream>,
    /// The entry point's `launch::signature::Param`s, then the returned outputs'.
    sig: Vec<TokenStream>,
    /// Whether a parameter is an input (the call functions then take a lifetime `'a`).
    has_input: bool,
}

impl CallParams {
    fn of(checked: &Checked) -> Self {
        let item_generics = &checked.item.generics;
        let mut c = CallParams {
            taken: Vec::new(),
            params: Vec::new(),
            forward: Vec::new(),
            converts: Vec::new(),
            args: Vec::new(),
            shape_args: Vec::new(),
            sig: Vec::new(),
            has_input: false,
        };
        for p in &checked.sig.params {
            let ident = &p.name;
            let ident_str = ident.to_string();
            c.taken.push(ident_str.clone());
            let elem = rust_types::named(&p.elem, item_generics);
            let pty = rust_types::param_type(&p.elem, item_generics);
            match p.role {
                Role::Struct => {
                    // Struct elements come from arrays only (a host struct value is not broadcast).
                    c.has_input = true;
                    c.params.push(quote!(#ident: &'a __cuprum::Array<#elem>));
                    c.args.push(quote!(__cuprum::elementwise::Arg::input(#ident)));
                    c.shape_args.push(quote!(__cuprum::elementwise::Arg::input(#ident)));
                    c.sig.push(quote!(__cuprum::launch::signature::Param::new(#ident_str, __cuprum::launch::signature::Role::In, #pty)));
                }
                Role::Scalar => {
                    c.has_input = true;
                    c.params.push(quote!(#ident: impl ::core::convert::Into<__cuprum::elementwise::Input<'a, #elem>>));
                    c.converts.push(quote!(let #ident: __cuprum::elementwise::Input<'a, #elem> = #ident.into();));
                    c.args.push(quote!(#ident.arg()));
                    c.shape_args.push(quote!(#ident.arg()));
                    c.sig.push(quote!(__cuprum::launch::signature::Param::new(#ident_str, __cuprum::launch::signature::Role::In, #pty)));
                }
                Role::Raw => {
                    c.params.push(quote!(#ident: &__cuprum::Array<#elem>));
                    c.args.push(quote!(__cuprum::elementwise::Arg::raw(#ident)));
                    c.shape_args.push(quote!(__cuprum::elementwise::Arg::raw(#ident)));
                    c.sig.push(quote!(__cuprum::launch::signature::Param::new(#ident_str, __cuprum::launch::signature::Role::Raw, #pty)));
                }
                Role::InOut => {
                    c.params.push(quote!(#ident: &mut __cuprum::Array<#elem>));
                    c.args.push(quote!(__cuprum::elementwise::Arg::output(#ident)));
                    c.shape_args.push(quote!(__cuprum::elementwise::Arg::Out(__cuprum::elementwise::ArrayArg::of(&*#ident))));
                    c.sig.push(quote!(__cuprum::launch::signature::Param::new(#ident_str, __cuprum::launch::signature::Role::InOut, #pty)));
                }
                Role::Slice { .. } | Role::View { .. } | Role::TensorMap => unreachable!("`valid` rejects slices, views and tensor maps in elementwise kernels"),
            }
            c.forward.push(quote!(#ident));
        }
        c
    }
}

/// The returned outputs: their types, names, `call_into`'s parameters and `call_with`'s
/// allocations.
struct Outputs {
    /// Each output's element type.
    types: Vec<TokenStream>,
    /// `out` (one output) or `out0`, `out1`, ... (made fresh).
    idents: Vec<syn::Ident>,
    /// `out: &mut Array<T>`, ...
    params: Vec<TokenStream>,
    /// `let mut out = Array::<T>::empty_on(..)?;`, ...
    allocs: Vec<TokenStream>,
}

impl Outputs {
    /// The outputs of `checked`, whose names, launch arguments and signature entries are added
    /// to `call`'s.
    fn of(checked: &Checked, call: &mut CallParams) -> Self {
        let item_generics = &checked.item.generics;
        let types: Vec<TokenStream> = checked.sig.outputs.iter().map(|t| rust_types::named(t, item_generics)).collect();
        let mut o = Outputs { types: Vec::new(), idents: Vec::new(), params: Vec::new(), allocs: Vec::new() };
        for (k, (t, typed)) in types.iter().zip(&checked.sig.outputs).enumerate() {
            let base = if types.len() == 1 { "out".to_string() } else { format!("out{k}") };
            let n = fresh(base, &call.taken);
            call.taken.push(n.clone());
            let id = format_ident!("{}", n);
            let pty = rust_types::param_type(typed, item_generics);
            call.sig.push(quote!(__cuprum::launch::signature::Param::new(#n, __cuprum::launch::signature::Role::Out, #pty)));
            o.params.push(quote!(#id: &mut __cuprum::Array<#t>));
            call.args.push(quote!(__cuprum::elementwise::Arg::output(#id)));
            o.allocs.push(quote!(let mut #id = __cuprum::Array::<#t>::empty_on(&__cuprum_shape, &__cuprum_stream)?;));
            o.idents.push(id);
        }
        o.types = types;
        o
    }

    /// The call's return type: `()`, an array, or a tuple of arrays.
    fn ret_ty(&self) -> TokenStream {
        let outs = &self.types;
        match outs.len() {
            0 => quote!(()),
            1 => {
                let t = &outs[0];
                quote!(__cuprum::Array<#t>)
            }
            _ => quote!((#(__cuprum::Array<#outs>),*)),
        }
    }

    /// The value the call returns, of `ret_ty`.
    fn ret_val(&self) -> TokenStream {
        let out_idents = &self.idents;
        match out_idents.len() {
            0 => quote!(()),
            1 => {
                let id = &out_idents[0];
                quote!(#id)
            }
            _ => quote!((#(#out_idents),*)),
        }
    }
}

/// `call`, `call_with` and, for kernels that return something, `call_into` and `call_into_with`.
fn call_fns(open: &Opening<'_>, call: &CallParams, outs: &Outputs, options: &syn::Ident) -> TokenStream {
    let name_str = &open.name_str;
    let dtypes = &open.dtypes;
    let mut call_generics = open.generics.clone();
    if call.has_input {
        call_generics.params.insert(0, syn::parse_quote!('a));
    }
    let (impl_generics, _, where_clause) = call_generics.split_for_impl();
    let (params, forward, converts, args, shape_args) = (&call.params, &call.forward, &call.converts, &call.args, &call.shape_args);
    let (out_params, out_idents, out_allocs) = (&outs.params, &outs.idents, &outs.allocs);
    let ret_ty = outs.ret_ty();
    let ret_val = outs.ret_val();
    let launch = quote! {
        let __cuprum_args = [#(#args),*];
        __cuprum::elementwise::launch(&__CUPRUM_KERNEL, &[#(#dtypes),*], &__cuprum_args, #options)
    };

    let doc_call = format!(
        "Runs `{name_str}` over the broadcast shape of its array arguments and returns the \
         outputs, allocated on the current stream of the arrays' device.\n\n\
         Per-element inputs are arrays (broadcast together) or scalars (passed by value); `Raw` \
         parameters take arrays indexed by the kernel; `&mut` parameters take arrays of the \
         broadcast shape, read and written. Generic parameters are inferred from the arguments \
         and pick the instance (precompiled fat binary, else the kernel cache, else NVRTC). \
         Errors, with nothing launched: shapes that do not broadcast, arrays on different \
         devices, a loop size that is undecided (every array raw: use `call_with` and \
         `Options::size`), a compile error."
    );
    let doc_call_with = format!(
        "[`call`] with launch options: the stream (outputs are allocated on it), the block size \
         (0 is an error), and the loop size when every array argument of `{name_str}` is raw."
    );
    let doc_into = format!(
        "[`call`] writing into given outputs, which take part in broadcasting and must have the \
         broadcast shape of `{name_str}`'s arguments (else an error)."
    );
    let doc_into_with = "[`call_into`] with launch options (see [`call_with`]).".to_string();

    let into_fns = (!outs.types.is_empty()).then(|| {
        quote! {
            #[doc = #doc_into]
            #[inline]
            pub fn call_into #impl_generics (#(#params,)* #(#out_params),*) -> __cuprum::Result<()> #where_clause {
                call_into_with(&__cuprum::elementwise::Options::default(), #(#forward,)* #(#out_idents),*)
            }

            #[doc = #doc_into_with]
            pub fn call_into_with #impl_generics (
                #options: &__cuprum::elementwise::Options<'_>,
                #(#params,)*
                #(#out_params),*
            ) -> __cuprum::Result<()> #where_clause {
                #(#converts)*
                #launch
            }
        }
    });
    let call_with_body = if outs.types.is_empty() {
        quote! {
            #(#converts)*
            #launch
        }
    } else {
        quote! {
            #(#converts)*
            let (__cuprum_shape, __cuprum_stream) = {
                let __cuprum_args = [#(#shape_args),*];
                (
                    __cuprum::elementwise::broadcast_shape(#name_str, &__cuprum_args, #options.size)?,
                    __cuprum::elementwise::output_stream(#options, &__cuprum_args)?,
                )
            };
            #(#out_allocs)*
            // The outputs now have the loop's shape: they set the loop (a size given with them
            // would be rejected by `launch`).
            let __cuprum_opts = __cuprum::elementwise::Options { size: ::core::option::Option::None, ..*#options };
            call_into_with(&__cuprum_opts, #(#forward,)* #(&mut #out_idents),*)?;
            ::core::result::Result::Ok(#ret_val)
        }
    };
    quote! {
        #[doc = #doc_call]
        #[inline]
        pub fn call #impl_generics (#(#params),*) -> __cuprum::Result<#ret_ty> #where_clause {
            call_with(&__cuprum::elementwise::Options::default(), #(#forward),*)
        }

        #[doc = #doc_call_with]
        pub fn call_with #impl_generics (
            #options: &__cuprum::elementwise::Options<'_>,
            #(#params),*
        ) -> __cuprum::Result<#ret_ty> #where_clause {
            #call_with_body
        }

        #into_fns
    }
}

/// The kernel on the CPU device (`cpu::ElementLoop`, docs/cpu.md): `__cuprum_host`, generic like the
/// kernel, reads each element's arguments, calls the user's function (compiled for the host by
/// rustc, the same function the pipeline checked) and writes its outputs; `__cuprum_host_entry`
/// picks it for each instance the kernel precompiles.
fn host_entry(f: &syn::ItemFn, checked: &Checked, generics: &syn::Generics) -> TokenStream {
    let name = &f.sig.ident;
    let item_generics = &checked.item.generics;
    let mut prepare = Vec::new(); // raw arguments, copied once
    let mut reads = Vec::new();
    let mut call_args = Vec::new();
    let mut writes = Vec::new();
    // The same over a run of consecutive elements (`ElementLoop::run_fast`): one pointer per
    // operand, read and written at `__j`.
    let (mut run_ptrs, mut run_reads, mut run_writes) = (Vec::new(), Vec::new(), Vec::new());
    let inputs: Vec<&syn::FnArg> = f.sig.inputs.iter().collect();
    for (k, p) in checked.sig.params.iter().enumerate() {
        let ident = format_ident!("__cuprum_a{}", k);
        let ptr = format_ident!("__cuprum_p{}", k);
        let elem = rust_types::named(&p.elem, item_generics);
        match p.role {
            Role::Scalar | Role::Struct => {
                reads.push(quote!(let #ident: #elem = __e.get::<#elem>(#k);));
                run_ptrs.push(quote!(let #ptr = __run.ptr(#k) as *const #elem;));
                run_reads.push(quote!(let #ident: #elem = #ptr.add(__j).read();));
                call_args.push(quote!(#ident));
            }
            Role::Raw => {
                prepare.push(quote!(let #ident: __cuprum::lang::views::Raw<#elem> = unsafe { __l.raw::<#elem>(#k) }?;));
                let by_ref = matches!(inputs.get(k), Some(syn::FnArg::Typed(t)) if matches!(*t.ty, syn::Type::Reference(_)));
                call_args.push(if by_ref { quote!(&#ident) } else { quote!(#ident.clone()) });
            }
            Role::InOut => {
                reads.push(quote!(let mut #ident: #elem = __e.get::<#elem>(#k);));
                call_args.push(quote!(&mut #ident));
                writes.push(quote!(__e.set::<#elem>(#k, #ident);));
                run_ptrs.push(quote!(let #ptr = __run.ptr(#k) as *mut #elem;));
                run_reads.push(quote!(let mut #ident: #elem = #ptr.add(__j).read();));
                run_writes.push(quote!(#ptr.add(__j).write(#ident);));
            }
            Role::Slice { .. } | Role::View { .. } | Role::TensorMap => unreachable!("`valid` rejects slices, views and tensor maps in elementwise kernels"),
        }
    }
    let n = checked.sig.params.len();
    let outs: Vec<TokenStream> = checked.sig.outputs.iter().map(|t| rust_types::named(t, item_generics)).collect();
    let tf = super::host_body::turbofish(item_generics);
    let host_fn = format_ident!("__cuprum_host_{}", name);
    let copy = super::host_body::host_copy(f, &host_fn);
    let mut call = quote!(#host_fn #tf (#(#call_args),*));
    if checked.uses_loop_position() {
        call = quote!(__cuprum::lang::intrinsics::with_elementwise_index(__e.index(), __e.size(), || #call));
    }
    match outs.len() {
        0 => {
            writes.push(quote!(let () = __r;));
            run_writes.push(quote!(let () = __r;));
        }
        1 => {
            let t = &outs[0];
            let ptr = format_ident!("__cuprum_p{}", n);
            writes.push(quote!(__e.set::<#t>(#n, __r);));
            run_ptrs.push(quote!(let #ptr = __run.ptr(#n) as *mut #t;));
            run_writes.push(quote!(#ptr.add(__j).write(__r);));
        }
        _ => {
            for (j, t) in outs.iter().enumerate() {
                let at = n + j;
                let field = syn::Index::from(j);
                let ptr = format_ident!("__cuprum_p{}", at);
                writes.push(quote!(__e.set::<#t>(#at, __r.#field);));
                run_ptrs.push(quote!(let #ptr = __run.ptr(#at) as *mut #t;));
                run_writes.push(quote!(#ptr.add(__j).write(__r.#field);));
            }
        }
    }
    // Kernels that read their loop position run element by element (`index()` is set per
    // element); the others also get the run loop.
    let run_call = if checked.uses_loop_position() {
        quote!(__l.run(&__per_element))
    } else {
        quote!(__l.run_fast(&__per_element, &|__run: &__cuprum::cpu::Run<'_>| {
            // SAFETY: as for one element: each pointer is its operand's first element of the
            // run, followed by `len()` consecutive elements of its type for this instance.
            unsafe {
                #(#run_ptrs)*
                for __j in 0..__run.len() {
                    #(#run_reads)*
                    let __r = #call;
                    #(#run_writes)*
                }
            }
        }))
    };
    let (impl_generics, _, where_clause) = generics.split_for_impl();
    let entry = super::host_body::entry(checked, quote!(ElementLoop));
    quote! {
        /// The kernel's function with the device's arithmetic (`host_body`), for the CPU device.
        #copy

        #[allow(clippy::let_unit_value, clippy::redundant_clone)]
        fn __cuprum_host #impl_generics (__l: &__cuprum::cpu::ElementLoop<'_>) -> __cuprum::Result<()> #where_clause {
            #(#prepare)*
            let __per_element = |__e: &__cuprum::cpu::Element<'_>| {
                // SAFETY: each argument's type is its parameter's for this instance: the types of
                // the signature the launch checked the arguments against.
                unsafe {
                    #(#reads)*
                    let __r = #call;
                    #(#writes)*
                }
            };
            #run_call
        }

        #entry
    }
}
