//! FFmpeg's decoder messages, counted instead of printed: while a [`DecoderLog`]
//! lives, the lines FFmpeg's logger writes (`[mpeg4 @ 0x55d0c8] ac-tex damaged at 4
//! 24`) add one each to a process-wide count ([`errors_seen`]) and are not shown;
//! any other line written the same way reaches stderr unchanged. The capture reads
//! the count around each frame it reads to tell frames decoded with errors.
//!
//! How: FFmpeg's default logger writes with `fputs(.., stderr)`, C's `stderr`
//! stream. The guard points that stream (a plain variable in glibc) at a glibc
//! cookie stream whose write function counts and forwards in the writing thread
//! itself, so a message is counted before the `fputs` that wrote it returns: the
//! count never lags behind the decoder. File descriptor 2 is left alone: our own
//! messages, panics and indicatif's progress bar (which shows only while fd 2 is a
//! terminal) write there as before. Elsewhere than glibc the guard does nothing
//! ([`SUPPORTED`] is false) and the count stays 0.
//! Uses: libc only (no OpenCV: it sees FFmpeg's text, not its API).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// FFmpeg lines seen since the process started, over every guard.
static ERRORS_SEEN: AtomicU64 = AtomicU64::new(0);
/// Whether a guard lives (one at a time).
static ACTIVE: AtomicBool = AtomicBool::new(false);

/// Whether this platform can count FFmpeg's messages (glibc's assignable `stderr`
/// and cookie streams).
pub const SUPPORTED: bool = cfg!(all(target_os = "linux", target_env = "gnu"));

/// How many FFmpeg log lines have been written so far (0 without a guard).
pub fn errors_seen() -> u64 {
    ERRORS_SEEN.load(Ordering::SeqCst)
}

/// Whether a guard lives and counts.
pub fn is_active() -> bool {
    ACTIVE.load(Ordering::SeqCst)
}

/// Whether `line` is an FFmpeg log line, `[name @ 0x1a2b] text`, once any colour
/// escapes (`ESC [ … m`) are taken out.
pub fn is_ffmpeg_line(line: &[u8]) -> bool {
    let text = strip_escapes(line);
    let Some(rest) = text.strip_prefix(b"[") else {
        return false;
    };
    let Some(close) = rest.iter().position(|b| *b == b']') else {
        return false;
    };
    let inside = &rest[..close];
    let Some(at) = inside.windows(5).position(|w| w == b" @ 0x") else {
        return false;
    };
    let (name, pointer) = (&inside[..at], &inside[at + 5..]);
    !name.is_empty()
        && !name.contains(&b'[')
        && !pointer.is_empty()
        && pointer.iter().all(u8::is_ascii_hexdigit)
}

fn strip_escapes(line: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(line.len());
    let mut i = 0;
    while i < line.len() {
        if line[i] == 0x1b && line.get(i + 1) == Some(&b'[') {
            i += 2;
            while i < line.len() && !line[i].is_ascii_alphabetic() {
                i += 1;
            }
            i += 1;
            continue;
        }
        out.push(line[i]);
        i += 1;
    }
    out
}

/// Splits what is written into lines: FFmpeg's are counted, the others handed to
/// `forward` whole (with their newline). A line still open stays for the next write.
#[derive(Default)]
pub struct LineSorter {
    open: Vec<u8>,
}

impl LineSorter {
    /// Takes `bytes`; returns how many FFmpeg lines they completed.
    pub fn write(&mut self, bytes: &[u8], forward: &mut dyn FnMut(&[u8])) -> u64 {
        self.open.extend_from_slice(bytes);
        let mut counted = 0;
        while let Some(end) = self.open.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.open.drain(..=end).collect();
            counted += self.sort(&line, forward);
        }
        counted
    }

    /// The last line, unfinished: sorted as it is.
    pub fn finish(&mut self, forward: &mut dyn FnMut(&[u8])) -> u64 {
        let line = std::mem::take(&mut self.open);
        if line.is_empty() {
            return 0;
        }
        self.sort(&line, forward)
    }

    fn sort(&mut self, line: &[u8], forward: &mut dyn FnMut(&[u8])) -> u64 {
        if is_ffmpeg_line(line) {
            1
        } else {
            forward(line);
            0
        }
    }
}

/// While it lives, FFmpeg's log lines are counted ([`errors_seen`]) and kept off
/// stderr. Dropping it puts C's `stderr` back and sorts an unfinished last line
/// (so nothing is lost at exit, also when unwinding from a panic).
pub struct DecoderLog {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    inner: Option<glibc::Swapped>,
}

impl DecoderLog {
    /// Starts counting; does nothing where unsupported or while another guard lives.
    /// Call it before any video is opened, while no other thread writes to `stderr`.
    pub fn start() -> DecoderLog {
        if ACTIVE.swap(true, Ordering::SeqCst) {
            return DecoderLog::inert();
        }
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        {
            let inner = glibc::Swapped::install();
            if inner.is_none() {
                ACTIVE.store(false, Ordering::SeqCst);
            }
            DecoderLog { inner }
        }
        #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
        {
            ACTIVE.store(false, Ordering::SeqCst);
            DecoderLog {}
        }
    }

    fn inert() -> DecoderLog {
        DecoderLog {
            #[cfg(all(target_os = "linux", target_env = "gnu"))]
            inner: None,
        }
    }

    /// Whether FFmpeg's lines are being counted (false where unsupported).
    pub fn is_counting(&self) -> bool {
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        {
            self.inner.is_some()
        }
        #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
        {
            false
        }
    }
}

impl Drop for DecoderLog {
    fn drop(&mut self) {
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        if let Some(inner) = self.inner.take() {
            drop(inner);
            ACTIVE.store(false, Ordering::SeqCst);
        }
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod glibc {
    use super::{LineSorter, ERRORS_SEEN};
    use std::sync::atomic::Ordering;
    use std::sync::Mutex;

    type Write =
        unsafe extern "C" fn(*mut libc::c_void, *const libc::c_char, libc::size_t) -> libc::ssize_t;

    /// glibc's `cookie_io_functions_t` (not in the libc crate).
    #[repr(C)]
    struct CookieIo {
        read: Option<unsafe extern "C" fn()>,
        write: Option<Write>,
        seek: Option<unsafe extern "C" fn()>,
        close: Option<unsafe extern "C" fn()>,
    }

    extern "C" {
        /// C's standard error stream: in glibc an ordinary variable one may set.
        static mut stderr: *mut libc::FILE;
        fn fopencookie(
            cookie: *mut libc::c_void,
            mode: *const libc::c_char,
            io: CookieIo,
        ) -> *mut libc::FILE;
    }

    /// The sorter the cookie stream writes into (one guard at a time).
    static SORTER: Mutex<Option<LineSorter>> = Mutex::new(None);

    /// Writes a line that is not FFmpeg's to file descriptor 2, all of it.
    fn to_fd2(mut bytes: &[u8]) {
        while !bytes.is_empty() {
            // SAFETY: writes from a live slice of `bytes.len()` bytes.
            let n = unsafe { libc::write(2, bytes.as_ptr().cast(), bytes.len()) };
            if n <= 0 {
                if n < 0
                    && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted
                {
                    continue;
                }
                return;
            }
            bytes = &bytes[n as usize..];
        }
    }

    /// Sorts `bytes`; once the guard is gone (a writer that took the stream
    /// before it was put back), passes them on as they are.
    fn sort(bytes: &[u8]) {
        let mut guard = SORTER.lock().unwrap_or_else(|p| p.into_inner());
        match guard.as_mut() {
            Some(sorter) => {
                let counted = sorter.write(bytes, &mut |l| to_fd2(l));
                ERRORS_SEEN.fetch_add(counted, Ordering::SeqCst);
            }
            None => to_fd2(bytes),
        }
    }

    unsafe extern "C" fn write(
        _cookie: *mut libc::c_void,
        buf: *const libc::c_char,
        size: libc::size_t,
    ) -> libc::ssize_t {
        if size == 0 || buf.is_null() {
            return 0;
        }
        // SAFETY: glibc hands over `size` readable bytes at `buf`.
        let bytes = unsafe { std::slice::from_raw_parts(buf.cast::<u8>(), size) };
        // A panic must not unwind into C: the bytes are then dropped.
        let _ = std::panic::catch_unwind(|| sort(bytes));
        size as libc::ssize_t
    }

    /// C's `stderr` pointed at the counting stream; dropping it points it back.
    /// The cookie stream is never closed: a thread that took it from `stderr` just
    /// before may still write to it (then straight on to fd 2).
    pub struct Swapped {
        original: *mut libc::FILE,
    }

    impl Swapped {
        pub fn install() -> Option<Swapped> {
            *SORTER.lock().unwrap_or_else(|p| p.into_inner()) = Some(LineSorter::default());
            let io = CookieIo {
                read: None,
                write: Some(write),
                seek: None,
                close: None,
            };
            // SAFETY: a write-only cookie stream with no cookie state; `stderr` is
            // swapped before any video is opened (see `DecoderLog::start`).
            unsafe {
                let ours = fopencookie(std::ptr::null_mut(), c"w".as_ptr(), io);
                if ours.is_null() {
                    return None;
                }
                // Unbuffered, like stderr: each write reaches the sorter at once.
                libc::setvbuf(ours, std::ptr::null_mut(), libc::_IONBF, 0);
                let original = stderr;
                stderr = ours;
                Some(Swapped { original })
            }
        }
    }

    impl Drop for Swapped {
        fn drop(&mut self) {
            // SAFETY: puts back the stream saved in `install`.
            unsafe {
                stderr = self.original;
            }
            let sorter = SORTER.lock().unwrap_or_else(|p| p.into_inner()).take();
            if let Some(mut sorter) = sorter {
                let counted = sorter.finish(&mut |l| to_fd2(l));
                ERRORS_SEEN.fetch_add(counted, Ordering::SeqCst);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ffmpeg_lines_are_told_from_others() {
        assert!(is_ffmpeg_line(
            b"[mpeg4 @ 0x642ccc0] ac-tex damaged at 4 24\n"
        ));
        assert!(is_ffmpeg_line(
            b"[h264 @ 0x55D0c8a1] error while decoding MB 3 1"
        ));
        assert!(is_ffmpeg_line(
            b"\x1b[0;33m[mpeg4 @ 0x642ccc0] \x1b[0m\x1b[1;31mError at MB: 1948\x1b[0m\n"
        ));
        assert!(!is_ffmpeg_line(b"fishtrack: warning: 3 damaged frames\n"));
        assert!(!is_ffmpeg_line(
            b"[ WARN:0@0.012] global cap.cpp (130) open\n"
        ));
        assert!(!is_ffmpeg_line(b"[mpeg4 @ nowhere] text\n"));
        assert!(!is_ffmpeg_line(b"thread 'main' panicked at src/x.rs:1:1\n"));
    }

    #[test]
    fn sorter_counts_ffmpeg_lines_and_forwards_the_rest_whole() {
        let mut sorter = LineSorter::default();
        let mut out: Vec<Vec<u8>> = Vec::new();
        let mut forward = |l: &[u8]| out.push(l.to_vec());
        // FFmpeg writes a line in parts (prefix, then message).
        let mut counted = sorter.write(b"[mpeg4 @ 0x1f] ", &mut forward);
        counted += sorter.write(b"Error at MB: 1948\nplain", &mut forward);
        counted += sorter.write(b" text\n[avi @ 0x2e] odd", &mut forward);
        assert_eq!(counted, 1);
        assert_eq!(sorter.finish(&mut forward), 1);
        assert_eq!(out, vec![b"plain text\n".to_vec()]);
    }

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn lines_written_to_c_stderr_are_counted_while_the_guard_lives() {
        extern "C" {
            static mut stderr: *mut libc::FILE;
        }
        let put = |text: &std::ffi::CStr| {
            // SAFETY: a NUL-terminated string written to C's current `stderr`.
            unsafe { libc::fputs(text.as_ptr(), stderr) };
        };
        let log = DecoderLog::start();
        assert!(log.is_counting());
        let before = errors_seen();
        put(c"[mpeg4 @ 0x642ccc0] ac-tex damaged at 4 24\n");
        put(c"[mpeg4 @ 0x642ccc0] ");
        put(c"Error at MB: 1948\n");
        assert_eq!(errors_seen() - before, 2);
        drop(log);
        let after = errors_seen();
        put(c"[mpeg4 @ 0x642ccc0] printed, not counted (the test's own stderr)\n");
        assert_eq!(errors_seen(), after);
    }
}
