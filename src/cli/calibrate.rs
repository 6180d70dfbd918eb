//! `fishtrack calibrate camera|table`: not built yet.

use clap::Subcommand;

#[derive(Debug, Subcommand)]
pub enum CalibrateCommand {
    /// Camera intrinsics from chessboard views.
    Camera,
    /// The table plane from a frame of the empty table.
    Table,
}

pub fn run(_cmd: CalibrateCommand) -> anyhow::Result<()> {
    anyhow::bail!("`fishtrack calibrate` is not available in this build yet")
}
