//! The defaults that docs/environment.md's "Build time" table states are the build crate's own
//! (issue 34, item 8: the table said `CUPRUM_NVCC_COMPRESS` defaults to `size` while the code
//! and docs/building.md said `zstd`). Each row's default column is read from the Markdown and
//! compared with the constant the build uses.

use cuprum_build::env;

/// The "default" column of the Build time table's row for `variable`, without its backticks.
fn documented_default(variable: &str) -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/environment.md");
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"));
    let section = text.split("## Build time").nth(1).expect("docs/environment.md has a \"Build time\" section");
    let row = section
        .lines()
        .find(|l| l.starts_with(&format!("| `{variable}` |")))
        .unwrap_or_else(|| panic!("docs/environment.md's Build time table has no row for {variable}"));
    let cells: Vec<&str> = row.split('|').map(str::trim).collect();
    cells[2].trim_matches('`').to_string()
}

#[test]
fn the_build_time_table_states_the_code_s_defaults() {
    let rows = [
        (env::NVCC_COMPRESS, env::COMPRESS_MODES[0].to_string()),
        (env::NUM_BUILD_JOBS, env::DEFAULT_BUILD_JOBS.to_string()),
        (env::NUM_NVCC_THREADS, env::DEFAULT_NVCC_THREADS.to_string()),
        (env::LINE_INFO, if env::DEFAULT_LINE_INFO { "1" } else { "0" }.to_string()),
    ];
    let wrong: Vec<String> = rows
        .iter()
        .filter_map(|(var, code)| {
            let doc = documented_default(var);
            (doc != *code).then(|| format!("{var}: docs/environment.md says `{doc}`, the code's default is `{code}`"))
        })
        .collect();
    assert!(wrong.is_empty(), "the documented defaults contradict the code:\n{}", wrong.join("\n"));
}
