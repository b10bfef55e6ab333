//! The module order of `cuprum-compiler` and `cuprum-abi` is a contract: each crate's `lib.rs`
//! declares its modules bottom-up, and a module may import (`use crate::X`, or a `crate::X::..`
//! path) only modules declared before it. An import of a module declared later fails here with
//! its file, line and both modules, so a two-file circle cannot come back.
//!
//! Comments (doc links included) are not imports; the crate root (`lib.rs`) may name every module.

use std::path::{Path, PathBuf};

/// The top-level modules `lib.rs` declares (`mod x;`, `pub mod x;`, `pub(crate) mod x;`), in order.
fn declared_modules(lib: &str) -> Vec<String> {
    lib.lines()
        .filter_map(|line| {
            let line = line.trim();
            let rest = ["pub mod ", "pub(crate) mod ", "mod "].iter().find_map(|p| line.strip_prefix(p))?;
            let name = rest.strip_suffix(';')?;
            name.chars().all(|c| c.is_alphanumeric() || c == '_').then(|| name.to_string())
        })
        .collect()
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The text of a file with its comments blanked (line numbers kept): a line comment from its
/// `//` (which follows whitespace or starts the line) to the end of the line.
fn code_of(text: &str) -> String {
    text.lines()
        .map(|line| {
            let cut = line.match_indices("//").find(|(i, _)| *i == 0 || line[..*i].ends_with(char::is_whitespace));
            match cut {
                Some((i, _)) => &line[..i],
                None => line,
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The first path segment of each path in a `use` tree's text: `a::b` -> `a`; `{a, b::{c}}` ->
/// `a`, `b`.
fn first_segments(tree: &str) -> Vec<String> {
    let tree = tree.trim();
    if let Some(inner) = tree.strip_prefix('{') {
        let inner = inner.strip_suffix('}').unwrap_or(inner);
        let (mut depth, mut start, mut out) = (0, 0, Vec::new());
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    out.extend(first_segments(&inner[start..i]));
                    start = i + 1;
                }
                _ => {}
            }
        }
        out.extend(first_segments(&inner[start..]));
        return out;
    }
    let name: String = tree.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
    if name.is_empty() {
        Vec::new()
    } else {
        vec![name]
    }
}

/// Each `crate::` path of `code` (not `$crate::`): its line (1-based) and the modules it names
/// first (several for `crate::{a, b}`).
fn crate_paths(code: &str) -> Vec<(usize, Vec<String>)> {
    let mut out = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| c == '$' || c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &code[at + "crate::".len()..];
        let tree = if rest.starts_with('{') {
            let mut depth = 0;
            let end = rest
                .char_indices()
                .find(|&(_, c)| {
                    match c {
                        '{' => depth += 1,
                        '}' => depth -= 1,
                        _ => {}
                    }
                    depth == 0
                })
                .map_or(rest.len(), |(i, _)| i + 1);
            &rest[..end]
        } else {
            rest
        };
        let line = code[..at].matches('\n').count() + 1;
        out.push((line, first_segments(tree)));
    }
    out
}

/// Every import in `crate_dir/src` of a module that `lib.rs` declares after the importing one.
fn upward_imports(crate_dir: &Path) -> Vec<String> {
    let src = crate_dir.join("src");
    let lib = std::fs::read_to_string(src.join("lib.rs")).expect("the crate's lib.rs");
    let order = declared_modules(&lib);
    assert!(order.len() > 3, "found only {order:?} as the modules of {}/lib.rs", src.display());
    let rank = |m: &str| order.iter().position(|o| o == m);
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut found = Vec::new();
    for file in files {
        let rel = file.strip_prefix(&src).unwrap();
        let first = rel.components().next().unwrap().as_os_str().to_string_lossy();
        let module = first.strip_suffix(".rs").unwrap_or(&first).to_string();
        let Some(own) = rank(&module) else { continue }; // lib.rs, or a file of no declared module
        let text = std::fs::read_to_string(&file).unwrap();
        for (line, targets) in crate_paths(&code_of(&text)) {
            for target in targets {
                if let Some(theirs) = rank(&target).filter(|&r| r > own) {
                    found.push(format!(
                        "{}:{line}: module `{module}` (#{} in lib.rs) imports `crate::{target}` (#{}), declared after it",
                        file.strip_prefix(crate_dir.parent().unwrap()).unwrap_or(&file).display(),
                        own + 1,
                        theirs + 1,
                    ));
                }
            }
        }
    }
    found
}

fn check(crate_dir: &Path) {
    let found = upward_imports(crate_dir);
    assert!(
        found.is_empty(),
        "{} import(s) against the module order of {}/src/lib.rs (a module may use only the modules \
         declared before it: move the shared item down, or the module up, and keep lib.rs's order \
         the real layering):\n{}",
        found.len(),
        crate_dir.display(),
        found.join("\n")
    );
}

#[test]
fn compiler_modules_import_only_modules_below_them() {
    check(Path::new(env!("CARGO_MANIFEST_DIR")));
}

#[test]
fn abi_modules_import_only_modules_below_them() {
    check(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../abi"));
}

#[test]
fn the_checker_sees_grouped_and_nested_paths_and_skips_comments_and_dollar_crate() {
    let code = code_of(
        "use crate::{a, b::{c, d}};\n// use crate::hidden;\nlet x = crate::e::f(); // crate::g\n$crate::h!();\nuse crate::{\n    i,\n};",
    );
    let seen: Vec<(usize, Vec<String>)> = crate_paths(&code);
    let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(seen, vec![(1, names(&["a", "b"])), (3, names(&["e"])), (5, names(&["i"]))]);
    assert_eq!(declared_modules("pub mod a;\n#[doc(hidden)]\npub(crate) mod b;\nmod c;\nmod d {\n}"), names(&["a", "b", "c"]));
}
