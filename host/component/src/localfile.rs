//! Reading a local file the user named, with a guard: only a regular file,
//! at most a size cap per kind of file, and without ever blocking on a FIFO
//! or a device.
//!
//! The file is opened with `O_NONBLOCK` (opening a FIFO for reading then
//! returns at once instead of waiting for a writer), its type and size are
//! taken from the opened descriptor (so a file swapped after a check cannot
//! slip through), and at most cap + 1 bytes are read, so a file that grows
//! while it is read is still refused. Errors are `std::io::Error`s whose
//! text says what is wrong; callers name the path, as they did for any
//! other read error (`cannot read PATH: …`).

use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// What a file is for, and the most bytes it may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    /// The kind of file, for messages ("YAML input", "wasm component").
    pub what: &'static str,
    /// The largest size accepted, in bytes.
    pub max: u64,
}

impl Limit {
    /// A YAML (or JSON) input: XR, Composition, Functions, resources,
    /// credentials, context, schemas, a functions file: 64 MiB.
    pub const YAML: Limit = Limit {
        what: "YAML input",
        max: 64 << 20,
    };

    /// A local wasm component: 256 MiB, as much as a pulled package may
    /// unpack to.
    pub const WASM: Limit = Limit {
        what: "wasm component",
        max: crate::MAX_COMPONENT_BYTES,
    };

    /// A small secret or certificate file (Docker config, PEM certificates
    /// and keys): 1 MiB.
    pub const CREDENTIALS: Limit = Limit {
        what: "credentials or certificate file",
        max: 1 << 20,
    };

    /// A limit of `max` bytes for files of kind `what`.
    pub const fn new(what: &'static str, max: u64) -> Limit {
        Limit { what, max }
    }
}

/// Reads all of `path`, a regular file of at most `limit.max` bytes.
pub fn read(path: &Path, limit: Limit) -> io::Result<Vec<u8>> {
    let file = open(path, limit)?;
    let mut bytes = Vec::new();
    file.take(limit.max.saturating_add(1))
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit.max {
        return Err(io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!(
                "it grew past the limit of {} for a {} while being read; refusing it",
                size_text(limit.max),
                limit.what
            ),
        ));
    }
    Ok(bytes)
}

/// Reads all of `path` as UTF-8 text, with the checks of [`read`].
pub fn read_to_string(path: &Path, limit: Limit) -> io::Result<String> {
    String::from_utf8(read(path, limit)?).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("a {} must be UTF-8 text, and this is not", limit.what),
        )
    })
}

/// Opens `path` without blocking and checks its type and size.
fn open(path: &Path, limit: Limit) -> io::Result<File> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    let metadata = file.metadata()?;
    check(&metadata, limit)?;
    Ok(file)
}

/// Refuses anything but a regular file of at most `limit.max` bytes.
fn check(metadata: &Metadata, limit: Limit) -> io::Result<()> {
    if !metadata.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "it is {}, not a regular file; a {} must be a regular file",
                type_name(metadata),
                limit.what
            ),
        ));
    }
    if metadata.len() > limit.max {
        return Err(io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!(
                "it is {} bytes, over the limit of {} for a {}; refusing it",
                metadata.len(),
                size_text(limit.max),
                limit.what
            ),
        ));
    }
    Ok(())
}

/// What a file that is not a regular file is.
pub fn type_name(metadata: &Metadata) -> &'static str {
    let kind = metadata.file_type();
    if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a FIFO (named pipe)"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_file() {
        "a regular file"
    } else {
        "a special file"
    }
}

/// A size in bytes, as KiB or MiB when it is a whole number of them.
fn size_text(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} bytes"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    const SMALL: Limit = Limit::new("test file", 16);

    fn mkfifo(path: &Path) {
        let made = std::process::Command::new("mkfifo").arg(path).status();
        assert!(made.is_ok_and(|s| s.success()), "mkfifo {}", path.display());
    }

    #[test]
    fn reads_a_regular_file_up_to_its_cap() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"0123456789abcdef").unwrap();
        assert_eq!(read(&path, SMALL).unwrap(), b"0123456789abcdef");
        assert_eq!(read_to_string(&path, SMALL).unwrap(), "0123456789abcdef");
    }

    #[test]
    fn refuses_a_file_over_its_cap_naming_size_and_cap() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, [b'x'; 17]).unwrap();
        let err = read(&path, SMALL).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::FileTooLarge);
        assert_eq!(
            err.to_string(),
            "it is 17 bytes, over the limit of 16 bytes for a test file; refusing it"
        );
    }

    #[test]
    fn refuses_a_fifo_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fifo");
        mkfifo(&path);
        let started = Instant::now();
        let err = read(&path, Limit::YAML).unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert_eq!(
            err.to_string(),
            "it is a FIFO (named pipe), not a regular file; a YAML input must be a regular file"
        );
    }

    #[test]
    fn refuses_devices_and_directories() {
        let err = read(Path::new("/dev/zero"), Limit::WASM).unwrap_err();
        assert!(
            err.to_string().starts_with("it is a character device, not"),
            "{err}"
        );
        let dir = tempfile::tempdir().unwrap();
        let err = read_to_string(dir.path(), Limit::YAML).unwrap_err();
        assert!(
            err.to_string().starts_with("it is a directory, not"),
            "{err}"
        );
    }

    #[test]
    fn a_missing_file_keeps_its_kind() {
        let err = read(Path::new("/nonexistent/xfn"), SMALL).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
    }

    #[test]
    fn refuses_text_that_is_not_utf8() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, [0xff, 0xfe]).unwrap();
        let err = read_to_string(&path, SMALL).unwrap_err();
        assert_eq!(
            err.to_string(),
            "a test file must be UTF-8 text, and this is not"
        );
    }

    #[test]
    fn a_file_larger_than_its_stated_size_is_still_bounded() {
        // /proc files state a size of 0 and hold more.
        let path = Path::new("/proc/self/status");
        assert_eq!(std::fs::metadata(path).unwrap().len(), 0);
        let err = read(path, SMALL).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::FileTooLarge);
        assert!(
            err.to_string().contains("grew past the limit of 16 bytes"),
            "{err}"
        );
    }

    #[test]
    fn sizes_read_as_units() {
        assert_eq!(size_text(64 << 20), "64 MiB");
        assert_eq!(size_text(4 << 10), "4 KiB");
        assert_eq!(size_text(1000), "1000 bytes");
    }
}
