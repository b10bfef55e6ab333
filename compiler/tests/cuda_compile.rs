//! Every generated CUDA file in `compiler/tests/out/` must compile, with nvcc and with NVRTC
//! (docs/architecture.md), so that invalid C fails CI even without a GPU.
//!
//! - nvcc: `nvcc -arch=sm_90 -cubin -I <include>`, from `$NVCC` (a command line such as
//!   `ccache nvcc`), else `$CUDA_PATH/bin/nvcc`, else `nvcc` on PATH (the build's order).
//! - NVRTC through cudarc, for `sm_90`, `--std=c++17`, with only `<include>` on the include path:
//!   the runtime has nothing else when only libnvrtc is installed.
//!
//! `<include>` is a scratch folder holding `cuprum_abi::headers::HEADERS` (the headers as embedded,
//! which is what cuprum-build and NVRTC get), so that the test reads nothing outside this crate.
//!
//! `source scripts/cuda-env.sh` provides both. Without them the test fails, unless
//! `CUPRUM_SKIP_CUDA_COMPILE=1`. `CUPRUM_CUDA_COMPILE_DIR` checks another folder instead of
//! `compiler/tests/out/` (for trying the test itself). This test runs on the build machine, so the
//! build-time paths below are fine.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::{env, fs, thread};

use cudarc::nvrtc::{CompileError, CompileOptions, compile_ptx_with_opts};

const SKIP_VAR: &str = "CUPRUM_SKIP_CUDA_COMPILE";
const DIR_VAR: &str = "CUPRUM_CUDA_COMPILE_DIR";
const ARCH: &str = "sm_90";
/// The arch-specific target of the files that use Hopper's warpgroup instructions (they include
/// `cuprum/hopper.h`): only `sm_90a` has them.
const ARCH_SPECIFIC: &str = "sm_90a";

/// The target a generated file compiles for.
fn arch_of(file: &Path) -> &'static str {
    let hopper = fs::read_to_string(file).is_ok_and(|s| s.contains("#include <cuprum/hopper.h>"));
    if hopper { ARCH_SPECIFIC } else { ARCH }
}
/// Parallel compiles: nvcc and NVRTC are heavy and CI machines are small.
const THREADS: usize = 2;
const HOW_TO: &str = "run `source scripts/cuda-env.sh` first (it installs the CUDA compiler from \
                      PyPI wheels if needed), or set CUPRUM_SKIP_CUDA_COMPILE=1 to skip this test";


/// All `*.cu` files under `dir` (recursively), sorted, so that failures come in a stable order.
fn cu_files(dir: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "cu") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(dir, &mut files);
    files.sort();
    files
}

/// The nvcc command line, looked for as `cuprum_build::nvcc::locate` does (docs/building.md):
/// `$NVCC` split as a POSIX shell would, else `$CUDA_PATH/bin/nvcc`, else `nvcc` on PATH.
// A copy, not a call: cuprum-build depends on this crate (docs/architecture.md, The crates).
fn find_nvcc() -> Option<Vec<OsString>> {
    let set = |key: &str| env::var_os(key).filter(|v| !v.to_string_lossy().trim().is_empty());
    if let Some(line) = set("NVCC") {
        let line = line.to_string_lossy();
        let words: Vec<OsString> = shlex::split(&line)
            .unwrap_or_else(|| panic!("NVCC ({line}) is not a command line: a quote is not closed"))
            .into_iter()
            .map(OsString::from)
            .collect();
        return (!words.is_empty()).then_some(words);
    }
    let exe = format!("nvcc{}", env::consts::EXE_SUFFIX);
    let from_cuda_path = set("CUDA_PATH").map(|root| PathBuf::from(root).join("bin").join(&exe));
    let on_path = set("PATH")
        .map(|p| {
            env::split_paths(&p)
                .map(|dir| dir.join(&exe))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    let found = from_cuda_path
        .into_iter()
        .chain(on_path)
        .find(|p| p.is_file())?;
    Some(vec![found.into_os_string()])
}

/// NVRTC's version, or `None` when cudarc cannot load libnvrtc (cudarc would panic on first use).
fn nvrtc_version() -> Option<(i32, i32)> {
    // SAFETY: only tries to dlopen the library names cudarc knows; loading libnvrtc runs no code of
    // ours and the handle is dropped again.
    if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        return None;
    }
    let (mut major, mut minor) = (0, 0);
    // SAFETY: the library is present (checked above) and both pointers are valid for writes.
    let status = unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) };
    (status == cudarc::nvrtc::sys::nvrtcResult::NVRTC_SUCCESS).then_some((major, minor))
}

/// Compiles one file with nvcc into `output`; `Err` carries the command and its output.
fn compile_nvcc(
    nvcc: &[OsString],
    include: &Path,
    file: &Path,
    output: &Path,
) -> Result<(), String> {
    let mut cmd = Command::new(&nvcc[0]);
    cmd.args(&nvcc[1..])
        .args(["-arch", arch_of(file), "-cubin", "-I"])
        .arg(include)
        .arg("-o")
        .arg(output)
        .arg(file);
    let shown = format!("{cmd:?}");
    match cmd.output() {
        Err(e) => Err(format!("could not run {shown}: {e}")),
        Ok(out) if out.status.success() => Ok(()),
        Ok(out) => Err(format!(
            "{shown}\nexited with {}\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )),
    }
}

/// Compiles one file with NVRTC; `Err` carries the options and the program log.
fn compile_nvrtc(include: &Path, file: &Path) -> Result<(), String> {
    let src =
        fs::read_to_string(file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let opts = CompileOptions {
        arch: Some(arch_of(file)),
        include_paths: vec![include.display().to_string()],
        options: vec!["--std=c++17".into()],
        name: file.file_name().map(|n| n.to_string_lossy().into_owned()),
        ..Default::default()
    };
    match compile_ptx_with_opts(src, opts) {
        Ok(_) => Ok(()),
        Err(CompileError::CompileError {
            nvrtc,
            options,
            log,
        }) => Err(format!(
            "{nvrtc:?} with options {options:?}\n{}",
            log.to_string_lossy()
        )),
        Err(other) => Err(format!("{other:?}")),
    }
}

#[test]
fn generated_cuda_compiles_with_nvcc_and_nvrtc() {
    if env::var(SKIP_VAR).is_ok_and(|v| v == "1") {
        eprintln!("cuda_compile: skipped because {SKIP_VAR}=1");
        return;
    }

    let dir = env::var_os(DIR_VAR)
        .map_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/out"), PathBuf::from);
    let files = cu_files(&dir);
    assert!(
        !files.is_empty(),
        "no .cu files in {}: the snapshot tests write the generated CUDA C there, and an empty \
         corpus must not pass",
        dir.display()
    );

    let nvcc =
        find_nvcc().unwrap_or_else(|| panic!("nvcc not found (NVCC, CUDA_PATH, PATH): {HOW_TO}"));
    let (major, minor) = nvrtc_version().unwrap_or_else(|| {
        panic!(
            "libnvrtc cannot be loaded (LD_LIBRARY_PATH={:?}): {HOW_TO}",
            env::var("LD_LIBRARY_PATH").unwrap_or_default()
        )
    });
    eprintln!(
        "cuda_compile: {} file(s) in {}, nvcc = {}, NVRTC {major}.{minor}, arch {ARCH}",
        files.len(),
        dir.display(),
        nvcc.iter()
            .map(|w| w.to_string_lossy())
            .collect::<Vec<_>>()
            .join(" ")
    );

    let out_dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cuda_compile-{}", std::process::id()));
    let include = out_dir.join("include");
    for (name, text) in cuprum_abi::headers::HEADERS {
        let path = include.join(name);
        fs::create_dir_all(path.parent().expect("a header's name has a folder"))
            .unwrap_or_else(|e| panic!("cannot create the folder of {}: {e}", path.display()));
        fs::write(&path, text).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
    }

    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    thread::scope(|s| {
        for _ in 0..THREADS.min(files.len()) {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(file) = files.get(i) else { break };
                    let name = file
                        .strip_prefix(&dir)
                        .unwrap_or(file)
                        .display()
                        .to_string();
                    let cubin = out_dir.join(format!("{i}.cubin"));
                    let results = [
                        ("nvcc", compile_nvcc(&nvcc, &include, file, &cubin)),
                        ("NVRTC", compile_nvrtc(&include, file)),
                    ];
                    for (compiler, result) in results {
                        if let Err(log) = result {
                            eprintln!("---- {name}: {compiler} FAILED\n{}\n", log.trim_end());
                            failures
                                .lock()
                                .unwrap()
                                .push(format!("{name} ({compiler})"));
                        }
                    }
                }
            });
        }
    });
    let _ = fs::remove_dir_all(&out_dir);

    let mut failures = failures.into_inner().unwrap();
    failures.sort();
    assert!(
        failures.is_empty(),
        "{} of {} compile(s) failed (logs above):\n  {}",
        failures.len(),
        2 * files.len(),
        failures.join("\n  ")
    );
}

/// A kernel whose statements sit on known lines (5, 6, 7) of a file named `src/scaled.rs`.
const LINED: &str = "use cuprum::prelude::*;

#[elementwise]
pub fn scaled_diff(x: f32, y: f32, s: f32) -> f32 {
    let d = x - y;
    let e = d * s;
    e * e + 1.0
}
";

/// The section `name` of a 64-bit little-endian ELF file (a cubin).
fn elf_section<'a>(elf: &'a [u8], name: &str) -> Option<&'a [u8]> {
    let u16_at = |o: usize| Some(u16::from_le_bytes(elf.get(o..o + 2)?.try_into().ok()?));
    let u32_at = |o: usize| Some(u32::from_le_bytes(elf.get(o..o + 4)?.try_into().ok()?));
    let u64_at = |o: usize| Some(u64::from_le_bytes(elf.get(o..o + 8)?.try_into().ok()?) as usize);
    if elf.get(..5)? != b"\x7fELF\x02" {
        return None;
    }
    let (shoff, shentsize, shnum, shstrndx) = (u64_at(0x28)?, u16_at(0x3a)? as usize, u16_at(0x3c)? as usize, u16_at(0x3e)? as usize);
    let header = |i: usize| shoff + i * shentsize;
    let names = u64_at(header(shstrndx) + 0x18)?;
    (0..shnum).find_map(|i| {
        let h = header(i);
        let at = names + u32_at(h)? as usize;
        let end = at + elf.get(at..)?.iter().position(|&b| b == 0)?;
        (elf.get(at..end)? == name.as_bytes()).then(|| {
            let (off, size) = (u64_at(h + 0x18)?, u64_at(h + 0x20)?);
            elf.get(off..off + size)
        })?
    })
}

/// A line table: its directories, and `(file name, line)` of every row.
type LineTable = (Vec<String>, Vec<(String, u64)>);

/// The rows of a DWARF 2 line table (`.debug_line`).
fn line_rows(section: &[u8]) -> Option<LineTable> {
    let mut at = 0usize;
    let byte = |at: &mut usize| -> Option<u8> {
        let b = *section.get(*at)?;
        *at += 1;
        Some(b)
    };
    let uleb = |at: &mut usize| -> Option<u64> {
        let (mut v, mut shift) = (0u64, 0);
        loop {
            let b = byte(at)?;
            v |= u64::from(b & 0x7f) << shift;
            shift += 7;
            if b & 0x80 == 0 {
                return Some(v);
            }
        }
    };
    let sleb = |at: &mut usize| -> Option<i64> {
        let (mut v, mut shift) = (0i64, 0);
        loop {
            let b = byte(at)?;
            v |= i64::from(b & 0x7f) << shift;
            shift += 7;
            if b & 0x80 == 0 {
                if shift < 64 && b & 0x40 != 0 {
                    v |= -1 << shift;
                }
                return Some(v);
            }
        }
    };
    let cstr = |at: &mut usize| -> Option<String> {
        let end = *at + section.get(*at..)?.iter().position(|&b| b == 0)?;
        let s = String::from_utf8_lossy(&section[*at..end]).into_owned();
        *at = end + 1;
        Some(s)
    };
    let (mut dirs, mut rows) = (Vec::new(), Vec::new());
    while at + 4 <= section.len() {
        let len = u32::from_le_bytes(section[at..at + 4].try_into().ok()?) as usize;
        let end = at + 4 + len;
        at += 4 + 2; // the length, the version
        let header_len = u32::from_le_bytes(section.get(at..at + 4)?.try_into().ok()?) as usize;
        at += 4;
        let program = at + header_len;
        at += 2; // minimum instruction length, default is_stmt
        let line_base = byte(&mut at)? as i8 as i64;
        let line_range = byte(&mut at)? as i64;
        let opcode_base = byte(&mut at)?;
        let arg_counts: Vec<u8> = (1..opcode_base).map(|_| byte(&mut at)).collect::<Option<_>>()?;
        loop {
            let d = cstr(&mut at)?;
            if d.is_empty() {
                break;
            }
            dirs.push(d);
        }
        let mut files = Vec::new();
        loop {
            let f = cstr(&mut at)?;
            if f.is_empty() {
                break;
            }
            for _ in 0..3 {
                uleb(&mut at)?; // the directory, time and size
            }
            files.push(f);
        }
        at = program;
        let (mut file, mut line) = (1u64, 1i64);
        let name = |file: u64| files.get(file as usize - 1).cloned().unwrap_or_default();
        while at < end {
            let op = byte(&mut at)?;
            if op >= opcode_base {
                line += line_base + (i64::from(op - opcode_base) % line_range);
                rows.push((name(file), line as u64));
                continue;
            }
            match op {
                0 => {
                    let n = uleb(&mut at)? as usize;
                    if n > 0 && section.get(at) == Some(&1) {
                        (file, line) = (1, 1); // end of a sequence
                    }
                    at += n;
                }
                1 => rows.push((name(file), line as u64)),
                3 => line += sleb(&mut at)?,
                4 => file = uleb(&mut at)?,
                9 => at += 2,
                _ => {
                    for _ in 0..arg_counts[op as usize - 1] {
                        uleb(&mut at)?;
                    }
                }
            }
        }
        at = end;
    }
    Some((dirs, rows))
}

/// A unit written with `#line` directives and compiled with the options the build gives it
/// (`-lineinfo` among them), from the root folder as the build runs nvcc: its line table names the
/// Rust file as `/src/scaled.rs` and the statements' lines, and no other line of that file (the
/// glue is attributed to the unit itself), and the headers as `/cuprum/*.h`: no folder of the
/// build machine. Fails when the directives or `-lineinfo` are missing.
#[test]
fn the_line_table_names_the_rust_lines() {
    if env::var(SKIP_VAR).is_ok_and(|v| v == "1") {
        eprintln!("cuda_compile: skipped because {SKIP_VAR}=1");
        return;
    }
    let nvcc = find_nvcc().unwrap_or_else(|| panic!("nvcc not found (NVCC, CUDA_PATH, PATH): {HOW_TO}"));
    let unit = cuprum_compiler::compile_source_with_lines(LINED, "src/scaled.rs").expect("the kernel compiles").unit;
    let options = cuprum_abi::unit_options(&unit.source, unit.fast_math);
    assert!(options.contains(&"-lineinfo"), "{options:?}");

    let out_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cuda_compile-lines-{}", std::process::id()));
    let include = out_dir.join("include");
    for (name, text) in cuprum_abi::headers::HEADERS {
        let path = include.join(name);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, cuprum_abi::headers::as_written(name, text)).unwrap();
    }
    let cu = out_dir.join("unit.cu");
    fs::write(&cu, &unit.source).unwrap();
    let cubin = out_dir.join("unit.cubin");
    let mut cmd = Command::new(&nvcc[0]);
    cmd.args(&nvcc[1..]).args(["-std=c++17", "-arch", ARCH, "-cubin"]).args(options).arg("-I").arg(&include).arg("-o").arg(&cubin).arg(&cu);
    cmd.current_dir("/");
    let out = cmd.output().unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(out.status.success(), "{cmd:?}\n{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let bytes = fs::read(&cubin).unwrap();
    let _ = fs::remove_dir_all(&out_dir);

    let section = elf_section(&bytes, ".debug_line").expect("the cubin has a line table (.debug_line): nvcc got -lineinfo");
    let (dirs, rows) = line_rows(section).expect("the line table reads as DWARF");
    // Only the Rust file's folder and the headers' (`cuprum_abi::headers::as_written`), from the root
    // folder: no folder of this machine.
    assert!(dirs.iter().any(|d| d == "/src") && dirs.iter().all(|d| d == "/src" || d == "/cuprum"), "{dirs:?}");
    let rust: Vec<u64> = rows.iter().filter(|(f, _)| f == "scaled.rs").map(|(_, l)| *l).collect();
    assert!(!rust.is_empty(), "no row names the Rust file: {rows:?}");
    assert!(rust.iter().all(|l| (4..=8).contains(l)), "a row names a line of the Rust file outside the kernel: {rows:?}");
    let statements = [5u64, 6, 7].iter().filter(|l| rust.contains(l)).count();
    assert!(statements >= 2, "the statements' lines (5, 6, 7) are in the table: {rows:?}");
    assert!(rows.iter().all(|(f, _)| f == "scaled.rs" || f == "scaled.rs (generated CUDA C)" || f.ends_with(".h")), "{rows:?}");
}

/// A part of a file's fat binary (the file with the other kernels' instantiation lines left out,
/// as cuprum-build makes it) holds the index checks' slot only when its kernel's code checks an
/// index: `out/slot_parts.cu` has a checked `#[rawkernel]` and an `#[elementwise]` that indexes
/// nothing, so the elementwise kernel's first call needs no record (runtime/src/bounds.rs).
#[test]
fn only_a_part_whose_code_checks_holds_the_slot() {
    if env::var(SKIP_VAR).is_ok_and(|v| v == "1") {
        eprintln!("cuda_compile: skipped because {SKIP_VAR}=1");
        return;
    }
    let nvcc = find_nvcc().unwrap_or_else(|| panic!("nvcc not found (NVCC, CUDA_PATH, PATH): {HOW_TO}"));
    let unit = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/out/slot_parts.cu");
    let text = fs::read_to_string(&unit).unwrap_or_else(|e| panic!("{}: {e} (the snapshot test writes it)", unit.display()));
    let out_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("slot_parts-{}", std::process::id()));
    let include = out_dir.join("include");
    for (name, header) in cuprum_abi::headers::HEADERS {
        let path = include.join(name);
        fs::create_dir_all(path.parent().expect("a header's name has a folder")).unwrap();
        fs::write(&path, header).unwrap();
    }
    for (kernel, has_slot) in [("checked_store", true), ("doubled", false)] {
        let part: String = text
            .lines()
            .filter(|l| !l.starts_with("CUPRUM_INSTANTIATE_") || l.starts_with(&format!("CUPRUM_INSTANTIATE_{kernel}")))
            .map(|l| format!("{l}\n"))
            .collect();
        assert!(part.contains(&format!("CUPRUM_INSTANTIATE_{kernel}")), "{kernel}'s instantiation line in {}", unit.display());
        let src = out_dir.join(format!("{kernel}.cu"));
        let cubin = out_dir.join(format!("{kernel}.cubin"));
        fs::write(&src, part).unwrap();
        compile_nvcc(&nvcc, &include, &src, &cubin).unwrap_or_else(|e| panic!("{e}"));
        let bytes = fs::read(&cubin).unwrap();
        let symbol = cuprum_abi::bounds::SLOT_SYMBOL.as_bytes();
        let found = bytes.windows(symbol.len()).any(|w| w == symbol);
        assert_eq!(found, has_slot, "{kernel}'s part {} the slot symbol", if found { "holds" } else { "lacks" });
    }
    let _ = fs::remove_dir_all(&out_dir);
}
