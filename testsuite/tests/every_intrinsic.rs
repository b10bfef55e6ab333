//! Every intrinsic is one definition held together by this test (issue 33; docs/architecture.md,
//! "Where to add things"). An intrinsic lives in four places tied by its name: its variant in the
//! compiler's vocabulary (`compiler/src/lang/intrinsic.rs`), its host stub in the runtime's
//! prelude, its CPU-device version (the runtime's `cpu::lang`) and its C helper
//! (`abi/include/cuprum/*.h`). Here:
//!
//! - `every_intrinsic_is_called`: every intrinsic the compiler lists (`Intrinsic::ALL` and every
//!   member of each family it embeds) is called by a kernel of `kernels/every_intrinsic.rs` or
//!   `kernels/every_intrinsic_sm90a.rs` (both built by build.rs, so a missing host stub or CPU
//!   version is a build error of this crate); the failure names each one that is not;
//! - the kernels run (on the CPU device in CI, on the GPU too: `on_both_devices!`) and each value
//!   they write is checked against a host reference, so a wrong definition fails, not only a
//!   missing one;
//! - `generated_c_compiles_with_nvrtc`: the CUDA C the compiler writes for both files compiles
//!   with NVRTC (sm_90, and sm_90a for the Hopper file) against the embedded headers: no GPU
//!   needed. Skipped with `CUPRUM_SKIP_CUDA_COMPILE=1`, as `compiler/tests/cuda_compile.rs`.

#[path = "../../runtime/tests/support/mod.rs"]
mod support;
use support::Rng;

#[path = "../kernels/every_intrinsic.rs"]
mod kernels;
#[path = "../kernels/every_intrinsic_sm90a.rs"]
mod kernels_sm90a;

use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};

use cuprum::prelude::*;
use cuprum::runtime::{Array, LaunchConfig, Swizzle, TensorMap};
use cuprum_compiler::lang::{AtomicOp, HopperOp, Intrinsic, LdMatrix, Mma, Shuffle, SpecialFn, WarpOp};
use kernels as k;
use kernels_sm90a as h;
use syn::visit::Visit;

on_both_devices!(
    cuprum::runtime::Device;
    thread_and_block_indices,
    shared_memory_barriers_and_fences,
    grid_sync_sums_the_grid,
    every_atomic,
    every_shuffle,
    every_warp_collective,
    every_mma_shape,
    every_ldmatrix_form,
    cp_async_copies,
    vector_accesses,
    error_functions_and_complex_new,
    loop_index_size_and_reduce_index,
    hopper_barriers_and_tma,
    hopper_every_wgmma_shape,
    hopper_wgmma_bt_rs_and_named_barriers,
    hopper_every_fp8_wgmma_shape,
);

/// The coverage kernel files, from this crate's folder.
const FILES: [&str; 2] = ["kernels/every_intrinsic.rs", "kernels/every_intrinsic_sm90a.rs"];

fn file(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// Every intrinsic the compiler knows: the unit variants and the members of each embedded family.
/// The match is exhaustive on purpose: a new family of `Intrinsic` does not compile until it is
/// listed here, and so cannot escape the coverage check.
fn every_intrinsic() -> Vec<Intrinsic> {
    use Intrinsic::*;
    let families = [
        Atomic(AtomicOp::Add),
        Shuffle(self::Shuffle::Idx),
        Warp(WarpOp::ReduceSum),
        Mma(self::Mma::M16N8K16),
        LdMatrix(self::LdMatrix::X1),
        Special(SpecialFn::Erf),
        Hopper(HopperOp::WgmmaFence),
    ];
    let mut all = Intrinsic::ALL.to_vec();
    for family in families {
        let members: Vec<Intrinsic> = match family {
            Atomic(_) => AtomicOp::ALL.iter().map(|&o| Atomic(o)).collect(),
            Shuffle(_) => self::Shuffle::ALL.iter().map(|&o| Shuffle(o)).collect(),
            Warp(_) => WarpOp::ALL.iter().map(|&o| Warp(o)).collect(),
            Mma(_) => self::Mma::ALL.iter().map(|&o| Mma(o)).collect(),
            LdMatrix(_) => self::LdMatrix::ALL.iter().map(|&o| LdMatrix(o)).collect(),
            Special(_) => SpecialFn::ALL.iter().map(|&o| Special(o)).collect(),
            Hopper(_) => HopperOp::ALL.iter().map(|&o| Hopper(o)).collect(),
            ThreadIdx | BlockIdx | BlockDim | GridDim | Grid1d | Grid2d | Grid3d | GridSize1d | GridSize2d | GridSize3d | LaneId
            | WarpSize | SyncThreads | SyncWarp | ThreadFence | ThreadFenceBlock | GridSync | SharedArray | DynamicShared | Index
            | LoopSize | ReduceIndex | ComplexNew | CpAsync | CpAsyncUnchecked | CpAsyncCommit | CpAsyncWait | Load4 | Store4 => {
                unreachable!("{family:?} is a unit variant, listed by Intrinsic::ALL")
            }
        };
        all.extend(members);
    }
    all
}

/// The names called (`f(..)`, `f::<N>(..)`, `Ty::f(..)`) in the kernel functions of a file
/// (`#[rawkernel]`, `#[elementwise]`, `#[reduction]`, `#[device]`), as the front end reads them.
fn called_names(path: &Path) -> BTreeSet<String> {
    struct Calls(BTreeSet<String>);
    impl<'a> Visit<'a> for Calls {
        fn visit_expr_call(&mut self, c: &'a syn::ExprCall) {
            if let syn::Expr::Path(p) = &*c.func {
                let name = p.path.segments.iter().map(|s| s.ident.to_string()).collect::<Vec<_>>().join("::");
                self.0.insert(name);
            }
            syn::visit::visit_expr_call(self, c);
        }
    }
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let parsed = syn::parse_file(&text).unwrap_or_else(|e| panic!("{} does not parse: {e}", path.display()));
    let mut calls = Calls(BTreeSet::new());
    for item in &parsed.items {
        if let syn::Item::Fn(f) = item {
            let kernel = f.attrs.iter().any(|a| {
                a.path().get_ident().is_some_and(|i| ["rawkernel", "elementwise", "reduction", "device"].contains(&i.to_string().as_str()))
            });
            if kernel {
                calls.visit_item_fn(f);
            }
        }
    }
    calls.0
}

#[test]
fn every_intrinsic_is_called() {
    let called: HashSet<Intrinsic> =
        FILES.iter().flat_map(|f| called_names(&file(f))).filter_map(|name| Intrinsic::from_name(&name)).collect();
    let all = every_intrinsic();
    let missing: Vec<&str> = all.iter().filter(|i| !called.contains(i)).map(|i| i.rust_name()).collect();
    assert!(
        missing.is_empty(),
        "{} of the {} intrinsics of compiler/src/lang/intrinsic.rs are called by no kernel of {}: {}. Call each in a kernel \
         there whose result tests/every_intrinsic.rs checks (docs/architecture.md, \"Where to add things\")",
        missing.len(),
        all.len(),
        FILES.join(" or "),
        missing.join(", ")
    );
    eprintln!("every_intrinsic: {} intrinsics, each called", all.len());
}

#[test]
fn generated_c_compiles_with_nvrtc() {
    if std::env::var("CUPRUM_SKIP_CUDA_COMPILE").is_ok_and(|v| v == "1") {
        eprintln!("every_intrinsic: NVRTC check skipped because CUPRUM_SKIP_CUDA_COMPILE=1");
        return;
    }
    // SAFETY: only tries to dlopen the library names cudarc knows (as compiler/tests/cuda_compile.rs
    // does); loading libnvrtc runs no code of ours and the handle is dropped again.
    let present = unsafe { cudarc::nvrtc::sys::is_culib_present() };
    assert!(
        present,
        "libnvrtc cannot be loaded: run `source scripts/cuda-env.sh` first, or set CUPRUM_SKIP_CUDA_COMPILE=1 to skip this test"
    );
    let include = tempfile::tempdir().expect("a scratch folder for the headers");
    for (name, text) in cuprum_abi::headers::HEADERS {
        let path = include.path().join(name);
        std::fs::create_dir_all(path.parent().expect("a header's name has a folder")).unwrap();
        std::fs::write(&path, text).unwrap();
    }
    for (rel, arch) in FILES.iter().zip(["sm_90", "sm_90a"]) {
        let unit = cuprum_compiler::compile_file(&file(rel), false).unwrap_or_else(|e| panic!("{rel} does not translate:\n{e}")).unit;
        let opts = cudarc::nvrtc::CompileOptions {
            arch: Some(arch),
            include_paths: vec![include.path().display().to_string()],
            options: vec!["--std=c++17".into()],
            name: Some(rel.to_string()),
            ..Default::default()
        };
        if let Err(e) = cudarc::nvrtc::compile_ptx_with_opts(&unit.source, opts) {
            let log = match e {
                cudarc::nvrtc::CompileError::CompileError { log, .. } => log.to_string_lossy().into_owned(),
                other => format!("{other:?}"),
            };
            panic!("the CUDA C of {rel} does not compile with NVRTC for {arch}:\n{log}");
        }
    }
}

fn up<T: cuprum::runtime::Scalar>(v: &[T]) -> Array<T> {
    Array::from_slice(v).unwrap()
}

fn thread_and_block_indices() {
    let (grid, block) = ((2u32, 2u32, 2u32), (8u32, 4u32, 2u32));
    let mut out = up(&vec![u32::MAX; 512 * 24]);
    k::indices::launch(&LaunchConfig::new(grid, block), &mut out).unwrap();
    let got = out.to_vec().unwrap();
    for (bz, by, bx, tz, ty, tx) in (0..8u32 * 64).map(|i| (i / 256, i / 128 % 2, i / 64 % 2, i / 32 % 2, i / 8 % 4, i % 8)) {
        let in_block = tx + 8 * (ty + 4 * tz);
        let g = (bx + 2 * (by + 2 * bz)) * 64 + in_block;
        let (x, y, z) = (bx * 8 + tx, by * 4 + ty, bz * 2 + tz);
        let want = [tx, ty, tz, bx, by, bz, 8, 4, 2, 2, 2, 2, x, x, y, x, y, z, 16, 16, 8, 16 * 8 * 4, in_block % 32, 32];
        let at = 24 * g as usize;
        assert_eq!(got[at..at + 24], want, "thread ({tx}, {ty}, {tz}) of block ({bx}, {by}, {bz})");
    }
}

fn shared_memory_barriers_and_fences() {
    let mut r = Rng::new();
    let x: Vec<u32> = (0..192).map(|_| r.int(0, 1000) as u32).collect();
    let mut out = up(&vec![u32::MAX; 192]);
    k::shared_and_barriers::launch(&LaunchConfig::new(3u32, 64u32).shared_mem(256), &up(&x), &mut out).unwrap();
    let want: Vec<u32> = (0..192).map(|g| 3 * x[g / 64 * 64 + 63 - (g % 64 + 1) % 64] + (g % 64) as u32).collect();
    assert_eq!(out.to_vec().unwrap(), want);
}

fn grid_sync_sums_the_grid() {
    let mut r = Rng::new();
    let x: Vec<u32> = (0..256).map(|_| r.int(0, 1000) as u32).collect();
    let (mut partials, mut out) = (up(&[0u32; 4]), up(&[u32::MAX]));
    k::grid_sum::launch(&LaunchConfig::new(4u32, 64u32), &up(&x), &mut partials, &mut out).unwrap();
    assert_eq!(out.to_vec().unwrap(), [x.iter().sum::<u32>()]);
}

fn every_atomic() {
    let mut r = Rng::new();
    let x: Vec<i32> = (0..128).map(|_| r.int(-1000, 1000) as i32).collect();
    let mut ints = up(&[10, 10, 5000, -5000, -1, 0, 0, 1, 5]);
    let (mut counters, mut floats, mut olds) = (up(&[0u32, 100]), up(&[1.0f32]), up(&[-9i32; 5]));
    k::atomics::launch(&LaunchConfig::new(2u32, 64u32), &up(&x), &mut ints, &mut counters, &mut floats, &mut olds).unwrap();
    let sum: i32 = x.iter().sum();
    let want = [
        10 + sum,
        10 - sum,
        x.iter().fold(5000, |a, &b| a.min(b)),
        x.iter().fold(-5000, |a, &b| a.max(b)),
        x.iter().fold(-1, |a, &b| a & b),
        x.iter().fold(0, |a, &b| a | b),
        x.iter().fold(0, |a, &b| a ^ b),
        77,
        9,
    ];
    assert_eq!(ints.to_vec().unwrap(), want, "add, sub, min, max, and, or, xor, exch, cas");
    // inc: 128 steps below the limit; dec: 100 steps to 0, then 1000 (the wrap) and 27 more.
    assert_eq!(counters.to_vec().unwrap(), [128, 973], "inc, dec");
    assert_eq!(floats.to_vec().unwrap(), [3.5], "add on f32");
    assert_eq!(olds.to_vec().unwrap(), [1, 5, 9, 1, 77], "the old values of exch, cas, cas, add, and the load after exch");
}

fn every_shuffle() {
    let mut r = Rng::new();
    let x: Vec<i32> = (0..32).map(|_| r.int(-1_000_000, 1_000_000) as i32).collect();
    let mut out = up(&vec![i32::MIN; 256]);
    k::shuffles::launch(&LaunchConfig::new(1u32, 32u32), &up(&x), &mut out).unwrap();
    let got = out.to_vec().unwrap();
    let names = ["shfl_sync", "shfl_up_sync", "shfl_down_sync", "shfl_xor_sync"];
    for l in 0..32 {
        let base = l / 8 * 8;
        let want = [
            x[5],
            if l >= 3 { x[l - 3] } else { x[l] },
            if l + 3 < 32 { x[l + 3] } else { x[l] },
            x[l ^ 6],
            x[base + 5],
            if l % 8 >= 3 { x[l - 3] } else { x[l] },
            if l % 8 + 3 < 8 { x[l + 3] } else { x[l] },
            x[l ^ 6],
        ];
        for (s, w) in want.iter().enumerate() {
            let width = if s < 4 { "" } else { "_width (8)" };
            assert_eq!(got[32 * s + l], *w, "{}{width}, lane {l}", names[s % 4]);
        }
    }
}

fn every_warp_collective() {
    let mut r = Rng::new();
    let x: Vec<i32> = (0..32).map(|_| r.int(-1000, 1000) as i32).collect();
    let mut out = up(&vec![i32::MIN; 384]);
    k::warp_collectives::launch(&LaunchConfig::new(1u32, 32u32), &up(&x), &mut out).unwrap();
    let got = out.to_vec().unwrap();
    let names = ["warp_reduce_sum", "warp_reduce_min", "warp_reduce_max", "warp_inclusive_sum", "warp_exclusive_sum"];
    for (form, width) in [(0, 32), (5, 8)] {
        for l in 0..32 {
            let tile = &x[l / width * width..][..width];
            let before = &tile[..l % width];
            let want = [
                tile.iter().sum::<i32>(),
                *tile.iter().min().unwrap(),
                *tile.iter().max().unwrap(),
                before.iter().sum::<i32>() + x[l],
                before.iter().sum::<i32>(),
            ];
            for (c, w) in want.iter().enumerate() {
                assert_eq!(got[32 * (form + c) + l], *w, "{} on tiles of {width}, lane {l}", names[c]);
            }
        }
    }
    // The votes, the same in every lane (the draws make either answer likely: each lane is
    // above 900 or at most -900 with probability 0.05).
    let any = x.iter().any(|&v| v > 900) as i32;
    let all = x.iter().all(|&v| v > -900) as i32;
    for l in 0..32 {
        assert_eq!(got[320 + l], any, "warp_any(x > 900), lane {l}");
        assert_eq!(got[352 + l], all, "warp_all(x > -900), lane {l}");
    }
}

fn every_mma_shape() {
    let mut out = up(&vec![f32::NAN; 384]);
    k::mma::launch(&LaunchConfig::new(1u32, 32u32), &mut out).unwrap();
    let got = out.to_vec().unwrap();
    for (s, (name, depth)) in [("mma_m16n8k16", 16), ("mma_m16n8k8_tf32", 8), ("mma_m16n8k32_i8", 32)].into_iter().enumerate() {
        for m in 0..16 {
            for n in 0..8 {
                let want: usize = (0..depth).map(|kk| (m + 1 + kk) * (n + 1 + kk % 3)).sum();
                assert_eq!(got[128 * s + 8 * m + n], want as f32, "{name}: D[{m}][{n}]");
            }
        }
    }
}

fn every_ldmatrix_form() {
    let x: Vec<u16> = (0..256u32).map(|i| (i * 37 + 11) as u16).collect();
    let mut out = up(&vec![u16::MAX; 56 * 32]);
    k::ldmatrix_all::launch(&LaunchConfig::new(1u32, 32u32), &up(&x), &mut out).unwrap();
    let got = out.to_vec().unwrap();
    for (base, form) in [(0, ""), (14, "_trans"), (28, "_unchecked"), (42, "_trans_unchecked")] {
        let trans = form.starts_with("_trans");
        for l in 0..32 {
            let mut at = 56 * l + base;
            for count in [1, 2, 4] {
                for j in 0..count {
                    for e in 0..2 {
                        let (row, col) = if trans { (2 * (l % 4) + e, l / 4) } else { (l / 4, 2 * (l % 4) + e) };
                        let want = x[64 * j + 8 * row + col];
                        assert_eq!(got[at], want, "ldmatrix_x{count}{form}, lane {l}: element {e} of matrix {j}");
                        at += 1;
                    }
                }
            }
        }
    }
}

fn cp_async_copies() {
    let mut r = Rng::new();
    let x: Vec<f32> = (0..256).map(|_| r.range(-1.0, 1.0) as f32).collect();
    let mut out = up(&vec![f32::NAN; 256]);
    k::copies::launch(&LaunchConfig::new(1u32, 32u32), &up(&x), &mut out).unwrap();
    assert_eq!(out.to_vec().unwrap(), x, "cp_async (first half), cp_async_unchecked (second half)");
}

fn vector_accesses() {
    let mut r = Rng::new();
    let n = 4 * 64 + 3;
    let x: Vec<f32> = (0..n).map(|_| r.range(-1.0, 1.0) as f32).collect();
    let h: Vec<f16> = (0..n).map(|_| f16::from_f32(r.range(-1.0, 1.0) as f32)).collect();
    let want = |x: &[f32], off: usize| -> Vec<f32> { x[off..off + 256].iter().map(|v| 2.0 * v + 1.0).collect() };
    // From the array's start (aligned: vector accesses on a GPU) and from one element on (4
    // bytes past 16-byte alignment: one access per element), the same values.
    for off in [0usize, 1, 3] {
        let xs = up(&x);
        let view = xs.slice(0, off as isize..(off + 256) as isize).unwrap();
        let mut out = up(&vec![f32::NAN; 256 + 4]);
        k::quads::launch(&LaunchConfig::new(1u32, 64u32), &view, &mut out).unwrap();
        let got = out.to_vec().unwrap();
        assert_eq!(&got[..256], &want(&x, off)[..], "load4/store4 of f32 at offset {off}");
        assert!(got[256..].iter().all(|v| v.is_nan()), "store4 wrote past its four elements: {:?}", &got[256..]);
        let hs = up(&h);
        let hview = hs.slice(0, off as isize..(off + 256) as isize).unwrap();
        let mut hout = up(&vec![f16::NAN; 256]);
        k::quads_half::launch(&LaunchConfig::new(1u32, 64u32), &hview, &mut hout).unwrap();
        assert_eq!(hout.to_vec().unwrap(), h[off..off + 256].to_vec(), "load4/store4 of f16 at offset {off}");
    }
}

fn error_functions_and_complex_new() {
    // x, then erf, erfc, erfinv, erfcinv, normcdf, normcdfinv of x (Python's math.erf, math.erfc
    // and statistics.NormalDist, in f64).
    const TABLE: [[f64; 7]; 5] = [
        [0.1, 0.1124629160182849, 0.887537083981715, 0.08885599049425774, 1.1630871536766731, 0.539827837277029, -1.2815515655446008],
        [0.25, 0.2763263901682369, 0.7236736098317631, 0.22531205501217808, 0.8134198475976183, 0.5987063256829237, -0.6744897501960817],
        [0.5, 0.5204998778130465, 0.4795001221869535, 0.4769362762044698, 0.4769362762044698, 0.6914624612740131, 0.0],
        [0.75, 0.7111556336535151, 0.28884436634648486, 0.8134198475976183, 0.22531205501217808, 0.7733726476231317, 0.6744897501960817],
        [0.9, 0.7969082124228322, 0.20309178757716786, 1.1630871536766731, 0.08885599049425774, 0.8159398746532405, 1.2815515655446008],
    ];
    let x: Vec<f32> = TABLE.iter().map(|row| row[0] as f32).collect();
    let (mut out, mut z) = (up(&[f32::NAN; 30]), up(&[Complex::new(f32::NAN, f32::NAN); 5]));
    k::special_and_complex::launch(&LaunchConfig::new(1u32, 5u32), &up(&x), &mut out, &mut z).unwrap();
    let got = out.to_vec().unwrap();
    let names = ["erf", "erfc", "erfinv", "erfcinv", "normcdf", "normcdfinv"];
    for (i, row) in TABLE.iter().enumerate() {
        for (f, name) in names.iter().enumerate() {
            let (g, w) = (got[6 * i + f] as f64, row[f + 1]);
            assert!((g - w).abs() <= 2e-6 * w.abs().max(1.0), "{name}({}) = {g}, want {w}", row[0]);
        }
    }
    let want: Vec<Complex<f32>> = x.iter().map(|&v| Complex::new(v, -2.0 * v)).collect();
    assert_eq!(z.to_vec().unwrap(), want, "Complex::new");
}

fn loop_index_size_and_reduce_index() {
    let x: Vec<f32> = (0..24).map(|i| if i % 5 == 2 { -1.0 } else { i as f32 * 0.5 }).collect();
    let placed = k::placed::call(&up(&x)).unwrap().to_vec().unwrap();
    let want: Vec<f32> = x.iter().enumerate().map(|(i, v)| v + (1000 * i + 24) as f32).collect();
    assert_eq!(placed, want, "index() and loop_size()");
    let sum = k::position_sum::call(&up(&x)).run().unwrap().to_vec().unwrap();
    let want: i64 = (0..24).filter(|&i| x[i as usize] >= 0.0).sum();
    assert_eq!(sum, [want], "reduce_index()");
}

fn hopper_barriers_and_tma() {
    let mut r = Rng::new();
    let (rows, cols) = (32usize, 48usize);
    let host: Vec<f32> = (0..rows * cols).map(|_| r.range(-1.0, 1.0) as f32).collect();
    let a = up(&host).reshape([rows, cols]).unwrap();
    let map = TensorMap::new(&a, [16, 16], Swizzle::None).unwrap();
    let mut out = up(&[f32::NAN; 256]);
    h::barriers_and_tma::launch(&LaunchConfig::new(1u32, 64u32), &map, 16, 8, &mut out).unwrap();
    let got = out.to_vec().unwrap();
    for rr in 0..16 {
        for c in 0..16 {
            assert_eq!(got[16 * rr + c], host[(8 + rr) * cols + 16 + c], "tma_load_2d box at (16, 8): element ({rr}, {c})");
        }
    }
}

fn hopper_every_wgmma_shape() {
    // A = 1, B = 2: every element of every product is 16 * 2 per k-step; two k-steps each.
    let (a, b) = (up(&[bf16::ONE; 4096]), up(&vec![bf16::from_f32(2.0); 16384]));
    let mut out = up(&vec![f32::NAN; 224 * 128]);
    h::wgmma_all::launch(&LaunchConfig::new(1u32, 128u32), &a, &b, 0.5, &mut out).unwrap();
    let got = out.to_vec().unwrap();
    for t in 0..128 {
        for (i, &v) in got[224 * t..224 * (t + 1)].iter().enumerate() {
            let shape = if i < 32 { "wgmma_m64n64k16" } else if i < 96 { "wgmma_m64n128k16" } else { "wgmma_m64n256k16" };
            assert_eq!(v, 64.5, "{shape} (and its _unchecked form): accumulator {i} of thread {t}");
        }
    }
}

fn hopper_wgmma_bt_rs_and_named_barriers() {
    // The 128-byte swizzle (docs/kernel-language.md): 16-byte chunk c of row r at chunk c ^ (r % 8).
    let swizzled = |tile: usize, r: usize, c: usize| tile + r * 64 + (((c / 8) ^ (r % 8)) * 8) + c % 8;
    // Multiples of 1/4 from -2 to 2: every product and sum below is exact in f32.
    let mut r = Rng::new();
    let mut quarter = || (r.range(-8.0, 9.0).floor() / 4.0) as f32;
    let a: Vec<f32> = (0..4096).map(|_| quarter()).collect();
    let b: Vec<f32> = (0..16384).map(|_| quarter()).collect();
    let frag: Vec<f32> = (0..1024).map(|_| quarter()).collect();
    let bf = |v: &[f32]| up(&v.iter().map(|&x| bf16::from_f32(x)).collect::<Vec<_>>());
    let mut out = up(&vec![f32::NAN; 448 * 128 + 128]);
    h::wgmma_bt_rs_named::launch(&LaunchConfig::new(1u32, 256u32), &bf(&a), &bf(&b), &bf(&frag), 0.5, &mut out).unwrap();
    let got = out.to_vec().unwrap();
    // A (64 x 64) and B^T (256 rows x 64) as stored (swizzled tiles); B (N-major) as the plain
    // wgmma reads it: k-row k, column n in tile n / 64.
    let am = |row: usize, k: usize| a[swizzled(0, row, k)] as f64;
    let btm = |n: usize, k: usize| b[swizzled(0, n, k)] as f64;
    let bm = |k: usize, n: usize| b[swizzled((n / 64) * 4096, k, n % 64)] as f64;
    // The register A of warp q: lane l holds (g, c), (g, c + 1), (g + 8, c), (g + 8, c + 1), then
    // the same 8 columns on (g = l / 4, c = 2 (l % 4)), PTX's fragment layout for wgmma's A.
    let mut ar = vec![[[0f64; 16]; 16]; 4];
    for t in 0..128 {
        let (q, l) = (t / 32, t % 32);
        let (g, c) = (l / 4, 2 * (l % 4));
        for (i, (rr, kk)) in [(g, c), (g, c + 1), (g + 8, c), (g + 8, c + 1), (g, c + 8), (g, c + 9), (g + 8, c + 8), (g + 8, c + 9)].into_iter().enumerate() {
            ar[q][rr][kk] = frag[8 * t + i] as f64;
        }
    }
    for t in 0..128 {
        let (q, l) = (t / 32, t % 32);
        for (base, n, what) in [(0, 64, "bt 64"), (32, 128, "bt 128"), (96, 256, "bt 256"), (224, 64, "rs 64"), (256, 128, "rs 128"), (320, 256, "rs 256")] {
            for i in 0..n / 2 {
                let (j, hh, e) = (i / 4, (i / 2) % 2, i % 2);
                let (row, col) = (16 * q + l / 4 + 8 * hh, 8 * j + 2 * (l % 4) + e);
                let want: f64 = 0.5
                    + (0..16)
                        .map(|k| {
                            if base < 224 {
                                am(row, 16 + k) * btm(col, 32 + k) + am(row, 32 + k) * btm(col, 48 + k)
                            } else {
                                ar[q][row % 16][k] * (bm(16 + k, col) + bm(32 + k, col))
                            }
                        })
                        .sum::<f64>();
                assert_eq!(got[448 * t + base + i] as f64, want, "wgmma_m64n{n}k16_{what} (and its _unchecked form): accumulator {i} of thread {t}");
            }
        }
        assert_eq!(got[448 * 128 + t], (3 * (t + 128)) as f32, "named_barrier_arrive/sync: thread {t} reads what thread {} stored", t + 128);
    }
}

/// Element (r, c) of a swizzled tile of 64 rows of 128 one-byte elements (rows past 63 go on
/// into the next tiles): `lang::hopper::K32_FP8.swizzled`, written out again.
fn fp8_tile(r: usize, c: usize) -> usize {
    r * 128 + (((c / 16) ^ (r % 8)) * 16) + c % 16
}

fn hopper_every_fp8_wgmma_shape() {
    // Values exact in e4m3 whose products and sums are exact in f32: the result is exact on every
    // device. A[r][k] = ((r + k) % 7 - 3) / 4, B^T[n][k] = ((2n + 3k) % 5 - 2) / 2.
    let av = |r: usize, k: usize| ((r + k) % 7) as f64 / 4.0 - 0.75;
    let bv = |n: usize, k: usize| ((2 * n + 3 * k) % 5) as f64 / 2.0 - 1.0;
    let mut a = vec![f8e4m3::ZERO; 8192];
    let mut b = vec![f8e4m3::ZERO; 32768];
    for r in 0..64 {
        for k in 0..128 {
            a[fp8_tile(r, k)] = f8e4m3::from_f64(av(r, k));
        }
    }
    for n in 0..256 {
        for k in 0..128 {
            b[fp8_tile(n, k)] = f8e4m3::from_f64(bv(n, k));
        }
    }
    let (k0, k1) = (32usize, 96usize);
    let mut out = up(&vec![f32::NAN; 224 * 128]);
    h::wgmma_fp8_all::launch(&LaunchConfig::new(1u32, 128u32), &up(&a), &up(&b), 0.5, k0 as u32, k1 as u32, &mut out).unwrap();
    let got = out.to_vec().unwrap();
    for t in 0..128 {
        for (i, &v) in got[224 * t..224 * (t + 1)].iter().enumerate() {
            let (shape, j) = if i < 32 { ("wgmma_m64n64k32", i) } else if i < 96 { ("wgmma_m64n128k32", i - 32) } else { ("wgmma_m64n256k32", i - 96) };
            let (q, l, jj, hh, e) = (t / 32, t % 32, j / 4, (j / 2) % 2, j % 2);
            let (row, col) = (16 * q + l / 4 + 8 * hh, 8 * jj + 2 * (l % 4) + e);
            let want = 0.5 + (0..32).map(|k| av(row, k0 + k) * bv(col, k0 + k) + av(row, k1 + k) * bv(col, k1 + k)).sum::<f64>();
            assert_eq!(v as f64, want, "{shape} (and its _unchecked form): accumulator {j} of thread {t}, element ({row}, {col})");
        }
    }
    // e5m2 operands: the same values (exact in e5m2 too), one k-step.
    let a5: Vec<f8e5m2> = a[..8192].iter().map(|x| f8e5m2::from_f64(x.to_f64())).collect();
    let b5: Vec<f8e5m2> = b[..8192].iter().map(|x| f8e5m2::from_f64(x.to_f64())).collect();
    let mut out = up(&vec![f32::NAN; 32 * 128]);
    h::wgmma_fp8_e5m2::launch(&LaunchConfig::new(1u32, 128u32), &up(&a5), &up(&b5), 64, &mut out).unwrap();
    let got = out.to_vec().unwrap();
    for t in 0..128 {
        for j in 0..32 {
            let (q, l, jj, hh, e) = (t / 32, t % 32, j / 4, (j / 2) % 2, j % 2);
            let (row, col) = (16 * q + l / 4 + 8 * hh, 8 * jj + 2 * (l % 4) + e);
            let want = (0..32).map(|k| av(row, 64 + k) * bv(col, 64 + k)).sum::<f64>();
            assert_eq!(got[32 * t + j] as f64, want, "wgmma_m64n64k32 e5m2: element ({row}, {col})");
        }
    }
}
