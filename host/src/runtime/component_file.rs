//! Reading a component file with bounds: whatever path a configuration or a
//! command line names (`/dev/zero`, a FIFO, a file of gigabytes), loading
//! it neither hangs nor grows without limit. The file is opened without
//! blocking (a FIFO with no writer would block a plain open forever), its
//! type is checked on the descriptor that is then read (so it cannot be
//! swapped between the check and the read), and at most the cap is read.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use anyhow::{Context, Result, bail};

/// The bytes of the component file at `path`: a regular file of at most
/// `max_bytes`; anything else is an error that says what it is.
pub fn read(path: &Path, max_bytes: u64) -> Result<Vec<u8>> {
    let shown = path.display();
    let file = open(path).with_context(|| format!("cannot open {shown}"))?;
    let meta = file
        .metadata()
        .with_context(|| format!("cannot read {shown}"))?;
    if !meta.is_file() {
        let what = if meta.is_dir() {
            "a directory"
        } else {
            "not a regular file (a named pipe, a socket or a device)"
        };
        bail!("{shown} is {what}: a component is a regular `.wasm` file");
    }
    let too_big = |size: u64| {
        anyhow::anyhow!(
            "{shown} is {size} bytes, over the limit of {max_bytes} bytes for a component \
             ([limits] max_component_mb)"
        )
    };
    if meta.len() > max_bytes {
        return Err(too_big(meta.len()));
    }
    // The file may grow after the check: read one byte past the cap at most.
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read {shown}"))?;
    if bytes.len() as u64 > max_bytes {
        return Err(too_big(bytes.len() as u64));
    }
    Ok(bytes)
}

/// Opens `path` for reading without blocking on a FIFO: on Unix with
/// `O_NONBLOCK` (which a regular file ignores), elsewhere as usual (Windows
/// has no FIFOs in its file namespace).
#[cfg(unix)]
fn open(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(path)
}

#[cfg(not(unix))]
fn open(path: &Path) -> std::io::Result<File> {
    File::open(path)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn only_regular_files_within_the_cap_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.wasm");
        std::fs::write(&file, b"0123456789").unwrap();
        assert_eq!(read(&file, 10).unwrap(), b"0123456789");
        let error = read(&file, 9).unwrap_err().to_string();
        assert!(error.contains("10 bytes, over the limit of 9"), "{error}");
        let error = read(dir.path(), 10).unwrap_err().to_string();
        assert!(error.contains("a directory"), "{error}");
        // A device that never ends, and a FIFO with no writer: refused at once.
        let error = read(Path::new("/dev/zero"), 10).unwrap_err().to_string();
        assert!(error.contains("not a regular file"), "{error}");
        let fifo = dir.path().join("pipe.wasm");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.is_ok_and(|status| status.success()));
        let error = read(&fifo, 10).unwrap_err().to_string();
        assert!(error.contains("not a regular file"), "{error}");
    }
}
