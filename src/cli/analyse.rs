//! `fishtrack analyse`: not built yet.

use clap::Args;

#[derive(Debug, Args)]
pub struct AnalyseArgs {
    /// Arguments of this command, once it exists.
    pub args: Vec<String>,
}

pub fn run(_args: AnalyseArgs) -> anyhow::Result<()> {
    anyhow::bail!("`fishtrack analyse` is not available in this build yet")
}
