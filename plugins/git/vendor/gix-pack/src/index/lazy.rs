//! Where the bytes of a pack index file come from.
//!
//! Toolcell's patch: this module is not in gix-pack 0.77.0. Upstream, an index file is one
//! `&[u8]`, a memory map of the whole file. WASI has no maps, so every call of the git plugin read
//! every index whole before its first lookup: for the git project's history (849,014 objects, a
//! 24 MB index) that was 80% of a 28 ms `git_log` of 50 commits, and the instance's memory it
//! touched had to be given back after each call too.
//!
//! A lookup reads a few dozen bytes near one place of the id table (see `access::lookup`) and one
//! offset. [`Data`] hands out ranges of the file instead of the whole: anything that dereferences
//! to bytes lends slices of itself, as before, and a [`LazyFile`] reads the file in aligned chunks
//! the first time one is needed. A chunk, once read, is kept until the file is dropped (lookups
//! return references into it). A walk that looks up most of the objects would make thousands of
//! small reads, so once the chunks read come to half the file, the whole of it is read in one go
//! and served from there. Reading it whole costs about as much as reading half of it in chunks
//! (a read per chunk, against copying and paging in the other half): a 50-commit `git_log` of one
//! path on the git project's history, which looks up 1,547 trees in a 24 MB index, read 2,954
//! chunks (6 MB) and took 53 ms; with 4 KiB chunks and the file read whole once a quarter of it
//! had been read, it took 68 ms (medians of 23 calls).

use std::ops::Deref;
use std::path::Path;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The bytes of a pack index file, handed out by range.
pub trait Data {
    /// The length of the file, in bytes.
    fn len(&self) -> usize;

    /// Whether the file is empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes of `offset..offset + len`.
    ///
    /// # Panics
    ///
    /// If the range is not within the file, or the file cannot be read.
    fn slice(&self, offset: usize, len: usize) -> &[u8];

    /// The whole file.
    ///
    /// # Panics
    ///
    /// If the file cannot be read.
    fn all(&self) -> &[u8];
}

/// Data in memory, or mapped, lends slices of itself.
impl<T> Data for T
where
    T: Deref<Target = [u8]>,
{
    fn len(&self) -> usize {
        self.deref().len()
    }

    fn slice(&self, offset: usize, len: usize) -> &[u8] {
        &self.deref()[offset..][..len]
    }

    fn all(&self) -> &[u8] {
        self
    }
}

/// The size of a chunk read on demand.
const CHUNK: usize = 2 << 10;
/// How far a chunk reaches past its end, so that a range of at most this many bytes that starts
/// in a chunk also ends in it (an object id, an offset or a CRC never straddles two reads). A
/// longer range is served from the chunk it starts in if it fits there (the header), else from
/// the whole file.
const OVERLAP: usize = 64;

/// A pack index file read in chunks as lookups reach them, or whole once many are needed.
///
/// Its length is taken when it is opened. Like a map, it assumes that the file does not change
/// while it is in use (git never rewrites an index in place).
pub struct LazyFile {
    file: std::fs::File,
    len: usize,
    chunks: Box<[OnceLock<Box<[u8]>>]>,
    /// How many chunks have been read.
    read: AtomicUsize,
    whole: OnceLock<Box<[u8]>>,
}

impl LazyFile {
    /// Opens the file at `path` for reading.
    pub fn open(path: &Path) -> std::io::Result<Self> {
        let file = std::fs::File::open(path)?;
        let len = usize::try_from(file.metadata()?.len()).map_err(std::io::Error::other)?;
        Ok(LazyFile {
            file,
            len,
            chunks: (0..len.div_ceil(CHUNK)).map(|_| OnceLock::new()).collect(),
            read: AtomicUsize::new(0),
            whole: OnceLock::new(),
        })
    }

    /// Reads `start..end` of the file into a new buffer.
    fn read(&self, start: usize, end: usize) -> Box<[u8]> {
        let mut buf = vec![0; end - start];
        let mut filled = 0;
        while filled < buf.len() {
            match crate::data::source::read_at(&self.file, &mut buf[filled..], (start + filled) as u64) {
                Ok(0) => panic!("the pack index file became shorter while it was read"),
                Ok(n) => filled += n,
                Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
                Err(err) => panic!("cannot read the pack index file: {err}"),
            }
        }
        buf.into_boxed_slice()
    }
}

impl std::fmt::Debug for LazyFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LazyFile")
            .field("len", &self.len)
            .field("chunks_read", &self.read.load(Ordering::Relaxed))
            .field("whole", &self.whole.get().is_some())
            .finish()
    }
}

impl Data for LazyFile {
    fn len(&self) -> usize {
        self.len
    }

    fn slice(&self, offset: usize, len: usize) -> &[u8] {
        let end = offset.checked_add(len).expect("a range within the index");
        assert!(end <= self.len, "a range past the end of the pack index file");
        if let Some(whole) = self.whole.get() {
            return &whole[offset..end];
        }
        let number = offset / CHUNK;
        let start = number * CHUNK;
        if end - start > CHUNK + OVERLAP || self.read.load(Ordering::Relaxed) * CHUNK >= self.len / 2 {
            return &self.all()[offset..end];
        }
        let chunk = self.chunks[number].get_or_init(|| {
            self.read.fetch_add(1, Ordering::Relaxed);
            self.read(start, (start + CHUNK + OVERLAP).min(self.len))
        });
        &chunk[offset - start..end - start]
    }

    fn all(&self) -> &[u8] {
        self.whole.get_or_init(|| self.read(0, self.len))
    }
}
