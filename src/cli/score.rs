//! `fishtrack score`: not built yet.

use clap::Args;

#[derive(Debug, Args)]
pub struct ScoreArgs {
    /// Arguments of this command, once it exists.
    pub args: Vec<String>,
}

pub fn run(_args: ScoreArgs) -> anyhow::Result<()> {
    anyhow::bail!("`fishtrack score` is not available in this build yet")
}
