//! The Linux backend of [`super`]: stats and listings in fewer system
//! calls than wasmtime-wasi makes for them (see the module above for what
//! it replaces and why the answers are the same).

use std::collections::VecDeque;
use std::fs::File;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::Path;
use std::sync::Arc;

use anyhow::Result;
use cap_primitives::fs::{FollowSymlinks, Metadata, MetadataExt};
use wasmtime::StoreContextMut;
use wasmtime::component::{Linker, Resource, ResourceType};
use wasmtime_wasi::filesystem::Descriptor;
use wasmtime_wasi::p2::bindings::filesystem::types::{
    DescriptorStat, DescriptorType, DirectoryEntry, ErrorCode, MetadataHashValue, PathFlags,
};

use super::LookupView;
use crate::limits::LOOKUP_PARENTS;
use crate::runtime::host::stat::{descriptor_stat, directory};
use crate::runtime::sandbox::FILESYSTEM_TYPES;

/// The per-call state of the replaced calls: the parent directories kept
/// open, what the last stat found, and the last entry listed.
#[derive(Default)]
pub struct Lookups {
    parents: VecDeque<Parent>,
    last: Option<Found>,
    listed: Option<Listed>,
    /// How many host calls the guest has made.
    calls: u64,
}

/// A parent directory opened beneath `root`.
struct Parent {
    /// The descriptor it was opened from, held so that its address is not
    /// reused while the entry lives.
    root: Arc<File>,
    path: String,
    dir: File,
}

/// What a stat found, and for which call.
struct Found {
    root: Arc<File>,
    follow: bool,
    path: String,
    /// The host call that made the stat.
    call: u64,
    stat: DescriptorStat,
    /// The file's device and inode numbers.
    identity: (u64, u64),
}

/// An entry a listing returned, and in which host call.
struct Listed {
    root: Arc<File>,
    name: String,
    call: u64,
    /// The directory's device and the entry's inode number.
    identity: (u64, u64),
}

/// One directory entry with its inode number, or an error.
type Entry = Result<(DirectoryEntry, u64), ErrorCode>;

/// The `directory-entry-stream` of a listing made by [`add_to_linker`]'s
/// `read-directory`: a descriptor of the directory of its own and the
/// entries `getdents64` returned last, read as the guest asks for them.
///
/// A listing holds one small buffer (a few dozen KiB at most, rustix's
/// `Dir`), however big the directory: the host never holds a whole listing
/// for a guest, so what listings cost it is bounded by the call's handles,
/// not by the size of the directories.
pub struct Listing {
    dir: Arc<File>,
    device: u64,
    entries: rustix::fs::Dir,
}

/// Replaces `stat-at`, `metadata-hash-at` and `read-directory` (with the
/// `directory-entry-stream` resource) in `linker`, which already has WASI.
pub fn add_to_linker<T: LookupView + 'static>(linker: &mut Linker<T>) -> Result<()> {
    type PathArgs = (Resource<Descriptor>, PathFlags, String);
    linker.allow_shadowing(true);
    let mut types = linker.instance(FILESYSTEM_TYPES)?;
    types.func_wrap(
        "[method]descriptor.stat-at",
        |mut store: StoreContextMut<'_, T>, (descriptor, flags, path): PathArgs| {
            Ok((stat_at(store.data_mut(), &descriptor, flags, &path)?,))
        },
    )?;
    types.func_wrap(
        "[method]descriptor.metadata-hash-at",
        |mut store: StoreContextMut<'_, T>, (descriptor, flags, path): PathArgs| {
            Ok((metadata_hash_at(
                store.data_mut(),
                &descriptor,
                flags,
                &path,
            )?,))
        },
    )?;
    types.resource(
        "directory-entry-stream",
        ResourceType::host::<Listing>(),
        |mut store, rep| {
            store
                .data_mut()
                .ctx()
                .table
                .delete(Resource::<Listing>::new_own(rep))?;
            Ok(())
        },
    )?;
    types.func_wrap(
        "[method]descriptor.read-directory",
        |mut store: StoreContextMut<'_, T>, (descriptor,): (Resource<Descriptor>,)| {
            Ok((read_directory(store.data_mut(), &descriptor)?,))
        },
    )?;
    types.func_wrap(
        "[method]directory-entry-stream.read-directory-entry",
        |mut store: StoreContextMut<'_, T>, (listing,): (Resource<Listing>,)| {
            Ok((read_directory_entry(store.data_mut(), &listing)?,))
        },
    )?;
    linker.allow_shadowing(false);
    Ok(())
}

/// `stat-at`. Relative to a file, as wasmtime-wasi: not a directory.
fn stat_at<T: LookupView>(
    state: &mut T,
    descriptor: &Resource<Descriptor>,
    flags: PathFlags,
    path: &str,
) -> wasmtime::Result<Result<DescriptorStat, ErrorCode>> {
    let Some(root) = directory(state.ctx().table, descriptor)? else {
        return Ok(Err(ErrorCode::NotDirectory));
    };
    let follow = flags.contains(PathFlags::SYMLINK_FOLLOW);
    let found = state.lookups().look(&root, follow, path);
    Ok(found.map(|(stat, _)| stat).map_err(ErrorCode::from))
}

/// `metadata-hash-at`. Relative to a file, as wasmtime-wasi: not a
/// directory.
fn metadata_hash_at<T: LookupView>(
    state: &mut T,
    descriptor: &Resource<Descriptor>,
    flags: PathFlags,
    path: &str,
) -> wasmtime::Result<Result<MetadataHashValue, ErrorCode>> {
    let Some(root) = directory(state.ctx().table, descriptor)? else {
        return Ok(Err(ErrorCode::NotDirectory));
    };
    let follow = flags.contains(PathFlags::SYMLINK_FOLLOW);
    let lookups = state.lookups();
    if let Some(identity) = lookups.listed(&root, follow, path) {
        return Ok(Ok(metadata_hash(identity)));
    }
    let found = lookups.look(&root, follow, path);
    Ok(found
        .map(|(_, identity)| metadata_hash(identity))
        .map_err(ErrorCode::from))
}

/// `read-directory`: a [`Listing`] of the directory `descriptor`.
fn read_directory<T: LookupView>(
    state: &mut T,
    descriptor: &Resource<Descriptor>,
) -> wasmtime::Result<Result<Resource<Listing>, ErrorCode>> {
    let table = state.ctx().table;
    let Some(dir) = directory(table, descriptor)? else {
        return Ok(Err(ErrorCode::NotDirectory));
    };
    match list(&dir) {
        Ok((device, entries)) => Ok(Ok(table.push(Listing {
            dir,
            device,
            entries,
        })?)),
        Err(error) => Ok(Err(ErrorCode::from(error))),
    }
}

/// `read-directory-entry`: the next entry of `listing`, remembered for the
/// `metadata-hash-at` that may follow.
fn read_directory_entry<T: LookupView>(
    state: &mut T,
    listing: &Resource<Listing>,
) -> wasmtime::Result<Result<Option<DirectoryEntry>, ErrorCode>> {
    let listing = state.ctx().table.get_mut(listing)?;
    let (dir, device) = (listing.dir.clone(), listing.device);
    let next = next_entry(&mut listing.entries).transpose();
    if let Ok(Some((entry, inode))) = &next {
        state
            .lookups()
            .list(dir, entry.name.clone(), (device, *inode));
    }
    Ok(next.map(|entry| entry.map(|(entry, _)| entry)))
}

impl Lookups {
    /// Counts one host call of the guest's. The store's call hook calls it
    /// each time the guest calls the host (and for wasmtime's own calls out
    /// of wasm, which only make the lookups stat more often).
    pub fn count_call(&mut self) {
        self.calls += 1;
    }

    /// The stat and the identity of `path` beneath `root`, following a final
    /// symlink if `follow`: the previous host call's, if it was a stat of
    /// the same path, else a new stat's.
    fn look(
        &mut self,
        root: &Arc<File>,
        follow: bool,
        path: &str,
    ) -> std::io::Result<(DescriptorStat, (u64, u64))> {
        if let Some(last) = self.last.take()
            && last.call + 1 == self.calls
            && Arc::ptr_eq(&last.root, root)
            && last.follow == follow
            && last.path == path
        {
            return Ok((last.stat, last.identity));
        }
        let meta = self.stat(root, follow, path)?;
        let found = Found {
            root: root.clone(),
            follow,
            path: path.to_string(),
            call: self.calls,
            stat: descriptor_stat(&meta),
            identity: (meta.dev(), meta.ino()),
        };
        let answer = (found.stat, found.identity);
        self.last = Some(found);
        Ok(answer)
    }

    /// Remembers that the current host call returned `name`, listed in
    /// `root`.
    fn list(&mut self, root: Arc<File>, name: String, identity: (u64, u64)) {
        self.listed = Some(Listed {
            root,
            name,
            call: self.calls,
            identity,
        });
    }

    /// The identity of `path` beneath `root` from the listing, if the
    /// previous host call listed it.
    fn listed(&mut self, root: &Arc<File>, follow: bool, path: &str) -> Option<(u64, u64)> {
        let listed = self.listed.take()?;
        (!follow
            && listed.call + 1 == self.calls
            && Arc::ptr_eq(&listed.root, root)
            && listed.name == path)
            .then_some(listed.identity)
    }

    /// Stats `path` beneath `root`, following a final symlink if `follow`.
    fn stat(&mut self, root: &Arc<File>, follow: bool, path: &str) -> std::io::Result<Metadata> {
        match split(path) {
            Some((parent, name)) if !follow => match self.parent(root, parent) {
                Some(dir) => cap_primitives::fs::stat(dir, Path::new(name), FollowSymlinks::No),
                None => cap_primitives::fs::stat(root, Path::new(path), FollowSymlinks::No),
            },
            _ => cap_primitives::fs::stat(root, Path::new(path), FollowSymlinks::follow(follow)),
        }
    }

    /// The directory `path` beneath `root`, opened now or kept from before;
    /// `None` if it cannot be opened (the stat from `root` then says why).
    fn parent(&mut self, root: &Arc<File>, path: &str) -> Option<&File> {
        let found = self
            .parents
            .iter()
            .position(|parent| Arc::ptr_eq(&parent.root, root) && parent.path == path);
        let index = match found {
            Some(index) => index,
            None => {
                let dir = cap_primitives::fs::open_dir(root, Path::new(path)).ok()?;
                if self.parents.len() == LOOKUP_PARENTS {
                    self.parents.pop_front();
                }
                self.parents.push_back(Parent {
                    root: root.clone(),
                    path: path.to_string(),
                    dir,
                });
                self.parents.len() - 1
            }
        };
        self.parents.get(index).map(|parent| &parent.dir)
    }
}

/// `path` as its parent directory and last name, when it is two or more
/// names with no `.`, `..` or empty one; `None` for any other path.
fn split(path: &str) -> Option<(&str, &str)> {
    let (parent, name) = path.rsplit_once('/')?;
    let normal = |name: &str| !name.is_empty() && name != "." && name != "..";
    (parent.split('/').all(normal) && normal(name)).then_some((parent, name))
}

/// The device of `dir`, and a stream of its entries.
///
/// The entries are read from a new descriptor of `dir` (`.` opened relative
/// to it), so that the listing's position is its own.
fn list(dir: &File) -> std::io::Result<(u64, rustix::fs::Dir)> {
    use rustix::fs::{Mode, OFlags, fstat, openat};
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let listed = openat(dir, c".", flags, Mode::empty())?;
    let device = fstat(&listed)?.st_dev;
    Ok((device, rustix::fs::Dir::new(listed)?))
}

/// The next entry of `entries` (`.` and `..` left out), with its type as
/// wasmtime-wasi lists it and its inode number; `None` at the end. After an
/// error the stream ends, as wasmtime-wasi's does.
fn next_entry(entries: &mut rustix::fs::Dir) -> Option<Entry> {
    use rustix::fs::{AtFlags, FileType, statat};
    loop {
        let entry = match entries.read()? {
            Ok(entry) => entry,
            Err(error) => return Some(Err(ErrorCode::from(std::io::Error::from(error)))),
        };
        let name = entry.file_name();
        if name == c"." || name == c".." {
            continue;
        }
        let kind = match entry.file_type() {
            FileType::Unknown => entries
                .fd()
                .and_then(|dir| statat(dir, name, AtFlags::SYMLINK_NOFOLLOW))
                .map(|stat| FileType::from_raw_mode(stat.st_mode)),
            kind => Ok(kind),
        };
        let item = kind
            .map_err(|error| ErrorCode::from(std::io::Error::from(error)))
            .and_then(|kind| {
                let name = name
                    .to_str()
                    .map_err(|_| ErrorCode::IllegalByteSequence)?
                    .to_owned();
                Ok((
                    DirectoryEntry {
                        type_: entry_type(kind),
                        name,
                    },
                    entry.ino(),
                ))
            });
        return Some(item);
    }
}

/// A listed entry's type as wasmtime-wasi reports it (a FIFO or a socket
/// is unknown).
fn entry_type(kind: rustix::fs::FileType) -> DescriptorType {
    use rustix::fs::FileType;
    match kind {
        FileType::Directory => DescriptorType::Directory,
        FileType::Symlink => DescriptorType::SymbolicLink,
        FileType::RegularFile => DescriptorType::RegularFile,
        FileType::BlockDevice => DescriptorType::BlockDevice,
        FileType::CharacterDevice => DescriptorType::CharacterDevice,
        _ => DescriptorType::Unknown,
    }
}

/// The hash wasmtime-wasi makes of a device and inode number pair.
fn metadata_hash(identity: (u64, u64)) -> MetadataHashValue {
    let mut hasher = DefaultHasher::new();
    identity.hash(&mut hasher);
    let lower = hasher.finish();
    // wasmtime-wasi's constant: pi's IEEE double bits.
    MetadataHashValue {
        lower,
        upper: lower ^ 4614256656552045848,
    }
}

#[cfg(test)]
mod tests {
    use wasmtime::component::Resource;
    use wasmtime_wasi::filesystem::WasiFilesystemView;
    use wasmtime_wasi::p2::bindings::filesystem::types::{
        HostDescriptor, HostDirectoryEntryStream, PathFlags,
    };

    use super::{metadata_hash_at, read_directory, read_directory_entry, stat_at};
    use crate::runtime::host::fs_lookups::fixture::{PATHS, State, borrow, mount, wasmtime_stat};

    /// wasmtime-wasi's own answer to `metadata-hash-at`.
    async fn wasmtime_hash(state: &mut State, rep: u32, flags: PathFlags, path: &str) -> String {
        let answer = HostDescriptor::metadata_hash_at(
            &mut state.filesystem(),
            borrow(rep),
            flags,
            path.to_string(),
        )
        .await
        .map_err(|error| error.downcast().expect("an error code"));
        format!("{answer:?}")
    }

    #[tokio::test]
    async fn stats_and_hashes_are_wasmtimes_for_every_kind_of_path() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let (mut state, rep) = mount(dir.path());
        for path in PATHS {
            for flags in [PathFlags::empty(), PathFlags::SYMLINK_FOLLOW] {
                state.lookups.count_call();
                let ours = stat_at(&mut state, &borrow(rep), flags, path).expect("no trap");
                let theirs = wasmtime_stat(&mut state, rep, flags, path).await;
                assert_eq!(format!("{ours:?}"), theirs, "stat-at {path:?} {flags:?}");
                state.lookups.count_call();
                let ours =
                    metadata_hash_at(&mut state, &borrow(rep), flags, path).expect("no trap");
                let theirs = wasmtime_hash(&mut state, rep, flags, path).await;
                assert_eq!(
                    format!("{ours:?}"),
                    theirs,
                    "metadata-hash-at {path:?} {flags:?}"
                );
            }
        }
        // Nothing outside the mount was reached.
        for path in [
            "link-out/secret",
            "dir/link-escape/secret",
            "../outside/secret",
        ] {
            state.lookups.count_call();
            let answer = stat_at(&mut state, &borrow(rep), PathFlags::empty(), path);
            assert!(matches!(answer, Ok(Err(_))), "{path}: {answer:?}");
        }
    }

    #[tokio::test]
    async fn a_stat_answers_only_the_host_call_right_after_it() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let (mut state, rep) = mount(dir.path());
        let size = |state: &mut State| match stat_at(
            state,
            &borrow(rep),
            PathFlags::empty(),
            "dir/file",
        ) {
            Ok(Ok(stat)) => stat.size,
            other => panic!("no stat: {other:?}"),
        };
        // wasi-libc's pair: the hash, then the stat, answered from one look.
        state.lookups.count_call();
        let hash = metadata_hash_at(&mut state, &borrow(rep), PathFlags::empty(), "dir/file");
        let theirs = wasmtime_hash(&mut state, rep, PathFlags::empty(), "dir/file").await;
        assert_eq!(format!("{:?}", hash.expect("no trap")), theirs);
        state.lookups.count_call();
        assert_eq!(size(&mut state), 6);
        // Another host call came between: the next stat looks again.
        state.lookups.count_call();
        std::fs::write(dir.path().join("root/dir/file"), "longer now").expect("a write");
        state.lookups.count_call();
        assert_eq!(size(&mut state), 10);
        // The same path asked twice in one host call's place is looked at
        // again too: an answer is used once.
        state.lookups.count_call();
        assert_eq!(size(&mut state), 10);
        std::fs::write(dir.path().join("root/dir/file"), "longest of all").expect("a write");
        state.lookups.count_call();
        let hash = metadata_hash_at(&mut state, &borrow(rep), PathFlags::empty(), "dir/file");
        assert!(matches!(hash, Ok(Ok(_))));
        state.lookups.count_call();
        assert_eq!(
            size(&mut state),
            14,
            "the stat after the hash is the hash's own look"
        );
    }

    /// Our listing of `path` and wasmtime-wasi's, sorted; each of ours with
    /// the hash asked right after the entry was read, and wasmtime-wasi's
    /// hash of the same name.
    async fn listings(state: &mut State, rep: u32, path: &str) -> (Vec<String>, Vec<String>) {
        let opened = HostDescriptor::open_at(
            &mut state.filesystem(),
            borrow(rep),
            PathFlags::SYMLINK_FOLLOW,
            path.to_string(),
            wasmtime_wasi::p2::bindings::filesystem::types::OpenFlags::DIRECTORY,
            wasmtime_wasi::p2::bindings::filesystem::types::DescriptorFlags::READ,
        )
        .await
        .expect("the directory opens");
        let dir = opened.rep();
        let mut ours = Vec::new();
        let listing = read_directory(state, &borrow(dir))
            .expect("no trap")
            .expect("a listing");
        loop {
            state.lookups.count_call();
            let entry = read_directory_entry(state, &Resource::new_borrow(listing.rep()))
                .expect("no trap")
                .expect("an entry");
            let Some(entry) = entry else { break };
            state.lookups.count_call();
            let hash = metadata_hash_at(state, &borrow(dir), PathFlags::empty(), &entry.name)
                .expect("no trap");
            let theirs = wasmtime_hash(state, dir, PathFlags::empty(), &entry.name).await;
            assert_eq!(format!("{hash:?}"), theirs, "the hash of {}", entry.name);
            ours.push(format!("{} {:?}", entry.name, entry.type_));
        }
        let stream = HostDescriptor::read_directory(&mut state.filesystem(), borrow(dir))
            .await
            .expect("wasmtime's listing");
        let mut theirs = Vec::new();
        while let Some(entry) = HostDirectoryEntryStream::read_directory_entry(
            &mut state.filesystem(),
            Resource::new_borrow(stream.rep()),
        )
        .await
        .expect("an entry")
        {
            theirs.push(format!("{} {:?}", entry.name, entry.type_));
        }
        ours.sort();
        theirs.sort();
        (ours, theirs)
    }

    #[tokio::test]
    async fn listings_are_wasmtimes() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let (mut state, rep) = mount(dir.path());
        for path in [".", "dir", "dir/sub", "link-dir"] {
            let (ours, theirs) = listings(&mut state, rep, path).await;
            assert!(!ours.is_empty());
            assert_eq!(ours, theirs, "the listing of {path}");
        }
        // A file is not a directory.
        let file = HostDescriptor::open_at(
            &mut state.filesystem(),
            borrow(rep),
            PathFlags::empty(),
            "file".to_string(),
            wasmtime_wasi::p2::bindings::filesystem::types::OpenFlags::empty(),
            wasmtime_wasi::p2::bindings::filesystem::types::DescriptorFlags::READ,
        )
        .await
        .expect("the file opens");
        let ours = read_directory(&mut state, &borrow(file.rep())).expect("no trap");
        let theirs = HostDescriptor::read_directory(&mut state.filesystem(), borrow(file.rep()))
            .await
            .map_err(|error| error.downcast().expect("an error code"));
        assert!(ours.is_err());
        assert_eq!(format!("{:?}", ours.err()), format!("{:?}", theirs.err()));
        let ours = stat_at(&mut state, &borrow(file.rep()), PathFlags::empty(), "x");
        let theirs = wasmtime_stat(&mut state, file.rep(), PathFlags::empty(), "x").await;
        assert_eq!(format!("{:?}", ours.expect("no trap")), theirs);
        let ours = metadata_hash_at(&mut state, &borrow(file.rep()), PathFlags::empty(), "x");
        let theirs = wasmtime_hash(&mut state, file.rep(), PathFlags::empty(), "x").await;
        assert_eq!(format!("{:?}", ours.expect("no trap")), theirs);
    }
}
