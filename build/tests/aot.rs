//! The ahead-of-time build end to end: kernel files -> `OUT_DIR/cuprum/<id>.fatbin`, checked with
//! the fat binary parser; errors; the knobs; skipping unchanged kernels.
//!
//! Tests that run nvcc need it (`source scripts/cuda-env.sh`); without it they fail saying so,
//! unless `CUPRUM_SKIP_CUDA_COMPILE=1` (then they print why and pass).
//! Every test sets its environment through `Kernels::env`, never `std::env::set_var`, and has its
//! own output folder and fat binary cache (`CUPRUM_FATBIN_CACHE`), so they run in parallel and
//! never see each other's (or an earlier run's) cached fat binaries.

use std::fs;
use std::path::{Path, PathBuf};

use cuprum_build::env::Env;
use cuprum_build::nvcc::{self, Lookup};
use cuprum_abi::fatbin;
use cuprum_build::{Error, Kernels, Status};

/// A built part's fat binary (parts are zstd frames by default: `CUPRUM_NVCC_COMPRESS`).
fn fatbin_of(bytes: &[u8]) -> Vec<u8> {
    cuprum_build::compress::fatbin_of(bytes, &[])
        .unwrap()
        .into_owned()
}

/// A unit's fat binary `OUT_DIR/cuprum/<id>.fatbin` as one fat binary: its parts (and pieces per
/// target, `cuprum_abi::parts`), decompressed with the unit's dictionary, back to back.
fn unit_image(path: &Path) -> Vec<u8> {
    let bytes = fs::read(path).unwrap();
    let Ok(listing) = fs::read_to_string(path.with_extension("parts")) else {
        return fatbin_of(&bytes);
    };
    let listing = cuprum_abi::parts::read_parts(&listing).unwrap();
    let mut dictionary: &[u8] = &[];
    let mut image = Vec::new();
    for p in &listing {
        let piece = &bytes[p.offset..p.offset + p.len];
        if p.kernel == cuprum_abi::parts::DICTIONARY {
            dictionary = piece;
            continue;
        }
        image.extend_from_slice(&cuprum_build::compress::fatbin_of(piece, dictionary).unwrap());
    }
    image
}
use cuprum_abi::mangle;

const TWO_ARCHS: &str = "arch=compute_80,code=sm_80;arch=compute_90,code=sm_90";

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// A fresh, empty folder for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("cuprum-build")
        .join(name);
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// The nvcc of the test environment, or `None` after printing why the test is skipped
/// (`CUPRUM_SKIP_CUDA_COMPILE=1`); without nvcc and without that variable, the test fails.
fn nvcc_or_skip(test: &str) -> Option<nvcc::Nvcc> {
    match nvcc::find(&Env::default()) {
        Ok(Lookup::Found(n)) => Some(n),
        other => {
            if std::env::var("CUPRUM_SKIP_CUDA_COMPILE").as_deref() == Ok("1") {
                eprintln!(
                    "{test}: skipped, no working nvcc ({other:?}) and CUPRUM_SKIP_CUDA_COMPILE=1"
                );
                return None;
            }
            panic!(
                "{test}: no working nvcc ({other:?}): run `source scripts/cuda-env.sh` first \
                 (it installs the CUDA compiler wheels if needed), or set CUPRUM_SKIP_CUDA_COMPILE=1 \
                 to skip the tests that run nvcc"
            );
        }
    }
}

/// A builder that cannot find nvcc: no `NVCC`, no `CUDA_PATH`, `PATH` an empty folder.
fn without_nvcc(out: &Path) -> Kernels {
    let empty = out.join("empty-path");
    fs::create_dir_all(&empty).unwrap();
    let mut k = Kernels::new();
    k.out_dir(out)
        .env_remove("NVCC")
        .env_remove("CUDA_PATH")
        .env("PATH", &empty);
    k
}

fn unit_id(file: &Path) -> String {
    mangle::unit_id(&cuprum_compiler::compile_file(file, false).unwrap().unit.source)
}

/// `scale.rs` compiled for `codes` (`CUPY_NVCC_GENERATE_CODE`) in a fresh folder `dir` with its
/// own fat binary cache: the folder, the file and the report; `None` when `test` is skipped (no
/// nvcc and `CUPRUM_SKIP_CUDA_COMPILE=1`).
fn compile_scale(test: &str, dir: &str, codes: &str) -> Option<(PathBuf, PathBuf, cuprum_build::Report)> {
    nvcc_or_skip(test)?;
    let out = scratch(dir);
    let file = fixture("scale.rs");
    let report = Kernels::new()
        .file(&file)
        .out_dir(&out)
        .env("CUPRUM_FATBIN_CACHE", out.join("fatbin-cache"))
        .env("CUPY_NVCC_GENERATE_CODE", codes)
        .try_compile()
        .unwrap_or_else(|e| panic!("{}", e.rendered()));
    Some((out, file, report))
}

#[test]
fn pieces_hold_one_family_of_targets_each() {
    let codes = "arch=compute_80,code=[sm_80,sm_86];arch=compute_90,code=[sm_90,compute_90]";
    let Some((out, file, _)) = compile_scale("pieces_hold_one_family_of_targets_each", "families", codes) else {
        return;
    };
    let id = unit_id(&file);
    let listing = fs::read_to_string(out.join(cuprum_abi::parts::parts_file(&id))).unwrap();
    let parts = cuprum_abi::parts::read_parts(&listing).unwrap();
    // The machine code of one major architecture in one piece, PTX apart; each piece a fat
    // binary of exactly its targets.
    let fatbin_bytes = fs::read(out.join(mangle::fatbin_file(&id))).unwrap();
    let mut families = Vec::new();
    for p in &parts {
        let Some((_, targets)) = cuprum_abi::parts::piece_of(&p.kernel) else {
            continue;
        };
        let image = fatbin_of(&fatbin_bytes[p.offset..p.offset + p.len]);
        assert_eq!(fatbin::targets(&image).unwrap().join("+"), targets, "{}", p.kernel);
        families.push(targets.to_string());
    }
    families.sort();
    families.dedup();
    assert_eq!(families, ["compute_90", "sm_80+sm_86", "sm_90"], "{listing}");
    // What each GPU loads: its family's piece, else PTX.
    let order = |cc| cuprum_abi::parts::pieces_for(families.iter().map(String::as_str), cc);
    assert_eq!(order((8, 6)), [1]);
    assert_eq!(order((9, 0)), [2, 0]);
    assert_eq!(order((12, 0)), [0]);
}

#[test]
fn split_per_variant_gives_each_entry_point_its_own_part() {
    let test = "split_per_variant_gives_each_entry_point_its_own_part";
    let Some(_) = nvcc_or_skip(test) else {
        return;
    };
    let out = scratch("per-variant");
    let file = fixture("scale.rs");
    Kernels::new()
        .file(&file)
        .out_dir(&out)
        .env("CUPRUM_FATBIN_CACHE", out.join("fatbin-cache"))
        .env("CUPY_NVCC_GENERATE_CODE", "arch=compute_90,code=sm_90")
        .split(cuprum_build::Split::PerVariant)
        .try_compile()
        .unwrap_or_else(|e| panic!("{}", e.rendered()));
    let id = unit_id(&file);
    let listing = fs::read_to_string(out.join(cuprum_abi::parts::parts_file(&id))).unwrap();
    let fatbin_bytes = fs::read(out.join(mangle::fatbin_file(&id))).unwrap();
    let mut names = Vec::new();
    for p in cuprum_abi::parts::read_parts(&listing).unwrap() {
        if p.kernel == cuprum_abi::parts::DICTIONARY {
            continue;
        }
        let (part, _) = cuprum_abi::parts::piece_of(&p.kernel).unwrap_or((&p.kernel, ""));
        // One entry point in each: no other variant's symbol is in its cubin.
        let image = fatbin_of(&fatbin_bytes[p.offset..p.offset + p.len]);
        let variant = part.rsplit(':').next().unwrap();
        assert!(String::from_utf8_lossy(&image).contains(&format!("cuprum_elementwise_scale_{variant}")), "{part}");
        let text = String::from_utf8_lossy(&image);
        for other in ["contig", "s32", "s64"].into_iter().filter(|v| *v != variant) {
            assert!(!text.contains(&format!("cuprum_elementwise_scale_{other}")), "{part} holds the {other} entry point too");
        }
        names.push(part.to_string());
    }
    names.sort();
    // (The 64-bit variant, for arrays past 2^31 elements, is compiled at first use.)
    assert_eq!(names, ["scale[]:contig", "scale[]:s32"], "{listing}");
}

/// An arch-specific item next to a plain one: kernels that need neither are built for both, the
/// fat binary reader names the `sm_90a` cubin and `compute_90a` PTX as such, the `.targets` file
/// and the pieces keep the suffix, and only a 9.0 GPU loads them.
#[test]
fn arch_specific_items_are_built_and_read_back_with_their_suffix() {
    let codes = "arch=compute_80,code=sm_80;arch=compute_90a,code=[sm_90a,compute_90a]";
    let Some((out, file, report)) =
        compile_scale("arch_specific_items_are_built_and_read_back_with_their_suffix", "sm90a", codes)
    else {
        return;
    };
    assert_eq!(report.gencodes, ["arch=compute_80,code=sm_80", "arch=compute_90a,code=[sm_90a,compute_90a]"]);
    let f = report.file("scale.rs").unwrap();
    assert_eq!(f.targets, ["sm_80", "sm_90a", "compute_90a"]);
    let id = unit_id(&file);
    let listed = fs::read_to_string(out.join(mangle::targets_file(&id))).unwrap();
    assert_eq!(listed, "sm_80\nsm_90a\ncompute_90a\n");
    let listing = fs::read_to_string(out.join(cuprum_abi::parts::parts_file(&id))).unwrap();
    let mut families: Vec<String> = cuprum_abi::parts::read_parts(&listing)
        .unwrap()
        .iter()
        .filter_map(|p| Some(cuprum_abi::parts::piece_of(&p.kernel)?.1.to_string()))
        .collect();
    families.sort();
    families.dedup();
    assert_eq!(families, ["compute_90a", "sm_80", "sm_90a"], "{listing}");
    let order = |cc| cuprum_abi::parts::pieces_for(families.iter().map(String::as_str), cc);
    assert_eq!(order((9, 0)), [2, 0]);
    assert_eq!(order((10, 0)), [] as [usize; 0], "no code for 10.0: sm_90a and its PTX serve 9.0 only");
    assert_eq!(order((8, 9)), [1]);
}

/// nvcc 12.0 and newer build `sm_90a`: the probe finds it although nvcc 13.0's `--list-gpu-code`
/// does not list it (`--help` does).
#[test]
fn the_probe_finds_arch_specific_targets() {
    let Some(nvcc) = nvcc_or_skip("the_probe_finds_arch_specific_targets") else {
        return;
    };
    if nvcc.release() >= (12, 0) {
        assert!(nvcc.sass_specific.contains(&90) && nvcc.virtual_specific.contains(&90), "{nvcc:?}");
    }
}

#[test]
fn both_cubins_are_in_the_fat_binary() {
    let Some((out, file, report)) = compile_scale("both_cubins_are_in_the_fat_binary", "two-archs", TWO_ARCHS) else {
        return;
    };

    let id = unit_id(&file);
    let f = report.file("scale.rs").unwrap();
    assert_eq!(
        (f.id.as_str(), f.status, f.kernels),
        (id.as_str(), Status::Compiled, 1)
    );
    let fatbin_path = out.join(mangle::fatbin_file(&id));
    assert_eq!(f.fatbin.as_deref(), Some(fatbin_path.as_path()));
    assert_eq!(
        report.gencodes,
        ["arch=compute_80,code=sm_80", "arch=compute_90,code=sm_90"]
    );

    // The proof: the fat binary's own headers list an sm_80 and an sm_90 cubin, and nothing else.
    let bytes = unit_image(&fatbin_path);
    let entries = fatbin::entries(&bytes).unwrap();
    assert!(
        entries
            .iter()
            .all(|e| e.kind == fatbin::EntryKind::Elf && e.size > 0),
        "{entries:?}"
    );
    assert_eq!(fatbin::targets(&bytes).unwrap(), ["sm_80", "sm_90"]);
    assert_eq!(f.targets, ["sm_80", "sm_90"]);
    assert_eq!(
        fs::read_to_string(out.join(mangle::targets_file(&id))).unwrap(),
        "sm_80\nsm_90\n"
    );

    // The unit source is written exactly, with the headers it includes.
    let source = cuprum_compiler::compile_file(&file, false).unwrap().unit.source;
    assert_eq!(
        fs::read_to_string(out.join(format!("cuprum/{id}.cu"))).unwrap(),
        source
    );
    for (name, text) in cuprum_abi::headers::HEADERS {
        assert_eq!(
            fs::read_to_string(out.join("cuprum/include").join(name)).unwrap(),
            cuprum_abi::headers::as_written(name, text)
        );
    }
    assert!(!out.join(format!("cuprum/{id}.fatbin.part")).exists());

    // The build record: what nvcc did and what it cost.
    let record = fs::read_to_string(out.join(cuprum_abi::mangle::build_file(&id))).unwrap();
    assert_eq!(
        f.build_info.as_deref(),
        Some(out.join(format!("cuprum/{id}.build")).as_path())
    );
    assert_eq!(f.fatbin_bytes, fs::metadata(&fatbin_path).unwrap().len());
    assert!(f.nvcc_time > std::time::Duration::ZERO);
    let lines: Vec<&str> = record.lines().collect();
    assert_eq!(
        lines[..5],
        [
            "cuprum-build 1",
            "status compiled",
            "targets sm_80 sm_90",
            &format!("instances {}", f.instances),
            &format!("fatbin_bytes {}", f.fatbin_bytes),
        ],
        "{record}"
    );
    assert!(
        lines[5].starts_with("nvcc_seconds 0.") || lines[5].starts_with("nvcc_seconds "),
        "{record}"
    );
    assert!(lines[6].starts_with("nvcc 1"), "{record}");

    // Cargo directives: the input and every knob.
    let d = &report.directives;
    assert!(
        d.contains(&format!("cargo:rerun-if-changed={}", file.display())),
        "{d:?}"
    );
    for var in [
        "CUPY_NVCC_GENERATE_CODE",
        "NVCC",
        "CUDA_PATH",
        "CUPY_NUM_BUILD_JOBS",
        "CUPY_NUM_NVCC_THREADS",
    ] {
        assert!(
            d.contains(&format!("cargo:rerun-if-env-changed={var}")),
            "{var}: {d:?}"
        );
    }
    assert_eq!(report.warnings().count(), 0);
}

#[test]
fn ptx_and_sass_from_one_item() {
    let Some(_) = nvcc_or_skip("ptx_and_sass_from_one_item") else {
        return;
    };
    let out = scratch("ptx");
    let report = Kernels::new()
        .file(fixture("copy.rs"))
        .file(fixture("empty.rs"))
        .out_dir(&out)
        .env("CUPRUM_FATBIN_CACHE", out.join("fatbin-cache"))
        .env(
            "CUPY_NVCC_GENERATE_CODE",
            "arch=compute_90,code=[sm_90,compute_90]",
        )
        .try_compile()
        .unwrap_or_else(|e| panic!("{}", e.rendered()));
    let copy = report.file("copy.rs").unwrap();
    assert_eq!(copy.status, Status::Compiled);
    let bytes = unit_image(copy.fatbin.as_ref().unwrap());
    assert_eq!(fatbin::targets(&bytes).unwrap(), ["sm_90", "compute_90"]);
    // A file without kernels gets no fat binary.
    let empty = report.file("empty.rs").unwrap();
    assert_eq!(
        (empty.status, empty.fatbin.as_ref()),
        (Status::NoKernels, None)
    );
    assert!(!out.join(mangle::fatbin_file(&empty.id)).exists());
}

#[test]
fn default_targets_are_data_centre_sass_plus_the_oldest_ptx() {
    let Some(nvcc) = nvcc_or_skip("default_targets_are_data_centre_sass_plus_the_oldest_ptx") else {
        return;
    };
    let out = scratch("default");
    let report = Kernels::new()
        .file(fixture("scale.rs"))
        .out_dir(&out)
        .env("CUPRUM_FATBIN_CACHE", out.join("fatbin-cache"))
        .env_remove("CUPY_NVCC_GENERATE_CODE")
        .try_compile()
        .unwrap_or_else(|e| panic!("{}", e.rendered()));
    let default = cuprum_build::targets::default_list(&nvcc.sass, &nvcc.virtual_archs).unwrap();
    let mut expected = cuprum_build::targets::names(&default);
    // nvcc 13: sm_80, sm_90, sm_100 and compute_75.
    let sass: Vec<&String> = expected.iter().filter(|t| t.starts_with("sm_")).collect();
    assert!(!sass.is_empty() && sass.len() <= cuprum_build::targets::DEFAULT_SASS.len(), "{expected:?}");
    assert_eq!(
        expected.iter().filter(|t| t.starts_with("compute_")).collect::<Vec<_>>(),
        [&format!("compute_{}", nvcc.virtual_archs.iter().min().unwrap())]
    );
    let f = report.file("scale.rs").unwrap();
    let mut found =
        fatbin::targets(&unit_image(f.fatbin.as_ref().unwrap())).unwrap();
    found.sort();
    expected.sort();
    assert_eq!(found, expected);
}

#[test]
fn an_edit_recompiles_only_that_file() {
    let Some(_) = nvcc_or_skip("an_edit_recompiles_only_that_file") else {
        return;
    };
    let out = scratch("incremental");
    let src = out.join("kernels");
    fs::create_dir_all(&src).unwrap();
    fs::copy(fixture("scale.rs"), src.join("a_scale.rs")).unwrap();
    fs::copy(fixture("copy.rs"), src.join("b_copy.rs")).unwrap();
    let build = |targets: &str| {
        Kernels::new()
            .dir(&src)
            .out_dir(&out)
            .env("CUPRUM_FATBIN_CACHE", out.join("fatbin-cache"))
            .env("CUPRUM_FATBIN_CACHE", out.join("fatbin-cache"))
            .env("CUPY_NVCC_GENERATE_CODE", targets)
            .env("CUPY_NUM_BUILD_JOBS", "2")
            .try_compile()
            .unwrap_or_else(|e| panic!("{}", e.rendered()))
    };
    let statuses = |r: &cuprum_build::Report| r.files.iter().map(|f| f.status).collect::<Vec<_>>();
    let sm80 = "arch=compute_80,code=sm_80";

    let first = build(sm80);
    assert_eq!(statuses(&first), [Status::Compiled, Status::Compiled]);
    assert!(
        first
            .directives
            .contains(&format!("cargo:rerun-if-changed={}", src.display()))
    );
    let copy_fatbin = first.file("b_copy.rs").unwrap().fatbin.clone().unwrap();
    let copy_time = fs::metadata(&copy_fatbin).unwrap().modified().unwrap();

    assert_eq!(statuses(&build(sm80)), [Status::UpToDate, Status::UpToDate]);

    let scale = src.join("a_scale.rs");
    let text = fs::read_to_string(&scale).unwrap();
    fs::write(&scale, text.replace("a * x", "x * a")).unwrap();
    let third = build(sm80);
    assert_eq!(statuses(&third), [Status::Compiled, Status::UpToDate]);
    assert_ne!(third.files[0].id, first.files[0].id);
    // The untouched file's fat binary was not rewritten.
    assert_eq!(
        fs::metadata(&copy_fatbin).unwrap().modified().unwrap(),
        copy_time
    );

    // Other targets: both recompile.
    assert_eq!(
        statuses(&build("arch=compute_90,code=sm_90")),
        [Status::Compiled, Status::Compiled]
    );
}

/// A kernel file with mistakes is skipped, with one warning naming it: its attributes report the
/// mistakes at their tokens when rustc compiles the crate (issue 34, item 5). The other files are
/// built.
#[test]
fn files_with_kernel_mistakes_are_skipped_with_one_warning() {
    let out = scratch("kernel-error");
    let broken = fixture("broken.rs");
    let report = without_nvcc(&out)
        .env_remove("CUPY_NVCC_GENERATE_CODE")
        .file(fixture("scale.rs"))
        .file(&broken)
        .try_compile()
        .unwrap();
    let built: Vec<&Path> = report.files.iter().map(|f| f.path.as_path()).collect();
    assert_eq!(built, [fixture("scale.rs")]);
    let about_broken: Vec<&String> = report
        .directives
        .iter()
        .filter(|d| d.starts_with("cargo:warning=") && d.contains(&*broken.display().to_string()))
        .collect();
    assert_eq!(
        about_broken,
        [&format!(
            "cargo:warning=cuprum-build: {} is not precompiled: its kernels have mistakes, which rustc reports",
            broken.display()
        )]
    );
    // Its rerun directive is there, so the build runs again once it is fixed.
    assert!(report.directives.contains(&format!("cargo:rerun-if-changed={}", broken.display())));
    // Only the good file's unit was written.
    let sources = fs::read_dir(out.join("cuprum"))
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == "cu"))
        .count();
    assert_eq!(sources, 1);
}

#[test]
fn every_file_with_mistakes_is_skipped() {
    let out = scratch("kernel-errors");
    let src = out.join("kernels");
    fs::create_dir_all(&src).unwrap();
    fs::copy(fixture("broken.rs"), src.join("one.rs")).unwrap();
    fs::copy(fixture("broken.rs"), src.join("two.rs")).unwrap();
    let report = without_nvcc(&out).env_remove("CUPY_NVCC_GENERATE_CODE").dir(&src).try_compile().unwrap();
    assert!(report.files.is_empty(), "{:?}", report.files);
    for f in ["one.rs", "two.rs"] {
        let name = src.join(f).display().to_string();
        assert_eq!(
            report.directives.iter().filter(|d| d.starts_with("cargo:warning=") && d.contains(&name)).count(),
            1,
            "{:?}",
            report.directives
        );
    }
}

/// A kernel file that cannot be read fails the build, naming it.
#[test]
fn a_missing_kernel_file_is_an_error() {
    let out = scratch("missing-file");
    let missing = out.join("no-such-kernels.rs");
    let e = without_nvcc(&out).file(&missing).try_compile().unwrap_err();
    assert!(matches!(e, Error::Io { .. }), "{e:?}");
    let text = e.to_string();
    assert!(text.contains(&format!("cannot read the kernel file {}", missing.display())), "{text}");
}

#[test]
fn invalid_generate_code_is_a_clear_error() {
    let out = scratch("invalid-targets");
    for (value, says) in [
        (
            "sm_90",
            "item 1 `sm_90`: an item starts with `arch=compute_XX`",
        ),
        (
            "arch=compute_80,code=sm_80;arch=compute_90,code=sm_80",
            "item 2 `arch=compute_90,code=sm_80`: sm_80 cannot be built from compute_90",
        ),
        (
            "arch=compute_90,code=sm_90a",
            "`sm_90a` and `compute_90` differ in the arch-specific suffix `a`",
        ),
    ] {
        // Checked before nvcc is looked for: the same error with or without one.
        let e = without_nvcc(&out)
            .file(fixture("scale.rs"))
            .env("CUPY_NVCC_GENERATE_CODE", value)
            .try_compile()
            .unwrap_err();
        let Error::Targets { message } = &e else {
            panic!("{e:?}")
        };
        assert!(
            message.starts_with(&format!("invalid CUPY_NVCC_GENERATE_CODE={value:?}")),
            "{message}"
        );
        assert!(message.contains(says), "{message}");
        assert!(
            message.contains("such as `arch=compute_90,code=sm_90`"),
            "{message}"
        );
    }
}

#[test]
fn targets_nvcc_does_not_support_are_a_clear_error() {
    let Some(_) = nvcc_or_skip("targets_nvcc_does_not_support_are_a_clear_error") else {
        return;
    };
    let out = scratch("unsupported-targets");
    let e = Kernels::new()
        .file(fixture("scale.rs"))
        .out_dir(&out)
        .env("CUPRUM_FATBIN_CACHE", out.join("fatbin-cache"))
        .env("CUPY_NVCC_GENERATE_CODE", "arch=compute_35,code=sm_35")
        .try_compile()
        .unwrap_err();
    let Error::Targets { message } = &e else {
        panic!("{e:?}")
    };
    assert!(
        message.contains(
            "asks for compute_35, sm_35 but this nvcc does not support them; it supports sm_"
        ),
        "{message}"
    );
}

#[test]
fn missing_nvcc_with_explicit_targets_is_an_error() {
    let out = scratch("missing-nvcc-explicit");
    let e = without_nvcc(&out)
        .file(fixture("scale.rs"))
        .env("CUPY_NVCC_GENERATE_CODE", TWO_ARCHS)
        .try_compile()
        .unwrap_err();
    let Error::NvccMissing { message } = &e else {
        panic!("{e:?}")
    };
    for says in [
        "asks for precompiled kernels, but nvcc was not found",
        "pip install nvidia-cuda-nvcc==13.0.88",
        "set CUDA_PATH",
        "set NVCC",
        "unset CUPY_NVCC_GENERATE_CODE",
    ] {
        assert!(message.contains(says), "{says}: {message}");
    }
    assert!(e.rendered().starts_with("error: CUPY_NVCC_GENERATE_CODE="));
}

#[test]
fn missing_nvcc_without_targets_is_one_warning() {
    let out = scratch("missing-nvcc-default");
    let report = without_nvcc(&out)
        .file(fixture("scale.rs"))
        .file(fixture("copy.rs"))
        .env_remove("CUPY_NVCC_GENERATE_CODE")
        .try_compile()
        .unwrap();
    let warnings: Vec<&str> = report.warnings().collect();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("nvcc not found")
            && warnings[0].contains("NVRTC will compile them at first use"),
        "{}",
        warnings[0]
    );
    assert!(!warnings[0].contains('\n'));
    assert_eq!(report.nvcc, None);
    for f in &report.files {
        assert_eq!((f.status, f.fatbin.as_ref()), (Status::NoNvcc, None));
        assert!(!out.join(mangle::fatbin_file(&f.id)).exists());
        assert!(out.join(format!("cuprum/{}.cu", f.id)).is_file());
    }
    // Still tracked, so that installing nvcc re-runs the build script.
    assert!(
        report
            .directives
            .contains(&"cargo:rerun-if-env-changed=PATH".to_string())
    );
}

#[test]
fn nvcc_that_does_not_run_is_an_error() {
    let out = scratch("bad-nvcc");
    let e = Kernels::new()
        .file(fixture("scale.rs"))
        .out_dir(&out)
        .env("CUPRUM_FATBIN_CACHE", out.join("fatbin-cache"))
        .env("NVCC", "/nonexistent/bin/nvcc -O3")
        .try_compile()
        .unwrap_err();
    let Error::Nvcc { message } = &e else {
        panic!("{e:?}")
    };
    assert!(
        message.starts_with("nvcc from NVCC (`/nonexistent/bin/nvcc -O3`) does not work"),
        "{message}"
    );
}

#[test]
fn nvcc_is_a_command_line() {
    let Some(nvcc) = nvcc_or_skip("nvcc_is_a_command_line") else {
        return;
    };
    let out = scratch("nvcc-command-line");
    // `env` in front of nvcc, as `ccache` would be: the first word runs, the rest are its arguments.
    let line = format!("env {}", nvcc::show(&nvcc.command));
    let report = Kernels::new()
        .file(fixture("copy.rs"))
        .out_dir(&out)
        .env("CUPRUM_FATBIN_CACHE", out.join("fatbin-cache"))
        .env("NVCC", &line)
        .env("CUPY_NVCC_GENERATE_CODE", "arch=compute_80,code=sm_80")
        .env("CUPY_NUM_NVCC_THREADS", "1")
        .try_compile()
        .unwrap_or_else(|e| panic!("{}", e.rendered()));
    assert_eq!(report.nvcc.as_deref(), Some(line.as_str()));
    assert_eq!(report.files[0].targets, ["sm_80"]);
}

/// `NVCC` is split as a shell would: a quoted program path may hold a space.
#[cfg(unix)]
#[test]
fn nvcc_in_a_folder_with_a_space() {
    use std::os::unix::fs::PermissionsExt;
    let Some(nvcc) = nvcc_or_skip("nvcc_in_a_folder_with_a_space") else {
        return;
    };
    let out = scratch("nvcc-space");
    let bin = out.join("my cuda").join("bin");
    fs::create_dir_all(&bin).unwrap();
    let script = bin.join("nvcc");
    fs::write(
        &script,
        format!("#!/bin/sh\nexec {} \"$@\"\n", nvcc::show(&nvcc.command)),
    )
    .unwrap();
    fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
    let report = Kernels::new()
        .file(fixture("copy.rs"))
        .out_dir(&out)
        .env("CUPRUM_FATBIN_CACHE", out.join("fatbin-cache"))
        .env("NVCC", format!("'{}'", script.display()))
        .env("CUPY_NVCC_GENERATE_CODE", "arch=compute_80,code=sm_80")
        .env("CUPY_NUM_NVCC_THREADS", "1")
        .try_compile()
        .unwrap_or_else(|e| panic!("{}", e.rendered()));
    assert_eq!(report.nvcc, Some(script.display().to_string()));
    assert_eq!(report.files[0].status, Status::Compiled);
    assert_eq!(report.files[0].targets, ["sm_80"]);
}

#[test]
fn current_needs_a_gpu() {
    let Some(nvcc) = nvcc_or_skip("current_needs_a_gpu") else {
        return;
    };
    let out = scratch("current");
    let empty = out.join("empty-path");
    fs::create_dir_all(&empty).unwrap();
    let e = Kernels::new()
        .file(fixture("scale.rs"))
        .out_dir(&out)
        .env("CUPRUM_FATBIN_CACHE", out.join("fatbin-cache"))
        .env("NVCC", nvcc::show(&nvcc.command))
        .env("PATH", &empty)
        .env("CUPY_NVCC_GENERATE_CODE", "current")
        .try_compile()
        .unwrap_err();
    let Error::NoGpu { message } = &e else {
        panic!("{e:?}")
    };
    assert!(
        message.contains("nvidia-smi (which comes with the NVIDIA driver) is not on PATH"),
        "{message}"
    );
    assert!(
        message.contains("CUPY_NVCC_GENERATE_CODE=\"arch=compute_90,code=sm_90\""),
        "{message}"
    );
}

#[test]
fn bad_settings_name_the_variable() {
    let out = scratch("bad-settings");
    let e = without_nvcc(&out)
        .file(fixture("scale.rs"))
        .env("CUPY_NUM_BUILD_JOBS", "all")
        .try_compile()
        .unwrap_err();
    assert!(
        matches!(&e, Error::Config { message } if message.starts_with("CUPY_NUM_BUILD_JOBS=\"all\" is not a number")),
        "{e:?}"
    );
    let e = Kernels::new()
        .file(fixture("scale.rs"))
        .env_remove("OUT_DIR")
        .try_compile()
        .unwrap_err();
    assert!(e.to_string().starts_with("OUT_DIR is not set"), "{e}");
    let e = without_nvcc(&out)
        .dir(out.join("no-such-dir"))
        .try_compile()
        .unwrap_err();
    assert!(
        matches!(
            &e,
            Error::Io {
                action: "read the folder",
                ..
            }
        ),
        "{e:?}"
    );
}

/// `compile()` as a build script uses it, run in a child process (it exits on failure): the
/// directives on stdout, the rendered errors on stderr, exit status 1.
#[test]
fn compile_prints_directives_and_fails_the_build_script() {
    let out = scratch("compile-child");
    let run = |fixture_name: &str| {
        std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "compile_child",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("CUPRUM_BUILD_TEST_CHILD", fixture(fixture_name))
            .env("OUT_DIR", &out)
            .env("PATH", out.join("empty-path"))
            .env_remove("NVCC")
            .env_remove("CUDA_PATH")
            .env_remove("CUPY_NVCC_GENERATE_CODE")
            .output()
            .unwrap()
    };
    let ok = run("scale.rs");
    let stdout = String::from_utf8_lossy(&ok.stdout);
    assert!(ok.status.success(), "{ok:?}");
    assert!(
        stdout.contains(&format!(
            "cargo:rerun-if-changed={}\n",
            fixture("scale.rs").display()
        )),
        "{stdout}"
    );
    assert!(
        stdout.contains("cargo:rerun-if-env-changed=CUPY_NVCC_GENERATE_CODE\n"),
        "{stdout}"
    );
    assert_eq!(stdout.matches("cargo:warning=").count(), 1, "{stdout}");
    // A logging variable is no trigger: setting it must not rebuild (issue 34, item 4). The
    // summary ends the build's stdout whatever it says (cargo keeps it in the build script's
    // `output`).
    assert!(!stdout.contains("CUPRUM_BUILD_VERBOSE"), "{stdout}");
    assert!(
        stdout.contains("\ncuprum-build: 1 kernel file (")
            && stdout.contains("): no nvcc, nothing precompiled (NVRTC compiles each instance at first use)\n"),
        "{stdout}"
    );

    // A file with kernel mistakes does not fail the build script (rustc reports them).
    let broken = run("broken.rs");
    assert!(broken.status.success(), "{broken:?}");
    assert!(String::from_utf8_lossy(&broken.stderr).is_empty(), "{broken:?}");
    assert!(String::from_utf8_lossy(&broken.stdout).contains("is not precompiled: its kernels have mistakes"));

    let failed = run("no-such-kernels.rs");
    let stderr = String::from_utf8_lossy(&failed.stderr);
    assert_eq!(failed.status.code(), Some(1), "{failed:?}");
    assert!(stderr.starts_with(&format!("error: cannot read the kernel file {}", fixture("no-such-kernels.rs").display())), "{stderr}");
    // The directives come even from a failed build.
    assert!(String::from_utf8_lossy(&failed.stdout).contains("cargo:rerun-if-changed="));
}

/// The child of the test above; does nothing in a normal test run.
#[test]
fn compile_child() {
    if let Some(file) = std::env::var_os("CUPRUM_BUILD_TEST_CHILD") {
        Kernels::new().file(file).compile();
    }
}

/// A shell script in front of nvcc that counts the runs that compile (`-fatbin`) in `count`.
#[cfg(unix)]
fn counting_nvcc(dir: &Path, nvcc: &nvcc::Nvcc) -> (String, PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let script = dir.join("count-nvcc.sh");
    let count = dir.join("count");
    fs::write(
        &script,
        format!(
            "#!/bin/sh\ncase \"$*\" in *-fatbin*) echo run >> '{}' ;; esac\nexec {} \"$@\"\n",
            count.display(),
            nvcc::show(&nvcc.command)
        ),
    )
    .unwrap();
    fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
    (script.display().to_string(), count)
}

#[cfg(unix)]
fn runs(count: &Path) -> usize {
    fs::read_to_string(count)
        .map(|c| c.lines().count())
        .unwrap_or(0)
}

/// Two `OUT_DIR`s (say debug and `cargo check`) with one shared cache: nvcc runs once; the second
/// copies the cached fat binary. A damaged entry is rebuilt.
#[cfg(unix)]
#[test]
fn one_nvcc_run_serves_every_out_dir() {
    let Some(nvcc) = nvcc_or_skip("one_nvcc_run_serves_every_out_dir") else {
        return;
    };
    let root = scratch("shared-cache");
    let cache = root.join("cache");
    let (wrapper, count) = counting_nvcc(&root, &nvcc);
    let build = |out: &str, verbose: bool| {
        let mut k = Kernels::new();
        k.file(fixture("copy.rs"))
            .out_dir(root.join(out))
            .env("NVCC", &wrapper)
            .env("CUPRUM_FATBIN_CACHE", &cache)
            .env("CUPY_NVCC_GENERATE_CODE", "arch=compute_90,code=sm_90");
        if verbose {
            k.env("CUPRUM_BUILD_VERBOSE", "1");
        } else {
            k.env_remove("CUPRUM_BUILD_VERBOSE");
        }
        k.try_compile()
            .unwrap_or_else(|e| panic!("{}", e.rendered()))
    };
    let id = unit_id(&fixture("copy.rs"));
    let record =
        |out: &str| fs::read_to_string(root.join(out).join(cuprum_abi::mangle::build_file(&id))).unwrap();

    let debug = build("debug", false);
    assert_eq!(debug.files[0].status, Status::Compiled);
    assert_eq!(runs(&count), 1);
    assert_eq!(debug.cache.as_deref(), Some(cache.as_path()));
    assert_eq!(
        debug.warnings().count(),
        0,
        "quiet by default: {:?}",
        debug.directives
    );
    let entries = |ext: &str| {
        fs::read_dir(&cache)
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .path()
                    .extension()
                    .is_some_and(|x| x == ext)
            })
            .count()
    };
    assert_eq!((entries("fatbin"), entries("stamp")), (1, 1));

    let check = build("check", true);
    let f = &check.files[0];
    assert_eq!(f.status, Status::Cached);
    assert_eq!(runs(&count), 1, "the second OUT_DIR ran nvcc");
    assert_eq!(f.nvcc_time, std::time::Duration::ZERO);
    assert_eq!(f.targets, ["sm_90"]);
    let fatbin = fs::read(f.fatbin.as_ref().unwrap()).unwrap();
    assert_eq!(
        fatbin,
        fs::read(debug.files[0].fatbin.as_ref().unwrap()).unwrap()
    );
    assert_eq!(
        fs::read_to_string(root.join("check").join(mangle::targets_file(&id))).unwrap(),
        "sm_90\n"
    );
    assert!(
        record("debug").contains("\nstatus compiled\n"),
        "{}",
        record("debug")
    );
    assert!(
        record("check").contains("\nstatus cached\n"),
        "{}",
        record("check")
    );
    assert!(
        record("check").contains("\nnvcc_seconds 0.000\n"),
        "{}",
        record("check")
    );
    // CUPRUM_BUILD_VERBOSE=1: one summary line, as a warning.
    let warnings: Vec<&str> = check.warnings().collect();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].starts_with("cuprum-build: 1 kernel file (")
            && warnings[0].contains("0 compiled by nvcc in 0.0 s, 1 from the fat binary cache")
            && warnings[0].contains("KiB of fat binaries for arch=compute_90,code=sm_90"),
        "{}",
        warnings[0]
    );

    // The same OUT_DIR again: up to date, neither nvcc nor the cache.
    assert_eq!(build("check", false).files[0].status, Status::UpToDate);
    assert!(record("check").contains("\nstatus up-to-date\n"));

    // A damaged entry (a truncated fat binary) is a miss: nvcc runs and the entry is whole again.
    let entry = fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "fatbin"))
        .unwrap();
    fs::write(&entry, &fatbin[..fatbin.len() / 2]).unwrap();
    assert_eq!(build("doc", false).files[0].status, Status::Compiled);
    assert_eq!(runs(&count), 2);
    assert_eq!(
        fatbin::targets(&fatbin_of(&fs::read(&entry).unwrap())).unwrap(),
        ["sm_90"]
    );
    assert_eq!(build("clippy", false).files[0].status, Status::Cached);
    assert_eq!(runs(&count), 2);
    // No temporary file is left in the cache.
    assert_eq!(fs::read_dir(&cache).unwrap().count(), 2);
}

/// The cache's default place: the target directory found from cargo-shaped `OUT_DIR`s, shared by
/// the profiles. Another target list is another entry.
#[test]
fn a_changed_target_list_is_a_new_entry() {
    let Some(_) = nvcc_or_skip("a_changed_target_list_is_a_new_entry") else {
        return;
    };
    let target = scratch("target-dir").join("target");
    let out = |profile: &str| target.join(profile).join("build/app-0123abcd/out");
    let build = |profile: &str, targets: &str| {
        Kernels::new()
            .file(fixture("copy.rs"))
            .out_dir(out(profile))
            .env_remove("CUPRUM_FATBIN_CACHE")
            .env("CUPY_NVCC_GENERATE_CODE", targets)
            .try_compile()
            .unwrap_or_else(|e| panic!("{}", e.rendered()))
    };
    let cache = target.join("cuprum-fatbin");
    let sm80 = "arch=compute_80,code=sm_80";
    let first = build("debug", sm80);
    assert_eq!(first.cache.as_deref(), Some(cache.as_path()));
    assert_eq!(first.files[0].status, Status::Compiled);
    assert_eq!(build("release", sm80).files[0].status, Status::Cached);

    let sm90 = build("check", "arch=compute_90,code=sm_90");
    assert_eq!(sm90.files[0].status, Status::Compiled);
    assert_eq!(sm90.files[0].targets, ["sm_90"]);
    let fatbins = fs::read_dir(&cache)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "fatbin")
        })
        .count();
    assert_eq!(fatbins, 2);
    // Both entries serve: back to sm_80 in yet another OUT_DIR.
    let again = build("doc", sm80);
    assert_eq!(
        (again.files[0].status, again.files[0].targets.as_slice()),
        (Status::Cached, &["sm_80".to_string()][..])
    );

    // A fat binary an OUT_DIR already has joins a cache that lacks it (one made before the cache
    // existed), without nvcc.
    fs::remove_dir_all(&cache).unwrap();
    assert_eq!(build("debug", sm80).files[0].status, Status::UpToDate);
    assert_eq!(build("bench", sm80).files[0].status, Status::Cached);
}

#[test]
fn without_nvcc_the_record_says_so() {
    let out = scratch("record-no-nvcc");
    let report = without_nvcc(&out)
        .file(fixture("copy.rs"))
        .file(fixture("empty.rs"))
        .env_remove("CUPY_NVCC_GENERATE_CODE")
        .env("CUPRUM_BUILD_VERBOSE", "1")
        .try_compile()
        .unwrap();
    let copy = report.file("copy.rs").unwrap();
    let text = fs::read_to_string(copy.build_info.as_ref().unwrap()).unwrap();
    assert!(
        text.starts_with("cuprum-build 1\nstatus no-nvcc\ntargets \ninstances "),
        "{text}"
    );
    assert!(!text.contains("\nnvcc "), "{text}");
    assert_eq!(report.file("empty.rs").unwrap().build_info, None);
    let warnings: Vec<&str> = report.warnings().collect();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(
        warnings[1].starts_with(&format!(
            "cuprum-build: 1 kernel file ({} instance",
            copy.instances
        )) && warnings[1]
            .ends_with("no nvcc, nothing precompiled (NVRTC compiles each instance at first use)"),
        "{}",
        warnings[1]
    );
}

#[test]
fn a_target_older_than_a_kernel_needs_is_a_clear_error() {
    let Some(_) = nvcc_or_skip("a_target_older_than_a_kernel_needs_is_a_clear_error") else {
        return;
    };
    let out = scratch("older-target");
    let e = Kernels::new()
        .file(fixture("tensor.rs"))
        .out_dir(&out)
        .env("CUPRUM_FATBIN_CACHE", out.join("fatbin-cache"))
        .env("CUPY_NVCC_GENERATE_CODE", "arch=compute_75,code=sm_75;arch=compute_90,code=sm_90")
        .try_compile()
        .unwrap_err();
    let Error::Kernel { message, .. } = &e else { panic!("{e:?}") };
    assert!(
        message.contains("kernel `tile` uses `mma_m16n8k16`, which needs sm_80 or newer")
            && message.contains("arch=compute_75,code=sm_75")
            && !message.contains("`plain`"),
        "{message}"
    );
}

#[test]
fn default_targets_build_a_kernel_from_its_architecture_up() {
    let Some(_) = nvcc_or_skip("default_targets_build_a_kernel_from_its_architecture_up") else {
        return;
    };
    let out = scratch("arch-default");
    let file = fixture("tensor.rs");
    Kernels::new()
        .file(&file)
        .out_dir(&out)
        .env("CUPRUM_FATBIN_CACHE", out.join("fatbin-cache"))
        .env_remove("CUPY_NVCC_GENERATE_CODE")
        .try_compile()
        .unwrap_or_else(|e| panic!("{}", e.rendered()));
    let parts = fs::read_to_string(out.join(cuprum_abi::parts::parts_file(&unit_id(&file)))).unwrap();
    let pieces = |kernel: &str| -> String {
        parts.lines().filter(|l| l.starts_with(&format!("{kernel}@"))).collect::<Vec<_>>().join("\n")
    };
    let (tile, plain) = (pieces("tile"), pieces("plain"));
    // `tile` needs sm_80: the default's machine code, with PTX of compute_80 instead of the
    // default's compute_75; `plain` keeps the default (nvcc 13: compute_75, sm_80, sm_90, sm_100).
    assert!(
        tile.contains("sm_80") && tile.contains("compute_80") && !tile.contains("compute_75"),
        "tile's pieces:\n{tile}"
    );
    assert!(plain.contains("compute_75") && plain.contains("sm_80") && plain.contains("sm_90"), "plain's pieces:\n{plain}");
}

/// `CUPRUM_LINEINFO=1`: the unit is written with `#line` directives naming the file by its path in
/// this package (`tests/fixtures/copy.rs`), `<plain id>.lines` names it for the macros, and nvcc
/// gets `-lineinfo` (in the stamp, so turning it on or off rebuilds). Turned off again, the unit
/// has no directives and the index is gone. A value that is neither on nor off is an error. (No
/// nvcc and no targets asked for, whatever the environment says: CI's exports one.)
#[test]
fn line_info_writes_directives_and_the_index_for_the_macros() {
    let out = scratch("lineinfo-index");
    let file = fixture("copy.rs");
    let report = without_nvcc(&out).file(&file).env_remove("CUPY_NVCC_GENERATE_CODE").env("CUPRUM_LINEINFO", "1").try_compile().unwrap();
    let lined_id = report.file("copy.rs").unwrap().id.clone();
    let lined = fs::read_to_string(out.join(mangle::source_file(&lined_id))).unwrap();
    assert_eq!(lined, cuprum_compiler::compile_file(&file, true).unwrap().unit.source);
    assert!(lined.contains("\n#line ") && lined.contains(" \"tests/fixtures/copy.rs\"\n"), "{lined}");
    let plain = cuprum_compiler::compile_file(&file, false).unwrap().unit.source;
    assert_eq!(cuprum_abi::unit::without_line_directives(&lined), plain);
    let index = out.join(mangle::lines_file(&mangle::unit_id(&plain)));
    assert_eq!(fs::read_to_string(&index).unwrap(), lined_id);
    assert_eq!(cuprum_abi::unit_options(&lined, false), ["-fmad=false", "-lineinfo"]);

    let report = without_nvcc(&out).file(&file).env_remove("CUPY_NVCC_GENERATE_CODE").env("CUPRUM_LINEINFO", "0").try_compile().unwrap();
    assert_eq!(report.file("copy.rs").unwrap().id, mangle::unit_id(&plain));
    assert!(!index.exists(), "a build without line info removes the index of an earlier one");

    let e = without_nvcc(&out).file(&file).env_remove("CUPY_NVCC_GENERATE_CODE").env("CUPRUM_LINEINFO", "maybe").try_compile().unwrap_err().to_string();
    assert!(e.contains("CUPRUM_LINEINFO=\"maybe\" is neither on nor off"), "{e}");
}

/// With nvcc, `-lineinfo` is on the command line of a unit with directives, so the stamp (and the
/// shared cache's key) differ from the same file built without line info.
#[test]
fn line_info_is_part_of_the_stamp() {
    if nvcc_or_skip("line_info_is_part_of_the_stamp").is_none() {
        return;
    }
    let out = scratch("lineinfo-stamp");
    let file = fixture("copy.rs");
    let build = |li: &str| {
        Kernels::new()
            .file(&file)
            .out_dir(&out)
            .env("CUPRUM_LINEINFO", li)
            .env("CUPRUM_FATBIN_CACHE", "off")
            .env("CUPY_NVCC_GENERATE_CODE", "arch=compute_90,code=sm_90")
            .try_compile()
            .unwrap()
    };
    let on = build("1");
    let f = on.file("copy.rs").unwrap();
    assert_eq!(f.status, cuprum_build::Status::Compiled);
    let stamps: Vec<String> = fs::read_dir(out.join("cuprum"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "stamp") && e.file_name().to_string_lossy().starts_with(&f.id))
        .map(|e| fs::read_to_string(e.path()).unwrap())
        .collect();
    assert!(!stamps.is_empty() && stamps.iter().all(|s| s.contains("-lineinfo")), "{stamps:?}");
    let off = build("0");
    assert_ne!(off.file("copy.rs").unwrap().id, f.id);
    assert_eq!(off.file("copy.rs").unwrap().status, cuprum_build::Status::Compiled);
}

/// A shell script in front of nvcc that appends `start NANOS` and `end NANOS` to `log` around each
/// run that compiles (`-fatbin`).
#[cfg(unix)]
fn timing_nvcc(dir: &Path, nvcc: &nvcc::Nvcc) -> (String, PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let script = dir.join("timing-nvcc.sh");
    let log = dir.join("runs.log");
    fs::write(
        &script,
        format!(
            "#!/bin/sh\ncase \"$*\" in *-fatbin*) ;; *) exec {nvcc} \"$@\" ;; esac\n\
             echo \"start $(date +%s%N)\" >> '{log}'\n{nvcc} \"$@\"\nrc=$?\necho \"end $(date +%s%N)\" >> '{log}'\nexit $rc\n",
            nvcc = nvcc::show(&nvcc.command),
            log = log.display()
        ),
    )
    .unwrap();
    fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
    (script.display().to_string(), log)
}

/// The runs of a [`timing_nvcc`] log, and the most that ran at once.
#[cfg(unix)]
fn most_at_once(log: &Path) -> (usize, usize) {
    let mut events: Vec<(u128, i32)> = fs::read_to_string(log)
        .unwrap()
        .lines()
        .map(|l| {
            let (what, at) = l.split_once(' ').unwrap();
            (at.parse().unwrap(), if what == "start" { 1 } else { -1 })
        })
        .collect();
    // At one instant an end counts before a start.
    events.sort();
    let (mut now, mut most) = (0i32, 0i32);
    for (_, step) in &events {
        now += step;
        most = most.max(now);
    }
    (events.len() / 2, most as usize)
}

/// cargo's jobserver bounds the nvcc processes (issue 34, item 4): the build, in a child process
/// as a build script runs, gets a jobserver of `tokens` tokens of which `held` are taken (by
/// cargo's other jobs; under `cargo build -j1` the build script's own token is the only one, and
/// none is left in the jobserver), with `CUPY_NUM_BUILD_JOBS=4` and four parts to compile. At
/// most one nvcc runs per free token plus the one the build script holds. The child's stderr says
/// what nvcc compiles when it starts.
#[cfg(unix)]
#[test]
fn the_jobserver_bounds_the_nvcc_processes() {
    let Some(nvcc) = nvcc_or_skip("the_jobserver_bounds_the_nvcc_processes") else {
        return;
    };
    let run = |name: &str, tokens: usize, held: usize| {
        let out = scratch(name);
        let (wrapper, log) = timing_nvcc(&out, &nvcc);
        let client = jobserver::Client::new(tokens).unwrap();
        let taken: Vec<_> = (0..held).map(|_| client.acquire().unwrap()).collect();
        let mut child = std::process::Command::new(std::env::current_exe().unwrap());
        child
            .args(["--exact", "jobserver_child", "--nocapture", "--test-threads=1"])
            .env("CUPRUM_BUILD_TEST_JOBSERVER", fixture("four.rs"))
            .env("OUT_DIR", &out)
            .env("NVCC", &wrapper)
            .env("CUPRUM_FATBIN_CACHE", "off")
            .env("CUPY_NUM_BUILD_JOBS", "4")
            .env("CUPY_NVCC_GENERATE_CODE", "arch=compute_90,code=sm_90")
            .env_remove("CUPRUM_BUILD_VERBOSE")
            .env_remove("MAKEFLAGS")
            .env_remove("MFLAGS");
        client.configure(&mut child);
        let output = child.output().unwrap();
        drop(taken);
        assert!(output.status.success(), "{output:?}");
        (most_at_once(&log), String::from_utf8_lossy(&output.stderr).into_owned())
    };
    // `cargo build -j1`: nvcc runs one at a time.
    let ((runs, most), stderr) = run("jobserver-1", 1, 1);
    assert_eq!((runs, most), (4, 1), "under -j1, {runs} nvcc runs, {most} at once");
    assert!(
        stderr.contains("cuprum-build: nvcc is compiling ") && stderr.contains("four.rs (4 parts) for 1 target (sm_90)"),
        "{stderr}"
    );
    // Two free tokens: three at once at most (and more than one: the tokens are used).
    let ((runs, most), _) = run("jobserver-3", 3, 1);
    assert_eq!(runs, 4);
    assert!((2..=3).contains(&most), "with 2 free tokens, {most} nvcc runs at once");
}

/// The child of the test above; does nothing in a normal test run.
#[test]
fn jobserver_child() {
    if let Some(file) = std::env::var_os("CUPRUM_BUILD_TEST_JOBSERVER") {
        Kernels::new().file(file).compile();
    }
}

/// A package whose `src/` holds a kernel file build.rs lists, one it does not, one it marks as
/// compiled at first use, and a file without kernels: one warning, for the unlisted file, naming
/// the line to add (issue 34, item 6). A second builder of the same build script does not warn
/// about the files the first one lists.
#[test]
fn kernel_files_no_builder_lists_get_one_warning_each() {
    let out = scratch("unlisted");
    let package = out.join("package");
    let src = package.join("src");
    fs::create_dir_all(src.join("nested")).unwrap();
    fs::create_dir_all(package.join("extra")).unwrap();
    fs::copy(fixture("copy.rs"), src.join("listed.rs")).unwrap();
    fs::copy(fixture("scale.rs"), src.join("nested/unlisted.rs")).unwrap();
    fs::copy(fixture("scale.rs"), src.join("jit.rs")).unwrap();
    fs::copy(fixture("scale.rs"), package.join("extra/more.rs")).unwrap();
    fs::write(src.join("main.rs"), "/// Uses #[elementwise] kernels.\nfn main() {}\n").unwrap();
    let warnings = |report: &cuprum_build::Report| -> Vec<String> {
        report.directives.iter().filter(|d| d.contains("does not precompile")).cloned().collect()
    };
    let report = without_nvcc(&out)
        .env_remove("CUPY_NVCC_GENERATE_CODE")
        .env("CARGO_MANIFEST_DIR", &package)
        .file(src.join("listed.rs"))
        .not_precompiled("src/jit.rs")
        .try_compile()
        .unwrap();
    assert_eq!(
        warnings(&report),
        ["cargo:warning=cuprum-build: src/nested/unlisted.rs has kernels that build.rs does not precompile (NVRTC \
          compiles them at their first use on a GPU): add `.file(\"src/nested/unlisted.rs\")` to the \
          cuprum_build::Kernels of build.rs, or `.not_precompiled(\"src/nested/unlisted.rs\")` if that is meant"]
    );

    // A folder given with `scan` is searched too; the file listed by the first builder is not
    // reported by this one.
    let second = without_nvcc(&out)
        .env_remove("CUPY_NVCC_GENERATE_CODE")
        .env("CARGO_MANIFEST_DIR", &package)
        .file(src.join("nested/unlisted.rs"))
        .scan("extra")
        .try_compile()
        .unwrap();
    let w = warnings(&second);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].contains("extra/more.rs has kernels"), "{w:?}");
}
