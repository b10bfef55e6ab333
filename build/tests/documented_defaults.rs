//! The defaults that docs/environment.md's "Build time" table states are the build crate's own
//! (issue 34, item 8: the table said `CUPRUM_NVCC_COMPRESS` defaults to `size` while the code
//! and docs/building.md said `zstd`). Each row's default column is read from the Markdown and
//! compared with the constant the build uses.

use cuprum_build::{env, targets};

/// The "default" column of the Build time table's row for `variable`, without its backticks.
fn documented_default(variable: &str) -> String {
    default_cell(variable).trim_matches('`').to_string()
}

/// The first code span (between backticks) of the "default" column of `variable`'s row.
fn documented_code(variable: &str) -> String {
    let cell = default_cell(variable);
    cell.split('`').nth(1).unwrap_or_else(|| panic!("{variable}'s default states no `code`: {cell}")).to_string()
}

/// The "default" column of the Build time table's row for `variable`.
fn default_cell(variable: &str) -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/environment.md");
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"));
    let section = text.split("## Build time").nth(1).expect("docs/environment.md has a \"Build time\" section");
    let row = section
        .lines()
        .find(|l| l.starts_with(&format!("| `{variable}` |")))
        .unwrap_or_else(|| panic!("docs/environment.md's Build time table has no row for {variable}"));
    let cells: Vec<&str> = row.split('|').map(str::trim).collect();
    cells[2].to_string()
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

/// The default targets depend on the nvcc: the table states them for nvcc 13.0, whose
/// `--list-gpu-code` and `--list-gpu-arch` list these.
#[test]
fn the_build_time_table_states_the_default_targets_of_nvcc_13() {
    let nvcc13 = [75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121];
    let code = targets::show(&targets::default_list(&nvcc13, &nvcc13).unwrap());
    assert_eq!(documented_code(env::GENERATE_CODE), code, "docs/environment.md, the row of {}", env::GENERATE_CODE);
    // docs/building.md's table of knobs states the same.
    let building = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/building.md")).unwrap();
    let row = building.lines().find(|l| l.starts_with("| `CUPY_NVCC_GENERATE_CODE` |")).expect("docs/building.md's row");
    assert!(row.contains(&format!("with nvcc 13, `{code}`")), "docs/building.md says: {row}");
}
