use gix_error::{Result, ResultExt};
use std::sync::atomic::AtomicBool;

use gix_utils::progress::Progress;

use crate::data::File;

/// Checksums and verify checksums
impl<T> File<T>
where
    T: crate::data::Source,
{
    /// The checksum in the trailer of this pack data file
    pub fn checksum(&self) -> gix_hash::ObjectId {
        // Toolcell's patch: read when the file was opened.
        self.checksum
    }

    /// Verifies that the checksum of the packfile over all bytes preceding it indeed matches the actual checksum,
    /// returning the actual checksum equivalent to the return value of [`checksum()`][File::checksum()] if there
    /// is no mismatch.
    ///
    /// Note that if no `progress` is desired, one can pass [`gix_utils::progress::Discard`].
    ///
    /// Have a look at [`index::File::verify_integrity(…)`][crate::index::File::verify_integrity()] for an
    /// even more thorough integrity check.
    pub fn verify_checksum(
        &self,
        progress: &mut dyn Progress,
        should_interrupt: &AtomicBool,
    ) -> Result<gix_hash::ObjectId> {
        // Toolcell's patch: the data is not necessarily in memory; all of it is hashed anyway.
        let data = self
            .data
            .bytes(0, self.data.len())
            .or_raise(|| gix_error::message!("Could not read pack data file at \"{}\"", self.path().display()))?;
        crate::verify::checksum_on_disk_or_mmap(
            self.path(),
            &data,
            self.checksum(),
            self.object_hash,
            progress,
            should_interrupt,
        )
    }
}
