//! `fishtrack simulate`: not built yet.

use clap::Args;

#[derive(Debug, Args)]
pub struct SimulateArgs {
    /// Arguments of this command, once it exists.
    pub args: Vec<String>,
}

pub fn run(_args: SimulateArgs) -> anyhow::Result<()> {
    anyhow::bail!("`fishtrack simulate` is not available in this build yet")
}
