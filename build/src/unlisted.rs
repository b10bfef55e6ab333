//! Kernel files a build does not precompile: the package's `src/` (and the folders given with
//! [`crate::Kernels::scan`]) searched for files with kernels that no builder of this build script
//! lists, each named in a warning with the line that would add it (issue 34, item 6: such a
//! kernel builds silently and is compiled by NVRTC at its first use on a GPU).
//!
//! The search is textual and cheap: a file has kernels when one of its lines starts with a
//! cuprum attribute (`#[elementwise`, `#[reduction`, `#[rawkernel`, `#[fuse`, `#[device`, also
//! written `#[cuprum::...`); comments and strings that merely mention one do not start a line
//! with it.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::Error;
use crate::outputs;

/// The attributes that mark a kernel file.
const ATTRIBUTES: &[&str] = &["elementwise", "reduction", "rawkernel", "fuse", "device"];

/// Every file listed by a builder of this process (a build script may run several, as the
/// workspace's do for arch-specific targets): a file listed by one is not reported by another.
static LISTED: Mutex<Option<HashSet<PathBuf>>> = Mutex::new(None);

/// The same file however it was named (relative to the package root, or through `..`).
fn key(path: &Path) -> PathBuf {
    path.canonicalize()
        .or_else(|_| std::path::absolute(path))
        .unwrap_or_else(|_| path.to_path_buf())
}

/// Records `files` as listed by a builder of this process (or marked as not precompiled).
pub(crate) fn record_listed<'a>(files: impl IntoIterator<Item = &'a PathBuf>) {
    let mut listed = LISTED.lock().unwrap_or_else(|e| e.into_inner());
    let listed = listed.get_or_insert_with(HashSet::new);
    listed.extend(files.into_iter().map(|f| key(f)));
}

/// Whether `text` has a line that starts with one of cuprum's attributes.
pub(crate) fn has_kernels(text: &str) -> bool {
    text.lines().any(|line| {
        let Some(rest) = line.trim_start().strip_prefix("#[") else {
            return false;
        };
        let rest = rest.trim_start();
        let rest = rest.strip_prefix("cuprum::").unwrap_or(rest);
        ATTRIBUTES.iter().any(|a| {
            rest.strip_prefix(a).is_some_and(|after| {
                after.starts_with([']', '(']) || after.trim_start().starts_with([']', '('])
            })
        })
    })
}

/// The `cargo:warning` directives for the kernel files under `dirs` (relative to `root`, the
/// package root) that no builder of this process lists (nor marks as not precompiled), one per
/// file, naming it as `Kernels::file` takes it. A folder that does not exist is skipped.
pub(crate) fn warnings(root: &Path, dirs: &[PathBuf]) -> Result<Vec<String>, Error> {
    let listed = LISTED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone()
        .unwrap_or_default();
    let mut out = Vec::new();
    for dir in dirs {
        let dir = root.join(dir);
        if !dir.is_dir() {
            continue;
        }
        for file in outputs::rust_files(&dir)? {
            if listed.contains(&key(&file)) {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&file) else {
                continue;
            };
            if !has_kernels(&text) {
                continue;
            }
            let shown = file
                .strip_prefix(root)
                .unwrap_or(&file)
                .display()
                .to_string();
            out.push(format!(
                "cargo:warning=cuprum-build: {shown} has kernels that build.rs does not precompile (NVRTC compiles them at \
                 their first use on a GPU): add `.file({shown:?})` to the cuprum_build::Kernels of build.rs, or \
                 `.not_precompiled({shown:?})` if that is meant"
            ));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_attributes_at_the_start_of_a_line_mark_a_kernel_file() {
        assert!(has_kernels(
            "use cuprum::prelude::*;\n#[elementwise]\npub fn f(x: f32) -> f32 { x }\n"
        ));
        assert!(has_kernels(
            "    #[reduction(identity = 0.0, reduce = |a, b| a + b)]\n"
        ));
        assert!(has_kernels("#[cuprum::rawkernel]\n"));
        assert!(has_kernels("#[ device ]\n"));
        assert!(has_kernels("#[fuse]\n"));
        assert!(!has_kernels("/// #[elementwise]\n"));
        assert!(!has_kernels("let s = \"#[elementwise]\";\n"));
        assert!(!has_kernels(
            "#[derive(Debug)]\n#[devices]\n#[elementwise_helper]\n"
        ));
        assert!(!has_kernels("fn main() {}\n"));
    }
}
