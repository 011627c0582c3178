//! Container images: function packages that are ordinary images (not wasm),
//! which xfn runs in its container runtime.
//!
//! This module says what such an image is made of ([`PulledImage`]), which
//! layer media types xfn unpacks ([`layer_compression`]), how the image
//! config is read ([`ImageConfig::parse`]), and which entry of an image
//! index runs on this host ([`host_platform`], [`select_platform_entry`]).
//! Pulling and caching are [`crate::resolve_package`]'s.

use std::fmt;
use std::path::PathBuf;

use oci_client::manifest::{ImageIndexEntry, OciImageIndex};

use crate::digest::Digest;

/// A container image resolved from a registry or the cache: its config and
/// its layers, each verified against its digest and stored in the cache.
#[derive(Debug, Clone)]
pub struct PulledImage {
    /// The reference as given.
    pub reference: String,
    /// The digest of the platform's image manifest (for an index, the
    /// manifest of the entry chosen). Pin with `<repository>@<digest>`.
    pub digest: Digest,
    /// The digest of the index the reference pointed to, if it was one.
    pub index_digest: Option<Digest>,
    /// The image's platform as its config states it, e.g. `linux/amd64`.
    pub platform: String,
    /// What to run: entrypoint, command, environment, directory and user.
    pub config: ImageConfig,
    /// The layers, in the manifest's order (the first is the bottom one).
    pub layers: Vec<ImageLayer>,
    /// Whether everything came from the cache, without the network.
    pub from_cache: bool,
}

/// One layer of a [`PulledImage`], verified and in the cache.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageLayer {
    /// The digest of the layer blob (of its compressed bytes).
    pub digest: Digest,
    /// The layer's media type, as the manifest states it.
    pub media_type: String,
    /// The size of the blob in bytes.
    pub size: u64,
    /// How the tar archive in the blob is compressed.
    pub compression: Compression,
    /// The verified blob in the cache (`blobs/sha256/<hex>`). Read it, don't
    /// change it: other pulls share it.
    pub path: PathBuf,
}

/// How a layer's tar archive is compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// A plain tar archive.
    None,
    /// A gzip-compressed tar archive.
    Gzip,
    /// A zstd-compressed tar archive.
    Zstd,
}

impl fmt::Display for Compression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Compression::None => "uncompressed",
            Compression::Gzip => "gzip",
            Compression::Zstd => "zstd",
        })
    }
}

/// The layer media types xfn unpacks, and how each is compressed.
pub const LAYER_MEDIA_TYPES: &[(&str, Compression)] = &[
    ("application/vnd.oci.image.layer.v1.tar", Compression::None),
    (
        "application/vnd.oci.image.layer.v1.tar+gzip",
        Compression::Gzip,
    ),
    (
        "application/vnd.oci.image.layer.v1.tar+zstd",
        Compression::Zstd,
    ),
    (
        "application/vnd.docker.image.rootfs.diff.tar",
        Compression::None,
    ),
    (
        "application/vnd.docker.image.rootfs.diff.tar.gzip",
        Compression::Gzip,
    ),
    // What BuildKit writes for zstd layers under Docker media types
    // (containerd's `MediaTypeDockerSchema2LayerZstd`).
    (
        "application/vnd.docker.image.rootfs.diff.tar.zstd",
        Compression::Zstd,
    ),
];

/// The config media types of a container image.
pub const IMAGE_CONFIG_MEDIA_TYPES: &[&str] = &[
    "application/vnd.oci.image.config.v1+json",
    "application/vnd.docker.container.image.v1+json",
];

/// How a layer of media type `media_type` is compressed, or why xfn does
/// not unpack it: a non-distributable (foreign) layer, whose content
/// registries do not serve, or a media type that is not a container layer.
pub fn layer_compression(media_type: &str) -> Result<Compression, String> {
    if let Some((_, compression)) = LAYER_MEDIA_TYPES.iter().find(|(t, _)| *t == media_type) {
        return Ok(*compression);
    }
    if media_type.contains("nondistributable") || media_type.contains(".foreign.") {
        return Err(String::from(
            "a non-distributable (foreign) layer, whose content registries need not serve; \
             xfn does not fetch those",
        ));
    }
    if media_type.contains("encrypted") {
        return Err(String::from(
            "an encrypted layer; xfn cannot decrypt layers",
        ));
    }
    Err(format!(
        "not a container layer media type; expected one of: {}",
        LAYER_MEDIA_TYPES
            .iter()
            .map(|(t, _)| *t)
            .collect::<Vec<_>>()
            .join(", ")
    ))
}

/// What an image config says to run, and where it runs. Fields the config
/// leaves out (or sets to `null`) are empty.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImageConfig {
    /// `config.Entrypoint`.
    pub entrypoint: Vec<String>,
    /// `config.Cmd`: the entrypoint's arguments (or the command, without one).
    pub cmd: Vec<String>,
    /// `config.Env`: `NAME=value` entries.
    pub env: Vec<String>,
    /// `config.WorkingDir`.
    pub working_dir: String,
    /// `config.User`: `user`, `uid`, `user:group` or `uid:gid`.
    pub user: String,
    /// `os`, e.g. `linux`.
    pub os: String,
    /// `architecture`, e.g. `amd64`.
    pub architecture: String,
}

/// The image config JSON, as far as xfn reads it.
#[derive(serde::Deserialize)]
struct RawConfig {
    #[serde(default)]
    os: Option<String>,
    #[serde(default)]
    architecture: Option<String>,
    #[serde(default)]
    config: Option<RawRunConfig>,
}

/// The `config` object of an image config.
#[derive(serde::Deserialize)]
#[serde(rename_all = "PascalCase")]
struct RawRunConfig {
    #[serde(default)]
    entrypoint: Option<Vec<String>>,
    #[serde(default)]
    cmd: Option<Vec<String>>,
    #[serde(default)]
    env: Option<Vec<String>>,
    #[serde(default)]
    working_dir: Option<String>,
    #[serde(default)]
    user: Option<String>,
}

impl ImageConfig {
    /// Parses an OCI or Docker image config. Unknown fields are ignored;
    /// a config that is not JSON, or whose fields xfn reads have the wrong
    /// types, is refused with the reason.
    pub fn parse(bytes: &[u8]) -> Result<ImageConfig, String> {
        let invalid = |e: &dyn fmt::Display| format!("the image config is not valid: {e}");
        let value: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| invalid(&e))?;
        // serde reads a struct from an array too; an image config is an object.
        let is_object_or_null =
            |v: Option<&serde_json::Value>| v.is_none_or(|v| v.is_object() || v.is_null());
        if !value.is_object() || !is_object_or_null(value.get("config")) {
            return Err(invalid(&"invalid type: expected a JSON object"));
        }
        let raw: RawConfig = serde_json::from_value(value).map_err(|e| invalid(&e))?;
        let run = raw.config.unwrap_or(RawRunConfig {
            entrypoint: None,
            cmd: None,
            env: None,
            working_dir: None,
            user: None,
        });
        Ok(ImageConfig {
            entrypoint: run.entrypoint.unwrap_or_default(),
            cmd: run.cmd.unwrap_or_default(),
            env: run.env.unwrap_or_default(),
            working_dir: run.working_dir.unwrap_or_default(),
            user: run.user.unwrap_or_default(),
            os: raw.os.unwrap_or_default(),
            architecture: raw.architecture.unwrap_or_default(),
        })
    }

    /// `os/architecture`, e.g. `linux/amd64`.
    pub fn platform(&self) -> String {
        format!("{}/{}", self.os, self.architecture)
    }
}

/// An OCI platform: an operating system and a CPU architecture (GOOS and
/// GOARCH names), and optionally the CPU's variant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Platform {
    /// The operating system, e.g. `linux`.
    pub os: String,
    /// The architecture, e.g. `amd64`.
    pub architecture: String,
    /// The variant, e.g. `v8` for `arm64`, if any.
    pub variant: Option<String>,
}

impl Platform {
    /// `linux` on `architecture`, without a variant.
    pub fn linux(architecture: &str) -> Platform {
        Platform {
            os: String::from("linux"),
            architecture: architecture.to_owned(),
            variant: None,
        }
    }

    /// Whether an image for `os`/`architecture` runs on this platform (the
    /// variant is not compared).
    pub fn runs(&self, os: &str, architecture: &str) -> bool {
        self.os == os && self.architecture == architecture
    }
}

impl fmt::Display for Platform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.os, self.architecture)?;
        if let Some(variant) = &self.variant {
            write!(f, "/{variant}")?;
        }
        Ok(())
    }
}

/// The OCI (GOARCH) name of a Rust target architecture
/// (`std::env::consts::ARCH`); `little_endian` tells `ppc64le` from
/// `ppc64`. `None` for an architecture without a known name.
pub fn oci_architecture(rust_arch: &str, little_endian: bool) -> Option<&'static str> {
    Some(match rust_arch {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "arm" => "arm",
        "s390x" => "s390x",
        "powerpc64" if little_endian => "ppc64le",
        "powerpc64" => "ppc64",
        "riscv64" => "riscv64",
        "x86" => "386",
        "loongarch64" => "loong64",
        _ => return None,
    })
}

/// The platform container images must be built for to run here: `linux`
/// on this host's architecture (an architecture without a known OCI name
/// keeps its Rust name).
pub fn host_platform() -> Platform {
    let arch = std::env::consts::ARCH;
    Platform::linux(oci_architecture(arch, cfg!(target_endian = "little")).unwrap_or(arch))
}

/// The platform of an index entry, if it states one.
pub fn entry_platform(entry: &ImageIndexEntry) -> Option<Platform> {
    entry.platform.as_ref().map(|p| Platform {
        os: p.os.to_string(),
        architecture: p.architecture.to_string(),
        variant: p.variant.clone().filter(|v| !v.is_empty()),
    })
}

/// The platforms an index offers, for messages: `os/arch[/variant]` of each
/// entry, `(no platform)` for one without. Entries of platform
/// `unknown/unknown` (BuildKit's attestations) are left out.
pub fn offered_platforms(index: &OciImageIndex) -> Vec<String> {
    index
        .manifests
        .iter()
        .filter_map(|e| match entry_platform(e) {
            Some(p) if p.os == "unknown" && p.architecture == "unknown" => None,
            Some(p) => Some(p.to_string()),
            None => Some(String::from("(no platform)")),
        })
        .collect()
}

impl PulledImage {
    /// The platforms the image offers: its index's (read from the cache
    /// it was pulled into), or its own for a single image.
    pub fn offered_platforms(&self, cache: &crate::Cache) -> Vec<String> {
        let from_index = self.index_digest.as_ref().and_then(|digest| {
            let bytes = cache
                .read_blob(digest, crate::options::MAX_METADATA_SIZE)
                .ok()
                .flatten()?;
            match crate::layout::parse_manifest(&bytes).ok()? {
                oci_client::manifest::OciManifest::ImageIndex(index) => {
                    Some(offered_platforms(&index))
                }
                oci_client::manifest::OciManifest::Image(_) => None,
            }
        });
        from_index.unwrap_or_else(|| vec![self.platform.clone()])
    }
}

/// The entry of `index` for `wanted` (its os and architecture; of several,
/// an `arm64` entry of variant `v8` is preferred, else the first), or
/// `None`.
pub fn select_platform_entry<'i>(
    index: &'i OciImageIndex,
    wanted: &Platform,
) -> Option<&'i ImageIndexEntry> {
    let matching: Vec<&ImageIndexEntry> = index
        .manifests
        .iter()
        .filter(|e| entry_platform(e).is_some_and(|p| wanted.runs(&p.os, &p.architecture)))
        .collect();
    let v8 = |e: &&&ImageIndexEntry| {
        wanted.architecture == "arm64"
            && entry_platform(e).and_then(|p| p.variant).as_deref() == Some("v8")
    };
    matching
        .iter()
        .find(v8)
        .or_else(|| matching.first())
        .copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(platforms: &[(&str, &str, Option<&str>)]) -> OciImageIndex {
        let manifests: Vec<serde_json::Value> = platforms
            .iter()
            .enumerate()
            .map(|(i, (os, arch, variant))| {
                let mut platform = serde_json::json!({"os": os, "architecture": arch});
                if let Some(v) = variant {
                    platform["variant"] = serde_json::json!(v);
                }
                serde_json::json!({
                    "mediaType": "application/vnd.oci.image.manifest.v1+json",
                    "digest": format!("sha256:{i}"),
                    "size": 1,
                    "platform": platform,
                })
            })
            .collect();
        serde_json::from_value(serde_json::json!({
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.index.v1+json",
            "manifests": manifests,
        }))
        .unwrap()
    }

    #[test]
    fn layer_media_types() {
        let ok = [
            ("application/vnd.oci.image.layer.v1.tar", Compression::None),
            (
                "application/vnd.oci.image.layer.v1.tar+gzip",
                Compression::Gzip,
            ),
            (
                "application/vnd.oci.image.layer.v1.tar+zstd",
                Compression::Zstd,
            ),
            (
                "application/vnd.docker.image.rootfs.diff.tar.gzip",
                Compression::Gzip,
            ),
            (
                "application/vnd.docker.image.rootfs.diff.tar",
                Compression::None,
            ),
            (
                "application/vnd.docker.image.rootfs.diff.tar.zstd",
                Compression::Zstd,
            ),
        ];
        for (media_type, compression) in ok {
            assert_eq!(
                layer_compression(media_type),
                Ok(compression),
                "{media_type}"
            );
        }
        for foreign in [
            "application/vnd.oci.image.layer.nondistributable.v1.tar",
            "application/vnd.oci.image.layer.nondistributable.v1.tar+gzip",
            "application/vnd.oci.image.layer.nondistributable.v1.tar+zstd",
            "application/vnd.docker.image.rootfs.foreign.diff.tar.gzip",
        ] {
            let err = layer_compression(foreign).unwrap_err();
            assert!(err.contains("non-distributable"), "{foreign}: {err}");
        }
        let err =
            layer_compression("application/vnd.oci.image.layer.v1.tar+gzip+encrypted").unwrap_err();
        assert!(err.contains("encrypted"), "{err}");
        for unknown in [
            "application/wasm",
            "application/vnd.cncf.helm.chart.content.v1.tar+gzip",
            "",
            "application/vnd.oci.image.layer.v1.tar+bzip2",
        ] {
            let err = layer_compression(unknown).unwrap_err();
            assert!(
                err.contains("not a container layer media type")
                    && err.contains("application/vnd.oci.image.layer.v1.tar+gzip"),
                "{unknown}: {err}"
            );
        }
    }

    #[test]
    fn config_fields() {
        let config = ImageConfig::parse(
            br#"{
                "architecture": "arm64", "os": "linux", "variant": "v8",
                "created": "2024-01-01T00:00:00Z",
                "config": {
                    "Entrypoint": ["/function"], "Cmd": ["--insecure"],
                    "Env": ["PATH=/usr/bin", "A=b=c"], "WorkingDir": "/work",
                    "User": "65532:65532", "Labels": {"x": "y"},
                    "ExposedPorts": {"9443/tcp": {}}
                },
                "rootfs": {"type": "layers", "diff_ids": []},
                "history": [{"created_by": "x"}]
            }"#,
        )
        .unwrap();
        assert_eq!(
            config,
            ImageConfig {
                entrypoint: vec!["/function".into()],
                cmd: vec!["--insecure".into()],
                env: vec!["PATH=/usr/bin".into(), "A=b=c".into()],
                working_dir: "/work".into(),
                user: "65532:65532".into(),
                os: "linux".into(),
                architecture: "arm64".into(),
            }
        );
        assert_eq!(config.platform(), "linux/arm64");
    }

    #[test]
    fn config_nulls_and_missing_fields_are_empty() {
        let nulls = ImageConfig::parse(
            br#"{"os": "linux", "architecture": "amd64", "config": {
                "Entrypoint": null, "Cmd": null, "Env": null, "WorkingDir": null, "User": null}}"#,
        )
        .unwrap();
        assert_eq!(
            nulls,
            ImageConfig {
                os: "linux".into(),
                architecture: "amd64".into(),
                ..ImageConfig::default()
            }
        );
        assert_eq!(
            ImageConfig::parse(br#"{"config": null, "os": null}"#).unwrap(),
            ImageConfig::default()
        );
        assert_eq!(ImageConfig::parse(b"{}").unwrap(), ImageConfig::default());
    }

    #[test]
    fn config_of_wrong_types_or_not_json_is_refused() {
        for (bad, expect) in [
            (
                &br#"{"config": {"Entrypoint": "/bin/sh -c"}}"#[..],
                "invalid type",
            ),
            (br#"{"config": {"Env": [1, 2]}}"#, "invalid type"),
            (br#"{"config": {"User": 0}}"#, "invalid type"),
            (br#"{"os": ["linux"]}"#, "invalid type"),
            (br#"{"config": []}"#, "invalid type"),
            (br#"[]"#, "invalid type"),
            (b"not json", "expected"),
            (b"", "EOF"),
        ] {
            let err = ImageConfig::parse(bad).unwrap_err();
            assert!(
                err.starts_with("the image config is not valid: ") && err.contains(expect),
                "{}: {err}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn architectures() {
        assert_eq!(oci_architecture("x86_64", true), Some("amd64"));
        assert_eq!(oci_architecture("aarch64", true), Some("arm64"));
        assert_eq!(oci_architecture("arm", true), Some("arm"));
        assert_eq!(oci_architecture("s390x", false), Some("s390x"));
        assert_eq!(oci_architecture("powerpc64", true), Some("ppc64le"));
        assert_eq!(oci_architecture("powerpc64", false), Some("ppc64"));
        assert_eq!(oci_architecture("riscv64", true), Some("riscv64"));
        assert_eq!(oci_architecture("sparc64", false), None);
        let host = host_platform();
        assert_eq!(host.os, "linux");
        if cfg!(target_arch = "x86_64") {
            assert_eq!(host.architecture, "amd64");
        }
        if cfg!(target_arch = "aarch64") {
            assert_eq!(host.architecture, "arm64");
        }
    }

    #[test]
    fn platform_entries() {
        let both = index(&[("linux", "arm64", Some("v8")), ("linux", "amd64", None)]);
        let amd64 = Platform::linux("amd64");
        let arm64 = Platform::linux("arm64");
        assert_eq!(
            select_platform_entry(&both, &amd64).unwrap().digest,
            "sha256:1"
        );
        assert_eq!(
            select_platform_entry(&both, &arm64).unwrap().digest,
            "sha256:0"
        );
        assert!(select_platform_entry(&both, &Platform::linux("s390x")).is_none());

        // The variant is not compared, but of several arm64 entries v8 wins.
        let arms = index(&[
            ("linux", "arm64", None),
            ("linux", "arm64", Some("v8")),
            ("linux", "arm", Some("v7")),
        ]);
        assert_eq!(
            select_platform_entry(&arms, &arm64).unwrap().digest,
            "sha256:1"
        );
        assert_eq!(
            select_platform_entry(&arms, &Platform::linux("arm"))
                .unwrap()
                .digest,
            "sha256:2"
        );
        let plain = index(&[("linux", "arm64", None)]);
        assert_eq!(
            select_platform_entry(&plain, &arm64).unwrap().digest,
            "sha256:0"
        );

        // Another os is not this host's, whatever the architecture.
        let windows = index(&[("windows", "amd64", None)]);
        assert!(select_platform_entry(&windows, &amd64).is_none());
    }

    #[test]
    fn offered_platforms_skip_attestations() {
        let mut offered = index(&[
            ("linux", "arm64", Some("v8")),
            ("linux", "s390x", None),
            ("unknown", "unknown", None),
        ]);
        let mut bare = offered.manifests[1].clone();
        bare.platform = None;
        offered.manifests.push(bare);
        assert_eq!(
            offered_platforms(&offered),
            ["linux/arm64/v8", "linux/s390x", "(no platform)"]
        );
    }
}
