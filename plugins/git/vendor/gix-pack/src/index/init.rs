use gix_error::Result;
use std::{
    borrow::Cow,
    mem::size_of,
    path::{Path, PathBuf},
};

use gix_error::{ResultExt, bail, message};

use crate::index::{self, FAN_LEN, V2_SIGNATURE, Version};

fn corrupt(message: impl Into<Cow<'static, str>>) -> gix_error::Error {
    gix_error::corruption(message).into()
}

const N32_SIZE: usize = size_of::<u32>();

/// Instantiation
impl index::File<index::LazyFile> {
    /// Open the pack index file at the given `path`.
    ///
    /// The `object_hash` is a way to read (and write) the same file format with different hashes, as the hash kind
    /// isn't stored within the file format itself.
    pub fn at(path: impl AsRef<Path>, object_hash: gix_hash::Kind) -> Result<Self> {
        Self::at_inner(path.as_ref(), object_hash)
    }

    fn at_inner(path: &Path, object_hash: gix_hash::Kind) -> Result<Self> {
        // Toolcell's patch: read lazily, not mapped (see `index::lazy`).
        let data = index::LazyFile::open(path)
            .or_raise(|| message!("Could not open pack index file at \"{}\"", path.display()))?;
        Self::from_data(data, path.to_owned(), object_hash)
    }
}

impl<T> index::File<T>
where
    T: index::Data,
{
    /// Instantiate an index file from `data` as assumed to be read or memory-mapped from `path`.
    pub fn from_data(data: T, path: PathBuf, object_hash: gix_hash::Kind) -> Result<Self> {
        let idx_len = data.len();
        let hash_len = object_hash.len_in_bytes();

        let footer_size = hash_len * 2;
        if idx_len < FAN_LEN * N32_SIZE + footer_size {
            return Err(corrupt(format!(
                "Pack index of size {idx_len} is too small for even an empty index"
            )));
        }
        // Toolcell's patch: the header is read as one range, not sliced out of the whole file.
        let header = data.slice(0, (V2_SIGNATURE.len() + N32_SIZE + FAN_LEN * N32_SIZE).min(idx_len));
        let (kind, fan, num_objects) = {
            let (kind, d) = {
                let (sig, d) = header.split_at(V2_SIGNATURE.len());
                if sig == V2_SIGNATURE {
                    (Version::V2, d)
                } else {
                    (Version::V1, header)
                }
            };
            let d = {
                if let Version::V2 = kind {
                    let (vd, dr) = d.split_at(N32_SIZE);
                    let version = crate::read_u32(vd);
                    if version != Version::V2 as u32 {
                        bail!("Unsupported index version: {version})".unsupported());
                    }
                    dr
                } else {
                    d
                }
            };
            let (fan, bytes_read) = read_fan(d);
            let (_, _d) = d.split_at(bytes_read);
            let num_objects = fan[FAN_LEN - 1];

            (kind, fan, num_objects)
        };
        validate_fan(&fan)?;
        validate_size(idx_len, kind, num_objects, hash_len)?;
        Ok(Self {
            data,
            path,
            version: kind,
            num_objects,
            fan,
            hash_len,
            object_hash,
        })
    }
}

fn read_fan(d: &[u8]) -> ([u32; FAN_LEN], usize) {
    assert!(d.len() >= FAN_LEN * N32_SIZE);

    let mut fan = [0; FAN_LEN];
    for (c, f) in d.as_chunks::<N32_SIZE>().0.iter().zip(fan.iter_mut()) {
        *f = crate::read_u32(c);
    }
    (fan, FAN_LEN * N32_SIZE)
}

fn validate_fan(fan: &[u32; FAN_LEN]) -> Result {
    if !crate::fan_is_monotonically_increasing(fan) {
        return Err(corrupt("Pack index fan-out table must be monotonically increasing"));
    }
    Ok(())
}

/// Toolcell's patch: checks the layout from the file's length alone. Upstream also scanned every
/// 32-bit offset for the large-offset table's size, which read the whole file; instead, the
/// table is whatever lies between the 32-bit offsets and the footer (a whole number of 64-bit
/// offsets), and a 32-bit offset naming a large offset past it is refused where it is read
/// (`pack_offset_from_offset_v2`).
fn validate_size(len: usize, kind: Version, num_objects: u32, hash_len: usize) -> Result {
    let num_objects = num_objects as usize;
    let footer_size = hash_len * 2;
    let expected_size = match kind {
        Version::V1 => FAN_LEN
            .checked_mul(N32_SIZE)
            .and_then(|size| size.checked_add(num_objects.checked_mul(N32_SIZE + hash_len)?))
            .and_then(|size| size.checked_add(footer_size))
            .ok_or_else(|| corrupt("Pack index size overflowed while validating version 1 layout"))?,
        Version::V2 => {
            let v2_header_size = V2_SIGNATURE.len() + N32_SIZE + FAN_LEN * N32_SIZE;
            let minimum = num_objects
                .checked_mul(hash_len + 2 * N32_SIZE)
                .and_then(|size| size.checked_add(v2_header_size))
                .and_then(|size| size.checked_add(footer_size))
                .ok_or_else(|| corrupt("Pack index size overflowed while validating version 2 layout"))?;
            if len < minimum {
                return Err(corrupt(format!(
                    "Pack index of size {len} is too small for {num_objects} objects in version 2"
                )));
            }
            minimum + (len - minimum) / size_of::<u64>() * size_of::<u64>()
        }
    };
    let data_len = len;
    if data_len != expected_size {
        // Aborting here is needed for protection against malformed inputs, or the offset access done later can panic
        // as it's done without explicit error handling.
        return Err(corrupt(format!(
            "Pack index size is incorrect, expected {expected_size} bytes for {num_objects} objects in version {kind:?}, but got {} bytes",
            data_len
        )));
    }
    Ok(())
}
