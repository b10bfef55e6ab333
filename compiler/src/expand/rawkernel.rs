//! The typed launch API of a `#[rawkernel]`: `NAME::launch(&config, args...)`.
//!
//! Each kernel parameter becomes a launch parameter whose type rustc checks at the call:
//!
//! | kernel parameter | launch argument | passed as |
//! | --- | --- | --- |
//! | `&[T]` / `&mut [T]` | `&Array<T>` / `&mut Array<T>` (C-contiguous, else an error) | `SliceArg` |
//! | `View<T, N>` / `ViewMut<T, N>` | `&Array<T>` / `&mut Array<T>` with `N` dimensions | `ViewArg<N>` |
//! | a scalar type or a generic `T` | the value | by value |
//! | `&TensorMap<T>` | `&TensorMap<T>` (of an array on the launch's device) | `TensorMapParam` (`__grid_constant__`) |
//!
//! Generic parameters are inferred from the arguments; their dtypes pick the instance.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::opening::Opening;
use super::rust_types;
use super::unit::UnitInfo;
use crate::checked::Checked;
use crate::signature::Role;

/// `mod NAME { statics; pub fn launch(..) }`.
pub(super) fn launch_module(f: &syn::ItemFn, checked: &Checked, unit: &UnitInfo, device_sync: bool) -> TokenStream {
    let open = Opening::new(f, checked, unit, quote!(__cuprum::launch::signature::Signature::RawKernel), None);
    let Opening { name, name_str, vis, private, statics, generics, dtypes } = &open;
    let p = LaunchParams::of(checked, name_str);
    let (params, converts, passed, cpu_params, cpu_passed, cpu_operands, cpu_handles) =
        (&p.params, &p.converts, &p.passed, &p.cpu_params, &p.cpu_passed, &p.cpu_operands, &p.cpu_handles);
    let config = if p.taken.iter().any(|t| t == "config") { format_ident!("launch_config") } else { format_ident!("config") };
    let (impl_generics, _, where_clause) = generics.split_for_impl();

    let doc_mod = format!(
        "Launches the `#[rawkernel]` [`{name_str}`](fn@super::{name_str}) on the GPU (see `launch`)."
    );
    let doc_launch = doc_launch(checked, name_str, &config);
    let unsafety = (!checked.item.bounds_checks).then(|| quote!(unsafe));
    let cpu = CpuRun::of(f, checked, unit, device_sync, &p.cpu_args);
    let (host_item, run) = (&cpu.host_item, &cpu.run);
    let gpu_launch = if cpu.cooperative { quote!(launch_cooperative) } else { quote!(launch) };
    let max_blocks = cpu.cooperative.then(|| max_cooperative_blocks(&open, &config));
    let cpu_doc = format!("`{name_str}` on the CPU device: its host copy run by `cpu::grid::Grid`.");
    quote! {
        #[doc = #doc_mod]
        #[allow(non_snake_case, unused_imports, clippy::too_many_arguments)]
        #vis mod #name {
            use super::*;
            use #private as __cuprum;

            #statics

            #[doc = #doc_launch]
            #[inline]
            pub #unsafety fn launch #impl_generics (
                #config: &__cuprum::LaunchConfig<'_>,
                #(#params),*
            ) -> __cuprum::Result<()> #where_clause {
                let __device = __cuprum::rawkernel::launch_device(#config);
                #(#converts)*
                if __device == __cuprum::device::CPU_ORDINAL {
                    return __cuprum_cpu(#config, #(#cpu_passed),*);
                }
                let __kernel = __CUPRUM_KERNEL.instance(__device, &[#(#dtypes),*], ::core::option::Option::None)?;
                let __function = __kernel.function_at(__device)?;
                // SAFETY: the arguments are exactly the parameters of the generated kernel, in
                // order: a `cuprum::Slice<T>` (`SliceArg`; `cuprum::RoSlice<T>` for a `&[T]`, the
                // same layout, whose memory `check_read_only` showed no writable argument
                // covers) for each slice, a `cuprum::View<T, N>`
                // (`ViewArg<N>`) for each view, each scalar or `#[device]` struct by value as
                // its C type (`Scalar` / the struct's checked `DeviceRepr` guarantee the layout),
                // with the element types rustc checked against the
                // instance chosen from them. Slices and views describe live arrays of this
                // device. The kernel checks its indices (unless `unchecked`, when this function
                // is `unsafe` and its caller promises them in range).
                unsafe { __cuprum::launch::#gpu_launch(__function, #config, (#(#passed,)*)) }
            }

            #max_blocks

            /// The kernel's function for the CPU device (`host_kernel`).
            #host_item

            #[doc = #cpu_doc]
            #[allow(clippy::let_unit_value, unused_unsafe)]
            fn __cuprum_cpu #impl_generics (
                #config: &__cuprum::LaunchConfig<'_>,
                #(#cpu_params),*
            ) -> __cuprum::Result<()> #where_clause {
                let __operands = [#(#cpu_operands),*];
                let __grid = __cuprum::cpu::grid::Grid::new(#name_str, #config, &__operands)?;
                // SAFETY: `__grid` holds every array's buffer lock (exclusive where written) until
                // it is dropped, after the handles' last use in `run`; each handle describes its
                // whole array (slices are C-contiguous, checked by the launch).
                unsafe {
                    #(#cpu_handles)*
                    #run
                }
            }
        }
    }
}

/// The launch's parameters, from the kernel's, and what each becomes on a GPU and on the CPU
/// device.
struct LaunchParams {
    /// `launch`'s parameters.
    params: Vec<TokenStream>,
    /// The launch arguments made from them (and the read-only check).
    converts: Vec<TokenStream>,
    /// The kernel's arguments, in order.
    passed: Vec<TokenStream>,
    /// The parameters' names.
    taken: Vec<String>,
    /// The CPU device's launch: its parameters (arrays by shared reference), ...
    cpu_params: Vec<TokenStream>,
    /// ... what `launch` passes to it, ...
    cpu_passed: Vec<TokenStream>,
    /// ... the locked operands, ...
    cpu_operands: Vec<TokenStream>,
    /// ... the handles ...
    cpu_handles: Vec<TokenStream>,
    /// ... and the host copy's arguments.
    cpu_args: Vec<TokenStream>,
}

impl LaunchParams {
    fn of(checked: &Checked, name_str: &str) -> Self {
        let mut l = LaunchParams {
            params: Vec::new(),
            converts: Vec::new(),
            passed: Vec::new(),
            taken: Vec::new(),
            cpu_params: Vec::new(),
            cpu_passed: Vec::new(),
            cpu_operands: Vec::new(),
            cpu_handles: Vec::new(),
            cpu_args: Vec::new(),
        };
        // Array arguments for the read-only check: (name, ident, is a `&[T]`, is writable).
        let mut arrays: Vec<(String, syn::Ident, bool, bool)> = Vec::new();
        for (k, p) in checked.sig.params.iter().enumerate() {
            let ident = &p.name;
            let ident_str = ident.to_string();
            l.taken.push(ident_str.clone());
            let value = format_ident!("__cuprum_a{}", k);
            let elem = rust_types::named(&p.elem, &checked.item.generics);
            match p.role {
                Role::Slice { mutable } => {
                    let m = mutable.then(|| quote!(mut));
                    l.params.push(quote!(#ident: &#m __cuprum::Array<#elem>));
                    l.converts.push(quote!(let #value = __cuprum::rawkernel::slice_arg(#name_str, #ident_str, #ident, __device)?;));
                    l.passed.push(quote!(#value));
                    arrays.push((ident_str.clone(), ident.clone(), !mutable, mutable));
                    l.cpu_params.push(quote!(#ident: &__cuprum::Array<#elem>));
                    l.cpu_passed.push(quote!(&*#ident));
                    l.cpu_operands.push(cpu_operand(ident, mutable));
                    l.cpu_handles.push(quote!(let #value = __cuprum::rawkernel::cpu_slice(#ident);));
                    l.cpu_args.push(quote!(#value));
                }
                Role::View { ndim, mutable } => {
                    let m = mutable.then(|| quote!(mut));
                    let ndim = proc_macro2::Literal::u32_unsuffixed(ndim);
                    l.params.push(quote!(#ident: &#m __cuprum::Array<#elem>));
                    l.converts.push(quote!(let #value = __cuprum::rawkernel::view_arg::<#elem, { #ndim }>(#name_str, #ident_str, #ident, __device)?;));
                    l.passed.push(quote!(#value));
                    arrays.push((ident_str.clone(), ident.clone(), false, mutable));
                    l.cpu_params.push(quote!(#ident: &__cuprum::Array<#elem>));
                    l.cpu_passed.push(quote!(&*#ident));
                    l.cpu_operands.push(cpu_operand(ident, mutable));
                    l.cpu_handles.push(quote!(let #value = __cuprum::rawkernel::cpu_view::<#elem, { #ndim }>(#ident);));
                    l.cpu_args.push(quote!(#value));
                }
                Role::TensorMap => {
                    l.params.push(quote!(#ident: &__cuprum::TensorMap<'_, #elem>));
                    l.converts.push(quote!(let #value = __cuprum::rawkernel::tensor_map_arg(#name_str, #ident_str, #ident, __device)?;));
                    l.passed.push(quote!(#value));
                    l.cpu_params.push(quote!(#ident: &__cuprum::TensorMap<'_, #elem>));
                    l.cpu_passed.push(quote!(#ident));
                    l.cpu_handles.push(quote!(let #value = __cuprum::rawkernel::cpu_tensor_map(#ident);));
                    l.cpu_operands.push(quote!(__cuprum::launch::operand::Arg::In(__cuprum::launch::operand::ArrayArg::of(#ident.array()))));
                    l.cpu_args.push(quote!(#value));
                }
                Role::Scalar | Role::Struct => {
                    l.params.push(quote!(#ident: #elem));
                    l.passed.push(quote!(#ident));
                    l.cpu_params.push(quote!(#ident: #elem));
                    l.cpu_passed.push(quote!(#ident));
                    l.cpu_args.push(quote!(#ident));
                }
                Role::Raw | Role::InOut => unreachable!("`valid` rejects `Raw<T>` and `&mut T` in raw kernels"),
            }
        }
        // `&[T]` arguments are read through the read-only data cache: check Rust's aliasing rule for
        // them when the kernel also has writable array arguments.
        if arrays.iter().any(|a| a.2) && arrays.iter().any(|a| a.3) {
            let entries = arrays.iter().map(|(n, id, ro, w)| quote!((#n, __cuprum::rawkernel::byte_span(#id), #ro, #w)));
            l.converts.push(quote!(__cuprum::rawkernel::check_read_only(#name_str, &[#(#entries),*])?;));
        }
        l
    }
}

/// `launch`'s documentation (with a `# Safety` section for an unchecked kernel).
fn doc_launch(checked: &Checked, name_str: &str, config: &syn::Ident) -> String {
    format!(
        "Launches `{name_str}` with `{config}` (grid, block, dynamic shared memory, stream).\n\n\
         Slices are whole C-contiguous arrays, views are arrays of the view's dimensions, scalars \
         are passed by value; generic parameters are inferred from the arguments and pick the \
         instance, which is loaded on first use (precompiled fat binary, else the kernel cache, \
         else NVRTC). Errors, with nothing launched: an argument on another device, a \
         non-contiguous slice argument, a view of the wrong dimension, a configuration the \
         device or kernel cannot run, a compile error. Indexing inside the kernel is checked: an \
         out-of-range access is skipped and reported as `Error::IndexOutOfBounds` by the next \
         synchronising call on the device (docs/semantics.md, row 18).{}",
        if checked.item.bounds_checks {
            String::new()
        } else {
            format!(
                "\n\n# Safety\n\n`{name_str}` is `#[rawkernel(unchecked)]`: its indices are not checked, so \
                 every index it computes from these arguments must be in range (out of range it \
                 reads or writes outside its arrays, as CUDA C does)."
            )
        }
    )
}

/// The kernel on the CPU device (docs/cpu.md, "Raw kernels on the CPU"): its host copy and how
/// the grid runs it.
struct CpuRun {
    /// The host copy, or the block function cut from it into barrier-free regions.
    host_item: TokenStream,
    /// The grid's run of it.
    run: TokenStream,
    /// Whether the kernel (or a device function it calls) calls `grid_sync()`.
    cooperative: bool,
}

impl CpuRun {
    fn of(f: &syn::ItemFn, checked: &Checked, unit: &UnitInfo, device_sync: bool, cpu_args: &[TokenStream]) -> Self {
        let name = &f.sig.ident;
        let name_str = name.to_string();
        let host_fn = format_ident!("__cuprum_host_{}", name);
        let host = super::host_kernel::host_kernel(f, &host_fn, &quote!(__cuprum::cpu::lang));
        let host_item = &host.item;
        let tf = super::host_body::turbofish(&checked.item.generics);
        let device_lockstep = host.calls_device && device_sync;
        let lockstep = host.lockstep || device_lockstep;
        // `grid_sync()`, here or in a device function this kernel calls: a cooperative launch (all
        // blocks resident; on the CPU device, all blocks' threads coroutines of one scheduler).
        let cooperative = host.grid || unit.cooperative.contains(&name_str);
        // Barriers only at the top level: the block runs regions as plain loops (`host_regions`).
        let block_fn = format_ident!("__cuprum_block_{}", name);
        let regions = (host.lockstep && !host.warp && !device_lockstep && !cooperative)
            .then(|| super::host_regions::split(&host.item, &block_fn))
            .flatten();
        let run = match &regions {
            Some(_) => quote!(__grid.run_blocks(&move |__b: &__cuprum::cpu::grid::BlockRun<'_>| {
                #block_fn #tf (__b, #(#cpu_args),*);
            })),
            None if cooperative => quote!(__grid.run_cooperative(&move || {
                #host_fn #tf (#(#cpu_args),*);
            })),
            None => quote!(__grid.run(#lockstep, &move || {
                #host_fn #tf (#(#cpu_args),*);
            })),
        };
        // The block function replaces the host copy it was cut from.
        let host_item = match regions {
            Some(g) => quote!(#g),
            None => quote!(#host_item),
        };
        CpuRun { host_item, run, cooperative }
    }
}

/// `max_cooperative_blocks`: the co-residency limit of a cooperative kernel's launches, for the
/// caller to size its grid.
fn max_cooperative_blocks(open: &Opening<'_>, config: &syn::Ident) -> TokenStream {
    let Opening { name_str, generics, dtypes, .. } = open;
    let (impl_generics, _, where_clause) = generics.split_for_impl();
    let doc = format!(
        "The most blocks a launch of `{name_str}` with `{config}`'s block and dynamic shared memory may have on its device \
         (`{config}`'s stream's, else the current one): `{name_str}` calls `grid_sync()`, so its launch is cooperative and \
         every block must be resident at once (docs/kernel-language.md, \"Grid synchronisation\"). A launch with more \
         blocks is `Error::CooperativeGrid`. Generic parameters pick the instance (its register use counts), as for \
         `launch`: name them (`{name_str}::max_cooperative_blocks::<f32>(&cfg)`). Loads the instance on a GPU."
    );
    quote! {
        #[doc = #doc]
        pub fn max_cooperative_blocks #impl_generics (#config: &__cuprum::LaunchConfig<'_>) -> __cuprum::Result<u32> #where_clause {
            let __device = __cuprum::rawkernel::launch_device(#config);
            if __device == __cuprum::device::CPU_ORDINAL {
                return ::core::result::Result::Ok(
                    __cuprum::cpu::grid::co_residency(#config.block, #config.shared_mem_bytes).blocks_u32(),
                );
            }
            let __kernel = __CUPRUM_KERNEL.instance(__device, &[#(#dtypes),*], ::core::option::Option::None)?;
            let __function = __kernel.function_at(__device)?;
            ::core::result::Result::Ok(__function.co_residency(#config.block, #config.shared_mem_bytes)?.blocks_u32())
        }
    }
}

/// An array argument as the CPU launch locks it: read, or written.
fn cpu_operand(ident: &syn::Ident, mutable: bool) -> TokenStream {
    let arg = quote!(__cuprum::launch::operand::ArrayArg::of(#ident));
    if mutable { quote!(__cuprum::launch::operand::Arg::Out(#arg)) } else { quote!(__cuprum::launch::operand::Arg::In(#arg)) }
}
