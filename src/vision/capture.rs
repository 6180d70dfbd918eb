//! Frame sources: a video file, a folder of images, a glob (`shots/*.png`) or a
//! single image, all streamed the same way as `Frame { index, name, image }`, so
//! calibration and `analyse` need not care where pixels come from.
//! A video frame that fails to decode is skipped and reading goes on: its index is
//! left out (later frames keep their container indices, which the tracker and the
//! record use as time), so a caller finds damaged frames as gaps in the indices.
//! A frame FFmpeg decodes *with errors* (its picture partly concealed guesswork) is
//! skipped the same way, while a [`DecoderLog`](super::decoder_log::DecoderLog)
//! counts FFmpeg's messages: see [`Damage`] for which frames an error marks. So is a
//! frame whose picture shows macroblock damage FFmpeg did not report (most damage,
//! and the frames predicted from a damaged one): see
//! [`picture_damage`](super::picture_damage).
//! A frame predicted from a damaged one (any frame after it up to the next key
//! frame, which the container's packets tell: [`KeyFrames`]) carries the damage on
//! and is skipped the same way. Why each frame of a file was skipped is kept for
//! the record ([`damage_of`]).
//! The video ends where the container's frame count says, or, past a cut, after
//! [`MAX_FAILED_READS`] failed reads in a row.
//! Uses: model (FrameIdx), record (DamageReason), decoder_log, picture_damage;
//! OpenCV videoio/imgcodecs to decode.

use super::decoder_log;
use super::picture_damage::PictureCheck;
use crate::model::FrameIdx;
use crate::record::{DamageReason, DamagedStretch};
use opencv::core::{Mat, Vector};
use opencv::prelude::*;
use opencv::{core, imgcodecs, videoio};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

/// File extensions read as still images (lower case); anything else is tried as a video.
pub const IMAGE_EXTENSIONS: &[&str] = &[
    "png", "jpg", "jpeg", "bmp", "tif", "tiff", "webp", "pgm", "ppm",
];

/// Failed reads in a row after which a video is taken to end (a file cut short:
/// every read past the cut fails at once, so they cost nothing). A damaged stretch
/// longer than this ends the reading as well, and is reported the same way.
pub const MAX_FAILED_READS: u32 = 250;

/// Why frames could not be read.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    #[error("{0}: no such file or folder")]
    NotFound(String),
    #[error("{0}: no images match")]
    NoImages(String),
    #[error("{0}: cannot open as a video (not a video file, or one damaged beyond reading)")]
    VideoOpen(String),
    #[error("{0}: cannot open the camera or stream (is it connected and on, the address right?)")]
    LiveOpen(String),
    #[error("{path}: cannot read: {source}")]
    Unreadable {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: cannot read the image")]
    ImageRead { path: String },
    #[error("{0}: cannot seek to frame {1}")]
    Seek(String, FrameIdx),
    #[error("{spec}: no frame could be decoded from frame {from} on, though the file says {claimed} frames; it may be truncated")]
    CutShort {
        spec: String,
        from: FrameIdx,
        claimed: u64,
    },
    #[error("{what}: {source}")]
    OpenCv { what: String, source: opencv::Error },
}

fn cv<T>(what: &str, r: opencv::Result<T>) -> Result<T, CaptureError> {
    r.map_err(|source| CaptureError::OpenCv {
        what: what.to_string(),
        source,
    })
}

/// Why frames were skipped, per video file (its spec), for the record: the frames
/// are read on the driver's decoding threads, the record is made after the source
/// is gone, so the reasons wait here until [`damage_of`] takes them.
#[derive(Default)]
struct Reasons {
    /// Sources of each spec now open.
    open: HashMap<String, usize>,
    reasons: HashMap<String, BTreeMap<FrameIdx, DamageReason>>,
}

static REASONS: Mutex<Option<Reasons>> = Mutex::new(None);

fn reasons() -> MutexGuard<'static, Option<Reasons>> {
    REASONS.lock().unwrap_or_else(|p| p.into_inner())
}

/// Notes why frame `index` of the file `spec` was skipped (the most direct reason,
/// should two readings of one file differ).
fn note_damage(spec: &str, index: FrameIdx, reason: DamageReason) {
    let mut guard = reasons();
    let r = guard.get_or_insert_with(Reasons::default);
    let frames = r.reasons.entry(spec.to_string()).or_default();
    let kept = frames.entry(index).or_insert(reason);
    *kept = (*kept).min(reason);
}

/// Why the `damaged` frames of the video file `spec` were skipped, as stretches;
/// frames whose reason is not known are left out. Forgets the file's reasons when
/// no source of it is open any more (so the next reading of a file at this path
/// starts afresh).
pub fn damage_of(spec: &str, damaged: &[FrameIdx]) -> Vec<DamagedStretch> {
    let mut guard = reasons();
    let Some(r) = guard.as_mut() else {
        return Vec::new();
    };
    let out = match r.reasons.get(spec) {
        Some(known) => DamagedStretch::stretches(
            damaged
                .iter()
                .filter_map(|f| known.get(f).map(|reason| (*f, *reason))),
        ),
        None => Vec::new(),
    };
    if !r.open.contains_key(spec) {
        r.reasons.remove(spec);
    }
    out
}

/// A file video's place among the sources open: counted while it lives.
struct OpenFile(String);

impl OpenFile {
    fn new(spec: &str) -> OpenFile {
        let mut guard = reasons();
        let r = guard.get_or_insert_with(Reasons::default);
        *r.open.entry(spec.to_string()).or_default() += 1;
        OpenFile(spec.to_string())
    }
}

impl Drop for OpenFile {
    fn drop(&mut self) {
        let mut guard = reasons();
        if let Some(r) = guard.as_mut() {
            if let Some(n) = r.open.get_mut(&self.0) {
                *n -= 1;
                if *n == 0 {
                    r.open.remove(&self.0);
                }
            }
        }
    }
}

/// Which frames of a video file are key frames (decoded on their own, not predicted
/// from the frames before), from the container's packets: a second capture of the
/// file reads its packets undecoded (OpenCV's raw mode, cheap), in step with the
/// decoding, and FFmpeg's key flag of each says.
///
/// A packet's index is taken as its frame's: true where frames are stored in the
/// order they are shown (MPEG-4 part 2 without B-frames, as the demo; H.264
/// without B-frames). With B-frames a key frame is shown a frame or two after its
/// packet's place, so the stretch predicted from a damaged frame may be taken to
/// end that early.
struct KeyFrames {
    raw: videoio::VideoCapture,
    /// The index of the next packet to read.
    next: FrameIdx,
    /// The last packet read and whether it is a key frame.
    last: Option<(FrameIdx, bool)>,
    packet: Mat,
    /// Reading the packets failed (past a cut): nothing more is known.
    ended: bool,
}

impl KeyFrames {
    /// The packets of `spec` opened for reading; `None` where FFmpeg cannot (the
    /// predicted frames are then not told).
    fn open(spec: &str) -> Option<KeyFrames> {
        let params = Vector::from_slice(&[videoio::CAP_PROP_FORMAT, -1]);
        let raw = videoio::VideoCapture::from_file_with_params(spec, videoio::CAP_FFMPEG, &params)
            .ok()?;
        if !raw.is_opened().unwrap_or(false) {
            return None;
        }
        Some(KeyFrames {
            raw,
            next: 0,
            last: None,
            packet: Mat::default(),
            ended: false,
        })
    }

    /// Whether frame `index` is a key frame; `None` when not known (asked of a frame
    /// before the last asked, or past the packets' end).
    fn is_key(&mut self, index: FrameIdx) -> Option<bool> {
        while !self.ended && self.next <= index {
            let read = self.raw.read(&mut self.packet).unwrap_or(false);
            if !read {
                self.ended = true;
                break;
            }
            let key = self
                .raw
                .get(videoio::CAP_PROP_LRF_HAS_KEY_FRAME)
                .unwrap_or(0.0);
            self.last = Some((self.next, key != 0.0));
            self.next += 1;
        }
        match self.last {
            Some((at, key)) if at == index => Some(key),
            _ => None,
        }
    }
}

/// Makes OpenCV's own thread pool one thread: for pipelines whose stages already
/// keep every core busy (`driver`'s video source), where splitting each call would
/// only add hand-offs between them.
pub fn use_one_opencv_thread() -> Result<(), CaptureError> {
    cv("OpenCV threads", core::set_num_threads(1))
}

/// One decoded frame (BGR, 8 bit).
pub struct Frame {
    /// 0-based position in its source.
    pub index: FrameIdx,
    /// The image file name, or `frame N` for a video: what messages should call it.
    pub name: String,
    pub image: Mat,
}

impl Frame {
    /// The frame as an RGB `image::RgbImage`, for code that draws without OpenCV
    /// (`replay::evidence` cuts its crops from it).
    pub fn to_rgb(&self) -> Result<image::RgbImage, CaptureError> {
        let what = || format!("{}: as RGB", self.name);
        if self.image.typ() != core::CV_8UC3 {
            return Err(CaptureError::ImageRead { path: what() });
        }
        // A decoded frame is one block; a view into another Mat is copied into one.
        let whole;
        let image = if self.image.is_continuous() {
            &self.image
        } else {
            whole = cv(&what(), self.image.try_clone())?;
            &whole
        };
        let bgr = cv(&what(), image.data_bytes())?;
        let rgb: Vec<u8> = bgr
            .chunks_exact(3)
            .flat_map(|p| [p[2], p[1], p[0]])
            .collect();
        image::RgbImage::from_raw(image.cols() as u32, image.rows() as u32, rgb)
            .ok_or(CaptureError::ImageRead { path: what() })
    }
}

enum Kind {
    Images {
        paths: Vec<PathBuf>,
        next: usize,
    },
    Video {
        capture: videoio::VideoCapture,
        /// The container index of the next frame.
        next: FrameIdx,
        frames: Option<u64>,
        /// Boxed: it holds a second capture (the key frames' reader).
        damage: Box<Damage>,
    },
}

/// Which frames FFmpeg's error messages mark as decoded with errors, and the
/// frames read ahead to tell.
///
/// OpenCV 4.6 opens FFmpeg's decoder with one frame thread per CPU
/// (`thread_count = get_number_of_cpus()`): while a read returns frame k, the
/// packets of the frames after it are already being decoded on the other threads,
/// and a message is printed by the thread decoding its frame, so it can appear
/// during the read of any of the `in_flight` frames before its own (never after: a
/// read returns a frame only once it is decoded). Messages first counted during the
/// read that returns frame k thus come from one of frames k to k + `in_flight` - 1.
/// So frames are read `in_flight - 1` ahead: when one of those frames failed to
/// decode (a gap), the messages are taken as its own (it is skipped already);
/// otherwise all of them are marked: the frame at fault and up to `in_flight - 1`
/// sound ones after it. Measured on `scripts/damaged-videos`' flip-1 (2 CPUs),
/// against a frame-by-frame difference from the clean demo: of 5 reads with
/// errors, 3 came with their own damaged frame and 2 one read early (errors during
/// the read of frame 404, the damage in 405).
/// FFmpeg's messages carry no frame number; with several videos decoded at once
/// (`analyse A B C`) each video counts only its own decoder's
/// ([`VideoCount`](decoder_log::VideoCount)).
/// The damage FFmpeg conceals spreads to the frames predicted from the damaged one
/// (up to the next key frame), which decode without a message, and that the picture
/// check misses once motion has moved the damage off the macroblock grid: so after
/// any damaged frame (or one that did not decode) every frame up to the next key
/// frame is marked as predicted from it, where the key frames are known
/// ([`KeyFrames`]). Measured on the seed-16 set's flip-1 (GOP of 12): the frames
/// that differ from the clean decode and were not marked (161–167, 188–191,
/// 197–203, 349–359, 363–371) each end just before a key frame.
/// Without a counting [`DecoderLog`](decoder_log::DecoderLog) nothing is read ahead.
struct Damage {
    /// This video's FFmpeg messages (none without a counting `DecoderLog`).
    count: Option<decoder_log::VideoCount>,
    /// FFmpeg messages counted when the last read returned.
    seen: u64,
    /// The last frame marked by an error, if any.
    marked_until: Option<FrameIdx>,
    /// Frames being decoded at once (1: nothing read ahead).
    in_flight: u64,
    /// Frames read and not yet handed out, in order.
    ahead: std::collections::VecDeque<Ahead>,
    /// The index after the last frame read into `ahead`.
    read_to: FrameIdx,
    /// How reading ended, once it has: to hand out after the frames ahead.
    end: Option<Result<(), CaptureError>>,
    /// Damage the decoder did not report, seen in the pictures.
    pictures: PictureCheck,
    /// The video's key frames (none known: no frame is taken as predicted).
    keys: Option<KeyFrames>,
    /// A frame since the last key frame was damaged: the frames after it are
    /// predicted from its damage.
    suspect: bool,
    /// The index after the last frame handed out or skipped.
    judged_to: FrameIdx,
    /// A file's spec, under which why each frame was skipped is noted (none for a
    /// live source, whose indices the driver may number on).
    file: Option<OpenFile>,
}

/// A frame read ahead.
struct Ahead {
    index: FrameIdx,
    image: Mat,
    /// FFmpeg messages came during its read.
    errors: bool,
    /// Frames before it failed to decode (within the same read).
    after_gap: bool,
}

/// Frames decoded at once by OpenCV 4.6's FFmpeg backend (its thread count), at
/// most this many read ahead.
const MAX_IN_FLIGHT: u64 = 16;

impl Damage {
    fn new(
        count: Option<decoder_log::VideoCount>,
        keys: Option<KeyFrames>,
        file: Option<&str>,
    ) -> Damage {
        let in_flight = if count.is_some() {
            // SAFETY: sysconf only reads a system figure.
            let cpus = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
            (cpus.max(1) as u64).min(MAX_IN_FLIGHT)
        } else {
            1
        };
        Damage {
            seen: count.as_ref().map_or(0, decoder_log::VideoCount::seen),
            count,
            marked_until: None,
            in_flight,
            ahead: std::collections::VecDeque::new(),
            read_to: 0,
            end: None,
            pictures: PictureCheck::new(),
            keys,
            suspect: false,
            judged_to: 0,
            file: file.map(OpenFile::new),
        }
    }

    /// This video's FFmpeg messages so far.
    fn seen(&self) -> u64 {
        self.count.as_ref().map_or(0, decoder_log::VideoCount::seen)
    }

    /// Runs `read` (a read of this video), its thread's messages counted as the video's.
    fn reading<T>(&self, read: impl FnOnce() -> T) -> T {
        match &self.count {
            Some(count) => count.reading(read),
            None => read(),
        }
    }

    /// The index of the next frame to hand out (or to read).
    fn position(&self, next: FrameIdx) -> FrameIdx {
        self.ahead.front().map_or(next, |a| a.index)
    }

    /// Takes frame `index`, just read into `image`.
    fn push(&mut self, index: FrameIdx, image: Mat) {
        // The frames before it since the last read did not decode. (A gap as long
        // as the longest video allowed is a time stamp gone wrong: not listed.)
        if index - self.read_to <= crate::limits::MAX_FRAMES {
            for f in self.read_to..index {
                self.note(f, DamageReason::Undecodable);
            }
        }
        let now = self.seen();
        self.ahead.push_back(Ahead {
            index,
            image,
            errors: now > self.seen,
            after_gap: index > self.read_to,
        });
        self.seen = now;
        self.read_to = index + 1;
    }

    /// Whether `frame`, the first of those ahead (taken off), was decoded with errors.
    fn judge(&mut self, frame: &Ahead) -> bool {
        if frame.errors && !frame.after_gap {
            let last = frame.index + self.in_flight - 1;
            // A frame in the window that failed to decode: a gap among the frames
            // read after it, or a cut right after them.
            let mut expected = frame.index + 1;
            let mut gap = false;
            for a in &self.ahead {
                if a.index > expected && expected <= last {
                    gap = true;
                }
                expected = a.index + 1;
                if expected > last {
                    break;
                }
            }
            if expected <= last && matches!(self.end, Some(Err(_))) {
                gap = true;
            }
            if !gap {
                self.marked_until = Some(self.marked_until.map_or(last, |m| m.max(last)));
            }
        }
        self.marked_until.is_some_and(|m| frame.index <= m)
    }

    /// Why `frame`, the first of those ahead (taken off), is damaged; `None`: sound.
    fn reason(&mut self, frame: &Ahead) -> Result<Option<DamageReason>, CaptureError> {
        let reported = self.judge(frame);
        if frame.index > self.judged_to {
            // Frames just before it did not decode: it is predicted from nothing.
            self.suspect = true;
        }
        self.judged_to = frame.index + 1;
        let key = self.keys.as_mut().and_then(|k| k.is_key(frame.index));
        if key == Some(true) {
            self.suspect = false;
        }
        // A frame the decoder reported, or predicted from damage, is not looked at:
        // it must not become the picture the next ones are compared with.
        let reason = if reported {
            Some(DamageReason::DecoderErrors)
        } else if self.suspect && self.keys.is_some() {
            Some(DamageReason::Predicted)
        } else if !frame.image.empty() && cv("picture check", self.pictures.damaged(&frame.image))?
        {
            Some(DamageReason::Picture)
        } else {
            None
        };
        if frame.image.empty() {
            // Only grabbed: the next picture has nothing before it to compare with.
            self.pictures.forget();
        }
        if let Some(reason) = reason {
            self.suspect = true;
            self.note(frame.index, reason);
        }
        Ok(reason)
    }

    /// Notes for the record why frame `index` of a file was skipped.
    fn note(&self, index: FrameIdx, reason: DamageReason) {
        if let Some(file) = &self.file {
            note_damage(&file.0, index, reason);
        }
    }
}

/// A capture just opened, and its share of FFmpeg's messages (while they are counted).
type Opened = (videoio::VideoCapture, Option<decoder_log::VideoCount>);

/// A file's capture and its key frames' reader, opened together (as one video, for
/// the decoder's messages).
fn open_file(spec: &str) -> Result<(Opened, Option<KeyFrames>), CaptureError> {
    let mut keys = None;
    let opened = open_counted("video", || {
        let capture = videoio::VideoCapture::from_file(spec, videoio::CAP_ANY);
        if capture
            .as_ref()
            .is_ok_and(|c| c.is_opened().unwrap_or(false))
        {
            keys = KeyFrames::open(spec);
        }
        capture
    })?;
    Ok((opened, keys))
}

/// Opens a capture with `open`; while FFmpeg's messages are counted, as a video of
/// its own ([`VideoCount::open`](decoder_log::VideoCount::open)), so that another
/// video's decoder errors are not taken for its own.
fn open_counted(
    what: &str,
    open: impl FnOnce() -> opencv::Result<videoio::VideoCapture>,
) -> Result<Opened, CaptureError> {
    if !decoder_log::is_active() {
        return Ok((cv(what, open())?, None));
    }
    let (capture, count) = decoder_log::VideoCount::open(open);
    Ok((cv(what, capture)?, Some(count)))
}

/// A stream of frames from a video, a folder, a glob or one image.
pub struct FrameSource {
    spec: String,
    kind: Kind,
    fps: Option<f64>,
    /// A camera or a network stream (frames come as they are filmed), not a file.
    live: bool,
}

/// How long a network stream may take to open, or to give its next frame, ms.
const STREAM_TIMEOUT_MS: i32 = 10_000;

/// URL schemes opened as network streams through OpenCV's FFmpeg backend.
pub const STREAM_SCHEMES: &[&str] = &[
    "rtsp", "rtsps", "rtmp", "udp", "tcp", "http", "https", "srt",
];

/// Whether `spec` names a live source: `webcam:N`, a V4L device (`/dev/videoN`) or a
/// network stream (`rtsp://…`, `udp://…`, `http://…`; see [`STREAM_SCHEMES`]).
pub fn is_live_spec(spec: &str) -> bool {
    spec.starts_with("webcam:") || is_device(spec) || stream_scheme(spec).is_some()
}

fn is_device(spec: &str) -> bool {
    spec.strip_prefix("/dev/video")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

fn stream_scheme(spec: &str) -> Option<&str> {
    let (scheme, _) = spec.split_once("://")?;
    STREAM_SCHEMES
        .iter()
        .copied()
        .find(|s| s.eq_ignore_ascii_case(scheme))
}

fn is_image_path(p: &Path) -> bool {
    p.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| IMAGE_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()))
}

fn has_wildcards(s: &str) -> bool {
    s.contains(['*', '?', '['])
}

impl FrameSource {
    /// Opens `spec`: a folder (its images, sorted by name), a glob pattern (wildcards in
    /// the file name), an image file, a video file, or `webcam:N` (a live camera).
    pub fn open(spec: &str) -> Result<FrameSource, CaptureError> {
        if is_live_spec(spec) {
            // OpenCV's own warnings (a camera index that does not open) are not one
            // clear line; the error below is.
            let _ = core::set_log_level(core::LogLevel::LOG_LEVEL_FATAL);
        }
        if let Some(device) = spec
            .strip_prefix("webcam:")
            .and_then(|n| n.parse::<i32>().ok())
        {
            return FrameSource::open_webcam(spec, device);
        }
        if is_device(spec) {
            let opened = open_counted("camera", || {
                videoio::VideoCapture::from_file(spec, videoio::CAP_V4L2)
            })?;
            return FrameSource::from_capture(spec, "camera", opened, false, None);
        }
        if stream_scheme(spec).is_some() {
            // A stream that does not answer must not hang the opening or a read.
            let params = Vector::from_slice(&[
                videoio::CAP_PROP_OPEN_TIMEOUT_MSEC,
                STREAM_TIMEOUT_MS,
                videoio::CAP_PROP_READ_TIMEOUT_MSEC,
                STREAM_TIMEOUT_MS,
            ]);
            let opened = open_counted("stream", || {
                videoio::VideoCapture::from_file_with_params(spec, videoio::CAP_FFMPEG, &params)
            })?;
            return FrameSource::from_capture(spec, "stream", opened, false, None);
        }
        let path = Path::new(spec);
        if path.is_dir() {
            let mut paths: Vec<PathBuf> = std::fs::read_dir(path)
                .map_err(|source| CaptureError::Unreadable {
                    path: spec.to_string(),
                    source,
                })?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_file() && is_image_path(p))
                .collect();
            paths.sort();
            return FrameSource::from_images(spec, paths);
        }
        if !path.exists() && has_wildcards(spec) {
            let mut found = Vector::<String>::new();
            cv("glob", core::glob(spec, &mut found, false))?;
            let mut paths: Vec<PathBuf> = found
                .iter()
                .map(PathBuf::from)
                .filter(|p| is_image_path(p))
                .collect();
            paths.sort();
            return FrameSource::from_images(spec, paths);
        }
        if !path.is_file() {
            return Err(CaptureError::NotFound(spec.to_string()));
        }
        // OpenCV says only that it could not open a file; the system says why
        // (permission denied), which is what the user must fix.
        if let Err(source) = std::fs::File::open(path) {
            return Err(CaptureError::Unreadable {
                path: spec.to_string(),
                source,
            });
        }
        if is_image_path(path) {
            return FrameSource::from_images(spec, vec![path.to_path_buf()]);
        }
        let (opened, keys) = open_file(spec)?;
        FrameSource::from_capture(spec, "video", opened, true, keys)
    }

    /// A source over an opened capture; `counted`: the container's frame count means
    /// something (a file, not a live camera); `keys`: its key frames, where known.
    fn from_capture(
        spec: &str,
        what: &str,
        (capture, messages): Opened,
        counted: bool,
        keys: Option<KeyFrames>,
    ) -> Result<FrameSource, CaptureError> {
        if !cv(what, capture.is_opened())? {
            return Err(if counted {
                CaptureError::VideoOpen(spec.to_string())
            } else {
                CaptureError::LiveOpen(spec.to_string())
            });
        }
        let count = if counted {
            capture.get(videoio::CAP_PROP_FRAME_COUNT).unwrap_or(0.0)
        } else {
            0.0
        };
        let fps = capture.get(videoio::CAP_PROP_FPS).unwrap_or(0.0);
        Ok(FrameSource {
            spec: spec.to_string(),
            kind: Kind::Video {
                capture,
                next: 0,
                frames: (count >= 1.0).then_some(count as u64),
                damage: Box::new(Damage::new(messages, keys, counted.then_some(spec))),
            },
            fps: (fps > 0.0).then_some(fps),
            live: !counted,
        })
    }

    /// A live camera (`webcam:N`, N = OpenCV's device index): endless, no frame count.
    fn open_webcam(spec: &str, device: i32) -> Result<FrameSource, CaptureError> {
        let opened = open_counted("webcam", || {
            videoio::VideoCapture::new(device, videoio::CAP_ANY)
        })?;
        FrameSource::from_capture(spec, "webcam", opened, false, None)
    }

    /// A source over the given image files, in this order.
    pub fn from_images(spec: &str, paths: Vec<PathBuf>) -> Result<FrameSource, CaptureError> {
        if paths.is_empty() {
            return Err(CaptureError::NoImages(spec.to_string()));
        }
        Ok(FrameSource {
            spec: spec.to_string(),
            kind: Kind::Images { paths, next: 0 },
            fps: None,
            live: false,
        })
    }

    /// What the source was opened from.
    pub fn spec(&self) -> &str {
        &self.spec
    }

    /// A camera or a network stream, not a file.
    pub fn is_live(&self) -> bool {
        self.live
    }

    pub fn is_video(&self) -> bool {
        matches!(self.kind, Kind::Video { .. })
    }

    /// Frames per second of a video (as its container says).
    pub fn fps(&self) -> Option<f64> {
        self.fps
    }

    /// How many frames the source holds, when known (a video's count is the container's claim).
    pub fn len(&self) -> Option<u64> {
        match &self.kind {
            Kind::Images { paths, .. } => Some(paths.len() as u64),
            Kind::Video { frames, .. } => *frames,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == Some(0)
    }

    /// The next frame, `None` at the end. An unreadable image file is an error.
    pub fn next_frame(&mut self) -> Result<Option<Frame>, CaptureError> {
        self.next_frame_into(Mat::default())
    }

    /// [`next_frame`](Self::next_frame), a video's frame decoded into `buffer` (a
    /// frame done with: its memory is reused when the size matches).
    pub fn next_frame_into(&mut self, buffer: Mat) -> Result<Option<Frame>, CaptureError> {
        match &mut self.kind {
            Kind::Images { paths, next } => {
                let Some(path) = paths.get(*next) else {
                    return Ok(None);
                };
                let index = *next as FrameIdx;
                *next += 1;
                let image = read_image(path)?;
                let name = path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| path.display().to_string());
                Ok(Some(Frame { index, name, image }))
            }
            Kind::Video { .. } => {
                let found = self.read_video(Some(buffer))?;
                Ok(found.map(|(index, image)| Frame {
                    index,
                    name: format!("frame {index}"),
                    image,
                }))
            }
        }
    }

    /// Skips the next frame without decoding it fully (cheap for videos); false at the end.
    pub fn skip_frame(&mut self) -> Result<bool, CaptureError> {
        match &mut self.kind {
            Kind::Images { paths, next } => {
                if *next >= paths.len() {
                    return Ok(false);
                }
                *next += 1;
                Ok(true)
            }
            Kind::Video { .. } => Ok(self.read_video(None)?.is_some()),
        }
    }

    /// A video's next frame that decodes ([`next_video`]), into `buffer`, or only
    /// grabbed without one; `None` for a folder of images, which has no video.
    fn read_video(&mut self, buffer: Option<Mat>) -> Result<Option<(FrameIdx, Mat)>, CaptureError> {
        let Kind::Video {
            capture,
            next,
            frames,
            damage,
        } = &mut self.kind
        else {
            return Ok(None);
        };
        let video = Video {
            capture,
            next,
            frames: *frames,
            fps: self.fps,
            spec: &self.spec,
        };
        next_video(video, damage, buffer)
    }

    /// Skips the frames before `index` (cheaply, for a video); false if the source
    /// ends before it.
    pub fn skip_to(&mut self, index: FrameIdx) -> Result<bool, CaptureError> {
        while self.next_index() < index {
            if !self.skip_frame()? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The index of the frame the next read hands out (of a video, read ahead:
    /// the first frame read and not yet handed out).
    pub fn next_index(&self) -> FrameIdx {
        match &self.kind {
            Kind::Images { next, .. } => *next as FrameIdx,
            Kind::Video { next, damage, .. } => damage.position(*next),
        }
    }

    /// Frame `index` (counting from 0), read afresh: re-opens or seeks as needed.
    pub fn frame_at(&mut self, index: FrameIdx) -> Result<Option<Frame>, CaptureError> {
        if index < self.next_index() {
            match &mut self.kind {
                Kind::Images { next, .. } => *next = index as usize,
                Kind::Video { .. } => *self = FrameSource::open(&self.spec.clone())?,
            }
        }
        while self.next_index() < index {
            if !self.skip_frame()? {
                return Ok(None);
            }
        }
        self.next_frame()
    }
}

impl Iterator for FrameSource {
    type Item = Result<Frame, CaptureError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_frame().transpose()
    }
}

/// An open video and where its reading stands.
struct Video<'a> {
    capture: &'a mut videoio::VideoCapture,
    /// The index expected of the next read.
    next: &'a mut FrameIdx,
    frames: Option<u64>,
    fps: Option<f64>,
    spec: &'a str,
}

/// The next frame that decodes without errors: its container index and (reading
/// into `buffer`) its image, `None` at the end. Frames that fail to decode or that
/// `damage` finds decoded with errors are skipped: the caller sees gaps at their
/// indices. Without a `buffer` the frame is only grabbed where nothing is read
/// ahead (cheap), else decoded as well.
fn next_video(
    v: Video,
    damage: &mut Damage,
    buffer: Option<Mat>,
) -> Result<Option<(FrameIdx, Mat)>, CaptureError> {
    let grab = buffer.is_none() && damage.in_flight == 1;
    let mut buffer = buffer.unwrap_or_default();
    loop {
        while damage.end.is_none() && (damage.ahead.len() as u64) < damage.in_flight {
            let mut image = std::mem::take(&mut buffer);
            let read = damage.reading(|| {
                read_one(v.capture, v.next, v.frames, v.fps, v.spec, &mut |c| {
                    if grab {
                        c.grab()
                    } else {
                        Ok(c.read(&mut image)? && !image.empty())
                    }
                })
            });
            match read {
                Ok(Some(index)) => damage.push(index, image),
                Ok(None) => damage.end = Some(Ok(())),
                Err(e) => damage.end = Some(Err(e)),
            }
        }
        let Some(frame) = damage.ahead.pop_front() else {
            return match damage.end.replace(Ok(())) {
                Some(Err(e)) => Err(e),
                _ => Ok(None),
            };
        };
        if damage.reason(&frame)?.is_none() {
            return Ok(Some((frame.index, frame.image)));
        }
        buffer = frame.image;
    }
}

/// One frame read with `read` (a read or a grab), past frames that fail to decode:
/// its container index, `None` at the end. `next` is the index expected, moved past
/// the frame read.
fn read_one(
    capture: &mut videoio::VideoCapture,
    next: &mut FrameIdx,
    frames: Option<u64>,
    fps: Option<f64>,
    spec: &str,
    read: &mut dyn FnMut(&mut videoio::VideoCapture) -> opencv::Result<bool>,
) -> Result<Option<FrameIdx>, CaptureError> {
    let mut failures: u64 = 0;
    while !cv("video read", read(capture))? {
        // A failed read right after the container's last frame is its end; a
        // failure before it is damage, or a cut (the bound below).
        if failures == 0 && frames.is_some_and(|n| *next >= n) {
            return Ok(None);
        }
        failures += 1;
        if failures >= u64::from(MAX_FAILED_READS) {
            return match frames {
                Some(claimed) => Err(CaptureError::CutShort {
                    spec: spec.to_string(),
                    from: *next,
                    claimed,
                }),
                // No count to hold it to: as good as an end.
                None => Ok(None),
            };
        }
    }
    let index = if failures == 0 {
        *next
    } else {
        // Each failed read used up one packet (OpenCV 4.6's FFmpeg backend); the
        // frame's time stamp says the same where it has one.
        stamped_index(capture, fps)
            .filter(|i| *i >= *next)
            .unwrap_or(*next + failures)
    };
    *next = index + 1;
    Ok(Some(index))
}

/// The container index of the frame just read, from its time stamp.
fn stamped_index(capture: &videoio::VideoCapture, fps: Option<f64>) -> Option<FrameIdx> {
    let ms = capture.get(videoio::CAP_PROP_POS_MSEC).ok()?;
    let index = (ms * fps? / 1000.0).round();
    (index.is_finite() && index > 0.0 && index < 1e15).then_some(index as FrameIdx)
}

/// Reads one image file as 8-bit BGR.
pub fn read_image(path: &Path) -> Result<Mat, CaptureError> {
    let image = cv("imread", imgcodecs::imread(path, imgcodecs::IMREAD_COLOR))?;
    if image.empty() {
        return Err(CaptureError::ImageRead {
            path: path.display().to_string(),
        });
    }
    Ok(image)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_png(path: &Path, value: u8) {
        let m =
            Mat::new_rows_cols_with_default(8, 12, core::CV_8UC3, core::Scalar::all(value as f64))
                .unwrap();
        assert!(imgcodecs::imwrite(path, &m, &Vector::new()).unwrap());
    }

    #[test]
    fn folder_and_glob_stream_sorted_images_with_indices() {
        let dir = tempfile::tempdir().unwrap();
        for (name, v) in [("b.png", 20), ("a.png", 10), ("c.jpg", 30)] {
            write_png(&dir.path().join(name), v);
        }
        std::fs::write(dir.path().join("notes.txt"), "x").unwrap();
        let src = FrameSource::open(&dir.path().to_string_lossy()).unwrap();
        assert_eq!(src.len(), Some(3));
        let names: Vec<(FrameIdx, String)> =
            src.map(|f| f.unwrap()).map(|f| (f.index, f.name)).collect();
        assert_eq!(
            names,
            vec![
                (0, "a.png".into()),
                (1, "b.png".into()),
                (2, "c.jpg".into())
            ]
        );
        let pattern = dir.path().join("*.png");
        let mut src = FrameSource::open(&pattern.to_string_lossy()).unwrap();
        assert_eq!(src.len(), Some(2));
        let second = src.frame_at(1).unwrap().unwrap();
        assert_eq!(second.name, "b.png");
        assert_eq!(
            *second.image.at_2d::<core::Vec3b>(0, 0).unwrap(),
            core::Vec3b::from([20, 20, 20])
        );
        let first = src.frame_at(0).unwrap().unwrap();
        assert_eq!(first.name, "a.png");
    }

    #[test]
    fn live_sources_are_told_from_files() {
        for live in [
            "webcam:0",
            "/dev/video2",
            "rtsp://10.0.0.7/stream",
            "UDP://@:5000",
            "http://cam.local/video.mjpg",
        ] {
            assert!(is_live_spec(live), "{live}");
        }
        for file in [
            "match.avi",
            "/dev/videos/a.mp4",
            "/dev/video",
            "file://x.mp4",
            "rtsp:/x",
        ] {
            assert!(!is_live_spec(file), "{file}");
        }
    }

    #[test]
    fn missing_inputs_are_named() {
        let err = FrameSource::open("/no/such/place/x.mp4").err().unwrap();
        assert!(err.to_string().contains("/no/such/place/x.mp4"), "{err}");
        let dir = tempfile::tempdir().unwrap();
        let err = FrameSource::open(&dir.path().join("*.png").to_string_lossy())
            .err()
            .unwrap();
        assert!(matches!(err, CaptureError::NoImages(_)), "{err}");
    }
}
