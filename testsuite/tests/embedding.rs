//! A program embeds each kernel file's fat binary once, however many kernels the file holds, and
//! loads each kernel's part of it once per process and device, when the kernel is first called
//! (docs/architecture.md, "The unit table").
//!
//! This executable links four kernel files: the runtime's built-ins
//! (`runtime/kernels/elementwise.rs`, `runtime/kernels/reductions.rs`) and two test files. The
//! embedded copies are counted in the executable itself: a unit's bytes occur once, and they are
//! one part per kernel, each a fat binary of one container (the magic `0xBA55ED50`, version 1, a
//! 16-byte header and the size of what follows) or, by default, a zstd frame of one.

mod elementwise_kernels;
mod rawkernel_kernels;

use cuprum::audit;
use cuprum::runtime::{Array, LaunchConfig, Stream, stats};

/// `(offset, total size)` of every fat binary container in `bytes`.
fn containers(bytes: &[u8]) -> Vec<(usize, u64)> {
    let magic = 0xBA55_ED50u32.to_le_bytes();
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(k) = bytes[at..].windows(4).position(|w| w == magic) {
        let off = at + k;
        at = off + 4;
        let Some(h) = bytes.get(off..off + 16) else {
            break;
        };
        let version = u16::from_le_bytes([h[4], h[5]]);
        let header = u16::from_le_bytes([h[6], h[7]]);
        let size = u64::from_le_bytes(h[8..16].try_into().unwrap());
        if version == 1 && header == 16 && (off as u64 + 16 + size) <= bytes.len() as u64 {
            found.push((off, 16 + size));
        }
    }
    found
}

/// Where `needle` occurs in `hay`.
fn positions<'a>(hay: &'a [u8], needle: &'a [u8]) -> impl Iterator<Item = usize> + 'a {
    let head = &needle[..needle.len().min(16)];
    (0..hay.len().saturating_sub(needle.len()) + 1)
        .filter(move |&i| hay[i..i + head.len()] == *head && hay[i..].starts_with(needle))
}

fn occurrences(hay: &[u8], needle: &[u8]) -> usize {
    positions(hay, needle).count()
}

fn position(hay: &[u8], needle: &[u8]) -> Option<usize> {
    positions(hay, needle).next()
}

#[test]
fn each_kernel_file_is_embedded_once() {
    // Use kernels of both test files, so that neither is dropped by the linker.
    let _ = (
        elementwise_kernels::squared_diff::kernel(),
        elementwise_kernels::axpb::kernel(),
    );
    let _ = &rawkernel_kernels::index_1d::launch;
    // A kernel file that precompiles no instance (the runtime's kernels/matmul.rs: NVRTC at first
    // use) embeds an empty fat binary, which has nothing to count.
    let units: Vec<_> = audit::units()
        .into_iter()
        .filter(|u| u.fatbin().is_some_and(|b| !b.is_empty()))
        .collect();
    let files: Vec<&str> = units.iter().map(|u| u.file()).collect();
    if units.len() < 4 && std::env::var("CUPRUM_SKIP_CUDA_COMPILE").is_ok_and(|v| v == "1") {
        eprintln!(
            "CUPRUM_SKIP_CUDA_COMPILE=1 and the kernel files were not precompiled ({files:?}): nothing to count"
        );
        return;
    }
    assert!(
        units.len() >= 4,
        "expected the fat binaries of runtime/kernels/elementwise.rs, runtime/kernels/reductions.rs and the two test files, found {files:?}: \
         build with nvcc (source scripts/cuda-env.sh) or set CUPRUM_SKIP_CUDA_COMPILE=1"
    );
    let exe = std::fs::read(std::env::current_exe().unwrap()).unwrap();
    let found = containers(&exe);
    let mut raw_parts = 0;
    for u in &units {
        let bin = u.fatbin().unwrap();
        assert_eq!(
            occurrences(&exe, bin),
            1,
            "{} is not embedded exactly once",
            u.file()
        );
        // Its parts tile it: one per kernel, back to back, each a fat binary of one container
        // (nvcc's) or a zstd frame of one (cuprum-build's default, `CUPRUM_NVCC_COMPRESS=zstd`).
        assert!(!u.parts().is_empty(), "{} has no parts listing", u.file());
        let mut at = 0;
        for &(kernel, offset, len) in u.parts() {
            assert_eq!(offset, at, "{}: part {kernel}", u.file());
            at += len;
            if kernel == cuprum::runtime::abi::parts::DICTIONARY {
                assert_eq!(offset, 0, "{}: the dictionary comes first", u.file());
                continue;
            }
            let part = &bin[offset..offset + len];
            // Decompressing a part is the unit table's (the runtime's internals, `__workspace`).
            let image = cuprum::__workspace::registry::part::fatbin_of(part, u.dictionary())
                .unwrap_or_else(|e| panic!("{}: part {kernel}: {e}", u.file()));
            raw_parts += usize::from(image.as_ref() == part);
            assert_eq!(
                containers(&image).first().map(|c| c.1),
                Some(image.len() as u64),
                "{}: part {kernel}",
                u.file()
            );
            // What nvcc wrote passes the checks every image passes before the driver sees it
            // (uncompressed cubins whole: sections, segments, symbols, relocations).
            cuprum::runtime::abi::fatbin::check(&image)
                .unwrap_or_else(|e| panic!("{}: part {kernel}: {e}", u.file()));
        }
        assert_eq!(at, bin.len(), "{}", u.file());
    }
    // Every fat binary container in the program lies inside a unit's bytes (a compressed part's
    // frame may hold the start of its container verbatim), and there is one per uncompressed part
    // at least: no copy of a part outside its unit.
    let spans: Vec<(usize, usize)> = units
        .iter()
        .map(|u| {
            let bin = u.fatbin().unwrap();
            let at = position(&exe, bin).unwrap();
            (at, at + bin.len())
        })
        .collect();
    for &(off, size) in &found {
        assert!(
            spans
                .iter()
                .any(|&(a, b)| a <= off && off + size as usize <= b),
            "a fat binary container at byte {off} ({size} bytes) outside every unit: {spans:?}; units: {files:?}"
        );
    }
    assert!(
        found.len() >= raw_parts,
        "fat binary containers in the executable: {found:?}; units: {files:?}"
    );
    // A reduction has a part per instance and launch variant (`sum[f32]:rows`, no `sum[f32]`);
    // an elementwise kernel of more than three instances one per instance (`copy` has six), one
    // of fewer one part (`add`). Names may carry a target (`@sm_90`).
    let names_of = |file: &str| -> Vec<&str> {
        let unit = units.iter().find(|u| u.file().ends_with(file)).unwrap();
        unit.parts().iter().map(|p| p.0.split('@').next().unwrap()).collect()
    };
    let names = names_of("kernels/reductions.rs");
    for want in ["sum[f32]:rows", "sum[f32]:warps", "sum[f32]:cols", "sum[c64]:rows", "min_int[i64]:cols"] {
        assert!(names.contains(&want), "{want}: {names:?}");
    }
    assert!(!names.iter().any(|n| *n == "sum[f32]" || *n == "sum" || *n == "min_int"), "{names:?}");
    assert!(!names.iter().any(|n| n.ends_with("64")), "no 64-bit variant is precompiled: {names:?}");
    let names = names_of("kernels/elementwise.rs");
    assert!(names.contains(&"copy[f32]") && !names.contains(&"copy"), "{names:?}");
    assert!(names.contains(&"add") && !names.iter().any(|n| n.starts_with("add[")), "{names:?}");
    // Every kernel of a file shares its unit.
    let of = |name: &str| {
        audit::kernels()
            .find(|e| e.name() == name)
            .unwrap()
            .unit()
            .unwrap()
            .id()
    };
    assert_eq!(of("squared_diff"), of("axpb"));
    assert_ne!(of("squared_diff"), of("index_1d"));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn each_kernel_loads_its_own_part_once() {
    let n = 4096;
    let x = Array::from_vec((0..n).map(|i| (i as f32 * 0.37).sin()).collect()).unwrap();
    let y = Array::from_vec((0..n).map(|i| (i as f32 * 0.11).cos()).collect()).unwrap();
    Stream::current().unwrap().synchronize().unwrap();
    let before = stats::snapshot().module_loads;
    // Two kernels of one file (one twice), then a kernel of another file.
    let d = elementwise_kernels::squared_diff::call(&x, &y).unwrap();
    let after_first = stats::snapshot().module_loads;
    let _again = elementwise_kernels::squared_diff::call(&y, &x).unwrap();
    let e = elementwise_kernels::axpb::call(2.0f32, &x, &y).unwrap();
    let after_one_file = stats::snapshot().module_loads;
    let mut idx = Array::<u32>::from_vec(vec![u32::MAX; 256]).unwrap();
    let mut size = Array::<u32>::from_vec(vec![u32::MAX; 256]).unwrap();
    rawkernel_kernels::index_1d::launch(&LaunchConfig::new(2, 128), &mut idx, &mut size).unwrap();
    let after_two_files = stats::snapshot().module_loads;
    let (xs, ys) = (x.to_vec().unwrap(), y.to_vec().unwrap());
    let (ds, es) = (d.to_vec().unwrap(), e.to_vec().unwrap());
    for i in 0..n {
        let want = ((xs[i] as f64 - ys[i] as f64).powi(2)) as f32;
        assert!(
            (ds[i] - want).abs() <= 1e-6 * want.abs().max(1.0),
            "squared_diff[{i}]"
        );
        let want = 2.0 * xs[i] + ys[i];
        assert!(
            (es[i] - want).abs() <= 1e-6 * want.abs().max(1.0),
            "axpb[{i}]"
        );
    }
    assert_eq!(idx.to_vec().unwrap(), (0..256).collect::<Vec<u32>>());
    let served = audit::served();
    assert!(
        served.iter().all(|s| s.layer == stats::Layer::Aot),
        "{served:?}"
    );
    assert_eq!(
        after_first - before,
        1,
        "the first kernel loaded {} modules",
        after_first - before
    );
    assert_eq!(
        after_one_file - after_first,
        1,
        "a second call and a second kernel loaded {} modules",
        after_one_file - after_first
    );
    assert_eq!(after_two_files - after_one_file, 1);
}
