//! Running the built `fishtrack` binary from the integration tests (a test module
//! that needs it says `use crate::common::run;`).

use std::path::Path;
use std::process::Command;

/// Runs `fishtrack ARGS`: exit code (-1 if it was killed), stdout, stderr.
pub fn run(args: &[&str]) -> (i32, String, String) {
    output(Command::new(env!("CARGO_BIN_EXE_fishtrack")).args(args))
}

/// As [`run`], in the folder `dir`.
pub fn run_in(args: &[&str], dir: &Path) -> (i32, String, String) {
    output(
        Command::new(env!("CARGO_BIN_EXE_fishtrack"))
            .args(args)
            .current_dir(dir),
    )
}

/// Runs `fishtrack ARGS` and checks that it failed as a user should see it: exit
/// code 1, exactly one line on stderr, containing every `needle`, and no panic.
pub fn assert_fails_with(args: &[&str], needles: &[&str]) {
    let (code, _, stderr) = run(args);
    assert_eq!(code, 1, "{args:?}: {stderr}");
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{args:?}: not one line: {stderr}");
    for n in needles {
        assert!(lines[0].contains(n), "{args:?}: {:?} lacks {n:?}", lines[0]);
    }
    assert!(!stderr.contains("panicked"), "{stderr}");
}

fn output(cmd: &mut Command) -> (i32, String, String) {
    let out = cmd.output().expect("run fishtrack");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
