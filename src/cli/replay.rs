//! `fishtrack replay`: not built yet.

use clap::Args;

#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// Arguments of this command, once it exists.
    pub args: Vec<String>,
}

pub fn run(_args: ReplayArgs) -> anyhow::Result<()> {
    anyhow::bail!("`fishtrack replay` is not available in this build yet")
}
