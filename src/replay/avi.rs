//! A Motion-JPEG `.avi` writer (RIFF AVI 1.0 with an `idx1` index) that stores
//! frames the caller has already JPEG-encoded. It exists so that the annotated video
//! can be JPEG-encoded by libjpeg-turbo on several threads (OpenCV's VideoWriter
//! runs its own, about three times slower, coder on the calling thread) and so that
//! a frame repeated by `--slow` is stored again without being encoded again. The
//! layout is the one OpenCV's own MJPG writer produces (one `vids`/`MJPG` stream,
//! `00dc` chunks, `idx1`), so FFmpeg and OpenCV read the files back with an exact
//! frame count; unlike OpenCV's writer it keeps a non-integer frame rate (29.97)
//! as a fraction. Pure: std only.

use std::io::{Seek, SeekFrom, Write};

/// Why an AVI file could not be written.
#[derive(Debug, thiserror::Error)]
pub enum AviError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("the video would pass AVI's 4 GB limit after {0} frames (render fewer frames, e.g. with --shot)")]
    TooLarge(u64),
    #[error("frame size {0}x{1} does not fit an AVI header")]
    BadSize(u32, u32),
}

/// `fps` as the AVI stream's rate / scale: whole rates exactly, NTSC rates as
/// N*1000/1001, anything else to a thousandth of a frame per second.
pub fn rate_scale(fps: f64) -> (u32, u32) {
    let fps = if fps.is_finite() && fps > 0.0 {
        fps.min(1e5)
    } else {
        30.0
    };
    if (fps - fps.round()).abs() < 1e-6 {
        return (fps.round().max(1.0) as u32, 1);
    }
    let ntsc = fps * 1001.0 / 1000.0;
    if (ntsc - ntsc.round()).abs() < 1e-3 {
        return (ntsc.round() as u32 * 1000, 1001);
    }
    ((fps * 1000.0).round().max(1.0) as u32, 1000)
}

/// Bytes before the first frame chunk: RIFF and hdrl headers and the `movi` list head.
const HEADER_LEN: u64 = 12 + 8 + HDRL_LEN as u64 + 12;
/// The `hdrl` list: its fourcc, `avih` and one `strl` list (`strh`, `strf`).
const HDRL_LEN: u32 = 4 + (8 + 56) + (8 + 4 + (8 + 56) + (8 + 40));
/// AVI 1.0 sizes are 32-bit.
const RIFF_LIMIT: u64 = u32::MAX as u64;

/// Writes a Motion-JPEG AVI: [`MjpegAviWriter::create`], then one
/// [`MjpegAviWriter::write_frame`] per frame, then [`MjpegAviWriter::finish`] (which
/// writes the index and the frame count; a file not finished is not a valid video).
pub struct MjpegAviWriter<W: Write + Seek> {
    out: W,
    width: u32,
    height: u32,
    rate: u32,
    scale: u32,
    /// File position of the next chunk.
    pos: u64,
    /// Per frame: offset of its chunk from the `movi` fourcc, and its payload size.
    index: Vec<(u32, u32)>,
    /// Bytes of frame chunks (headers and padding included) written so far.
    chunk_bytes: u64,
    max_chunk: u32,
    /// Largest RIFF size allowed ([`RIFF_LIMIT`]; smaller in tests).
    riff_limit: u64,
}

impl<W: Write + Seek> MjpegAviWriter<W> {
    /// Starts a file of `width` x `height` frames at `fps`.
    pub fn create(
        mut out: W,
        width: u32,
        height: u32,
        fps: f64,
    ) -> Result<MjpegAviWriter<W>, AviError> {
        if width == 0 || height == 0 || width > 32767 || height > 32767 {
            return Err(AviError::BadSize(width, height));
        }
        let (rate, scale) = rate_scale(fps);
        out.seek(SeekFrom::Start(0))?;
        let mut w = MjpegAviWriter {
            out,
            width,
            height,
            rate,
            scale,
            pos: HEADER_LEN,
            index: Vec::new(),
            chunk_bytes: 0,
            max_chunk: 0,
            riff_limit: RIFF_LIMIT,
        };
        // Placeholder sizes and counts; `finish` writes the header again with the real ones.
        let head = w.header();
        w.out.write_all(&head)?;
        Ok(w)
    }

    /// Frames written so far.
    pub fn frames(&self) -> u64 {
        self.index.len() as u64
    }

    /// Appends one frame, a complete JPEG image (SOI to EOI).
    pub fn write_frame(&mut self, jpeg: &[u8]) -> Result<(), AviError> {
        let len = jpeg.len() as u64;
        let padded = len + (len & 1);
        // Room for this chunk, the index with its entry, and nothing beyond 32 bits.
        let idx_len = 8 + 16 * (self.index.len() as u64 + 1);
        if self.pos + 8 + padded + idx_len - 8 > self.riff_limit {
            return Err(AviError::TooLarge(self.frames()));
        }
        let movi_fourcc_at = HEADER_LEN - 4;
        self.index
            .push(((self.pos - movi_fourcc_at) as u32, len as u32));
        self.max_chunk = self.max_chunk.max(len as u32);
        self.out.write_all(b"00dc")?;
        self.out.write_all(&(len as u32).to_le_bytes())?;
        self.out.write_all(jpeg)?;
        if len & 1 == 1 {
            self.out.write_all(&[0])?;
        }
        self.pos += 8 + padded;
        self.chunk_bytes += 8 + padded;
        Ok(())
    }

    /// Writes the index, fills in the sizes and the frame count, and hands back the
    /// output (flushed).
    pub fn finish(mut self) -> Result<W, AviError> {
        let mut idx = Vec::with_capacity(8 + 16 * self.index.len());
        idx.extend_from_slice(b"idx1");
        put32(&mut idx, 16 * self.index.len() as u32);
        for &(offset, size) in &self.index {
            idx.extend_from_slice(b"00dc");
            put32(&mut idx, 0x10); // AVIIF_KEYFRAME: every JPEG stands alone
            put32(&mut idx, offset);
            put32(&mut idx, size);
        }
        self.out.write_all(&idx)?;
        self.pos += idx.len() as u64;
        let head = self.header();
        self.out.seek(SeekFrom::Start(0))?;
        self.out.write_all(&head)?;
        self.out.seek(SeekFrom::Start(self.pos))?;
        self.out.flush()?;
        Ok(self.out)
    }

    /// Everything before the first frame, with the sizes and counts known so far.
    fn header(&self) -> Vec<u8> {
        let frames = self.index.len() as u32;
        let buffer = self.max_chunk + 8;
        let (w, h) = (self.width, self.height);
        let usec = (1e6 * self.scale as f64 / self.rate as f64).round() as u32;
        let bytes_per_sec =
            (buffer as f64 * self.rate as f64 / self.scale as f64).min(u32::MAX as f64) as u32;
        let mut b = Vec::with_capacity(HEADER_LEN as usize);
        b.extend_from_slice(b"RIFF");
        put32(&mut b, (self.pos - 8) as u32);
        b.extend_from_slice(b"AVI ");
        b.extend_from_slice(b"LIST");
        put32(&mut b, HDRL_LEN);
        b.extend_from_slice(b"hdrl");
        b.extend_from_slice(b"avih");
        put32(&mut b, 56);
        for v in [
            usec,
            bytes_per_sec,
            0,
            0x10, /* AVIF_HASINDEX */
            frames,
            0,
            1,
            buffer,
            w,
            h,
        ] {
            put32(&mut b, v);
        }
        b.extend_from_slice(&[0; 16]);
        b.extend_from_slice(b"LIST");
        put32(&mut b, 4 + 8 + 56 + 8 + 40);
        b.extend_from_slice(b"strl");
        b.extend_from_slice(b"strh");
        put32(&mut b, 56);
        b.extend_from_slice(b"vidsMJPG");
        for v in [
            0,
            0,
            0,
            self.scale,
            self.rate,
            0,
            frames,
            buffer,
            u32::MAX,
            0,
        ] {
            put32(&mut b, v); // flags, priority+language, initial frames, ..., quality -1
        }
        for v in [0u16, 0, w as u16, h as u16] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        b.extend_from_slice(b"strf");
        put32(&mut b, 40);
        // BITMAPINFOHEADER: size, width, height, planes 1 + 24 bits, compression, image size.
        for v in [40, w, h, 1 | (24 << 16)] {
            put32(&mut b, v);
        }
        b.extend_from_slice(b"MJPG");
        put32(&mut b, w.saturating_mul(h).saturating_mul(3));
        b.extend_from_slice(&[0; 16]);
        b.extend_from_slice(b"LIST");
        put32(&mut b, (4 + self.chunk_bytes) as u32);
        b.extend_from_slice(b"movi");
        debug_assert_eq!(b.len() as u64, HEADER_LEN);
        b
    }
}

fn put32(b: &mut Vec<u8>, v: u32) {
    b.extend_from_slice(&v.to_le_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn u32_at(b: &[u8], at: usize) -> u32 {
        u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
    }

    fn find(b: &[u8], tag: &[u8]) -> usize {
        b.windows(4).position(|w| w == tag).expect("tag present")
    }

    #[test]
    fn header_sizes_counts_and_index_agree_with_the_chunks() {
        let mut w = MjpegAviWriter::create(Cursor::new(Vec::new()), 320, 240, 29.97).unwrap();
        let frames: [&[u8]; 3] = [
            b"\xff\xd8abc\xff\xd9",
            b"\xff\xd8\xff\xd9",
            b"\xff\xd8x\xff\xd9",
        ];
        for f in frames {
            w.write_frame(f).unwrap();
        }
        let b = w.finish().unwrap().into_inner();
        assert_eq!(&b[0..4], b"RIFF");
        assert_eq!(u32_at(&b, 4) as usize, b.len() - 8);
        let avih = find(&b, b"avih");
        assert_eq!(u32_at(&b, avih + 8 + 16), 3, "avih total frames");
        assert_eq!(u32_at(&b, avih + 8 + 32), 320);
        assert_eq!(u32_at(&b, avih + 8 + 36), 240);
        let strh = find(&b, b"strh");
        assert_eq!(&b[strh + 8..strh + 16], b"vidsMJPG");
        assert_eq!(
            (u32_at(&b, strh + 8 + 20), u32_at(&b, strh + 8 + 24)),
            (1001, 30000),
            "scale, rate"
        );
        assert_eq!(u32_at(&b, strh + 8 + 32), 3, "strh length");
        let movi = find(&b, b"movi");
        let movi_len = u32_at(&b, movi - 4) as usize;
        let idx1 = find(&b, b"idx1");
        assert_eq!(movi + movi_len, idx1, "movi list ends where idx1 starts");
        assert_eq!(u32_at(&b, idx1 + 4), 48);
        for (k, f) in frames.iter().enumerate() {
            let e = idx1 + 8 + 16 * k;
            assert_eq!(&b[e..e + 4], b"00dc");
            let at = movi + u32_at(&b, e + 8) as usize;
            assert_eq!(&b[at..at + 4], b"00dc");
            assert_eq!(u32_at(&b, at + 4) as usize, f.len());
            assert_eq!(u32_at(&b, e + 12) as usize, f.len());
            assert_eq!(&b[at + 8..at + 8 + f.len()], *f);
        }
        // Odd-sized chunks are padded so the next one starts on an even offset.
        assert!(frames.iter().any(|f| f.len() % 2 == 1));
        assert_eq!(idx1 % 2, 0);
    }

    #[test]
    fn a_frame_that_would_pass_the_size_limit_is_refused_and_the_file_stays_valid() {
        let mut w = MjpegAviWriter::create(Cursor::new(Vec::new()), 8, 8, 30.0).unwrap();
        // Room for the headers and two 100-byte frames with their index entries.
        w.riff_limit = HEADER_LEN - 8 + 2 * 108 + 8 + 2 * 16;
        let frame = [7u8; 100];
        w.write_frame(&frame).unwrap();
        w.write_frame(&frame).unwrap();
        assert!(matches!(w.write_frame(&frame), Err(AviError::TooLarge(2))));
        let b = w.finish().unwrap().into_inner();
        assert_eq!(u32_at(&b, 4) as usize, b.len() - 8);
        assert_eq!(b.len() as u64 - 8, HEADER_LEN - 8 + 2 * 108 + 8 + 2 * 16);
        let avih = find(&b, b"avih");
        assert_eq!(
            u32_at(&b, avih + 8 + 16),
            2,
            "frames written before the refusal"
        );
    }

    #[test]
    fn rates_are_kept_as_fractions() {
        assert_eq!(rate_scale(30.0), (30, 1));
        assert_eq!(rate_scale(25.0), (25, 1));
        assert_eq!(rate_scale(30000.0 / 1001.0), (30000, 1001));
        assert_eq!(rate_scale(12.5), (12500, 1000));
        assert_eq!(rate_scale(f64::NAN), (30, 1));
    }

    #[test]
    fn bad_sizes_are_refused() {
        assert!(MjpegAviWriter::create(Cursor::new(Vec::new()), 0, 10, 30.0).is_err());
        assert!(MjpegAviWriter::create(Cursor::new(Vec::new()), 40000, 10, 30.0).is_err());
    }
}
