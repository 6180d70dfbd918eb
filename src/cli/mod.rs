//! The command line (clap): one file per subcommand, each turning raw arguments into
//! calls on the library. The only place that uses `anyhow`: every error is reported
//! once, here, as one line on stderr with exit code 1. A command that did its work
//! but warned of something that may change a score (`analyse`: damaged frames in a
//! shot, a video of several that failed; `summary`: a record that could not be read)
//! exits with 3.

mod amend;
mod analyse;
mod calibrate;
mod eval;
mod export;
mod live;
mod probe;
mod replay;
mod score;
mod simulate;
mod summary;

use crate::vision::decoder_log::DecoderLog;
use clap::{Parser, Subcommand};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// fishtrack: watches a table of Fish (Рыбы) through a camera and scores the match.
#[derive(Debug, Parser)]
#[command(name = "fishtrack", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print a chessboard, calibrate the camera (chessboard views) or the table plane.
    #[command(subcommand)]
    Calibrate(calibrate::CalibrateCommand),
    /// Detect, track and score a recorded match; writes record.json.
    #[command(long_about = analyse::LONG_ABOUT)]
    Analyse(analyse::AnalyseArgs),
    /// Score a match while it is played (camera, stream or file): events as JSON lines, a journal, a record.
    #[command(long_about = live::LONG_ABOUT)]
    Live(live::LiveArgs),
    /// Re-run the rules on a record.json and print the score table, shot by shot.
    Score(score::ScoreArgs),
    /// Correct a record's call (lost item, exit, coin in a hole, mover, violation); re-scores.
    Amend(amend::AmendArgs),
    /// Measure a record's accuracy against the simulator's truth.json.
    #[command(long_about = eval::LONG_ABOUT)]
    Eval(eval::EvalArgs),
    /// Simulate a scenario: physics, rendered video and ground truth.
    Simulate(simulate::SimulateArgs),
    /// Annotated video, shot diagrams and an HTML report from a record.
    Replay(replay::ReplayArgs),
    /// Decode every frame of a video: frames, size, frame rate, decoding speed.
    Probe(probe::ProbeArgs),
    /// A record's tracks, shots and events as CSV, and its tracks in the MOTChallenge format.
    Export(export::ExportArgs),
    /// Standings and per-player figures over a folder of records (CSV, HTML, a table).
    Summary(summary::SummaryArgs),
}

/// How a command that did its work ended (ordered: the worse is the greater).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Done {
    /// Exit code 0.
    Clean,
    /// Done, with a warning on stderr that may change a score: exit code 3.
    Warned,
}

/// Parses the arguments, runs the command, and maps the outcome to an exit code.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let analysing = matches!(cli.command, Command::Analyse(_) | Command::Live(_));
    // `analyse` counts FFmpeg's error lines to tell frames decoded with errors; the
    // guard lives until the command is done (also when it unwinds from a panic).
    let decoder_log = (analysing && crate::vision::decoder_log::SUPPORTED).then(DecoderLog::start);
    quiet_video_backends(decoder_log.as_ref().is_some_and(DecoderLog::is_counting));
    let outcome = run(cli);
    drop(decoder_log);
    match outcome {
        Ok(Done::Clean) => ExitCode::SUCCESS,
        Ok(Done::Warned) => ExitCode::from(3),
        Err(err) => {
            if is_broken_pipe(&err) {
                return ExitCode::SUCCESS;
            }
            eprintln!("fishtrack: error: {}", one_line(&err));
            ExitCode::from(1)
        }
    }
}

/// How a rule between rows of [`columns`] is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rule {
    /// One unbroken line across the table.
    Whole,
    /// A dash line under each column, the gaps left blank.
    PerColumn,
}

/// Rows as aligned text columns (those in `left` left-aligned, the others right),
/// with a rule before the rows listed in `rules` (`rows.len()`: after the last).
pub(crate) fn columns(rows: &[Vec<String>], left: &[usize], rules: &[usize], rule: Rule) -> String {
    let widths = column_widths(rows);
    let count = widths.len();
    let line_rule = match rule {
        Rule::Whole => "-".repeat(widths.iter().sum::<usize>() + 2 * count.saturating_sub(1)),
        Rule::PerColumn => widths
            .iter()
            .map(|w| "-".repeat(*w))
            .collect::<Vec<_>>()
            .join("  "),
    };
    let mut out = String::new();
    for (i, row) in rows.iter().enumerate() {
        if rules.contains(&i) {
            out.push_str(&line_rule);
            out.push('\n');
        }
        let line: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(c, s)| {
                let pad = widths[c].saturating_sub(s.chars().count());
                if left.contains(&c) {
                    format!("{s}{}", " ".repeat(pad))
                } else {
                    format!("{}{s}", " ".repeat(pad))
                }
            })
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    if rules.contains(&rows.len()) {
        out.push_str(&line_rule);
        out.push('\n');
    }
    out
}

/// The widest cell of each column, in characters.
fn column_widths(rows: &[Vec<String>]) -> Vec<usize> {
    let count = rows.iter().map(Vec::len).max().unwrap_or(0);
    (0..count)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect()
}

/// Narrows `rows` (a header and its rows, for [`columns`]) to at most `max_width`
/// characters a line: takes a character at a time from the widest column of the first
/// tier that is still wider than `min_width`, then of the next tier, and cuts every cell
/// longer than its column with "…". Columns in no tier keep their width.
pub(crate) fn fit_columns(
    rows: &mut [Vec<String>],
    max_width: usize,
    tiers: &[&[usize]],
    min_width: usize,
) {
    let mut widths = column_widths(rows);
    let count = widths.len();
    let mut total = widths.iter().sum::<usize>() + 2 * count.saturating_sub(1);
    for tier in tiers {
        while total > max_width {
            let widest = tier
                .iter()
                .copied()
                .filter(|&c| widths.get(c).is_some_and(|&w| w > min_width))
                .max_by_key(|&c| widths[c]);
            let Some(c) = widest else { break };
            widths[c] -= 1;
            total -= 1;
        }
    }
    for row in rows.iter_mut() {
        for (cell, &width) in row.iter_mut().zip(&widths) {
            *cell = cut(cell, width);
        }
    }
}

/// `text` cut to `width` characters, its last one "…" when anything was cut.
pub(crate) fn cut(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let mut out: String = text.chars().take(width.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// An error and its causes as one line joined by ": ". A cause whose text its
/// error already quotes (`"cannot read {path}: {source}"`) is not said twice. A cause
/// of several lines (OpenCV's assertions: the message, then the failed condition) is
/// folded into one.
pub(crate) fn one_line(err: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in err.chain() {
        let mut text = cause.to_string();
        if text.contains(['\n', '\r']) {
            text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        }
        if line.contains(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line
}

/// OpenCV's GStreamer backend and its logger print pages of warnings on a file they
/// cannot read, burying our one-line error; FFmpeg reads every format we write. FFmpeg's
/// decoders print a line per damaged frame (`[mpeg4 @ 0x…] ac-tex damaged at 4 24`).
/// Commands other than `analyse` silence them: OpenCV 4.6 passes
/// `OPENCV_FFMPEG_LOGLEVEL` to `av_log_set_level` (-8 is `AV_LOG_QUIET`). A user who
/// sets these variables keeps their own values.
///
/// While `decoder_log` counts (`analyse`), FFmpeg must print its errors, through its
/// own logger, to C's `stderr`: with `OPENCV_FFMPEG_LOGLEVEL` or `OPENCV_FFMPEG_DEBUG`
/// set, OpenCV 4.6 installs a logger of its own that prints to *stdout*
/// (`[OPENCV:FFMPEG:16] …`, into the scoreboard and uncounted); without them it sets
/// `AV_LOG_ERROR` (16) and keeps FFmpeg's. So both are taken out, a user's values
/// too: a frame decoded with errors must not pass unsaid. No colour escapes either
/// (FFmpeg adds them when fd 2 is a terminal).
fn quiet_video_backends(decoder_log: bool) {
    let mut defaults = vec![
        ("OPENCV_VIDEOIO_PRIORITY_GSTREAMER", "0"),
        ("OPENCV_VIDEOIO_PRIORITY_CV_IMAGES", "0"),
        ("OPENCV_LOG_LEVEL", "FATAL"),
    ];
    if decoder_log {
        std::env::remove_var("OPENCV_FFMPEG_LOGLEVEL");
        std::env::remove_var("OPENCV_FFMPEG_DEBUG");
        defaults.push(("AV_LOG_FORCE_NOCOLOR", "1"));
    } else {
        defaults.push(("OPENCV_FFMPEG_LOGLEVEL", "-8"));
    }
    for (key, value) in defaults {
        if std::env::var_os(key).is_none() {
            std::env::set_var(key, value);
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<Done> {
    match cli.command {
        Command::Calibrate(c) => calibrate::run(c),
        Command::Analyse(a) => return analyse::run(a),
        Command::Live(a) => return live::run(a),
        Command::Summary(a) => return summary::run(a),
        Command::Score(a) => score::run(a),
        Command::Amend(a) => amend::run(a),
        Command::Eval(a) => eval::run(a),
        Command::Simulate(a) => simulate::run(a),
        Command::Replay(a) => replay::run(a),
        Command::Probe(a) => probe::run(a),
        Command::Export(a) => export::run(a),
    }
    .map(|()| Done::Clean)
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// The folder of the crate's bundled defaults (`calibration/`, `samples/`): next to the
/// current directory when run from a checkout, else next to the source tree it was built from.
pub fn bundled_dir(name: &str) -> PathBuf {
    let here = Path::new(name);
    if here.exists() {
        return here.to_path_buf();
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join(name)
}

/// A progress bar on stderr over `len` steps (0: not known, so no bar and no ETA).
/// indicatif's stderr target hides itself when stderr is not a terminal (or `TERM` is
/// unset or `dumb`), so a pipe or a log file gets no escape codes.
pub fn progress_bar(len: u64, what: &str) -> indicatif::ProgressBar {
    let known = (len > 0).then_some(len);
    let bar =
        indicatif::ProgressBar::with_draw_target(known, indicatif::ProgressDrawTarget::stderr());
    let template = if known.is_some() {
        "{msg:>12} [{bar:40}] {pos}/{len} ({rate}, {honest_eta})"
    } else {
        "{msg:>12} {pos} ({rate})"
    };
    if let Ok(style) = indicatif::ProgressStyle::with_template(template) {
        let style = style
            .with_key(
                "rate",
                |state: &indicatif::ProgressState, out: &mut dyn std::fmt::Write| {
                    // indicatif's `{per_sec}` prints four decimals ("73.8932/s").
                    let _ = write!(out, "{:.1}/s", state.per_sec());
                },
            )
            .with_key(
                "honest_eta",
                |state: &indicatif::ProgressState, out: &mut dyn std::fmt::Write| {
                    let eta = state
                        .len()
                        .and_then(|len| honest_eta(state.elapsed(), state.pos(), len));
                    let _ = match eta {
                        Some(left) => write!(out, "eta {:#}", indicatif::HumanDuration(left)),
                        None => write!(out, "eta …"),
                    };
                },
            );
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(what.to_string());
    bar
}

/// Share of the work done before an ETA is shown.
pub const ETA_AFTER_FRACTION: f64 = 0.05;
/// Time run before an ETA is shown.
pub const ETA_AFTER: std::time::Duration = std::time::Duration::from_secs(3);

/// The time left for `len - pos` steps at the average rate so far, or `None` while too
/// little is done to say: before [`ETA_AFTER_FRACTION`] of the work *and* [`ETA_AFTER`].
/// The first steps carry the start-up (opening the video, building the detector) and a
/// few steps or a fraction of a second are not a rate: indicatif's own `{eta}`, a
/// recent-rate estimate from the first ticks, once said "eta 41m" of an 18-second job.
/// The average over the whole run so far is steadier than a recent window where work
/// per step swings (a still table is skipped, a shot is looked at in full).
pub fn honest_eta(elapsed: std::time::Duration, pos: u64, len: u64) -> Option<std::time::Duration> {
    if len == 0 || pos == 0 || elapsed < ETA_AFTER {
        return None;
    }
    let done = pos.min(len) as f64 / len as f64;
    if done < ETA_AFTER_FRACTION {
        return None;
    }
    let left = len.saturating_sub(pos) as f64;
    Some(elapsed.mul_f64(left / pos as f64))
}

/// Seconds since 1970-01-01T00:00:00Z, now (0 for a clock set before it).
pub(crate) fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Now, UTC, RFC 3339 to the second (`2026-12-02T09:30:00Z`).
pub(crate) fn utc_now() -> String {
    utc_timestamp(unix_now())
}

/// Seconds since 1970-01-01T00:00:00Z as RFC 3339 (days to a civil date: Howard
/// Hinnant's `civil_from_days`).
pub(crate) fn utc_timestamp(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_timestamps_match_known_dates() {
        assert_eq!(utc_timestamp(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc_timestamp(951_782_400), "2000-02-29T00:00:00Z");
        // 2026-12-02T09:30:05Z
        assert_eq!(utc_timestamp(1_796_203_805), "2026-12-02T09:30:05Z");
    }
}
