//! `fishtrack eval`: not built yet.

use clap::Args;

#[derive(Debug, Args)]
pub struct EvalArgs {
    /// Arguments of this command, once it exists.
    pub args: Vec<String>,
}

pub fn run(_args: EvalArgs) -> anyhow::Result<()> {
    anyhow::bail!("`fishtrack eval` is not available in this build yet")
}
