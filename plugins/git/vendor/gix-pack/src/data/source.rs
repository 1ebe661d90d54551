//! Where the bytes of a pack data file come from.
//!
//! Toolcell's patch: this module is not in gix-pack 0.77.0. Upstream, a pack data file is one
//! `&[u8]`, a memory map of the whole file, and decoding an entry slices it. WASI has no memory
//! maps, so a pack had to be read whole into memory before the first object could be decoded: a
//! 50 MB pack cost 50 MB of memory and most of the time of a call that needed a hundred commits,
//! and a pack larger than the memory a plugin may use could not be read at all.
//!
//! A [`Source`] hands out the bytes of a range instead. Anything that dereferences to bytes (a map,
//! a `Vec`) is a source that lends slices of itself, as before; a [`PositionedFile`] reads each
//! range from the file with a positioned read, so decoding an entry reads that entry only.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::ops::Deref;
use std::path::Path;

/// The bytes of a pack data file, handed out by range.
pub trait Source {
    /// The length of the data, in bytes.
    fn len(&self) -> usize;

    /// Whether the data is empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes of `offset..offset + len`; fewer only where the data ends before, and none when
    /// `offset` is at or past its end.
    fn bytes(&self, offset: usize, len: usize) -> std::io::Result<Cow<'_, [u8]>>;
}

/// Data in memory, or mapped, lends slices of itself.
impl<T> Source for T
where
    T: Deref<Target = [u8]>,
{
    fn len(&self) -> usize {
        self.deref().len()
    }

    fn bytes(&self, offset: usize, len: usize) -> std::io::Result<Cow<'_, [u8]>> {
        let data: &[u8] = self;
        let start = offset.min(data.len());
        let end = offset.saturating_add(len).min(data.len());
        Ok(Cow::Borrowed(&data[start..end]))
    }
}

/// A pack data file read range by range with positioned reads, never whole.
///
/// Reads go through a small cache of aligned blocks (8 MiB for a file, 16 MiB for all files), so
/// that an entry's header and its data, the trees of one walk, or the bases of deltas decoded one
/// after another, which lie near each other in a pack, are read once. A range longer than a few
/// blocks is read directly.
///
/// Its length is taken when it is opened. Like a map, it assumes that the file does not change
/// while it is in use (git never rewrites a pack in place); if it does, a read past its new end is
/// short, and decoding the entry fails as truncated rather than reading anything else.
#[derive(Debug)]
pub struct PositionedFile {
    file: std::fs::File,
    len: usize,
    blocks: Mutex<Blocks>,
}

/// The size of a cached block.
const BLOCK: usize = 16 << 10;
/// How many blocks one file keeps, least recently used first out.
const CACHED_BLOCKS: usize = 512;
/// How many bytes the blocks of all files keep together: a repository with many packs must not
/// hold a full cache for each of them.
const CACHED_BYTES_IN_ALL: usize = 16 << 20;
/// The bytes all files' caches hold now.
static CACHED_BYTES: AtomicUsize = AtomicUsize::new(0);
/// Ranges longer than this bypass the cache.
const MAX_CACHED_RANGE: usize = 4 * BLOCK;

/// Blocks read lately, by block number, with when each was last used.
#[derive(Debug, Default)]
struct Blocks {
    by_number: HashMap<usize, (Box<[u8]>, u64)>,
    clock: u64,
    /// The bytes of the blocks held, counted in [`CACHED_BYTES`] too.
    bytes: usize,
}

impl Blocks {
    /// Keeps `block` as block `number` if this file's share of the cache allows, after letting go
    /// of its least recently used blocks as needed; hands it back if it cannot be kept.
    fn admit(&mut self, number: usize, block: Box<[u8]>, clock: u64) -> Result<&[u8], Box<[u8]>> {
        while !self.by_number.is_empty()
            && (self.by_number.len() >= CACHED_BLOCKS
                || CACHED_BYTES.load(Ordering::Relaxed) + block.len() > CACHED_BYTES_IN_ALL)
        {
            let oldest = self.by_number.iter().min_by_key(|(_, (_, used))| *used).map(|(n, _)| *n);
            if let Some((evicted, _)) = oldest.and_then(|oldest| self.by_number.remove(&oldest)) {
                self.bytes -= evicted.len();
                CACHED_BYTES.fetch_sub(evicted.len(), Ordering::Relaxed);
            }
        }
        let reserved = CACHED_BYTES.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |held| {
            (held + block.len() <= CACHED_BYTES_IN_ALL).then_some(held + block.len())
        });
        if reserved.is_err() {
            return Err(block);
        }
        self.bytes += block.len();
        Ok(&self.by_number.entry(number).or_insert((block, clock)).0)
    }
}

impl Drop for Blocks {
    fn drop(&mut self) {
        CACHED_BYTES.fetch_sub(self.bytes, Ordering::Relaxed);
    }
}

impl PositionedFile {
    /// Opens the file at `path` for reading.
    pub fn open(path: &Path) -> std::io::Result<Self> {
        let file = std::fs::File::open(path)?;
        let len = usize::try_from(file.metadata()?.len()).map_err(std::io::Error::other)?;
        Ok(PositionedFile {
            file,
            len,
            blocks: Mutex::default(),
        })
    }

    /// The bytes the block caches of all open files hold together (at most 16 MiB).
    pub fn cached_bytes_in_all() -> usize {
        CACHED_BYTES.load(Ordering::Relaxed)
    }

    /// Fills as much of `buf` as the file has from `offset` on.
    fn read_at(&self, mut buf: &mut [u8], mut offset: u64) -> std::io::Result<usize> {
        let mut filled = 0;
        while !buf.is_empty() {
            match read_at(&self.file, buf, offset) {
                Ok(0) => break,
                Ok(n) => {
                    filled += n;
                    offset += n as u64;
                    buf = &mut buf[n..];
                }
                Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
                Err(err) => return Err(err),
            }
        }
        Ok(filled)
    }

    /// Reads `start..end` into a new buffer, without the cache.
    fn read_range(&self, start: usize, end: usize) -> std::io::Result<Vec<u8>> {
        let mut buf = Vec::new();
        buf.try_reserve_exact(end - start).map_err(std::io::Error::other)?;
        buf.resize(end - start, 0);
        let filled = self.read_at(&mut buf, start as u64)?;
        buf.truncate(filled);
        Ok(buf)
    }

    /// Copies `start..end` out of cached blocks, reading the blocks that are not cached.
    fn read_cached(&self, start: usize, end: usize) -> std::io::Result<Vec<u8>> {
        let mut out = Vec::with_capacity(end - start);
        let mut blocks = self.blocks.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut at = start;
        while at < end {
            let number = at / BLOCK;
            let block_start = number * BLOCK;
            blocks.clock += 1;
            let clock = blocks.clock;
            let uncached;
            let block = if let Some((block, used)) = blocks.by_number.get_mut(&number) {
                *used = clock;
                &**block
            } else {
                let block = self
                    .read_range(block_start, (block_start + BLOCK).min(self.len))?
                    .into_boxed_slice();
                match blocks.admit(number, block, clock) {
                    Ok(block) => block,
                    Err(block) => {
                        uncached = block;
                        &*uncached
                    }
                }
            };
            let from = at - block_start;
            let to = (end - block_start).min(block.len());
            if from >= to {
                break; // The file is shorter than it was when opened.
            }
            out.extend_from_slice(&block[from..to]);
            at = block_start + to;
        }
        Ok(out)
    }
}

impl Source for PositionedFile {
    fn len(&self) -> usize {
        self.len
    }

    fn bytes(&self, offset: usize, len: usize) -> std::io::Result<Cow<'_, [u8]>> {
        let start = offset.min(self.len);
        let end = offset.saturating_add(len).min(self.len);
        let bytes = if end - start > MAX_CACHED_RANGE {
            self.read_range(start, end)?
        } else {
            self.read_cached(start, end)?
        };
        Ok(Cow::Owned(bytes))
    }
}

/// One positioned read.
#[cfg(unix)]
pub(crate) fn read_at(file: &std::fs::File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buf, offset)
}

/// One positioned read: WASI's `pread`, one host call (std's `read_at` for WASI is unstable, and a
/// seek and a read are three host calls under wasi-libc).
#[cfg(target_os = "wasi")]
pub(crate) fn read_at(file: &std::fs::File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    use std::os::fd::AsRawFd;
    let offset = libc::off_t::try_from(offset).map_err(std::io::Error::other)?;
    // SAFETY: `buf` is valid for writes of `buf.len()` bytes for the duration of the call, and
    // the descriptor belongs to `file`, which outlives it.
    #[expect(unsafe_code)]
    let read = unsafe { libc::pread(file.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), offset) };
    usize::try_from(read).map_err(|_| std::io::Error::last_os_error())
}

/// One positioned read, elsewhere: a seek and a read through a shared handle. A `PositionedFile`
/// owns its handle, and nothing else moves its cursor.
#[cfg(not(any(unix, target_os = "wasi")))]
pub(crate) fn read_at(mut file: &std::fs::File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    use std::io::{Read, Seek, SeekFrom};
    file.seek(SeekFrom::Start(offset))?;
    file.read(buf)
}
