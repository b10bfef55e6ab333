//! The checks a module image passes before the driver sees it (`module/image.rs`,
//! `cuprum_abi::cubin`, `cuprum_abi::fatbin`), against damaged images, on the CPU (issue 15,
//! item 3). No GPU: `RawModule::from_bytes` checks the image when it is made.
//!
//! The images are real ones (`fixtures/`, made by nvcc 13.0 from `fixtures/tiny.cu`), damaged by
//! seeded mutations (`images/mod.rs`: bit flips, boundary bytes, truncations, offsets and sizes
//! of the ELF and fat binary headers set to boundary values, garbage after the headers, shifted
//! and copied blocks). The seed is printed; `CUPRUM_TEST_SEED=<seed>` repeats a run, and
//! `CUPRUM_FUZZ_ITERATIONS` changes the count (at least 100,000 by default).

use super::images;

use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::abi::{cubin, fatbin};
use crate::{Error, RawModule};
use images::{FIXTURES, Mutator, fixture};

/// The checks run on one image; a panic in any of them fails the test with the seed, the
/// iteration and the image (saved to a file).
fn checks(bytes: &[u8]) -> Result<(), String> {
    let module = RawModule::from_bytes(bytes.to_vec());
    // The lenient readers (the build crate lists targets with them) must not panic either.
    let _ = fatbin::entries(bytes);
    let _ = fatbin::targets(bytes);
    match module {
        Ok(_) => Ok(()),
        Err(Error::ModuleLoad { detail, .. }) => Err(detail),
        Err(e) => panic!("from_bytes returned another error than ModuleLoad: {e}"),
    }
}

fn le(b: &[u8], at: u64, width: usize) -> Option<u64> {
    let at = usize::try_from(at).ok()?;
    let s = b.get(at..at.checked_add(width)?)?;
    let mut v = [0u8; 8];
    v[..width].copy_from_slice(s);
    Some(u64::from_le_bytes(v))
}

/// An independent oracle for an image the checks accepted: every table, segment and section
/// with file bytes lies inside it, and the name table is a section that exists.
fn elf_inside(b: &[u8]) -> Result<(), String> {
    let len = b.len() as u64;
    let inside = |off: u64, size: u64| off.checked_add(size).is_some_and(|e| e <= len);
    let f = |at: u64, w: usize| le(b, at, w).ok_or(format!("header field at {at} outside"));
    let (phoff, phnum, shoff, shnum, shstrndx) = (
        f(0x20, 8)?,
        f(0x38, 2)?,
        f(0x28, 8)?,
        f(0x3C, 2)?,
        f(0x3E, 2)?,
    );
    if (phnum > 0 && !inside(phoff, phnum * 56)) || !inside(shoff, shnum * 64) || shstrndx >= shnum
    {
        return Err("header tables".into());
    }
    for i in 0..phnum {
        let (off, size) = (f(phoff + 56 * i + 8, 8)?, f(phoff + 56 * i + 32, 8)?);
        if size > 0 && !inside(off, size) {
            return Err(format!("segment {i}"));
        }
    }
    for i in 0..shnum {
        let at = shoff + 64 * i;
        let (kind, off, size) = (f(at + 4, 4)?, f(at + 24, 8)?, f(at + 32, 8)?);
        let nobits = matches!(kind, 8 | 0x7000_0007 | 0x7000_0009 | 0x7000_000a);
        if !nobits && !inside(off, size) {
            return Err(format!("section {i}"));
        }
    }
    Ok(())
}

/// The oracle for an accepted fat binary: every uncompressed cubin inside passes [`elf_inside`].
fn fatbin_inside(b: &[u8]) -> Result<(), String> {
    let mut pos = 0u64;
    let len = b.len() as u64;
    while pos + 16 <= len {
        let (header, size) = (le(b, pos + 6, 2).unwrap(), le(b, pos + 8, 8).unwrap());
        let end = pos + header + size;
        let mut at = pos + header;
        while at < end {
            let (kind, eh, payload) = (
                le(b, at, 2).unwrap(),
                le(b, at + 4, 4).unwrap(),
                le(b, at + 8, 8).unwrap(),
            );
            let flags = le(b, at + 40, 8).unwrap();
            let start = at + eh;
            let stop = start + payload;
            if stop > len {
                return Err(format!("entry at {at} past the end"));
            }
            if kind == 2 && flags & 0xA000 == 0 {
                elf_inside(&b[start as usize..stop as usize])
                    .map_err(|e| format!("cubin at {start}: {e}"))?;
            }
            at = stop;
        }
        pos = end;
        while pos < len && pos % 8 != 0 && b[pos as usize] == 0 {
            pos += 1;
        }
        if b[pos as usize..].iter().all(|&x| x == 0) {
            break;
        }
    }
    Ok(())
}

#[test]
fn the_fixtures_pass() {
    for f in FIXTURES {
        checks(f.bytes).unwrap_or_else(|e| panic!("{}: {e}", f.name));
        if f.bytes.starts_with(b"\x7fELF") {
            cubin::check(f.bytes).unwrap();
            elf_inside(f.bytes).unwrap();
        } else {
            let entries = fatbin::check(f.bytes).unwrap();
            assert_eq!(entries, fatbin::entries(f.bytes).unwrap(), "{}", f.name);
            fatbin_inside(f.bytes).unwrap();
        }
    }
    assert_eq!(
        fatbin::targets(fixture("tiny.fatbin")).unwrap(),
        ["sm_75", "sm_90", "compute_90", "sm_100"]
    );
}

/// Damage that framing alone does not show, found by `gpu_images.rs` crashing the driver on an
/// H100: a constant bank (`.nv.constant3`, section 14) whose size becomes 0 while its symbols
/// and relocations still reach into it. Symbols must lie inside their sections, and relocations
/// patch bytes inside theirs.
#[test]
fn extents_of_symbols_and_relocations_are_checked() {
    let mut b = fixture("tiny.sm_90.cubin").to_vec();
    let size_field = 4408 + 14 * 64 + 32; // section header 14's `sh_size`
    assert_eq!(
        le(&b, size_field as u64, 8),
        Some(16),
        "the fixture's layout"
    );
    b[size_field..size_field + 8].copy_from_slice(&0u64.to_le_bytes());
    let e = checks(&b).unwrap_err();
    assert!(
        e.contains("section 14") && (e.contains("symbol") || e.contains("relocation")),
        "{e}"
    );
}

#[test]
fn the_gpu_tests_damage_is_refused() {
    // `gpu_images.rs` loads these on a GPU and expects `ModuleLoad` before the driver sees them.
    let damage = images::refused_damage();
    assert!(damage.len() > 25);
    for (what, bytes) in damage {
        match checks(&bytes) {
            Err(detail) => println!("{what}: {detail}"),
            Ok(()) => panic!("{what}: accepted"),
        }
    }
}

#[test]
fn every_truncation_is_refused() {
    // A cubin ends with its program header table, a fat binary with its last entry: every
    // shorter prefix lacks something the driver would read.
    for f in FIXTURES {
        for n in 0..f.bytes.len() {
            let e = checks(&f.bytes[..n]);
            assert!(e.is_err(), "{} truncated to {n} bytes was accepted", f.name);
        }
    }
}

#[test]
fn every_locating_field_at_a_boundary_value_keeps_the_checks_sound() {
    // Deterministic: each field of each fixture set to each boundary value; whatever is accepted
    // must satisfy the oracle.
    let m = Mutator::new(0);
    let mut tried = 0;
    for (i, f) in FIXTURES.iter().enumerate() {
        assert!(
            m.field_count(i) > 20,
            "{}: only {} fields found",
            f.name,
            m.field_count(i)
        );
    }
    let mut m = Mutator::new(1);
    for _ in 0..20_000 {
        let (name, b, what) = m.next();
        tried += 1;
        if checks(&b).is_ok() {
            let oracle = if b.starts_with(b"\x7fELF") {
                elf_inside(&b)
            } else if b.len() >= 4 && b[..4] == fatbin::MAGIC.to_le_bytes() {
                fatbin_inside(&b)
            } else {
                Ok(())
            };
            if let Err(e) = oracle {
                panic!("{name} with {what} was accepted but {e} lies outside the image");
            }
        }
    }
    assert_eq!(tried, 20_000);
}

#[test]
fn mutated_images_never_panic_the_checks() {
    let seed = images::seed("mutated_images_never_panic_the_checks");
    let n: usize = std::env::var("CUPRUM_FUZZ_ITERATIONS")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(120_000);
    let mut m = Mutator::new(seed);
    let (mut accepted, mut refused) = (0usize, 0usize);
    let mut unsound = Vec::new();
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {})); // a panic is reported below, with its image
    for i in 0..n {
        let (name, b, what) = m.next();
        match catch_unwind(AssertUnwindSafe(|| checks(&b))) {
            Ok(Ok(())) => {
                accepted += 1;
                let oracle = if b.starts_with(b"\x7fELF") {
                    elf_inside(&b)
                } else if b.len() >= 4 && b[..4] == fatbin::MAGIC.to_le_bytes() {
                    fatbin_inside(&b)
                } else {
                    Ok(())
                };
                if let Err(e) = oracle {
                    unsound.push(format!("iteration {i}: {name} with {what}: {e}"));
                }
            }
            Ok(Err(_)) => refused += 1,
            Err(p) => {
                std::panic::set_hook(default_hook);
                let path = std::env::temp_dir().join(format!("cuprum-fuzz-{seed}-{i}.bin"));
                let _ = std::fs::write(&path, &b);
                let msg = p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()));
                panic!(
                    "the checks panicked on iteration {i} (seed {seed}): {name} with {what}: {msg:?}; \
                     the image is in {}",
                    path.display()
                );
            }
        }
    }
    std::panic::set_hook(default_hook);
    println!("{n} damaged images: {accepted} accepted, {refused} refused, no panic");
    assert!(
        unsound.is_empty(),
        "accepted images with parts outside them:\n{}",
        unsound.join("\n")
    );
    assert!(
        refused > n / 2,
        "only {refused} of {n} refused: are the mutations reaching the headers?"
    );
}

#[test]
fn nvrtc_output_passes() {
    // The JIT's cubins and PTX go through the same checks. Needs libnvrtc: fails without it
    // unless `CUPRUM_SKIP_CUDA_COMPILE=1`.
    use crate::nvrtc::{self, CodeTarget, Program};
    let info = match nvrtc::info() {
        Ok(info) => info,
        Err(_) if std::env::var("CUPRUM_SKIP_CUDA_COMPILE").as_deref() == Ok("1") => {
            eprintln!("skipped: no libnvrtc and CUPRUM_SKIP_CUDA_COMPILE=1");
            return;
        }
        Err(e) => panic!(
            "libnvrtc is not available ({e}): run `source scripts/cuda-env.sh`, or set CUPRUM_SKIP_CUDA_COMPILE=1"
        ),
    };
    let (tiny, globals) = (
        include_str!("../../tests/fixtures/tiny.cu"),
        include_str!("../../tests/fixtures/globals.cu"),
    );
    for (name, source, target) in [
        ("tiny.cu", tiny, CodeTarget::Cubin(90)),
        ("tiny.cu", tiny, CodeTarget::Ptx(90)),
        ("tiny.cu", tiny, CodeTarget::Cubin(75)),
        // Initialised globals (a segment padded past its section's end), as cuprum/bounds.h makes.
        ("globals.cu", globals, CodeTarget::Cubin(90)),
        ("globals.cu", globals, CodeTarget::Cubin(75)),
    ] {
        let (CodeTarget::Cubin(arch) | CodeTarget::Ptx(arch)) = target;
        if !info.supported_archs.contains(&arch) {
            continue;
        }
        let options = nvrtc::effective_options(&[], target, false);
        let program = Program {
            name,
            file_name: name,
            source,
            options: &options,
            name_expressions: &[],
            dump_source_on_error: false,
        };
        let image = nvrtc::compile(&program, target).unwrap().image;
        checks(&image.image).unwrap_or_else(|e| panic!("{name} for {target:?}: {e}"));
        if image.image.starts_with(b"\x7fELF") {
            cubin::check(&image.image).unwrap();
        }
    }
}

#[test]
fn damaged_extents_are_mostly_refused() {
    // The damage `gpu_images.rs` gives the driver (offsets and sizes of tables, segments and
    // sections, moved inside the image): the layout checks (parts disjoint and aligned,
    // segments made of whole sections) refuse what a compiler never writes. What they accept
    // moves nothing the driver reads, or moves it onto bytes of the right kind.
    let seed = images::seed("damaged_extents_are_mostly_refused");
    let mut m = Mutator::new(seed);
    let n = 20_000;
    let mut accepted = Vec::new();
    for _ in 0..n {
        let (name, b, what) = m.next_extent();
        if checks(&b).is_ok() {
            accepted.push(format!("{name} with {what}"));
        }
    }
    println!(
        "{n} images with damaged extents: {} accepted",
        accepted.len()
    );
    for a in accepted.iter().take(40) {
        println!("  accepted: {a}");
    }
    assert!(
        accepted.len() < n / 10,
        "{} of {n} accepted",
        accepted.len()
    );
}
