//! `cuprum::audit::report` on this crate's own kernels (no GPU needed): the kernel file is listed
//! with the build record its build script wrote (with or without nvcc), and the record agrees with
//! what the program embeds.

mod rawkernel_kernels;

use cuprum::audit::{self, BuildStatus};

#[test]
fn an_embedded_kernel_file_carries_its_build_record() {
    let audit = audit::report(None);
    println!("{audit}");
    let unit = audit
        .unit("tests/rawkernel_kernels.rs")
        .unwrap_or_else(|| panic!("rawkernel_kernels.rs is not listed:\n{audit}"));
    let build = unit
        .build
        .as_ref()
        .unwrap_or_else(|| panic!("no build record embedded:\n{audit}"));
    match build.status {
        BuildStatus::NoNvcc => {
            assert_eq!((unit.fatbin_bytes, build.fatbin_bytes), (None, 0));
            assert!(build.targets.is_empty());
        }
        BuildStatus::Compiled | BuildStatus::Cached | BuildStatus::UpToDate => {
            assert_eq!(unit.fatbin_bytes.map(|b| b as u64), Some(build.fatbin_bytes));
            assert_eq!(build.targets, unit.targets);
            assert!(build.nvcc.is_some());
        }
        BuildStatus::Other(ref s) => panic!("unknown status {s}"),
    }
    let listed: usize = unit.kernels.iter().map(|k| k.instances.len()).sum::<usize>() + unit.other_symbols.len();
    assert_eq!(build.instances, listed, "{audit}");
    assert!(unit.kernels.iter().any(|k| k.name == "index_1d" && k.kind == "rawkernel" && !k.instances.is_empty()), "{audit}");
    let text = audit.to_string();
    assert!(text.contains("tests/rawkernel_kernels.rs (unit "), "{text}");
    assert!(text.contains("  #[rawkernel] index_1d\n"), "{text}");
}
