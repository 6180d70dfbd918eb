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

fn output(cmd: &mut Command) -> (i32, String, String) {
    let out = cmd.output().expect("run fishtrack");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
