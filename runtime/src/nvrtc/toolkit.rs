//! Where the CUDA toolkit is on this machine, for what NVRTC and the linker need from it beyond
//! libnvrtc: its header folders (so that `#include <cuda/std/complex>`, `<cooperative_groups.h>`
//! or `<cuComplex.h>` work in `RawKernel`/`RawModule` source) and the device runtime library
//! `libcudadevrt.a` (relocatable device code, `RawModule` with `-rdc=true`).
//!
//! The toolkit root is the first of these that holds `include/cuda_runtime.h`:
//!
//! 1. `CUDA_PATH`, 2. `CUDA_HOME` (CuPy's two variables),
//! 3. the root of the libnvrtc this process loaded (`<root>/lib64/libnvrtc.so.13`,
//!    `<root>/targets/<triple>/lib/...`, or a pip wheel's `.../nvidia/cu13/lib/...`: the folder
//!    above `lib`/`lib64`),
//! 4. the root of `nvcc` on `PATH` (the folder above its `bin`),
//! 5. `/usr/local/cuda`.
//!
//! Its header folders are `<root>/include` and, where it exists, `<root>/include/cccl` (CUDA 13
//! moved CCCL, the `cuda/std`, `cub` and `thrust` headers, there). The build crate finds nvcc
//! for the build script (`cuprum-build`'s `nvcc::locate`, from `NVCC`, `CUDA_PATH` or `PATH`);
//! the runtime cannot use that crate (it depends on the compiler, and programs carry no compiler:
//! docs/architecture.md, The crates), and the runtime needs headers and libraries, not nvcc.
//! The layout of a root (where its libraries lie) is in one place, [`library_dirs`], which the
//! loading of libnvrtc uses too.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::env;

/// A CUDA toolkit found on this machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Toolkit {
    /// Its root (`/usr/local/cuda`, `$CUDA_PATH`, a wheel's `.../nvidia/cu13`).
    pub root: PathBuf,
    /// Which setting or search found it (`CUDA_PATH`, `CUDA_HOME`, `libnvrtc`, `nvcc on PATH`,
    /// `/usr/local/cuda`), for messages.
    pub found_by: &'static str,
    /// The folders NVRTC gets with `-I`: `<root>/include`, then `<root>/include/cccl` when it
    /// exists.
    pub include_dirs: Vec<PathBuf>,
}

impl Toolkit {
    /// `libcudadevrt.a`, the device runtime that relocatable device code (dynamic parallelism)
    /// links with, when this toolkit has it.
    pub fn cudadevrt(&self) -> Option<PathBuf> {
        library_dirs(&self.root).into_iter().map(|d| d.join("libcudadevrt.a")).find(|p| p.is_file())
    }
}

/// The folders under a CUDA root where its libraries may live: `lib64`, `lib`, `targets/*/lib`
/// and `bin` (Windows keeps DLLs there).
pub fn library_dirs(root: &Path) -> Vec<PathBuf> {
    let mut dirs = vec![root.join("lib64"), root.join("lib")];
    if let Ok(targets) = std::fs::read_dir(root.join("targets")) {
        for t in targets.flatten() {
            dirs.push(t.path().join("lib"));
        }
    }
    dirs.push(root.join("bin"));
    dirs
}

/// The toolkit of this process, searched once (see the module docs); `None` when none was found.
pub fn toolkit() -> Option<&'static Toolkit> {
    static FOUND: OnceLock<Option<Toolkit>> = OnceLock::new();
    FOUND
        .get_or_init(|| {
            let t = locate(&candidates());
            match &t {
                Some(t) => log::debug!(target: "cuprum::jit", "CUDA toolkit at {} (found by {})", t.root.display(), t.found_by),
                None => log::debug!(target: "cuprum::jit", "no CUDA toolkit found: {}", searched()),
            }
            t
        })
        .as_ref()
}

/// `-I<dir>` for each header folder of the toolkit ([`toolkit`]); empty when none was found.
pub fn include_options() -> Vec<String> {
    toolkit().map_or_else(Vec::new, |t| t.include_dirs.iter().map(|d| format!("-I{}", d.display())).collect())
}

/// The roots to try, in order, each with what found it.
fn candidates() -> Vec<(PathBuf, &'static str)> {
    let mut c = Vec::new();
    if let Some(p) = env::cuda_path() {
        c.push((p, "CUDA_PATH"));
    }
    if let Some(p) = env::var(env::CUDA_HOME) {
        c.push((PathBuf::from(p), "CUDA_HOME"));
    }
    if let Some(lib) = loaded_library("libnvrtc.so")
        && let Some(root) = root_of_library(&lib)
    {
        c.push((root, "libnvrtc"));
    }
    if let Some(root) = nvcc_on_path().and_then(|nvcc| Some(nvcc.parent()?.parent()?.to_path_buf())) {
        c.push((root, "nvcc on PATH"));
    }
    c.push((PathBuf::from("/usr/local/cuda"), "/usr/local/cuda"));
    c
}

/// The first candidate that is a toolkit root (holds `include/cuda_runtime.h`).
pub fn locate(candidates: &[(PathBuf, &'static str)]) -> Option<Toolkit> {
    candidates.iter().find_map(|(root, found_by)| {
        let include = root.join("include");
        if !include.join("cuda_runtime.h").is_file() {
            return None;
        }
        let mut include_dirs = vec![include.clone()];
        let cccl = include.join("cccl");
        if cccl.join("cuda").join("std").is_dir() {
            include_dirs.push(cccl);
        }
        Some(Toolkit { root: root.clone(), found_by, include_dirs })
    })
}

/// What the search looked at, for messages when it found nothing.
pub fn searched() -> String {
    let mut parts: Vec<String> = Vec::new();
    parts.push(match env::cuda_path() {
        Some(p) => format!("CUDA_PATH={}", p.display()),
        None => "CUDA_PATH (unset)".into(),
    });
    parts.push(match env::var(env::CUDA_HOME) {
        Some(p) => format!("CUDA_HOME={p}"),
        None => "CUDA_HOME (unset)".into(),
    });
    parts.push("the folder of the loaded libnvrtc".into());
    parts.push("nvcc on PATH".into());
    parts.push("/usr/local/cuda".into());
    parts.join(", ")
}

/// The root above a library's folder: `<root>/lib64/x.so` and `<root>/lib/x.so` give `<root>`,
/// `<root>/targets/<triple>/lib/x.so` gives `<root>/targets/<triple>` (which holds `include/`
/// too), and a wheel's `.../nvidia/cu13/lib/x.so` gives `.../nvidia/cu13`.
pub fn root_of_library(lib: &Path) -> Option<PathBuf> {
    let dir = lib.parent()?;
    match dir.file_name()?.to_str()? {
        "lib" | "lib64" => Some(dir.parent()?.to_path_buf()),
        _ => None,
    }
}

/// The file of a shared library this process has loaded whose name starts with `prefix`, read
/// from the process's memory map (Linux); `None` elsewhere or when it is not loaded.
fn loaded_library(prefix: &str) -> Option<PathBuf> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .map(PathBuf::from)
        .find(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with(prefix)))
}

fn nvcc_on_path() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join("nvcc")).find(|p| p.is_file())
}

/// The advice added to a compile error that says a header was not found.
pub fn missing_header_hint(toolkit: Option<&Toolkit>) -> String {
    let searched = match toolkit {
        Some(t) => format!(
            "NVRTC searched cuprum's embedded headers (cuprum/...) and the CUDA toolkit's {} (found by {})",
            t.include_dirs.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(" and "),
            t.found_by
        ),
        None => format!("NVRTC searched only cuprum's embedded headers (cuprum/...): no CUDA toolkit was found (looked at {})", searched()),
    };
    format!(
        "cuprum: a header was not found. {searched}. The toolkit's headers (cuda/std/..., \
         cooperative_groups.h, cuComplex.h, cuda_fp16.h) come from a CUDA toolkit: set CUDA_PATH (or CUDA_HOME) to \
         its root, whose include/ holds cuda_runtime.h (and include/cccl the cuda/std headers, CUDA 13), or add \
         `-I<dir>` to the options. The host C++ standard library (<vector>, <iostream>, <type_traits>, <cmath>, ...) \
         is not available to device code compiled by NVRTC: use the cuda/std counterpart (<cuda/std/type_traits>, \
         <cuda/std/cmath>, ...) where there is one (docs/runtime.md, C++ standard headers)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake_root(dir: &Path, cccl: bool) {
        std::fs::create_dir_all(dir.join("include")).unwrap();
        std::fs::write(dir.join("include/cuda_runtime.h"), "").unwrap();
        if cccl {
            std::fs::create_dir_all(dir.join("include/cccl/cuda/std")).unwrap();
        }
    }

    #[test]
    fn the_first_candidate_with_headers_wins() {
        let tmp = std::env::temp_dir().join(format!("cuprum-toolkit-{}", std::process::id()));
        let (empty, a, b) = (tmp.join("empty"), tmp.join("a"), tmp.join("b"));
        std::fs::create_dir_all(&empty).unwrap();
        fake_root(&a, false);
        fake_root(&b, true);
        let t = locate(&[(empty.clone(), "CUDA_PATH"), (a.clone(), "CUDA_HOME"), (b.clone(), "/usr/local/cuda")]).unwrap();
        assert_eq!((t.root.as_path(), t.found_by), (a.as_path(), "CUDA_HOME"));
        assert_eq!(t.include_dirs, [a.join("include")]);
        assert_eq!(t.cudadevrt(), None);
        let t = locate(&[(b.clone(), "CUDA_PATH")]).unwrap();
        assert_eq!(t.include_dirs, [b.join("include"), b.join("include/cccl")]);
        std::fs::create_dir_all(b.join("lib64")).unwrap();
        std::fs::write(b.join("lib64/libcudadevrt.a"), "!<arch>\n").unwrap();
        assert_eq!(t.cudadevrt(), Some(b.join("lib64/libcudadevrt.a")));
        assert_eq!(locate(&[(empty, "CUDA_PATH")]), None);
        std::fs::remove_dir_all(&tmp).unwrap();
    }

    #[test]
    fn library_folders_lead_to_their_root() {
        let p = |s: &str| Some(PathBuf::from(s));
        assert_eq!(root_of_library(Path::new("/usr/local/cuda/lib64/libnvrtc.so.13")), p("/usr/local/cuda"));
        assert_eq!(
            root_of_library(Path::new("/usr/local/cuda/targets/x86_64-linux/lib/libnvrtc.so.13")),
            p("/usr/local/cuda/targets/x86_64-linux")
        );
        assert_eq!(
            root_of_library(Path::new("/venv/lib/python3.11/site-packages/nvidia/cu13/lib/libnvrtc.so.13")),
            p("/venv/lib/python3.11/site-packages/nvidia/cu13")
        );
        assert_eq!(root_of_library(Path::new("/opt/libnvrtc.so")), None);
    }

    #[test]
    fn the_hint_says_what_to_set() {
        let none = missing_header_hint(None);
        assert!(none.contains("no CUDA toolkit was found") && none.contains("CUDA_PATH"), "{none}");
        let t = Toolkit { root: "/cuda".into(), found_by: "CUDA_HOME", include_dirs: vec!["/cuda/include".into()] };
        let some = missing_header_hint(Some(&t));
        assert!(some.contains("/cuda/include (found by CUDA_HOME)") && some.contains("<cuda/std/type_traits>"), "{some}");
    }
}
