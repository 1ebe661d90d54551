use gix_error::Result;
use std::path::{Path, PathBuf};

use gix_error::{ResultExt, bail, message};

use crate::data;

/// Instantiation
impl data::File<data::PositionedFile> {
    /// Try opening a data file at the given `path`.
    ///
    /// The `object_hash` is a way to read (and write) the same file format with different hashes, as the hash kind
    /// isn't stored within the file format itself.
    ///
    /// This constructor leaves allocation limiting disabled, allowing allocations of any size dictated by pack data.
    /// Use [`Self::from_data()`] together with [`File::with_alloc_limit_bytes()`][crate::data::File::with_alloc_limit_bytes()]
    /// when working with untrusted input.
    pub fn at(path: impl AsRef<Path>, object_hash: gix_hash::Kind) -> Result<Self> {
        Self::at_inner(path.as_ref(), object_hash)
    }

    fn at_inner(path: &Path, object_hash: gix_hash::Kind) -> Result<Self> {
        // Toolcell's patch: read by range, not mapped (see data/source.rs).
        let data = data::PositionedFile::open(path)
            .or_raise(|| message!("Could not open pack data file at \"{}\"", path.display()))?;
        Self::from_data(data, path.to_owned(), object_hash)
    }
}

impl<T> data::File<T>
where
    T: data::Source,
{
    /// Instantiate a data file from `data` as assumed to be read or memory-mapped from `path`.
    ///
    /// This constructor leaves allocation limiting disabled, allowing allocations of any size dictated by pack data.
    /// Call [`File::with_alloc_limit_bytes()`][crate::data::File::with_alloc_limit_bytes()] before decoding entries from untrusted input.
    pub fn from_data(data: T, path: PathBuf, object_hash: gix_hash::Kind) -> Result<Self> {
        let hash_len = object_hash.len_in_bytes();
        let pack_len = data.len();
        let id = crc32fast::hash(path.as_os_str().to_string_lossy().as_bytes());
        if pack_len < data::header::SIZE + hash_len {
            bail!(gix_error::corruption(format!(
                "Pack data of size {pack_len} is too small for even an empty pack with shortest hash"
            )));
        }
        let unreadable = || message!("Could not read pack data file at \"{}\"", path.display());
        let header = data.bytes(0, data::header::SIZE).or_raise(unreadable)?;
        let header = <&[u8; data::header::SIZE]>::try_from(&header[..])
            .map_err(|_| gix_error::message!("Pack data header is truncated").corrupted())?;
        let (kind, num_objects) = data::header::decode(header)?;
        let trailer = data.bytes(pack_len - hash_len, hash_len).or_raise(unreadable)?;
        let checksum = gix_hash::ObjectId::try_from(&trailer[..])
            .or_raise(|| gix_error::corruption("Pack data trailer is truncated"))?;
        Ok(Self {
            data,
            checksum,
            path,
            id,
            version: kind,
            num_objects,
            object_hash,
            alloc_limit_bytes: None,
        })
    }

    /// Configure the maximum size of a single allocation caused by user-controlled on-disk pack data.
    ///
    /// Use `None` to disable the limit, which is also the default.
    ///
    /// This is currently enforced when decoding pack entries and resolving delta chains.
    /// The limit applies to the combined size of buffers that hold both work data and delta instructions.
    /// Buffer growth uses exact reservations when a limit is set, and retains existing capacity.
    /// Callers that allocate from pack metadata directly should consult [`File::alloc_limit_bytes()`][crate::data::File::alloc_limit_bytes]
    /// and apply the same limit themselves.
    pub fn with_alloc_limit_bytes(mut self, alloc_limit_bytes: Option<usize>) -> Self {
        self.alloc_limit_bytes = alloc_limit_bytes;
        self
    }
}
