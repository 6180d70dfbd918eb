//! One flag style across the commands (issue 14 item 5): every command that writes
//! takes `-o/--output` and says its default (or that it is required) in `--help`,
//! the old `--out` of `simulate` and `replay` still works, and `eval`'s usage says
//! which files each mode requires.

use crate::common::run;

/// The commands that write files, as their argument lists.
const WRITERS: &[&[&str]] = &[
    &["analyse"],
    &["simulate"],
    &["replay"],
    &["export"],
    &["summary"],
    &["calibrate", "board"],
    &["calibrate", "camera"],
    &["calibrate", "table"],
];

#[test]
fn every_writer_takes_dash_o_output_and_documents_its_default() {
    for command in WRITERS {
        let mut args = command.to_vec();
        args.push("--help");
        let (code, stdout, stderr) = run(&args);
        assert_eq!(code, 0, "{command:?} --help: {stderr}");
        // The flag's entry: its line and, in long help, the description lines below it.
        let mut lines = stdout.lines().skip_while(|l| !l.contains("-o, --output"));
        let Some(flag_line) = lines.next() else {
            panic!("{command:?} --help has no `-o, --output`:\n{stdout}");
        };
        let entry = std::iter::once(flag_line)
            .chain(lines.take_while(|l| !l.trim_start().starts_with('-')))
            .collect::<Vec<_>>()
            .join(" ");
        let usage = stdout
            .lines()
            .find(|l| l.starts_with("Usage:"))
            .unwrap_or("");
        assert!(
            entry.contains("[default: ") || usage.contains(" --output <"),
            "{command:?}: -o/--output has no default in --help and is not required in the \
             usage:\n{entry}\n{usage}"
        );
        assert!(
            !stdout.contains("--out <"),
            "{command:?} --help still shows --out:\n{stdout}"
        );
    }
}

#[test]
fn old_out_flag_is_still_accepted_by_simulate_and_replay() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("sim");
    let out_s = out.to_str().expect("utf-8 path");
    let (code, _, stderr) = run(&["simulate", "--truth-only", "--out", out_s]);
    assert_eq!(code, 0, "simulate --out: {stderr}");
    assert!(
        out.join("truth.json").is_file(),
        "simulate --out wrote no truth.json"
    );

    // A missing record is bad input (exit 1), reached only once `--out` has parsed
    // (clap refuses an unknown flag with exit 2).
    let missing = dir.path().join("missing.json");
    let (code, _, stderr) = run(&[
        "replay",
        missing.to_str().expect("utf-8 path"),
        "--out",
        dir.path().join("replay").to_str().expect("utf-8 path"),
    ]);
    assert_eq!(code, 1, "replay --out: {stderr}");
    assert!(!stderr.contains("unexpected argument"), "{stderr}");
}

#[test]
fn eval_usage_says_what_each_mode_requires() {
    let (code, _, stderr) = run(&["eval"]);
    assert_eq!(
        code, 2,
        "eval without files must be a usage error: {stderr}"
    );
    for mode in [
        "eval [OPTIONS] <RECORD> <TRUTH>",
        "eval [OPTIONS] --suite <SUITE.json>",
        "eval [OPTIONS] --sweep <N>",
    ] {
        assert!(
            stderr.contains(mode),
            "eval's usage lacks `{mode}`:\n{stderr}"
        );
    }
    assert!(
        !stderr.contains("[RECORD] [TRUTH]"),
        "eval's usage shows its required files as optional:\n{stderr}"
    );
}

/// Commands with more to say than a line show it with `--help` (a subcommand's
/// one-line description had replaced `analyse`'s whole explanation); `-h` stays short.
#[test]
fn long_help_shows_the_whole_explanation() {
    for (command, phrase) in [
        (&["analyse"][..], "--start takes a previous record.json"),
        (&["live"][..], "--resume JOURNAL"),
        (&["eval"][..], "fishtrack eval --sweep N"),
    ] {
        let long = run(&[command, &["--help"]].concat());
        let short = run(&[command, &["-h"]].concat());
        assert_eq!(long.0, 0, "{command:?} --help: {}", long.2);
        assert!(
            long.1.contains(phrase),
            "{command:?} --help lacks {phrase:?}:\n{}",
            long.1
        );
        assert!(
            !short.1.contains(phrase),
            "{command:?} -h is the long help:\n{}",
            short.1
        );
    }
}
