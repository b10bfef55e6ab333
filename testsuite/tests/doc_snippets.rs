//! Every Rust block of README.md and docs/ compiles: build.rs (`doc_snippets.rs`) writes each
//! document's blocks as a module, included here, so that a block that stops compiling fails this
//! test's build. Nothing runs: the blocks that need a GPU are only compiled. How blocks become code,
//! and how a block states what it takes from elsewhere (`<!-- context: .. -->`) or why it is left
//! out (`<!-- not compiled: .. -->`): `testsuite/doc_snippets.rs`.

include!(concat!(env!("OUT_DIR"), "/doc_snippets/mod.rs"));

/// A second, simpler count of the Rust fences, so that a block the generator missed fails here.
#[test]
fn every_rust_block_is_compiled_or_has_a_reason() {
    let root = std::path::Path::new(ROOT);
    let mut docs = vec![root.join("README.md")];
    let mut dirs = vec![root.join("docs")];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "md") {
                docs.push(p);
            }
        }
    }
    let mut found = Vec::new();
    for p in &docs {
        let rel = p.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
        let mut open = false;
        for (i, l) in std::fs::read_to_string(p).unwrap().lines().enumerate() {
            let t = l.trim_start();
            if !t.starts_with("```") {
                continue;
            }
            if !open && t.trim_start_matches('`').trim().starts_with("rust") {
                found.push((rel.clone(), i + 1));
            }
            open = !open;
        }
    }
    found.sort();
    let mut seen: Vec<(String, usize)> = COMPILED.iter().map(|&(d, l)| (d.to_string(), l)).chain(NOT_COMPILED.iter().map(|&(d, l, _)| (d.to_string(), l))).collect();
    seen.sort();
    assert_eq!(found, seen, "the ```rust fences of the documents (left) and the blocks compiled or left out with a reason (right)");
    for (doc, line, reason) in NOT_COMPILED {
        println!("{doc}:{line}: not compiled: {reason}");
    }
    println!("{} blocks compiled", COMPILED.len());
}

/// The Cargo.toml blocks (`# Cargo.toml` first) ask for cuprum crates that exist, at a version
/// requirement this workspace's version meets (`cuprum = "0.1"` for 0.1.x), or by a path to the
/// crate in a clone of this repository named `cuprum` (`{ path = "../cuprum/build" }`: the form
/// that works until the crates are published), which must exist here.
#[test]
fn cargo_toml_blocks_name_this_version() {
    const PUBLISHED: &[&str] = &["cuprum", "cuprum-abi", "cuprum-compiler", "cuprum-macros", "cuprum-build", "cuprum-runtime", "cuprum-cli"];
    let version = env!("CARGO_PKG_VERSION");
    let root = std::path::Path::new(ROOT);
    let mut checked = 0;
    for doc in ["README.md", "docs/building.md"] {
        let text = std::fs::read_to_string(root.join(doc)).unwrap();
        let mut in_toml = false;
        for (i, l) in text.lines().enumerate() {
            let t = l.trim();
            if t.starts_with("```") {
                in_toml = !in_toml && t == "```toml";
                continue;
            }
            let Some((name, req)) = t.split_once('=').map(|(n, r)| (n.trim(), r.trim().trim_matches('"'))) else { continue };
            if !in_toml || !name.starts_with("cuprum") {
                continue;
            }
            assert!(PUBLISHED.contains(&name), "{doc}:{}: {name} is not a published crate", i + 1);
            if let Some(path) = req.strip_prefix("{ path = \"").and_then(|p| p.split_once('"')).map(|(p, _)| p) {
                // The path from a crate next to the clone: `../cuprum` is the repository's root.
                let inside = path.strip_prefix("../cuprum").unwrap_or_else(|| panic!("{doc}:{}: {name} = {req}: the path must start with ../cuprum (the clone)", i + 1));
                let manifest = std::fs::read_to_string(root.join(format!(".{inside}/Cargo.toml")))
                    .unwrap_or_else(|e| panic!("{doc}:{}: {name} = {req}: no Cargo.toml there: {e}", i + 1));
                assert!(manifest.contains(&format!("name = \"{name}\"")), "{doc}:{}: {path} is not the crate {name}", i + 1);
            } else {
                assert!(version == req || version.starts_with(&format!("{req}.")), "{doc}:{}: {name} = {req:?}, but this is version {version}", i + 1);
            }
            checked += 1;
        }
    }
    assert!(checked >= 3, "the README's and building.md's Cargo.toml blocks name cuprum crates: {checked} found");
}
