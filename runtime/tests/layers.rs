//! The runtime's layers as a contract (docs/architecture.md, The runtime's layers): the order in
//! which `src/lib.rs` declares its modules is the order of the layers, and a module may name only
//! itself and the modules declared before it. This test reads every `.rs` file of the crate
//! (`src/` and the kernels of `kernels/` that `src/` includes as modules), collects each path that
//! starts at the crate root (`crate::x::..`, `use crate::{x, y::z}`, in `use` lines and in code),
//! and fails on every one that names a module declared later than the module the file belongs to.
//! A root re-export (`crate::Array`) counts as the module it re-exports from.
//!
//! Exempt, and why:
//! - `tests` and `test_support` (`#[cfg(test)]` in lib.rs): the unit tests of the whole crate and
//!   the random source they share with the integration tests; they exist only in test builds,
//!   above every layer, and any module's tests may use the random source.
//! - `lib.rs` itself: the crate root declares the order and re-exports the public items; its
//!   hidden `__private` and `__workspace` modules are the list of what generated code and the
//!   workspace name, so they name every layer by design.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The modules that may be named from any layer (test-only, above all).
const EXEMPT_TARGETS: &[&str] = &["tests", "test_support"];

/// Files outside `src/` that are modules of the crate (`#[path]`), and the top-level module each
/// belongs to.
const KERNEL_MODULES: &[(&str, &str)] = &[
    ("kernels/elementwise.rs", "ops"),
    ("kernels/math.rs", "ops"),
    ("kernels/logic.rs", "ops"),
    ("kernels/bitwise.rs", "ops"),
    ("kernels/random.rs", "random"),
    ("kernels/reductions.rs", "reduction"),
    ("kernels/gather.rs", "take"),
    ("kernels/scan.rs", "scan"),
    ("kernels/counting.rs", "counting"),
    ("kernels/search.rs", "search"),
    ("kernels/sort.rs", "sort"),
    ("kernels/compact.rs", "nonzero"),
    ("kernels/matmul.rs", "linalg"),
];

#[test]
fn no_module_imports_a_module_declared_after_it_in_lib_rs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib = std::fs::read_to_string(root.join("src/lib.rs")).expect("src/lib.rs");
    let order = module_order(&lib);
    assert!(order.len() > 20, "found only {} `mod` declarations in src/lib.rs: {order:?}", order.len());
    let position: HashMap<&str, usize> = order.iter().enumerate().map(|(i, m)| (m.as_str(), i)).collect();
    let reexports = root_reexports(&lib, &position);

    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    for (rel, _) in KERNEL_MODULES {
        files.push(root.join(rel));
    }
    files.sort();

    let mut checked = 0;
    let mut violations = String::new();
    for path in &files {
        let rel = path.strip_prefix(root).expect("under the crate").to_string_lossy().replace('\\', "/");
        let Some(module) = top_level_module(&rel) else { continue };
        if EXEMPT_TARGETS.contains(&module.as_str()) {
            continue;
        }
        let Some(&from) = position.get(module.as_str()) else {
            panic!("{rel} belongs to module `{module}`, which src/lib.rs does not declare: declare it, or list the file in KERNEL_MODULES");
        };
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{rel}: {e}"));
        for (line, name) in crate_paths(&strip_comments_and_literals(&text)) {
            checked += 1;
            let target = reexports.get(name.as_str()).map_or(name.as_str(), String::as_str);
            if target == module || EXEMPT_TARGETS.contains(&target) {
                continue;
            }
            if let Some(&to) = position.get(target)
                && to > from
            {
                let via = if target == name { String::new() } else { format!(" (through the root re-export `crate::{name}`)") };
                writeln!(
                    violations,
                    "  {rel}:{line}: module `{module}` (position {from} in src/lib.rs) imports `{target}`{via} (position {to}), declared later"
                )
                .unwrap();
            }
        }
    }
    assert!(checked > 200, "only {checked} `crate::` paths found: the scanner is broken");
    assert!(
        violations.is_empty(),
        "imports against the layer order of src/lib.rs (a module may name only itself and the modules declared before it):\n{violations}\
         Fix it by moving the type or function the lower module needs down into it (or into a module below both), by adding the \
         method to the lower module's type in an `impl` block of the higher module (docs/architecture.md, The runtime's layers), \
         or, where the order in src/lib.rs is wrong and no cycle results, by moving the `mod` declaration (and docs/architecture.md's list)."
    );
}

/// The top-level modules in the order `lib.rs` declares them (`mod x;`, `pub mod x;`,
/// `pub(crate) mod x;`), inline modules (`mod x { .. }`, such as `__private`) left out.
fn module_order(lib: &str) -> Vec<String> {
    let code = strip_comments_and_literals(lib);
    let mut order = Vec::new();
    for line in code.lines() {
        let mut words = line.split_whitespace().peekable();
        if words.peek().is_some_and(|w| w.starts_with("pub")) {
            words.next();
        }
        if words.next() != Some("mod") {
            continue;
        }
        if let Some(name) = words.next().and_then(|w| w.strip_suffix(';')) {
            order.push(name.to_string());
        }
    }
    order
}

/// The root re-exports (`pub use array::{Array, Slice};`) of lib.rs outside its inline modules:
/// item name to the declared module it comes from.
fn root_reexports(lib: &str, position: &HashMap<&str, usize>) -> HashMap<String, String> {
    let code = strip_comments_and_literals(lib);
    let mut map = HashMap::new();
    let mut depth = 0usize;
    for line in code.lines() {
        let trimmed = line.trim();
        if depth == 0
            && let Some(rest) = trimmed.strip_prefix("pub use ")
        {
            let module = rest.split("::").next().unwrap_or("").trim();
            if position.contains_key(module) {
                let items = rest.trim_end_matches(';');
                let last = items.rsplit_once("::{").map_or_else(|| items.rsplit("::").next().unwrap_or(""), |(_, l)| l);
                for item in last.split(|c: char| !(c.is_alphanumeric() || c == '_')).filter(|s| !s.is_empty()) {
                    map.insert(item.to_string(), module.to_string());
                }
            }
        }
        depth += line.matches('{').count();
        depth = depth.saturating_sub(line.matches('}').count());
    }
    map
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module of a file (`src/launch/config.rs` -> `launch`, `src/device.rs` ->
/// `device`); `None` for `src/lib.rs`.
fn top_level_module(rel: &str) -> Option<String> {
    if let Some((_, module)) = KERNEL_MODULES.iter().find(|(path, _)| *path == rel) {
        return Some(module.to_string());
    }
    let rest = rel.strip_prefix("src/")?;
    if rest == "lib.rs" {
        return None;
    }
    let first = rest.split('/').next()?;
    Some(first.strip_suffix(".rs").unwrap_or(first).to_string())
}

/// Every `crate::NAME` path of `code` (with its line), and each first segment of a grouped
/// `crate::{a::b, c}`; `$crate::` (a macro's, resolved where it expands) is not this crate's
/// layering.
fn crate_paths(code: &str) -> Vec<(usize, String)> {
    let bytes = code.as_bytes();
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = code[from..].find("crate").map(|i| i + from) {
        from = i + 5;
        let before = i.checked_sub(1).map(|j| bytes[j]);
        if before.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'$') {
            continue;
        }
        let rest = code[from..].trim_start();
        let Some(rest) = rest.strip_prefix("::") else { continue };
        let rest = rest.trim_start();
        let line = code[..i].matches('\n').count() + 1;
        if let Some(group) = rest.strip_prefix('{') {
            for name in top_level_group_items(group) {
                out.push((line, name));
            }
        } else {
            let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            if !name.is_empty() {
                out.push((line, name));
            }
        }
    }
    out
}

/// The first segment of each item of a group `a::{..}, b, c::d }` (the text after its `{`).
fn top_level_group_items(group: &str) -> Vec<String> {
    let mut items = Vec::new();
    let mut depth = 0usize;
    let mut current = String::new();
    for c in group.chars() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    items.push(current);
    items
        .iter()
        .map(|item| item.trim().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>())
        .filter(|name| !name.is_empty() && name != "self")
        .collect()
}

/// `code` with comments (doc comments too), string literals (raw ones too) and character literals
/// blanked, newlines kept so that line numbers stay.
fn strip_comments_and_literals(code: &str) -> String {
    let chars: Vec<char> = code.chars().collect();
    let mut out = String::with_capacity(code.len());
    let blank = |out: &mut String, s: &[char]| out.extend(s.iter().map(|&c| if c == '\n' { '\n' } else { ' ' }));
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        let prev_ident = i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_');
        if c == '/' && next == Some('/') {
            let end = chars[i..].iter().position(|&c| c == '\n').map_or(chars.len(), |p| i + p);
            blank(&mut out, &chars[i..end]);
            i = end;
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            let mut j = i;
            while j < chars.len() {
                if chars[j] == '/' && chars.get(j + 1) == Some(&'*') {
                    depth += 1;
                    j += 2;
                } else if chars[j] == '*' && chars.get(j + 1) == Some(&'/') {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            blank(&mut out, &chars[i..j]);
            i = j;
        } else if (c == 'r' || c == 'b') && !prev_ident && raw_string_start(&chars[i..]).is_some() {
            let (open, hashes) = raw_string_start(&chars[i..]).expect("checked");
            let mut j = i + open;
            while j < chars.len() && !(chars[j] == '"' && chars[j + 1..].iter().take(hashes).filter(|&&c| c == '#').count() == hashes) {
                j += 1;
            }
            let end = (j + 1 + hashes).min(chars.len());
            blank(&mut out, &chars[i..end]);
            i = end;
        } else if c == '"' {
            let mut j = i + 1;
            while j < chars.len() && chars[j] != '"' {
                j += if chars[j] == '\\' { 2 } else { 1 };
            }
            let end = (j + 1).min(chars.len());
            blank(&mut out, &chars[i..end]);
            i = end;
        } else if c == '\'' && char_literal_len(&chars[i..]).is_some() {
            let len = char_literal_len(&chars[i..]).expect("checked");
            blank(&mut out, &chars[i..i + len]);
            i += len;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// The length of the opening of a raw string (`r"`, `r#"`, `br##"`) and its number of `#`s.
fn raw_string_start(s: &[char]) -> Option<(usize, usize)> {
    let mut i = if s.first() == Some(&'b') { 1 } else { 0 };
    if s.get(i) != Some(&'r') {
        return None;
    }
    i += 1;
    let hashes = s[i..].iter().take_while(|&&c| c == '#').count();
    (s.get(i + hashes) == Some(&'"')).then_some((i + hashes + 1, hashes))
}

/// The length of a character literal at the start of `s` (`'a'`, `'\n'`, `'\u{1F600}'`), `None`
/// for a lifetime or label (`'a`).
fn char_literal_len(s: &[char]) -> Option<usize> {
    if s.get(1) == Some(&'\\') {
        return s[2..].iter().position(|&c| c == '\'').map(|p| p + 3);
    }
    (s.get(2) == Some(&'\'')).then_some(3)
}

#[test]
fn the_scanner_finds_grouped_and_inline_paths_and_skips_comments_and_strings() {
    let code = strip_comments_and_literals(
        "use crate::{a::{B, C}, d, self};\n// crate::commented\nlet s = \"crate::in_string\";\nlet r = r#\"crate::raw\"#;\nlet c = '\"'; x = crate::e::f(crate::g);\n$crate::macro_path; my_crate::other;\n/* crate::block /* nested */ crate::still */ 'a: loop {}\n",
    );
    let found: Vec<(usize, String)> = crate_paths(&code);
    let expected: Vec<(usize, String)> =
        vec![(1, "a".into()), (1, "d".into()), (5, "e".into()), (5, "g".into())];
    assert_eq!(found, expected);
    assert_eq!(module_order("mod a;\npub mod b;\npub(crate) mod c;\n// mod d;\npub mod __private {\n}\n"), ["a", "b", "c"]);
    assert_eq!(top_level_module("src/launch/config.rs").as_deref(), Some("launch"));
    assert_eq!(top_level_module("src/device.rs").as_deref(), Some("device"));
    assert_eq!(top_level_module("src/lib.rs"), None);
}
