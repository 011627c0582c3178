//! Root filesystems unpacked from images, cached by their layers.
//!
//! ```text
//! <cache>/rootfs/<key>/root            the filesystem
//! <cache>/rootfs/<key>/complete.json   the layers it holds, written last
//! <cache>/rootfs/.partial-<key>-<pid>-<n>/   being unpacked
//! ```
//!
//! A root is unpacked into a `.partial-` directory and renamed into place
//! only once complete, so one that a killed run left half-unpacked is
//! never used (and is removed once its process is gone). The key hashes
//! the layers' digests in order and the owner the files are given.

use std::io::Read;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

use rustix::fs::{Mode, OFlags, ResolveFlags};
use sha2::{Digest as _, Sha256};

use crate::unpack::{Compression, Limits, Totals, UnpackError, Unpacker};

/// One layer of an image, as a verified blob on disk.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Layer {
    /// Its digest (`sha256:…`).
    pub digest: String,
    /// The blob.
    pub path: PathBuf,
    /// How the blob is compressed.
    pub compression: Compression,
}

/// An unpacked root filesystem.
#[derive(Debug, Clone)]
pub struct Rootfs {
    /// The root directory.
    pub root: PathBuf,
    /// Whether it was already in the cache.
    pub reused: bool,
    /// What unpacking it wrote (zero when reused).
    pub totals: Totals,
}

/// Why a root filesystem could not be made.
#[derive(Debug, thiserror::Error)]
pub enum RootfsError {
    /// A layer is hostile or broken.
    #[error("layer {digest}: {error}")]
    Layer {
        /// The layer's digest.
        digest: String,
        /// Why.
        error: UnpackError,
    },
    /// The cache could not be written.
    #[error("the rootfs cache {path:?}: {error}")]
    Cache {
        /// Where.
        path: PathBuf,
        /// The cause.
        error: std::io::Error,
    },
}

/// The marker of a complete root.
#[derive(Debug, serde::Serialize, serde::Deserialize, PartialEq)]
struct Complete {
    layers: Vec<String>,
    owner: Option<(u32, u32)>,
}

/// Where unpacked roots are kept.
#[derive(Debug, Clone)]
pub struct RootfsCache {
    dir: PathBuf,
    limits: Limits,
}

/// Directories and files every root gets, as Docker gives them: mount
/// points for the sandbox's `/proc`, `/dev` and `/tmp`, and the files it
/// puts its own `/etc/hosts`, `/etc/resolv.conf` and `/etc/hostname` on.
const MOUNT_POINTS: [&str; 4] = ["proc", "dev", "tmp", "etc"];
const ETC_FILES: [&str; 3] = ["hosts", "resolv.conf", "hostname"];

impl RootfsCache {
    /// The roots under `<cache_root>/rootfs`, unpacked within `limits`.
    pub fn new(cache_root: &Path, limits: Limits) -> RootfsCache {
        RootfsCache {
            dir: cache_root.join("rootfs"),
            limits,
        }
    }

    /// The root of `layers`, from the cache or unpacked now. With `owner`,
    /// its files are given that uid and gid.
    pub fn ensure(
        &self,
        layers: &[Layer],
        owner: Option<(u32, u32)>,
    ) -> Result<Rootfs, RootfsError> {
        let cache_error = |path: &Path| {
            let path = path.to_owned();
            move |error| RootfsError::Cache { path, error }
        };
        let marker = Complete {
            layers: layers.iter().map(|l| l.digest.clone()).collect(),
            owner,
        };
        let key = key(&marker);
        let done = self.dir.join(&key);
        if let Some(root) = complete(&done, &marker) {
            return Ok(Rootfs {
                root,
                reused: true,
                totals: Totals::default(),
            });
        }
        std::fs::create_dir_all(&self.dir).map_err(cache_error(&self.dir))?;
        self.remove_abandoned();
        if done.exists() {
            // A root without its marker (or another's): never used.
            std::fs::remove_dir_all(&done).map_err(cache_error(&done))?;
        }
        let partial = tempfile::Builder::new()
            .prefix(&format!(".partial-{key}-{}-", std::process::id()))
            .tempdir_in(&self.dir)
            .map_err(cache_error(&self.dir))?;
        let root = partial.path().join("root");
        std::fs::create_dir(&root).map_err(cache_error(&root))?;
        let mut unpacker = Unpacker::new(&root, self.limits, owner).map_err(cache_error(&root))?;
        for layer in layers {
            let layer_error = |error| RootfsError::Layer {
                digest: layer.digest.clone(),
                error,
            };
            let blob = std::fs::File::open(&layer.path).map_err(cache_error(&layer.path))?;
            unpacker
                .layer(
                    std::io::BufReader::with_capacity(1 << 16, blob),
                    layer.compression,
                )
                .map_err(layer_error)?;
        }
        let totals = unpacker.totals();
        add_mount_points(&root, owner).map_err(cache_error(&root))?;
        let text = serde_json::to_vec(&marker).map_err(|e| RootfsError::Cache {
            path: partial.path().to_owned(),
            error: e.into(),
        })?;
        let marker_path = partial.path().join("complete.json");
        std::fs::write(&marker_path, text).map_err(cache_error(&marker_path))?;
        let kept = partial.keep();
        match std::fs::rename(&kept, &done) {
            Ok(()) => {}
            // Another run finished the same root first: use that one.
            Err(_) if complete(&done, &marker).is_some() => {
                let _ = std::fs::remove_dir_all(&kept);
            }
            Err(error) => {
                let _ = std::fs::remove_dir_all(&kept);
                return Err(RootfsError::Cache { path: done, error });
            }
        }
        Ok(Rootfs {
            root: done.join("root"),
            reused: false,
            totals,
        })
    }

    /// Removes the partial roots of runs that are gone.
    fn remove_abandoned(&self) {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(".partial-")) else {
                continue;
            };
            // .partial-<key>-<pid>-<random>
            let pid = rest.split('-').nth(1).and_then(|p| p.parse::<u32>().ok());
            let alive = pid.is_some_and(|pid| Path::new(&format!("/proc/{pid}")).exists());
            if !alive {
                tracing::debug!("removing the abandoned partial rootfs {:?}", entry.path());
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    }
}

fn key(marker: &Complete) -> String {
    let mut hash = Sha256::new();
    hash.update(b"xfn-rootfs-v1\n");
    if let Some((uid, gid)) = marker.owner {
        hash.update(format!("owner {uid}:{gid}\n"));
    }
    for layer in &marker.layers {
        hash.update(layer.as_bytes());
        hash.update(b"\n");
    }
    hash.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// The root of a complete entry holding exactly `marker`'s layers.
fn complete(dir: &Path, marker: &Complete) -> Option<PathBuf> {
    let text = std::fs::read(dir.join("complete.json")).ok()?;
    let found: Complete = serde_json::from_slice(&text).ok()?;
    let root = dir.join("root");
    (found == *marker && root.is_dir()).then_some(root)
}

fn add_mount_points(root: &Path, owner: Option<(u32, u32)>) -> std::io::Result<()> {
    let root_fd = rustix::fs::open(
        root,
        OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    for dir in MOUNT_POINTS {
        match rustix::fs::mkdirat(&root_fd, dir, Mode::from_raw_mode(0o755)) {
            Ok(()) => {
                if let Some((uid, gid)) = owner {
                    rustix::fs::chownat(
                        &root_fd,
                        dir,
                        Some(rustix::fs::Uid::from_raw(uid)),
                        Some(rustix::fs::Gid::from_raw(gid)),
                        rustix::fs::AtFlags::SYMLINK_NOFOLLOW,
                    )?;
                }
            }
            Err(rustix::io::Errno::EXIST) => {}
            Err(e) => return Err(e.into()),
        }
    }
    let Ok(etc) = open_beneath(root_fd.as_fd(), "etc", OFlags::DIRECTORY | OFlags::RDONLY) else {
        // `/etc` is a link or a file in this image: the sandbox skips
        // the files it would put there.
        return Ok(());
    };
    for file in ETC_FILES {
        match rustix::fs::openat(
            &etc,
            file,
            OFlags::CREATE | OFlags::EXCL | OFlags::WRONLY | OFlags::CLOEXEC | OFlags::NOFOLLOW,
            Mode::from_raw_mode(0o644),
        ) {
            Ok(fd) => {
                if let Some((uid, gid)) = owner {
                    rustix::fs::fchown(
                        &fd,
                        Some(rustix::fs::Uid::from_raw(uid)),
                        Some(rustix::fs::Gid::from_raw(gid)),
                    )?;
                }
            }
            Err(rustix::io::Errno::EXIST) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// Opens `path` below `root` as if `root` were `/`: links resolve inside
/// it, and nothing outside it can be reached.
fn open_beneath(
    root: std::os::fd::BorrowedFd<'_>,
    path: &str,
    flags: OFlags,
) -> rustix::io::Result<std::os::fd::OwnedFd> {
    rustix::fs::openat2(
        root,
        path.trim_start_matches('/'),
        flags | OFlags::CLOEXEC,
        Mode::empty(),
        ResolveFlags::IN_ROOT | ResolveFlags::NO_MAGICLINKS | ResolveFlags::NO_XDEV,
    )
}

/// Reads a small file of the root (at most `limit` bytes), resolving it
/// as the sandbox would.
pub fn read_in_root(root: &Path, path: &str, limit: u64) -> std::io::Result<Vec<u8>> {
    let root_fd = rustix::fs::open(
        root,
        OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let fd = open_beneath(root_fd.as_fd(), path, OFlags::RDONLY)?;
    let mut bytes = Vec::new();
    std::fs::File::from(fd)
        .take(limit + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(std::io::Error::other(format!(
            "{path} is larger than {limit} bytes"
        )));
    }
    Ok(bytes)
}

/// Whether `path` names an executable regular file in the root, resolved
/// as the sandbox would.
pub fn is_executable_in_root(root: &Path, path: &str) -> bool {
    let Ok(root_fd) = rustix::fs::open(
        root,
        OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC,
        Mode::empty(),
    ) else {
        return false;
    };
    let Ok(fd) = open_beneath(root_fd.as_fd(), path, OFlags::PATH) else {
        return false;
    };
    rustix::fs::fstat(&fd).is_ok_and(|st| {
        rustix::fs::FileType::from_raw_mode(st.st_mode).is_file() && st.st_mode & 0o111 != 0
    })
}
