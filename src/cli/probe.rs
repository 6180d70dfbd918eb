//! `fishtrack probe`: decodes every frame of a video and says what it holds (frames,
//! size, frame rate) and how fast it decodes. It checks a recording before a long
//! analysis (a truncated file shows here), and it is the yardstick `analyse`'s speed
//! is measured against (`scripts/bench-analyse`). Uses: vision (capture).

use clap::Args;
use std::path::PathBuf;

use crate::vision::capture::FrameSource;
use opencv::prelude::*;

#[derive(Debug, Args)]
pub struct ProbeArgs {
    /// The video to decode.
    pub video: PathBuf,
    /// Print one JSON object instead of a sentence.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: ProbeArgs) -> anyhow::Result<()> {
    let spec = args.video.to_string_lossy().to_string();
    let began = std::time::Instant::now();
    // The capture error names the file already.
    let mut source = FrameSource::open(&spec)?;
    let claimed = source.len();
    let fps = source.fps();
    let bar = super::progress_bar(claimed.unwrap_or(0), "decoding");
    let mut frames = 0u64;
    let mut size = None;
    let mut stopped = None;
    loop {
        match source.next_frame() {
            Ok(Some(f)) => {
                if size.is_none() {
                    size = Some((f.image.cols(), f.image.rows()));
                }
                frames += 1;
                bar.inc(1);
            }
            Ok(None) => break,
            Err(e) => {
                stopped = Some(e.to_string());
                break;
            }
        }
    }
    bar.finish_and_clear();
    let seconds = began.elapsed().as_secs_f64();
    if frames == 0 {
        anyhow::bail!(
            "{}: no frame could be decoded{}",
            args.video.display(),
            stopped.map(|s| format!(" ({s})")).unwrap_or_default()
        );
    }
    let (w, h) = size.unwrap_or((0, 0));
    let rate = frames as f64 / seconds.max(1e-9);
    if args.json {
        println!(
            "{}",
            serde_json::json!({
                "video": spec,
                "frames": frames,
                "frames_claimed": claimed,
                "width": w,
                "height": h,
                "fps": fps,
                "decode_seconds": seconds,
                "decode_frames_per_s": rate,
                "stopped": stopped,
            })
        );
    } else {
        println!(
            "{}: {frames} frames of {w}x{h}{}, decoded in {seconds:.2} s ({rate:.0} frames/s)",
            args.video.display(),
            fps.map(|f| format!(" at {f:.2} fps")).unwrap_or_default()
        );
        if let Some(n) = claimed.filter(|n| *n != frames) {
            println!("  the container claims {n} frames");
        }
        if let Some(why) = stopped {
            println!("  decoding stopped early: {why}");
        }
    }
    Ok(())
}
