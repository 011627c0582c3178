//! An xpkg base layer read in one streaming pass: its diff ID (the digest of
//! its uncompressed bytes) and its `package.yaml`, found as Crossplane
//! finds it.
//!
//! The layer is decompressed as a stream and never held uncompressed: the
//! digest is taken as the bytes go by, `package.yaml` is the one file kept
//! (at most [`MAX_PACKAGE_YAML`]), and the whole stream is cut off past
//! [`MAX_UNPACKED`]. A layer listed many times in a manifest is still read
//! once ([`crate::xpkg::check`] and the pull share one [`BaseLayer`]).

use std::io::{self, Read};
use std::path::Path;

use sha2::{Digest as _, Sha256};

use crate::digest::Digest;
use crate::package::{MAX_UNPACKED, PACKAGE_FILE};

/// The most of `package.yaml` xfn reads: 4 MiB. Crossplane reads up to
/// [`CROSSPLANE_MAX_PACKAGE_YAML`], but a Function's metadata and input
/// CRDs are a few KiB, and YAML costs many times its size to load.
pub const MAX_PACKAGE_YAML: u64 = 4 << 20;

/// The most of `package.yaml` Crossplane reads (crossplane-runtime
/// `pkg/xpkg/client.go:91-93`).
pub const CROSSPLANE_MAX_PACKAGE_YAML: u64 = 200 << 20;

/// The longest path quoted in a message (a tar path can be any length).
const MAX_QUOTED_PATH: usize = 200;

/// The gzip and zstd magic numbers.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

/// What one pass over a base layer found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaseLayer {
    /// The digest of the uncompressed layer, as a diff ID names it, or why
    /// it could not be taken.
    pub diff_id: Result<Digest, String>,
    /// The text of `package.yaml`, or why it could not be read.
    pub package_yaml: Result<String, String>,
}

impl BaseLayer {
    /// Reads `layer` (a tar archive, gzipped or not) once.
    pub fn read(layer: &[u8]) -> BaseLayer {
        if layer.starts_with(&ZSTD_MAGIC) {
            let zstd = String::from(
                "the base layer is zstd-compressed, which Crossplane reads but xfn cannot check",
            );
            return BaseLayer {
                diff_id: Err(zstd.clone()),
                package_yaml: Err(zstd),
            };
        }
        if layer.starts_with(&GZIP_MAGIC) {
            // Go's gzip reader reads every member of a multi-member
            // stream, and so the diff ID covers them all.
            read_stream(flate2::read::MultiGzDecoder::new(layer), "gzip")
        } else {
            read_stream(layer, "tar")
        }
    }
}

/// Reads a decompressed stream: `package.yaml` from its tar entries, and
/// its digest over every byte, to the end.
fn read_stream(stream: impl Read, format: &str) -> BaseLayer {
    let mut hashing = Hashing {
        inner: stream,
        hasher: Sha256::new(),
        read: 0,
    };
    let package_yaml = find_package_yaml(&mut hashing);
    // The digest needs the rest of the stream, past the tar's end too.
    let drained = io::copy(&mut hashing, &mut io::sink());
    let diff_id = match drained {
        Ok(_) => Ok(Digest::from_sha256(hashing.hasher)),
        Err(e) if e.kind() == io::ErrorKind::FileTooLarge => Err(e.to_string()),
        Err(e) => Err(format!("the base layer is not valid {format}: {e}")),
    };
    // A stream that was cut off explains a package.yaml it cut off too.
    let package_yaml = match (&diff_id, package_yaml) {
        (Err(reason), Err(_)) => Err(reason.clone()),
        (_, found) => found,
    };
    BaseLayer {
        diff_id,
        package_yaml,
    }
}

/// The first tar entry whose base name is `package.yaml`
/// (crossplane-runtime `pkg/xpkg/client.go:450-462`), which must be at
/// the root and at most [`MAX_PACKAGE_YAML`] bytes.
fn find_package_yaml(tar: &mut impl Read) -> Result<String, String> {
    let mut archive = tar::Archive::new(tar);
    let entries = archive
        .entries()
        .map_err(|e| format!("the base layer is not a tar archive: {e}"))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("cannot read the base layer: {e}"))?;
        let path = entry
            .path()
            .map_err(|e| format!("bad path in the base layer: {e}"))?
            .into_owned();
        if path.file_name() != Some(std::ffi::OsStr::new(PACKAGE_FILE)) {
            continue;
        }
        if path.strip_prefix("./").unwrap_or(&path) != Path::new(PACKAGE_FILE) {
            return Err(format!(
                "{PACKAGE_FILE} is at {}, not at the root of the base layer",
                quoted(&path)
            ));
        }
        let size = entry.size();
        if size > MAX_PACKAGE_YAML {
            let crossplane = if size > CROSSPLANE_MAX_PACKAGE_YAML {
                format!("Crossplane reads only the first {CROSSPLANE_MAX_PACKAGE_YAML}")
            } else {
                String::from("a Function's metadata and input CRDs are a few KiB")
            };
            return Err(format!(
                "{PACKAGE_FILE} is {size} bytes; xfn reads at most {MAX_PACKAGE_YAML} \
                 ({} MiB), and {crossplane}",
                MAX_PACKAGE_YAML >> 20
            ));
        }
        let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
        entry
            .take(MAX_PACKAGE_YAML)
            .read_to_end(&mut bytes)
            .map_err(|e| format!("cannot read {PACKAGE_FILE}: {e}"))?;
        return String::from_utf8(bytes)
            .map_err(|e| format!("{PACKAGE_FILE} is not UTF-8 text: {e}"));
    }
    Err(format!("the base layer has no {PACKAGE_FILE}"))
}

/// A path for a message: escaped, and cut to [`MAX_QUOTED_PATH`]
/// characters.
fn quoted(path: &Path) -> String {
    let text = path.to_string_lossy();
    let mut chars = text.chars();
    let head: String = chars.by_ref().take(MAX_QUOTED_PATH).collect();
    match chars.next() {
        None => format!("{head:?}"),
        Some(_) => format!("{head:?}… ({} bytes)", text.len()),
    }
}

/// Hashes what it reads, and fails past [`MAX_UNPACKED`] bytes.
struct Hashing<R> {
    inner: R,
    hasher: Sha256,
    read: u64,
}

impl<R: Read> Read for Hashing<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        if self.read > MAX_UNPACKED {
            return Err(io::Error::new(
                io::ErrorKind::FileTooLarge,
                format!("the base layer unpacks to over {MAX_UNPACKED} bytes"),
            ));
        }
        self.hasher.update(&buf[..n]);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn tar_of(files: &[(&str, &[u8])]) -> Vec<u8> {
        let mut builder = tar::Builder::new(Vec::new());
        for (path, bytes) in files {
            let mut header = tar::Header::new_gnu();
            header.set_size(bytes.len() as u64);
            header.set_mode(0o644);
            header.set_cksum();
            builder.append_data(&mut header, path, *bytes).expect("tar");
        }
        builder.into_inner().expect("tar")
    }

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(bytes).expect("gzip");
        gz.finish().expect("gzip")
    }

    #[test]
    fn reads_package_yaml_and_the_diff_id_in_one_pass() {
        let tar = tar_of(&[("README", b"hi"), ("package.yaml", b"a: b\n")]);
        for layer in [tar.clone(), gzip(&tar)] {
            let base = BaseLayer::read(&layer);
            assert_eq!(base.package_yaml.as_deref(), Ok("a: b\n"));
            assert_eq!(base.diff_id, Ok(Digest::of(&tar)));
        }
    }

    /// The attack round's low finding: Go reads every member of a gzip
    /// stream, so the diff ID is over all of them, and a package built
    /// that way drew a false warning.
    #[test]
    fn the_diff_id_covers_every_gzip_member() {
        let tar = tar_of(&[("package.yaml", b"a: b\n")]);
        let (first, second) = tar.split_at(700);
        let mut layer = gzip(first);
        layer.extend(gzip(second));
        let base = BaseLayer::read(&layer);
        assert_eq!(base.diff_id, Ok(Digest::of(&tar)));
        assert_eq!(base.package_yaml.as_deref(), Ok("a: b\n"));
    }

    /// The attack round's H1: a 64 MiB package.yaml is refused by its
    /// header's size, before it is read.
    #[test]
    fn a_package_yaml_over_the_limit_is_refused_unread() {
        let big = vec![b'a'; (MAX_PACKAGE_YAML + 1) as usize];
        let base = BaseLayer::read(&gzip(&tar_of(&[("package.yaml", &big)])));
        let refusal = base.package_yaml.expect_err("refused");
        assert!(
            refusal.contains("xfn reads at most 4194304 (4 MiB)"),
            "{refusal}"
        );
        assert!(base.diff_id.is_ok());
    }

    /// The attack round's low finding: a 1 MB gzip bomb cost 905 MB before
    /// it was refused. Now nothing uncompressed is kept.
    #[test]
    fn a_gzip_bomb_is_cut_off_while_streaming() {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        let zeros = vec![0u8; 1 << 20];
        for _ in 0..=(MAX_UNPACKED >> 20) {
            gz.write_all(&zeros).expect("gzip");
        }
        let layer = gz.finish().expect("gzip");
        let base = BaseLayer::read(&layer);
        let refusal = base.diff_id.expect_err("cut off");
        assert!(refusal.contains("unpacks to over"), "{refusal}");
        assert_eq!(base.package_yaml, Err(refusal));
    }

    /// The attack round's low finding: a 100 MiB PAX path gave a 100 MiB
    /// error line.
    #[test]
    fn a_long_path_is_quoted_short() {
        let long = format!("{}/package.yaml", "d".repeat(100_000));
        let mut builder = tar::Builder::new(Vec::new());
        let mut header = tar::Header::new_gnu();
        header.set_size(5);
        header.set_mode(0o644);
        builder
            .append_data(&mut header, &long, &b"a: b\n"[..])
            .expect("tar");
        let layer = builder.into_inner().expect("tar");
        let refusal = BaseLayer::read(&layer).package_yaml.expect_err("refused");
        assert!(refusal.len() < 400, "{} bytes", refusal.len());
        assert!(refusal.contains("(100013 bytes)"), "{refusal}");
    }

    #[test]
    fn zstd_and_non_tar_layers_are_explained() {
        let base = BaseLayer::read(&[0x28, 0xb5, 0x2f, 0xfd, 0, 0]);
        assert!(base.diff_id.expect_err("zstd").contains("zstd"));
        let base = BaseLayer::read(&gzip(b"not a tar at all, but long enough to be read"));
        assert!(base.diff_id.is_ok());
        assert!(base.package_yaml.is_err());
    }
}
