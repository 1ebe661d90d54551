//! What the host may look at to tell whether a followed file changed,
//! without reading it: its size and modification time, for a `file://`
//! URI beneath one of a plugin's mounts. The subscription watcher uses it
//! to leave alone a resource whose reads fail (too large for the output
//! cap, say) until the file changes.
//!
//! The file is looked up beneath the mount it falls in, by cap-primitives,
//! as the sandbox resolves paths: `..`, an absolute symlink or one that
//! climbs out ends the look-up with an error, never outside the mount. The
//! answer only decides whether to read again; it reaches no one.

use std::path::Path;

use cap_primitives::fs::FollowSymlinks;
use cap_primitives::time::SystemTime;

use crate::config::Mount;
use crate::runtime::sandbox::guest_path;

/// A file's size and modification time: when both are the same, the file
/// is taken as unchanged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fingerprint {
    len: u64,
    modified: Option<SystemTime>,
}

/// The fingerprint of the file `uri` names, when `uri` is a `file://` URI
/// whose path lies beneath one of `mounts` (the mount with the longest
/// matching guest path, as the guest would resolve it), and the file can be
/// looked at there. `None` otherwise.
pub fn file_fingerprint(mounts: &[Mount], uri: &str) -> Option<Fingerprint> {
    let path = percent_encoding::percent_decode_str(uri.strip_prefix("file://")?)
        .decode_utf8()
        .ok()?;
    let (mount, rest) = mounts
        .iter()
        .filter_map(|mount| {
            let guest = guest_path(&mount.host).ok()?;
            let rest = path.strip_prefix(guest.trim_end_matches('/'))?;
            let rest = if rest.is_empty() {
                "."
            } else {
                rest.strip_prefix('/')?
            };
            Some((mount, guest.len(), rest.to_owned()))
        })
        .max_by_key(|(_, len, _)| *len)
        .map(|(mount, _, rest)| (mount, rest))?;
    let dir =
        cap_primitives::fs::open_ambient_dir(&mount.host, cap_primitives::ambient_authority())
            .ok()?;
    let meta = cap_primitives::fs::stat(&dir, Path::new(&rest), FollowSymlinks::Yes).ok()?;
    Some(Fingerprint {
        len: meta.len(),
        modified: meta.modified().ok(),
    })
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn mount(host: &Path) -> Mount {
        Mount {
            host: host.to_path_buf(),
            writable: false,
        }
    }

    #[test]
    fn a_file_beneath_a_mount_has_a_fingerprint_that_follows_it() {
        let root = tempfile::tempdir().expect("tempdir");
        let data = root.path().join("data");
        std::fs::create_dir_all(data.join("sub dir")).expect("mkdir");
        let file = data.join("sub dir/a.txt");
        std::fs::write(&file, "one").expect("write");
        let mounts = [mount(&data)];
        let uri = format!("file://{}/sub%20dir/a.txt", data.display());
        let first = file_fingerprint(&mounts, &uri).expect("a fingerprint");
        assert_eq!(file_fingerprint(&mounts, &uri), Some(first));
        std::fs::write(&file, "three").expect("write");
        assert_ne!(file_fingerprint(&mounts, &uri), Some(first));
    }

    #[test]
    fn nothing_outside_the_mounts_is_looked_at() {
        let root = tempfile::tempdir().expect("tempdir");
        let data = root.path().join("data");
        let evil = root.path().join("data-evil");
        std::fs::create_dir_all(&data).expect("mkdir");
        std::fs::create_dir_all(&evil).expect("mkdir");
        std::fs::write(root.path().join("secret.txt"), "s").expect("write");
        std::fs::write(evil.join("x.txt"), "x").expect("write");
        std::os::unix::fs::symlink(root.path().join("secret.txt"), data.join("out"))
            .expect("symlink");
        let mounts = [mount(&data)];
        for uri in [
            format!("file://{}/secret.txt", root.path().display()),
            format!("file://{}/x.txt", evil.display()),
            format!("file://{}/../secret.txt", data.display()),
            format!("file://{}/out", data.display()),
            format!("file://{}/%2e%2e/secret.txt", data.display()),
            "https://example.com/a".to_string(),
            format!("file://{}/bad%zz", data.display()),
        ] {
            assert_eq!(file_fingerprint(&mounts, &uri), None, "{uri}");
        }
    }
}
