//! The `fishtrack` binary: parses the command line and reports errors in one line.

use std::process::ExitCode;

fn main() -> ExitCode {
    fishtrack::cli::main()
}
