//! Makes a long Motion-JPEG video out of a short one, to measure `analyse` on a
//! match of realistic length (speed, and that memory stays flat): the short
//! video's frames are stored forth and back (0..n-1, n-2..1, ...) until the
//! wanted length, so the table never jumps, and no frame is decoded or encoded.
//! Pure: reads the AVI's chunks itself, writes with `replay::avi`.
//!
//! cargo run --release --example long_mjpg -- IN.avi OUT.avi [MINUTES] [FPS]
//! (defaults: 10 minutes at 30 frames/s)

use fishtrack::replay::avi::MjpegAviWriter;
use std::io::{BufWriter, Read, Seek, SeekFrom};

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// The video stream's JPEG frames of an AVI file, in order (chunks `NNdc`/`NNdb`
/// in the `movi` lists of every RIFF part), and the frame size from `avih`.
fn read_frames(path: &str) -> Result<(u32, u32, Vec<Vec<u8>>), String> {
    let mut file = std::fs::File::open(path).map_err(|e| format!("{path}: {e}"))?;
    let mut all = Vec::new();
    file.read_to_end(&mut all)
        .map_err(|e| format!("{path}: {e}"))?;
    let (mut w, mut h, mut frames) = (0, 0, Vec::new());
    // Walks chunks; lists (RIFF, LIST) are entered, everything else skipped.
    let mut at = 0usize;
    while at + 8 <= all.len() {
        let id = &all[at..at + 4];
        let size = u32_at(&all, at + 4) as usize;
        if id == b"RIFF" || id == b"LIST" {
            at += 12;
            continue;
        }
        let body = at + 8..(at + 8 + size).min(all.len());
        if id == b"avih" && size >= 40 {
            w = u32_at(&all, at + 8 + 32);
            h = u32_at(&all, at + 8 + 36);
        } else if (id[2..] == *b"dc" || id[2..] == *b"db") && size > 0 {
            frames.push(all[body].to_vec());
        }
        at += 8 + size + (size & 1);
    }
    if frames.is_empty() || w == 0 || h == 0 {
        return Err(format!("{path}: no Motion-JPEG frames found"));
    }
    Ok((w, h, frames))
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 2 {
        return Err("usage: long_mjpg IN.avi OUT.avi [MINUTES] [FPS]".into());
    }
    let minutes: f64 = args
        .get(2)
        .map_or(Ok(10.0), |m| m.parse())
        .map_err(|e| format!("MINUTES: {e}"))?;
    let fps: f64 = args
        .get(3)
        .map_or(Ok(30.0), |m| m.parse())
        .map_err(|e| format!("FPS: {e}"))?;
    let (w, h, frames) = read_frames(&args[0])?;
    let total = (minutes * 60.0 * fps).round() as usize;
    let out = std::fs::File::create(&args[1]).map_err(|e| format!("{}: {e}", args[1]))?;
    let mut writer =
        MjpegAviWriter::create(BufWriter::new(out), w, h, fps).map_err(|e| e.to_string())?;
    // Forth and back: period 2n-2 (a single frame repeats itself).
    let n = frames.len();
    let period = (2 * n).saturating_sub(2).max(1);
    for k in 0..total {
        let i = k % period;
        let i = if i < n { i } else { period - i };
        writer.write_frame(&frames[i]).map_err(|e| e.to_string())?;
    }
    let mut out = writer.finish().map_err(|e| e.to_string())?;
    let bytes = out.seek(SeekFrom::End(0)).map_err(|e| e.to_string())?;
    eprintln!(
        "{}: {total} frames of {w}x{h} at {fps} frames/s ({:.1} min, {:.0} MB), from the {n} frames of {}",
        args[1],
        total as f64 / fps / 60.0,
        bytes as f64 / 1e6,
        args[0]
    );
    Ok(())
}
