//! Toolcell's stand-in for [memmap2](https://crates.io/crates/memmap2): a
//! read-only "map" is the file read into memory.
//!
//! gix maps loose objects, packs, pack indexes, the index file, the
//! commit-graph and large packed-refs files with memmap2, unconditionally
//! (no gix feature or setting avoids it), and memmap2 has no backend for
//! WASI, where it fails every map with `unsupported`. The git plugin's
//! workspace replaces memmap2 with this crate through `[patch.crates-io]`.
//!
//! Only the API gix uses is here: [`MmapOptions::new`], [`MmapOptions::map`],
//! [`MmapOptions::map_copy_read_only`], and [`Mmap`] as `&[u8]`. The maps gix
//! asks for are read-only, so a copy in memory behaves the same on every
//! target; it costs the file's size in memory and one read, where a map
//! would page in on demand. The functions are safe: unlike a map, a copy
//! cannot change under the reader when the file does.
//!
//! Packs no longer come through here: the workspace's patched gix-pack
//! (`../vendor/gix-pack`, see its TOOLCELL.md) reads them entry by entry, as a
//! copy of a whole pack cost its size in time and memory on every call.
//! What is left (indexes, the commit-graph, the index file, loose objects)
//! is small next to the packs, or read whole by git as well.
//!
//! Why a patch in a workspace of its own and not in the root one: a
//! `[patch]` applies to a whole workspace, and the root workspace builds the
//! real memmap2 natively (grep-searcher, under the search plugin and its
//! benchmark), where a map is what it should stay.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::ops::Deref;

/// The bytes of a file, read whole when it was "mapped".
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Mmap {
    bytes: Vec<u8>,
}

impl Mmap {
    /// Reads `file` whole, from its start, and leaves its position where it
    /// was: a map does not move the file's cursor, and gix reads on from it
    /// (the index's checksum is hashed through the same handle).
    fn read(mut file: &File) -> io::Result<Mmap> {
        let position = file.stream_position()?;
        file.seek(SeekFrom::Start(0))?;
        let bytes = Mmap::read_to_end(file);
        file.seek(SeekFrom::Start(position))?;
        bytes
    }

    fn read_to_end(mut file: &File) -> io::Result<Mmap> {
        let hint = file
            .metadata()
            .ok()
            .and_then(|meta| usize::try_from(meta.len()).ok())
            .unwrap_or(0);
        let mut bytes = Vec::new();
        bytes.try_reserve_exact(hint).map_err(io::Error::other)?;
        file.read_to_end(&mut bytes)?;
        Ok(Mmap { bytes })
    }
}

impl Deref for Mmap {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.bytes
    }
}

impl AsRef<[u8]> for Mmap {
    fn as_ref(&self) -> &[u8] {
        &self.bytes
    }
}

impl std::fmt::Debug for Mmap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mmap")
            .field("len", &self.bytes.len())
            .finish()
    }
}

/// How to "map" a file. There is nothing to choose: every map is the whole
/// file, read-only.
#[derive(Clone, Debug, Default)]
pub struct MmapOptions {
    _private: (),
}

impl MmapOptions {
    /// Options for a map of the whole file.
    pub fn new() -> MmapOptions {
        MmapOptions::default()
    }

    /// The file's contents.
    pub fn map(&self, file: &File) -> io::Result<Mmap> {
        Mmap::read(file)
    }

    /// The file's contents (a private, read-only map in memmap2).
    pub fn map_copy_read_only(&self, file: &File) -> io::Result<Mmap> {
        Mmap::read(file)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_map_is_the_whole_file() {
        let dir = std::env::temp_dir().join(format!("memmap-stand-in-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("data");
        std::fs::write(&path, b"hello, pack").unwrap();
        let file = File::open(&path).unwrap();
        assert_eq!(
            &*MmapOptions::new().map_copy_read_only(&file).unwrap(),
            b"hello, pack"
        );
        let file = File::open(&path).unwrap();
        assert_eq!(
            MmapOptions::new().map(&file).unwrap().as_ref(),
            b"hello, pack"
        );
        let empty = dir.join("empty");
        std::fs::write(&empty, b"").unwrap();
        assert!(
            MmapOptions::new()
                .map(&File::open(&empty).unwrap())
                .unwrap()
                .is_empty()
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
