//! The test layout itself: with `autotests = false` cargo silently skips a test file
//! that is not a module here, so a `tests/<name>.rs` written as its own binary, or a
//! `tests/it/<name>.rs` without its `mod` line in `main.rs`, fails this instead.

use std::path::Path;

fn rust_files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "rs"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn every_test_file_is_a_module_of_this_binary() {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let standalone = rust_files(&tests);
    assert!(
        standalone.is_empty(),
        "tests/{{{}}}.rs would never run (autotests = false): move them to tests/it/ and \
         add `mod <name>;` to tests/it/main.rs",
        standalone.join(",")
    );

    let main = std::fs::read_to_string(tests.join("it/main.rs")).expect("read tests/it/main.rs");
    let undeclared: Vec<String> = rust_files(&tests.join("it"))
        .into_iter()
        .filter(|name| name != "main" && !main.lines().any(|l| l.trim() == format!("mod {name};")))
        .collect();
    assert!(
        undeclared.is_empty(),
        "tests/it/{{{}}}.rs would never run: add `mod <name>;` to tests/it/main.rs",
        undeclared.join(",")
    );
}
