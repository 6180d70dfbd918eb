//! The judged shots of a live match, kept in a file instead of in memory: each shot's
//! record (its per-frame track rows, calls and identities make it some 10 KB in
//! memory) is written once it has been told, and read back only for an amendment
//! and for the record at the match's end, which is written shot by shot
//! ([`crate::record::Record::save_with_shots`]). What stays in memory per shot is
//! where its line lies (24 bytes).
//!
//! The file is made beside the journal and unlinked at once: nothing is left behind
//! by a crash, and a resume reads the shots from the journal's `shot_record` lines,
//! which hold the same.
//! Uses: record.

use super::DriverError;
use crate::record::Shot;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Where one shot's line lies in the file.
#[derive(Debug, Clone, Copy)]
struct Entry {
    offset: u64,
    len: u64,
}

/// The shots judged so far, by index, in an unlinked file.
pub struct KeptShots {
    file: File,
    /// What errors name: the (unlinked) file's path.
    path: PathBuf,
    /// Where the next line goes.
    end: u64,
    /// Shot `k`'s line (`None` until it is kept).
    entries: Vec<Option<Entry>>,
}

impl std::fmt::Debug for KeptShots {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeptShots")
            .field("path", &self.path)
            .field("shots", &self.entries.len())
            .field("bytes", &self.end)
            .finish()
    }
}

impl KeptShots {
    /// A new, empty file in `folder` (removed from the folder at once: it lives as
    /// long as this handle).
    pub fn create(folder: &Path) -> Result<KeptShots, DriverError> {
        let folder = if folder.as_os_str().is_empty() {
            Path::new(".")
        } else {
            folder
        };
        // Runs in one process (tests) each have a name of their own.
        static MADE: AtomicU64 = AtomicU64::new(0);
        let path = folder.join(format!(
            ".fishtrack-shots-{}-{}.tmp",
            std::process::id(),
            MADE.fetch_add(1, Ordering::Relaxed)
        ));
        let io = |source| DriverError::Kept {
            path: path.display().to_string(),
            source,
        };
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(io)?;
        // Unlinked, the file's space goes back to the system when the handle closes,
        // crash or not.
        std::fs::remove_file(&path).map_err(io)?;
        Ok(KeptShots {
            file,
            path,
            end: 0,
            entries: Vec::new(),
        })
    }

    fn io(&self, source: std::io::Error) -> DriverError {
        DriverError::Kept {
            path: self.path.display().to_string(),
            source,
        }
    }

    /// Keeps `shot` as shot `shot.index` (replacing what was kept for that index: an
    /// amended shot's new record).
    pub fn put(&mut self, shot: &Shot) -> Result<(), DriverError> {
        let mut bytes = serde_json::to_vec(shot)?;
        bytes.push(b'\n');
        self.file
            .seek(SeekFrom::Start(self.end))
            .and_then(|_| self.file.write_all(&bytes))
            .map_err(|e| self.io(e))?;
        let entry = Entry {
            offset: self.end,
            len: bytes.len() as u64,
        };
        self.end += entry.len;
        if self.entries.len() <= shot.index {
            self.entries.resize(shot.index + 1, None);
        }
        self.entries[shot.index] = Some(entry);
        Ok(())
    }

    /// Shot `index` as kept.
    pub fn get(&mut self, index: usize) -> Result<Shot, DriverError> {
        let Some(entry) = self.entries.get(index).copied().flatten() else {
            return Err(self.io(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("shot {index} was never kept"),
            )));
        };
        let mut bytes = vec![0u8; entry.len as usize];
        self.file
            .seek(SeekFrom::Start(entry.offset))
            .and_then(|_| self.file.read_exact(&mut bytes))
            .map_err(|e| self.io(e))?;
        Ok(serde_json::from_slice(&bytes)?)
    }

    /// Shots `range` in order, read one at a time (for a record written shot by shot).
    pub fn read(
        &mut self,
        range: std::ops::Range<usize>,
    ) -> impl Iterator<Item = Result<Shot, DriverError>> + '_ {
        range.map(move |k| self.get(k))
    }

    /// Shots `range`, all read at once (an amendment judges the match again).
    pub fn read_all(&mut self, range: std::ops::Range<usize>) -> Result<Vec<Shot>, DriverError> {
        self.read(range).collect()
    }

    /// Bytes of the file (a test's yardstick: the shots are there, not in memory).
    pub fn bytes(&self) -> u64 {
        self.end
    }

    /// How many shot indices it has room for (kept or not).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}
