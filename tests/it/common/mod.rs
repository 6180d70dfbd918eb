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

/// As [`run`], killed after `limit`: `None` if it had not ended by then (a hang).
pub fn run_timed(args: &[&str], limit: std::time::Duration) -> Option<(i32, String, String)> {
    use std::io::Read;
    let mut child = Command::new(env!("CARGO_BIN_EXE_fishtrack"))
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run fishtrack");
    // Drained on threads: a child that fills a pipe would otherwise never end.
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_string(&mut text);
            }
            text
        })
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let began = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait for fishtrack") {
            let (out, err) = (
                out.join().unwrap_or_default(),
                err.join().unwrap_or_default(),
            );
            return Some((status.code().unwrap_or(-1), out, err));
        }
        if began.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

fn output(cmd: &mut Command) -> (i32, String, String) {
    let out = cmd.output().expect("run fishtrack");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
