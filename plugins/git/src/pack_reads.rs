//! The patched gix-pack (`vendor/gix-pack/`, see its TOOLCELL.md) reads a pack entry by entry with
//! positioned reads. These tests check, natively, that every object of real packs `git` wrote
//! decodes to the same bytes as from the pack read whole into memory, gix-pack's way before
//! the patch: small and large objects, deltas, incompressible data longer than the read cache's
//! blocks and ranges, entries that straddle blocks.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use gix::odb::pack::{cache, data, index};

/// `git` in `dir`, reading no system or user configuration.
fn git_command(dir: &Path) -> Command {
    let mut command = Command::new("git");
    command
        .current_dir(dir)
        .args(["-c", "user.name=Ada", "-c", "user.email=ada@example.com"])
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null");
    command
}

fn git(dir: &Path, args: &[&str]) {
    let status = git_command(dir).args(args).status().expect("run git");
    assert!(status.success(), "git {args:?}");
}

/// The one pack file of `dir`'s repository with this extension (`pack`, `idx`).
fn pack_file(dir: &Path, extension: &str) -> PathBuf {
    std::fs::read_dir(dir.join(".git/objects/pack"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .find(|path| path.extension() == Some(extension.as_ref()))
        .unwrap_or_else(|| panic!("the repository has a .{extension} file"))
}

/// Deterministic bytes that do not compress.
fn noise(len: usize, mut state: u64) -> Vec<u8> {
    (0..len.div_ceil(8))
        .flat_map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state.to_le_bytes()
        })
        .take(len)
        .collect()
}

/// A repository with text that changes over five commits (deltas), a 1 MiB incompressible
/// file that changes too, and many small files, packed by `git gc`; returns its pack's path.
fn packed_repository(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    git(dir, &["init", "-q"]);
    let mut text: Vec<String> = (0..6000)
        .map(|n| format!("line {n} of a long text file\n"))
        .collect();
    for version in 0..5 {
        text[version * 997] = format!("line changed in version {version}\n");
        std::fs::write(dir.join("text.txt"), text.concat()).unwrap();
        let mut binary = noise(1 << 20, 0x9E37_79B9_7F4A_7C15);
        binary[version * 4096] ^= 0xff;
        std::fs::write(dir.join("noise.bin"), binary).unwrap();
        for n in 0..40 {
            std::fs::write(
                dir.join(format!("small-{n}.txt")),
                format!("{n} {version}\n"),
            )
            .unwrap();
        }
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-q", "-m", &format!("version {version}")]);
    }
    git(dir, &["gc", "-q"]);
    pack_file(dir, "pack")
}

#[test]
fn every_object_reads_the_same_from_the_file_as_from_memory() {
    let dir = std::env::temp_dir().join(format!("toolcell-pack-reads-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let pack_path = packed_repository(&dir);
    let hash = gix::hash::Kind::Sha1;
    let by_entries = data::File::at(&pack_path, hash).unwrap();
    let whole =
        data::File::from_data(std::fs::read(&pack_path).unwrap(), pack_path.clone(), hash).unwrap();
    let index = index::File::at(pack_path.with_extension("idx"), hash).unwrap();
    assert_eq!(by_entries.checksum(), whole.checksum());
    assert_eq!(by_entries.num_objects(), whole.num_objects());
    assert_eq!(by_entries.data_len(), whole.data_len());

    let (mut inflate, mut from_file, mut from_memory) = Default::default();
    let (mut deltas, mut large) = (0, 0);
    for entry in index.iter() {
        let header = by_entries.entry(entry.pack_offset).unwrap();
        assert_eq!(header, whole.entry(entry.pack_offset).unwrap());
        let no_base = |_: &gix::hash::oid, _: &mut Vec<u8>| Ok(None);
        let a = by_entries
            .decode_entry(
                header.clone(),
                &mut from_file,
                &mut inflate,
                &no_base,
                &mut cache::Never,
            )
            .unwrap();
        let b = whole
            .decode_entry(
                header.clone(),
                &mut from_memory,
                &mut inflate,
                &no_base,
                &mut cache::Never,
            )
            .unwrap();
        assert_eq!((a.kind, a.object_size), (b.kind, b.object_size));
        assert!(from_file == from_memory, "object {} differs", entry.oid);
        let decoded = gix::objs::compute_hash(hash, a.kind, &from_file).unwrap();
        assert_eq!(decoded, entry.oid, "the object hashes to its id");
        deltas += usize::from(a.num_deltas > 0);
        large += usize::from(a.object_size > 256 << 10);
        let header_only = by_entries
            .decode_header(header, &mut inflate, &|_| Ok(None))
            .unwrap();
        assert_eq!(
            (header_only.kind, header_only.object_size),
            (a.kind, a.object_size)
        );
    }
    assert!(
        deltas > 0 && large > 0,
        "{deltas} deltas, {large} large objects"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn memory_and_file_sources_hand_out_the_same_ranges() {
    use data::Source;
    let dir = std::env::temp_dir().join(format!("toolcell-pack-source-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("data");
    let bytes = noise(400_000, 42);
    std::fs::write(&path, &bytes).unwrap();
    let file = data::PositionedFile::open(&path).unwrap();
    assert_eq!(Source::len(&file), bytes.len());
    // Within a block, across blocks, past the cache's longest range, at and past the end.
    for (offset, len) in [
        (0, 12),
        (16_380, 20),
        (65_530, 20),
        (50_000, 70_000),
        (65_536, 65_536),
        (10, 300_000),
        (399_990, 64),
        (400_000, 1),
        (500_000, 5),
        (7, 0),
    ] {
        let from_memory = bytes.bytes(offset, len).unwrap();
        let from_file = file.bytes(offset, len).unwrap();
        assert_eq!(from_memory, from_file, "offset {offset}, len {len}");
        assert_eq!(from_file.len(), len.min(bytes.len().saturating_sub(offset)));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_block_caches_of_many_files_stay_within_their_budget() {
    use data::Source;
    let dir = std::env::temp_dir().join(format!("toolcell-pack-budget-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // Five files of 6 MiB: their caches would hold 30 MiB if each kept all it read.
    let contents: Vec<Vec<u8>> = (0..5).map(|n| noise(6 << 20, 7 + n)).collect();
    let files: Vec<data::PositionedFile> = contents
        .iter()
        .enumerate()
        .map(|(n, bytes)| {
            let path = dir.join(format!("file-{n}"));
            std::fs::write(&path, bytes).unwrap();
            data::PositionedFile::open(&path).unwrap()
        })
        .collect();
    for offset in (0..6 << 20).step_by(40_000) {
        for (file, bytes) in files.iter().zip(&contents) {
            let read = file.bytes(offset, 3000).unwrap();
            assert_eq!(&read[..], &bytes[offset..(offset + 3000).min(bytes.len())]);
            assert!(data::PositionedFile::cached_bytes_in_all() <= 16 << 20);
        }
    }
    drop(files);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A pack of `count` small blobs written by `git fast-import`; returns its index's path.
fn many_blobs(dir: &Path, count: usize) -> PathBuf {
    use std::io::Write;
    std::fs::create_dir_all(dir).unwrap();
    git(dir, &["init", "-q"]);
    let mut import = git_command(dir)
        .args(["fast-import", "--quiet"])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .expect("run git fast-import");
    let mut stream = std::io::BufWriter::new(import.stdin.take().unwrap());
    for n in 0..count {
        let text = format!("blob number {n}\n");
        write!(stream, "blob\ndata {}\n{text}\n", text.len()).unwrap();
    }
    drop(stream);
    assert!(import.wait().unwrap().success());
    pack_file(dir, "idx")
}

#[test]
fn the_lazy_index_finds_every_object_as_the_whole_file_does() {
    let dir = std::env::temp_dir().join(format!("toolcell-pack-index-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    // 40,000 objects: about 156 to a fan-out bucket, so lookups take the interpolated first
    // step, and the index (1.1 MB) is hundreds of chunks.
    let path = many_blobs(&dir, 40_000);
    let hash = gix::hash::Kind::Sha1;
    let whole = index::File::from_data(std::fs::read(&path).unwrap(), path.clone(), hash).unwrap();
    assert_eq!(whole.num_objects(), 40_000);
    let entries: Vec<index::Entry> = whole.iter().collect();
    // A fresh lazy index for each batch, so that most lookups read chunks rather than the
    // whole file (which a lazy index reads once half of it has been read in chunks).
    for batch in entries.chunks(25) {
        let lazy = index::File::at(&path, hash).unwrap();
        assert_eq!(lazy.num_objects(), whole.num_objects());
        for entry in batch {
            let found = lazy.lookup(entry.oid).expect("every object is found");
            assert_eq!(Some(found), whole.lookup(entry.oid));
            assert_eq!(lazy.oid_at_index(found), entry.oid.as_ref());
            assert_eq!(lazy.pack_offset_at_index(found), entry.pack_offset);
            assert_eq!(lazy.crc32_at_index(found), entry.crc32);
            // The same id with its last byte changed is (almost surely) absent from both.
            let mut other = entry.oid;
            other.as_mut_slice()[19] ^= 0x5a;
            assert_eq!(lazy.lookup(other), whole.lookup(other));
        }
    }
    // Ids before the first and after the last of a bucket, and in empty places.
    let lazy = index::File::at(&path, hash).unwrap();
    for first in [0x00u8, 0x7f, 0xff] {
        for fill in [0x00u8, 0xff] {
            let mut bytes = [fill; 20];
            bytes[0] = first;
            let id = gix::ObjectId::from_bytes_or_panic(&bytes);
            assert_eq!(lazy.lookup(id), whole.lookup(id));
        }
    }
    assert_eq!(lazy.iter().count(), entries.len());
    assert_eq!(lazy.index_checksum(), whole.index_checksum());
    assert_eq!(lazy.pack_checksum(), whole.pack_checksum());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The patched decoder keeps every base of a delta chain in the cache as it decodes it (git's
/// delta base cache does the same), and takes a chain's full base from the cache too. Decoding
/// every object through one cache, in two orders, gives what decoding without a cache gives.
#[test]
fn objects_decoded_through_the_delta_base_cache_are_the_same() {
    let dir = std::env::temp_dir().join(format!("toolcell-pack-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let pack_path = packed_repository(&dir);
    let hash = gix::hash::Kind::Sha1;
    let pack = data::File::at(&pack_path, hash).unwrap();
    let index = index::File::at(pack_path.with_extension("idx"), hash).unwrap();
    let mut entries: Vec<index::Entry> = index.iter().collect();
    let no_base = |_: &gix::hash::oid, _: &mut Vec<u8>| Ok(None);
    let mut inflate = Default::default();
    let mut expected = std::collections::HashMap::new();
    for entry in &entries {
        let mut out = Vec::new();
        let header = pack.entry(entry.pack_offset).unwrap();
        pack.decode_entry(header, &mut out, &mut inflate, &no_base, &mut cache::Never)
            .unwrap();
        expected.insert(entry.oid, out);
    }
    let mut chains = 0;
    for reverse in [false, true] {
        entries.sort_by_key(|entry| entry.pack_offset);
        if reverse {
            entries.reverse();
        }
        let mut cache = cache::lru::MemoryCappedHashmap::new(64 << 20);
        for entry in &entries {
            let mut out = Vec::new();
            let header = pack.entry(entry.pack_offset).unwrap();
            let outcome = pack
                .decode_entry(header, &mut out, &mut inflate, &no_base, &mut cache)
                .unwrap();
            chains += usize::from(outcome.num_deltas > 1);
            assert!(out == expected[&entry.oid], "object {} differs", entry.oid);
        }
    }
    assert!(chains > 0, "the pack has chains of more than one delta");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The bytes of a version 2 pack index of `ids` (sorted here), with made-up CRCs and offsets.
fn index_of(ids: &mut Vec<[u8; 20]>) -> Vec<u8> {
    ids.sort_unstable();
    ids.dedup();
    let mut bytes = b"\xfftOc\0\0\0\x02".to_vec();
    for first in 0..=255u8 {
        let below = ids.partition_point(|id| id[0] <= first) as u32;
        bytes.extend(below.to_be_bytes());
    }
    for id in ids.iter() {
        bytes.extend(id);
    }
    for n in 0..ids.len() as u32 {
        bytes.extend((n ^ 0xdead_beef).to_be_bytes());
    }
    for n in 0..ids.len() as u32 {
        bytes.extend((12 + 7 * n).to_be_bytes());
    }
    bytes.extend([0u8; 40]);
    bytes
}

/// The lookup starts where a uniform id would lie in its bucket. Ids bunched at one end or
/// around one place (which a real repository does not have, but a hand-made pack can), in
/// buckets large enough for that first guess, are still found at their places, read lazily
/// from a file and from memory alike, and ids just beside them are not found.
#[test]
fn lookups_find_ids_that_are_not_uniform() {
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut ids = Vec::new();
    for first in [0x00u8, 0x41, 0x42, 0xff] {
        for n in 0..3000u64 {
            let mut id = [0u8; 20];
            id[0] = first;
            id[4..12].copy_from_slice(&next().to_be_bytes());
            id[12..20].copy_from_slice(&next().to_be_bytes());
            match first {
                // Bunched at the start of the bucket, then at its end.
                0x00 => id[1..4].copy_from_slice(&[0, 0, (n % 7) as u8]),
                0xff => id[1..4].copy_from_slice(&[0xff, 0xff, (n % 7) as u8]),
                // Around the middle, and spread (the usual case).
                0x41 => id[1..4].copy_from_slice(&[0x80, (n % 3) as u8, 0]),
                _ => id[1..4].copy_from_slice(&next().to_be_bytes()[..3]),
            }
            ids.push(id);
        }
    }
    // A bucket of two ids, below the size that takes the first guess.
    ids.push([0x90; 20]);
    ids.push([0x91; 20]);
    let bytes = index_of(&mut ids);
    let dir = std::env::temp_dir().join(format!("toolcell-index-skew-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("pack-skew.idx");
    std::fs::write(&path, &bytes).unwrap();
    let hash = gix::hash::Kind::Sha1;
    let whole = index::File::from_data(bytes, path.clone(), hash).unwrap();
    let lazy = index::File::at(&path, hash).unwrap();
    for (n, id) in ids.iter().enumerate() {
        let oid = gix::ObjectId::from_bytes_or_panic(id);
        assert_eq!(whole.lookup(oid), Some(n as u32), "{oid} in memory");
        assert_eq!(lazy.lookup(oid), Some(n as u32), "{oid} from the file");
        assert_eq!(lazy.pack_offset_at_index(n as u32), 12 + 7 * n as u64);
        // The ids one below and one above are not in the index (they would be neighbours).
        for delta in [-1i8, 1] {
            let mut near = *id;
            let last = &mut near[19];
            *last = last.wrapping_add_signed(delta);
            let expected = ids.binary_search(&near).ok().map(|at| at as u32);
            let near = gix::ObjectId::from_bytes_or_panic(&near);
            assert_eq!(whole.lookup(near), expected, "{near} in memory");
            assert_eq!(lazy.lookup(near), expected, "{near} from the file");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
