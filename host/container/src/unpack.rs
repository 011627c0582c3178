//! Unpacking an image's layers into a root filesystem, treating every
//! layer as hostile.
//!
//! Every entry is created relative to a directory descriptor of the root,
//! one path component at a time, with `openat2(RESOLVE_NO_SYMLINKS |
//! RESOLVE_BENEATH)`: nothing is ever written through a symbolic link or
//! outside the root, whatever the layer holds. Rules, as containerd applies
//! them, and stricter where a real image never needs more:
//!
//! * `..` in a path, and a path through a symbolic link, are refused.
//! * `.wh.NAME` removes `NAME` of lower layers; `.wh..wh..opq` empties its
//!   directory of what lower layers put there.
//! * Hard links must name an entry already inside the root.
//! * Device nodes and FIFOs are skipped; setuid and setgid bits dropped.
//! * The entries and the bytes a layer expands to are bounded ([`Limits`]),
//!   which stops a gzip bomb or a layer of millions of entries early.

use std::collections::HashSet;
use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use rustix::fs::{AtFlags, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;

/// How much unpacking an image may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Entries over all layers.
    pub max_entries: u64,
    /// Bytes the layers expand to, over all layers (tar headers included).
    pub max_bytes: u64,
    /// Components of one entry's path.
    pub max_depth: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_entries: 1_000_000,
            max_bytes: 8 << 30,
            max_depth: 128,
        }
    }
}

/// How a layer blob is compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Compression {
    /// A plain tar.
    None,
    /// gzip.
    Gzip,
    /// zstd.
    Zstd,
}

/// Why a layer could not be unpacked.
#[derive(Debug, thiserror::Error)]
pub enum UnpackError {
    /// An entry's path is not one the root can hold.
    #[error("entry {path:?}: {reason}")]
    Entry {
        /// The entry's path as the layer names it.
        path: String,
        /// Why it was refused.
        reason: String,
    },
    /// A bound of [`Limits`] was reached.
    #[error("{0}")]
    Limit(String),
    /// The layer is not a readable (compressed) tar.
    #[error("cannot read the layer: {0}")]
    Read(io::Error),
    /// Writing the root failed.
    #[error("cannot write {path:?}: {error}")]
    Write {
        /// The entry's path.
        path: String,
        /// The cause.
        error: io::Error,
    },
}

/// What unpacking wrote, over all layers so far.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Totals {
    /// Entries read.
    pub entries: u64,
    /// Bytes the layers expanded to.
    pub bytes: u64,
    /// Device nodes and FIFOs skipped.
    pub skipped_special: u64,
}

/// Unpacks layers, in order, into one root.
pub struct Unpacker {
    root: OwnedFd,
    limits: Limits,
    owner: Option<(u32, u32)>,
    totals: Totals,
}

impl std::fmt::Debug for Unpacker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Unpacker")
            .field("limits", &self.limits)
            .field("totals", &self.totals)
            .finish_non_exhaustive()
    }
}

impl Unpacker {
    /// An unpacker into the (empty) directory `root`. With `owner`, every
    /// entry is given that uid and gid (for a sandbox whose user maps to
    /// them); otherwise entries belong to whoever unpacks.
    pub fn new(
        root: &std::path::Path,
        limits: Limits,
        owner: Option<(u32, u32)>,
    ) -> io::Result<Unpacker> {
        let root = rustix::fs::open(
            root,
            OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOFOLLOW,
            Mode::empty(),
        )?;
        if let Some((uid, gid)) = owner {
            chown(root.as_fd(), "", uid, gid, true).map_err(io::Error::from)?;
        }
        Ok(Unpacker {
            root,
            limits,
            owner,
            totals: Totals::default(),
        })
    }

    /// What has been unpacked so far.
    pub fn totals(&self) -> Totals {
        self.totals
    }

    /// Unpacks one layer read from `blob`.
    pub fn layer(&mut self, blob: impl Read, compression: Compression) -> Result<(), UnpackError> {
        let budget = self.limits.max_bytes.saturating_sub(self.totals.bytes);
        let counted = Counted {
            inner: blob,
            left: budget,
            read: 0,
        };
        match compression {
            Compression::None => self.entries(counted),
            Compression::Gzip => self.entries(Counted::wrap(
                flate2::read::MultiGzDecoder::new(counted),
                budget,
            )),
            Compression::Zstd => {
                let decoder = ruzstd::decoding::StreamingDecoder::new(counted)
                    .map_err(|e| UnpackError::Read(io::Error::other(e.to_string())))?;
                self.entries(Counted::wrap(decoder, budget))
            }
        }
    }

    fn entries<R: Read + CountedRead>(&mut self, reader: R) -> Result<(), UnpackError> {
        let mut archive = tar::Archive::new(reader);
        let mut this_layer: HashSet<Vec<u8>> = HashSet::new();
        let entries = archive.entries().map_err(UnpackError::Read)?;
        let result = (|| {
            for entry in entries {
                let mut entry = entry.map_err(UnpackError::Read)?;
                self.totals.entries += 1;
                if self.totals.entries > self.limits.max_entries {
                    return Err(UnpackError::Limit(format!(
                        "the image has more than {} entries (the limit)",
                        self.limits.max_entries
                    )));
                }
                self.entry(&mut entry, &mut this_layer)?;
            }
            Ok(())
        })();
        let reader = archive.into_inner();
        self.totals.bytes += reader.bytes_read();
        match result {
            Err(UnpackError::Read(_) | UnpackError::Write { .. }) if reader.exhausted() => {
                Err(self.too_large())
            }
            other => other,
        }
    }

    fn too_large(&self) -> UnpackError {
        UnpackError::Limit(format!(
            "the image's layers expand to more than {} bytes (the limit)",
            self.limits.max_bytes
        ))
    }

    fn entry<R: Read>(
        &mut self,
        entry: &mut tar::Entry<'_, R>,
        this_layer: &mut HashSet<Vec<u8>>,
    ) -> Result<(), UnpackError> {
        let raw = entry.path_bytes().into_owned();
        let shown = String::from_utf8_lossy(&raw).into_owned();
        let refuse = |reason: &str| UnpackError::Entry {
            path: shown.clone(),
            reason: reason.to_owned(),
        };
        let parts = components(&raw, self.limits.max_depth).map_err(|r| refuse(&r))?;
        let Some((name, parents)) = parts.split_last() else {
            return Ok(()); // the root itself
        };
        let kind = entry.header().entry_type();
        let mode = entry.header().mode().unwrap_or(0o644) & 0o1777;
        let write_error = |error: io::Error| UnpackError::Write {
            path: shown.clone(),
            error,
        };

        // Whiteouts remove what lower layers put there.
        if let Some(hidden) = name.strip_prefix(b".wh.") {
            let Some(parent) = self.walk(parents, false).map_err(|r| refuse(&r))? else {
                return Ok(());
            };
            if hidden == b".wh..opq" {
                let prefix = join(parents);
                remove_children(parent.as_fd(), &prefix, this_layer, 0)
                    .map_err(|e| write_error(e.into()))?;
            } else if !hidden.starts_with(b".wh.") {
                check_name(hidden).map_err(|r| refuse(&r))?;
                remove_any(parent.as_fd(), hidden, 0).map_err(|e| write_error(e.into()))?;
            }
            return Ok(());
        }

        let parent = self
            .walk(parents, true)
            .map_err(|r| refuse(&r))?
            .ok_or_else(|| refuse("its parent directory could not be created"))?;
        let parent = parent.as_fd();
        let existing = rustix::fs::statat(parent, *name, AtFlags::SYMLINK_NOFOLLOW).ok();
        let is_dir =
            |st: &rustix::fs::Stat| rustix::fs::FileType::from_raw_mode(st.st_mode).is_dir();
        use tar::EntryType as T;
        match kind {
            T::Directory => {
                match &existing {
                    Some(st) if is_dir(st) => {}
                    Some(_) => {
                        remove_any(parent, name, 0).map_err(|e| write_error(e.into()))?;
                        mkdir(parent, name).map_err(|e| write_error(e.into()))?;
                    }
                    None => mkdir(parent, name).map_err(|e| write_error(e.into()))?,
                }
                // The unpacker (and the sandbox's user, who owns the root)
                // must be able to enter and fill it.
                rustix::fs::chmodat(
                    parent,
                    *name,
                    Mode::from_raw_mode(mode | 0o700),
                    AtFlags::empty(),
                )
                .map_err(|e| write_error(e.into()))?;
            }
            T::Regular | T::Continuous | T::GNUSparse => {
                if existing.is_some() {
                    remove_any(parent, name, 0).map_err(|e| write_error(e.into()))?;
                }
                let fd = rustix::fs::openat(
                    parent,
                    *name,
                    OFlags::CREATE
                        | OFlags::EXCL
                        | OFlags::WRONLY
                        | OFlags::NOFOLLOW
                        | OFlags::CLOEXEC,
                    Mode::from_raw_mode(mode),
                )
                .map_err(|e| write_error(e.into()))?;
                let mut file = File::from(fd);
                io::copy(entry, &mut file).map_err(write_error)?;
                // The umask may have narrowed it.
                rustix::fs::fchmod(&file, Mode::from_raw_mode(mode))
                    .map_err(|e| write_error(e.into()))?;
            }
            T::Symlink => {
                let target = entry
                    .link_name_bytes()
                    .ok_or_else(|| refuse("a symbolic link without a target"))?
                    .into_owned();
                if target.is_empty() {
                    return Err(refuse("a symbolic link without a target"));
                }
                if existing.is_some() {
                    remove_any(parent, name, 0).map_err(|e| write_error(e.into()))?;
                }
                // The target is kept as written: at run time it resolves
                // inside the sandbox's root, and unpacking never follows it.
                rustix::fs::symlinkat(target.as_slice(), parent, *name)
                    .map_err(|e| write_error(e.into()))?;
            }
            T::Link => {
                let target = entry
                    .link_name_bytes()
                    .ok_or_else(|| refuse("a hard link without a target"))?
                    .into_owned();
                let target_parts = components(&target, self.limits.max_depth)
                    .map_err(|r| refuse(&format!("its link target: {r}")))?;
                let Some((target_name, target_parents)) = target_parts.split_last() else {
                    return Err(refuse("a hard link to the root"));
                };
                let source = self
                    .walk(target_parents, false)
                    .map_err(|r| refuse(&format!("its link target: {r}")))?
                    .ok_or_else(|| refuse("its link target does not exist in the image"))?;
                let source_stat =
                    rustix::fs::statat(source.as_fd(), *target_name, AtFlags::SYMLINK_NOFOLLOW)
                        .map_err(|_| refuse("its link target does not exist in the image"))?;
                if is_dir(&source_stat) {
                    return Err(refuse("a hard link to a directory"));
                }
                if existing.is_some() {
                    if join(&target_parts) == join(&parts) {
                        return Ok(());
                    }
                    remove_any(parent, name, 0).map_err(|e| write_error(e.into()))?;
                }
                rustix::fs::linkat(
                    source.as_fd(),
                    *target_name,
                    parent,
                    *name,
                    AtFlags::empty(),
                )
                .map_err(|e| write_error(e.into()))?;
            }
            T::Char | T::Block | T::Fifo => {
                self.totals.skipped_special += 1;
                tracing::debug!("skipping the device node or FIFO {shown:?}");
                return Ok(());
            }
            // Headers tar reads for itself, and kinds a root has no use for.
            _ => return Ok(()),
        }
        if let Some((uid, gid)) = self.owner {
            chown(parent, *name, uid, gid, false).map_err(|e| write_error(e.into()))?;
        }
        this_layer.insert(join(&parts));
        Ok(())
    }

    /// Opens the directory `parts` below the root, one component at a
    /// time, never through a symbolic link; with `create`, missing ones
    /// are made. `None` when one is missing and `create` is false.
    fn walk(&self, parts: &[&[u8]], create: bool) -> Result<Option<OwnedFd>, String> {
        let mut dir = rustix::io::dup(&self.root).map_err(|e| e.to_string())?;
        for (depth, part) in parts.iter().enumerate() {
            let shown = || String::from_utf8_lossy(&join(&parts[..=depth])).into_owned();
            let next = match open_dir(dir.as_fd(), part) {
                Err(Errno::NOENT) if create => {
                    mkdir(dir.as_fd(), part)
                        .map_err(|e| format!("cannot create directory {:?}: {e}", shown()))?;
                    if let Some((uid, gid)) = self.owner {
                        chown(dir.as_fd(), *part, uid, gid, false)
                            .map_err(|e| format!("cannot chown {:?}: {e}", shown()))?;
                    }
                    open_dir(dir.as_fd(), part)
                }
                other => other,
            };
            dir = match next {
                Ok(fd) => fd,
                Err(Errno::NOENT) => return Ok(None),
                Err(Errno::LOOP) => {
                    return Err(format!(
                        "its path goes through the symbolic link {:?}, and a layer may not write through a link",
                        shown()
                    ));
                }
                Err(Errno::NOTDIR) => {
                    return Err(format!(
                        "its parent {:?} is not a directory in the image",
                        shown()
                    ));
                }
                Err(e) => return Err(format!("cannot open {:?}: {e}", shown())),
            };
        }
        Ok(Some(dir))
    }
}

/// A reader that counts what it reads and stops at a budget.
struct Counted<R> {
    inner: R,
    left: u64,
    read: u64,
}

/// What the tar reader needs to know of the bytes under it.
trait CountedRead {
    /// Bytes read so far.
    fn bytes_read(&self) -> u64;
    /// Whether the budget stopped reading.
    fn exhausted(&self) -> bool;
}

impl<R: Read> Counted<R> {
    fn wrap(inner: R, budget: u64) -> Counted<R> {
        Counted {
            inner,
            left: budget,
            read: 0,
        }
    }
}

impl<R> CountedRead for Counted<R> {
    fn bytes_read(&self) -> u64 {
        self.read
    }
    fn exhausted(&self) -> bool {
        self.left == 0
    }
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.left == 0 {
            // One byte more than the budget tells a full layer from a bomb.
            let mut probe = [0u8; 1];
            return match self.inner.read(&mut probe)? {
                0 => Ok(0),
                _ => Err(io::Error::other("the layer is larger than its budget")),
            };
        }
        let want = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..want])?;
        self.left -= n as u64;
        self.read += n as u64;
        Ok(n)
    }
}

/// The components of an entry's path: `./` and `/` prefixes and `.`
/// dropped; `..` refused.
fn components(path: &[u8], max_depth: usize) -> Result<Vec<&[u8]>, String> {
    if path.len() > 4096 {
        return Err(format!("its path is {} bytes long", path.len()));
    }
    let mut parts = Vec::new();
    for part in path.split(|b| *b == b'/') {
        match part {
            b"" | b"." => {}
            b".." => {
                return Err(
                    "its path contains `..` and could reach outside the image's root".to_owned(),
                );
            }
            part => {
                check_name(part)?;
                parts.push(part);
            }
        }
    }
    if parts.len() > max_depth {
        return Err(format!(
            "its path is {} directories deep (the limit is {max_depth})",
            parts.len()
        ));
    }
    Ok(parts)
}

fn check_name(name: &[u8]) -> Result<(), String> {
    if name.contains(&0) {
        return Err("its path contains a NUL byte".to_owned());
    }
    if name.len() > 255 {
        return Err("a component of its path is longer than 255 bytes".to_owned());
    }
    if name == b".." || name == b"." || name.is_empty() {
        return Err("its path names `.` or `..`".to_owned());
    }
    Ok(())
}

fn join(parts: &[&[u8]]) -> Vec<u8> {
    parts.join(&b'/')
}

/// Opens the directory `name` of `dir`, never following a link.
fn open_dir(dir: BorrowedFd<'_>, name: &[u8]) -> rustix::io::Result<OwnedFd> {
    rustix::fs::openat2(
        dir,
        name,
        // RESOLVE_NO_SYMLINKS refuses a final link with ELOOP too (where
        // O_NOFOLLOW with O_DIRECTORY would say ENOTDIR).
        OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC,
        Mode::empty(),
        ResolveFlags::NO_SYMLINKS | ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS,
    )
}

fn mkdir(dir: BorrowedFd<'_>, name: &[u8]) -> rustix::io::Result<()> {
    match rustix::fs::mkdirat(dir, name, Mode::from_raw_mode(0o755)) {
        Err(Errno::EXIST) => Ok(()),
        other => other,
    }
}

fn chown(
    dir: BorrowedFd<'_>,
    name: impl rustix::path::Arg,
    uid: u32,
    gid: u32,
    empty_path: bool,
) -> rustix::io::Result<()> {
    let flags = if empty_path {
        AtFlags::SYMLINK_NOFOLLOW | AtFlags::EMPTY_PATH
    } else {
        AtFlags::SYMLINK_NOFOLLOW
    };
    rustix::fs::chownat(
        dir,
        name,
        Some(rustix::fs::Uid::from_raw(uid)),
        Some(rustix::fs::Gid::from_raw(gid)),
        flags,
    )
}

/// Removes `name` of `dir` (a directory with everything in it).
fn remove_any(dir: BorrowedFd<'_>, name: &[u8], depth: usize) -> rustix::io::Result<()> {
    match rustix::fs::unlinkat(dir, name, AtFlags::empty()) {
        Ok(()) | Err(Errno::NOENT) => Ok(()),
        Err(Errno::ISDIR) | Err(Errno::PERM) => {
            let child = open_dir(dir, name)?;
            remove_children(child.as_fd(), b"", &HashSet::new(), depth + 1)?;
            rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR)
        }
        Err(e) => Err(e),
    }
}

/// Removes the entries of `dir` (at `prefix` in the root) except those
/// this layer wrote.
fn remove_children(
    dir: BorrowedFd<'_>,
    prefix: &[u8],
    keep: &HashSet<Vec<u8>>,
    depth: usize,
) -> rustix::io::Result<()> {
    if depth > 256 {
        return Err(Errno::LOOP);
    }
    let mut names = Vec::new();
    for entry in rustix::fs::Dir::read_from(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_bytes();
        if name == b"." || name == b".." {
            continue;
        }
        let full = if prefix.is_empty() {
            name.to_vec()
        } else {
            [prefix, b"/", name].concat()
        };
        if !keep.contains(&full) {
            names.push(name.to_vec());
        }
    }
    for name in names {
        remove_any(dir, &name, depth)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
