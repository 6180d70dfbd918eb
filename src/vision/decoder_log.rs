//! FFmpeg's decoder messages, counted instead of printed: while a [`DecoderLog`]
//! lives, the lines FFmpeg's logger writes (`[mpeg4 @ 0x55d0c8] ac-tex damaged at 4
//! 24`) add one each to a process-wide count ([`errors_seen`]) and to the count of
//! the video whose decoder wrote them ([`VideoCount`]), and are not shown; any other
//! line written the same way reaches stderr unchanged. The capture reads its video's
//! count around each frame it reads to tell frames decoded with errors.
//!
//! Which video a line is from: FFmpeg's lines do not say (the `0x…` is a decoder
//! context, one per decoding thread, that nothing outside FFmpeg knows), but the
//! thread writing them does. A line is written by the thread that decodes: the
//! reading thread itself (inside a read, or the opening) or one of the frame
//! threads FFmpeg starts for that video's decoder when it is opened, and that live
//! until it is closed. So videos are opened one at a time ([`VideoCount::open`]),
//! the threads that appear during an opening are taken as that video's, and a
//! thread inside a read or an opening ([`VideoCount::reading`]) counts for the
//! video it reads. A line from a thread known to no video (none where `/proc` can
//! be read) counts for every video open: too much damage said, never too little.
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

use std::cell::Cell;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

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

/// The videos open (each with its count) and the decoding threads known to be
/// theirs.
#[derive(Default)]
struct Registry {
    next: u64,
    videos: HashMap<u64, Arc<AtomicU64>>,
    /// Thread id → the video whose decoder started the thread.
    threads: HashMap<i64, u64>,
}

static REGISTRY: Mutex<Option<Registry>> = Mutex::new(None);
/// Held while a video opens: the threads appearing meanwhile are its decoder's.
static OPENING: Mutex<()> = Mutex::new(());

thread_local! {
    /// The video this thread is reading or opening, if any.
    static CURRENT: Cell<Option<u64>> = const { Cell::new(None) };
}

fn registry() -> MutexGuard<'static, Option<Registry>> {
    REGISTRY.lock().unwrap_or_else(|p| p.into_inner())
}

/// The calling thread's id (the kernel's, as `/proc/self/task` lists it).
fn thread_id() -> i64 {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: gettid takes no argument and cannot fail.
        unsafe { libc::syscall(libc::SYS_gettid) }
    }
    #[cfg(not(target_os = "linux"))]
    {
        0
    }
}

/// The threads of this process now; `None` where `/proc` cannot be read.
fn threads_now() -> Option<HashSet<i64>> {
    if !cfg!(target_os = "linux") {
        return None;
    }
    let dir = std::fs::read_dir("/proc/self/task").ok()?;
    Some(
        dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
            .collect(),
    )
}

/// Counts one FFmpeg line written by the calling thread: to the video it reads or
/// opens, else to the video whose decoder thread it is, else to every video open.
fn charge_line() {
    ERRORS_SEEN.fetch_add(1, Ordering::SeqCst);
    let current = CURRENT.try_with(Cell::get).ok().flatten();
    let guard = registry();
    let Some(reg) = guard.as_ref() else {
        return;
    };
    let owner = current.or_else(|| reg.threads.get(&thread_id()).copied());
    match owner.and_then(|id| reg.videos.get(&id)) {
        Some(count) => {
            count.fetch_add(1, Ordering::SeqCst);
        }
        None => {
            for count in reg.videos.values() {
                count.fetch_add(1, Ordering::SeqCst);
            }
        }
    }
}

/// One open video's share of FFmpeg's lines: those its decoder wrote since it was
/// opened. Dropping it forgets the video and its threads (drop it after the
/// video is closed).
pub struct VideoCount {
    id: u64,
    count: Arc<AtomicU64>,
}

impl VideoCount {
    /// Runs `open` (which opens one video) with the other openings held off, and
    /// takes the threads that appeared meanwhile as this video's decoder's.
    pub fn open<T>(open: impl FnOnce() -> T) -> (T, VideoCount) {
        let _one_at_a_time = OPENING.lock().unwrap_or_else(|p| p.into_inner());
        let count = Arc::new(AtomicU64::new(0));
        let id = {
            let mut guard = registry();
            let reg = guard.get_or_insert_with(Registry::default);
            reg.next += 1;
            reg.videos.insert(reg.next, Arc::clone(&count));
            reg.next
        };
        let video = VideoCount { id, count };
        let before = threads_now();
        let opened = video.reading(open);
        if let (Some(before), Some(after)) = (before, threads_now()) {
            let mut guard = registry();
            if let Some(reg) = guard.as_mut() {
                for tid in after.difference(&before) {
                    // A thread id may be one a closed video's thread had.
                    reg.threads.insert(*tid, id);
                }
            }
        }
        (opened, video)
    }

    /// Runs `read` (a read of this video) with the lines the calling thread writes
    /// meanwhile counted as this video's.
    pub fn reading<T>(&self, read: impl FnOnce() -> T) -> T {
        let before = CURRENT.with(|c| c.replace(Some(self.id)));
        // Put back also when `read` unwinds.
        struct Restore(Option<u64>);
        impl Drop for Restore {
            fn drop(&mut self) {
                let _ = CURRENT.try_with(|c| c.set(self.0));
            }
        }
        let _restore = Restore(before);
        read()
    }

    /// This video's FFmpeg lines so far.
    pub fn seen(&self) -> u64 {
        self.count.load(Ordering::SeqCst)
    }
}

impl Drop for VideoCount {
    fn drop(&mut self) {
        if let Some(reg) = registry().as_mut() {
            reg.videos.remove(&self.id);
            reg.threads.retain(|_, v| *v != self.id);
        }
    }
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
    use super::{charge_line, LineSorter};
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
                // A line is charged to the thread that ends it: FFmpeg writes each
                // of its lines whole under its own lock, so that is the thread that
                // wrote all of it.
                let counted = sorter.write(bytes, &mut |l| to_fd2(l));
                for _ in 0..counted {
                    charge_line();
                }
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
                for _ in 0..counted {
                    charge_line();
                }
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

        // Each video counts the lines of the thread reading it and of the threads
        // its opening started; a line from a thread of neither counts for both.
        let ((), a) = VideoCount::open(|| ());
        let (go, b) = VideoCount::open(|| {
            let (go, wait) = std::sync::mpsc::channel::<()>();
            let worker = std::thread::spawn(move || {
                while wait.recv().is_ok() {
                    put(c"[mpeg4 @ 0x77] from b's decoder thread\n");
                }
            });
            (go, worker)
        });
        a.reading(|| put(c"[mpeg4 @ 0x66] read from a\n"));
        assert_eq!((a.seen(), b.seen()), (1, 0));
        go.0.send(()).unwrap();
        drop(go.0);
        go.1.join().unwrap();
        assert_eq!((a.seen(), b.seen()), (1, 1));
        std::thread::spawn(move || put(c"[mpeg4 @ 0x88] from nobody's thread\n"))
            .join()
            .unwrap();
        assert_eq!((a.seen(), b.seen()), (2, 2));
        assert_eq!(errors_seen() - before, 5);
        drop(log);
        let after = errors_seen();
        put(c"[mpeg4 @ 0x642ccc0] printed, not counted (the test's own stderr)\n");
        assert_eq!(errors_seen(), after);
    }
}
