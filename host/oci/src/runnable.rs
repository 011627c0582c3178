//! A runnable function package: one reference that a stock Crossplane runs
//! as a container function and xfn runs as wasm, with no pod.
//!
//! [`build`] makes an OCI image index of two entries:
//!
//! * `linux/<arch>` (first, since Crossplane's package manager takes the
//!   first `linux/amd64` entry of an index; see [`crate::xpkg`]): an image
//!   whose first layer is the xpkg's `package.yaml` layer, annotated
//!   `io.crossplane.xpkg: base`, and whose second layer holds a static
//!   `xfn` binary and the component. Its entrypoint, `xfn entrypoint`,
//!   serves the component as a function pod serves a function built with
//!   function-sdk-go: port 9443, mTLS from the directory in
//!   `TLS_SERVER_CERTS_DIR`, and `--insecure` and `--debug` accepted.
//!   Crossplane installs the package from this entry and runs it as a pod.
//! * `wasm/wasip2`: the xpkg [`crate::xpkg::build`] makes from the same
//!   `crossplane.yaml` and component. xfn resolves an index to its wasm
//!   entry, so render, `xfn serve` and the External runtime run it as wasm.
//!
//! Both entries share the `package.yaml` layer, so the registry stores it
//! once.

use std::collections::BTreeMap;

use object::elf;
use object::read::elf::{ElfFile64, FileHeader, ProgramHeader};
use oci_client::manifest::{OCI_IMAGE_INDEX_MEDIA_TYPE, OCI_IMAGE_MEDIA_TYPE};

use crate::digest::Digest;
use crate::error::{Error, Result};
use crate::layout::{XPKG_ANNOTATION, XPKG_BASE};
use crate::push::Artifact;
use crate::xpkg::{OCI_IMAGE_CONFIG, OCI_LAYER_TAR_GZIP, PackageFile};

/// Where the image holds the `xfn` binary.
pub const ENTRYPOINT_BINARY: &str = "xfn";

/// Where the image holds the component.
pub const COMPONENT_FILE: &str = "function.wasm";

/// The port the entrypoint listens on, as every function pod does.
pub const FUNCTION_PORT: u16 = 9443;

/// The user the image runs as (the conventional "nonroot" of distroless
/// images, as xfn's own image).
pub const IMAGE_USER: &str = "65532:65532";

/// The largest `xfn` binary [`EntrypointBinary::read`] takes: 1 GiB.
pub const MAX_BINARY: u64 = 1 << 30;

/// A statically linked `xfn` for the image's entrypoint, and the platform
/// it runs on.
#[derive(Clone)]
pub struct EntrypointBinary {
    /// The ELF file.
    pub bytes: Vec<u8>,
    /// Its OCI architecture (`amd64`, `arm64`).
    pub architecture: &'static str,
}

impl std::fmt::Debug for EntrypointBinary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EntrypointBinary")
            .field("bytes", &self.bytes.len())
            .field("architecture", &self.architecture)
            .finish()
    }
}

impl EntrypointBinary {
    /// Reads the binary at `path` (at most [`MAX_BINARY`] bytes) and checks
    /// it as [`EntrypointBinary::parse`] does.
    pub fn read(path: &std::path::Path) -> Result<EntrypointBinary> {
        let limit = xfn_component::localfile::Limit::new("xfn binary", MAX_BINARY);
        let bytes =
            xfn_component::localfile::read(path, limit).map_err(|error| Error::ReadFile {
                path: path.to_owned(),
                error,
            })?;
        EntrypointBinary::parse(&path.display().to_string(), bytes)
    }

    /// Checks that `bytes` is a 64-bit Linux ELF executable that needs no
    /// dynamic loader (an image has no libc to load), for a machine an OCI
    /// platform names; `source` names it in errors.
    pub fn parse(source: &str, bytes: Vec<u8>) -> Result<EntrypointBinary> {
        let fail = |reason: String| Error::EntrypointBinary {
            path: source.to_owned(),
            reason,
        };
        let file = ElfFile64::<object::Endianness>::parse(bytes.as_slice())
            .map_err(|e| fail(format!("not a 64-bit ELF executable: {e}")))?;
        let endian = file.endian();
        let header = file.elf_header();
        if header.e_type(endian) != elf::ET_EXEC && header.e_type(endian) != elf::ET_DYN {
            return Err(fail(String::from("not an executable")));
        }
        let needs_loader = file
            .elf_program_headers()
            .iter()
            .any(|p| p.p_type(endian) == elf::PT_INTERP);
        if needs_loader {
            return Err(fail(String::from(
                "it is dynamically linked, and a function image has no libc: use a static \
                 xfn (`make image` builds one, target/x86_64-unknown-linux-musl/release/xfn, \
                 and xfn's release image holds one at /xfn)",
            )));
        }
        let architecture = match header.e_machine(endian) {
            elf::EM_X86_64 => "amd64",
            elf::EM_AARCH64 => "arm64",
            elf::EM_RISCV => "riscv64",
            elf::EM_S390 => "s390x",
            other => {
                return Err(fail(format!(
                    "machine {other} has no OCI platform xfn knows"
                )));
            }
        };
        Ok(EntrypointBinary {
            bytes,
            architecture,
        })
    }
}

/// A runnable package, ready to upload: the two images and their index.
#[derive(Debug, Clone)]
pub struct RunnablePackage {
    /// The `linux/<arch>` image Crossplane runs as a pod.
    pub image: Artifact,
    /// The xpkg xfn runs as wasm.
    pub wasm: Artifact,
    /// The image index, listing `image` then `wasm`.
    pub index: Vec<u8>,
}

/// Builds the runnable package of `wasm`, the author's `crossplane.yaml`
/// and a static `xfn` (see the module's documentation). `created` (seconds
/// since 1970) is the images' creation time and the layers' file times;
/// the same inputs give the same bytes. `annotations` go on every manifest.
pub fn build(
    reference: &str,
    wasm: Vec<u8>,
    package: &PackageFile,
    binary: &EntrypointBinary,
    annotations: &BTreeMap<String, String>,
    created: Option<i64>,
) -> Result<RunnablePackage> {
    let xpkg = crate::xpkg::build(reference, wasm, package, annotations, created)?;
    let fail = |reason: String| Error::Metadata {
        reference: package.source.clone(),
        reason,
    };
    let (package_layer, component) = match xpkg.layers.as_slice() {
        [package_layer, component] => (package_layer.clone(), component.as_slice()),
        _ => return Err(fail(String::from("the xpkg does not have two layers"))),
    };
    // The package layer's diff ID, as the xpkg's config records it.
    let xpkg_config: serde_json::Value = serde_json::from_slice(&xpkg.config)
        .map_err(|e| fail(format!("cannot read back the xpkg's config: {e}")))?;
    let package_tar = xpkg_config["rootfs"]["diff_ids"][0]
        .as_str()
        .ok_or_else(|| fail(String::from("the xpkg's config has no diff ID")))?
        .to_owned();
    let mtime = created.unwrap_or(0).max(0) as u64;
    let (files_tar, files_layer) = files_layer(&binary.bytes, component, mtime)
        .map_err(|e| fail(format!("cannot build the image's file layer: {e}")))?;
    let package_digest = Digest::of(&package_layer);
    let files_digest = Digest::of(&files_layer);

    let name = xpkg.function.name.clone();
    let mut config = serde_json::json!({
        "architecture": binary.architecture,
        "os": "linux",
        "config": {
            "User": IMAGE_USER,
            "Entrypoint": [
                format!("/{ENTRYPOINT_BINARY}"), "entrypoint",
                "--name", name,
                format!("/{COMPONENT_FILE}"),
            ],
            "Env": ["PATH=/"],
            "WorkingDir": "/",
            "ExposedPorts": {format!("{FUNCTION_PORT}/tcp"): {}},
            "Labels": {
                format!("{XPKG_ANNOTATION}:{package_digest}"): XPKG_BASE,
            },
        },
        "rootfs": {
            "type": "layers",
            "diff_ids": [package_tar, Digest::of(&files_tar).to_string()],
        },
    });
    let created_text = created
        .map(crate::xpkg::creation_time)
        .transpose()
        .map_err(fail)?;
    if let Some(created) = &created_text {
        config["created"] = serde_json::Value::from(created.clone());
    }
    let config = serde_json::to_vec(&config)
        .map_err(|e| fail(format!("cannot serialize the image config: {e}")))?;

    // The xpkg's manifest annotations (title, description, creation time).
    let wasm_manifest: serde_json::Value = serde_json::from_slice(&xpkg.manifest)
        .map_err(|e| fail(format!("cannot read back the xpkg's manifest: {e}")))?;
    let manifest_annotations = wasm_manifest
        .get("annotations")
        .cloned()
        .unwrap_or_else(|| serde_json::json!({}));
    let manifest = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": OCI_IMAGE_MEDIA_TYPE,
        "config": descriptor(OCI_IMAGE_CONFIG, &config),
        "layers": [
            {
                "mediaType": OCI_LAYER_TAR_GZIP,
                "digest": package_digest.to_string(),
                "size": package_layer.len(),
                "annotations": {XPKG_ANNOTATION: XPKG_BASE},
            },
            {
                "mediaType": OCI_LAYER_TAR_GZIP,
                "digest": files_digest.to_string(),
                "size": files_layer.len(),
            },
        ],
        "annotations": manifest_annotations,
    });
    let manifest = serde_json::to_vec(&manifest)
        .map_err(|e| fail(format!("cannot serialize the image manifest: {e}")))?;

    let index = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": OCI_IMAGE_INDEX_MEDIA_TYPE,
        "manifests": [
            platform_entry(&manifest, binary.architecture, "linux"),
            platform_entry(&xpkg.manifest, "wasm", "wasip2"),
        ],
        "annotations": manifest_annotations,
    });
    let index = serde_json::to_vec(&index)
        .map_err(|e| fail(format!("cannot serialize the image index: {e}")))?;

    let image = Artifact {
        config,
        layers: vec![package_layer, files_layer],
        manifest,
        wasm_digest: xpkg.wasm_digest.clone(),
        package_layer_digest: Some(package_digest),
        layout: crate::Layout::Xpkg,
        function: xpkg.function.clone(),
    };
    Ok(RunnablePackage {
        image,
        wasm: xpkg,
        index,
    })
}

/// An OCI descriptor of `bytes`.
fn descriptor(media_type: &str, bytes: &[u8]) -> serde_json::Value {
    serde_json::json!({
        "mediaType": media_type,
        "digest": Digest::of(bytes).to_string(),
        "size": bytes.len(),
    })
}

/// An index entry for `manifest` on platform `os`/`architecture`.
fn platform_entry(manifest: &[u8], architecture: &str, os: &str) -> serde_json::Value {
    let mut entry = descriptor(OCI_IMAGE_MEDIA_TYPE, manifest);
    entry["platform"] = serde_json::json!({"architecture": architecture, "os": os});
    entry
}

/// The tar of the image's files (the binary, mode 0755, and the
/// component, 0644, both owned by root, at time `mtime`), and that tar
/// gzipped without a time or name in its header.
fn files_layer(binary: &[u8], component: &[u8], mtime: u64) -> std::io::Result<(Vec<u8>, Vec<u8>)> {
    crate::xpkg::reproducible_layer(
        &[
            (ENTRYPOINT_BINARY, 0o755, binary),
            (COMPONENT_FILE, 0o644, component),
        ],
        mtime,
        flate2::Compression::default(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The smallest ELF64 header (no sections) of `e_type` and `machine`,
    /// with one program header of type `p_type`.
    fn elf(e_type: u16, machine: u16, p_type: u32) -> Vec<u8> {
        let mut bytes = vec![0u8; 64 + 56];
        bytes[..4].copy_from_slice(b"\x7fELF");
        bytes[4] = 2; // 64-bit
        bytes[5] = 1; // little-endian
        bytes[6] = 1; // version
        bytes[16..18].copy_from_slice(&e_type.to_le_bytes());
        bytes[18..20].copy_from_slice(&machine.to_le_bytes());
        bytes[20..24].copy_from_slice(&1u32.to_le_bytes());
        bytes[32..40].copy_from_slice(&64u64.to_le_bytes()); // e_phoff
        bytes[52..54].copy_from_slice(&64u16.to_le_bytes()); // e_ehsize
        bytes[54..56].copy_from_slice(&56u16.to_le_bytes()); // e_phentsize
        bytes[56..58].copy_from_slice(&1u16.to_le_bytes()); // e_phnum
        bytes[64..68].copy_from_slice(&p_type.to_le_bytes());
        bytes
    }

    #[test]
    fn a_static_binary_is_taken_with_its_platform() {
        let binary =
            EntrypointBinary::parse("xfn", elf(elf::ET_EXEC, elf::EM_X86_64, elf::PT_LOAD))
                .expect("static");
        assert_eq!(binary.architecture, "amd64");
        let pie = EntrypointBinary::parse("xfn", elf(elf::ET_DYN, elf::EM_AARCH64, elf::PT_LOAD))
            .expect("static-pie");
        assert_eq!(pie.architecture, "arm64");
    }

    #[test]
    fn a_binary_that_needs_a_loader_or_is_not_elf_is_refused() {
        let dynamic =
            EntrypointBinary::parse("xfn", elf(elf::ET_DYN, elf::EM_X86_64, elf::PT_INTERP))
                .unwrap_err()
                .to_string();
        assert!(
            dynamic
                .contains("xfn: cannot be a function image's entrypoint: it is dynamically linked"),
            "{dynamic}"
        );
        let text = EntrypointBinary::parse("notes.txt", b"hello".to_vec())
            .unwrap_err()
            .to_string();
        assert!(text.contains("not a 64-bit ELF executable"), "{text}");
        let relocatable =
            EntrypointBinary::parse("xfn.o", elf(elf::ET_REL, elf::EM_X86_64, elf::PT_LOAD))
                .unwrap_err()
                .to_string();
        assert!(relocatable.contains("not an executable"), "{relocatable}");
        let odd = EntrypointBinary::parse("xfn", elf(elf::ET_EXEC, elf::EM_386, elf::PT_LOAD))
            .unwrap_err()
            .to_string();
        assert!(odd.contains("no OCI platform"), "{odd}");
    }

    #[test]
    fn the_files_layer_is_reproducible_and_holds_both_files() {
        let (tar, gz) = files_layer(b"ELF", b"\0asm", 1_700_000_000).unwrap();
        let (tar2, gz2) = files_layer(b"ELF", b"\0asm", 1_700_000_000).unwrap();
        assert_eq!((&tar, &gz), (&tar2, &gz2));
        let mut archive = tar::Archive::new(tar.as_slice());
        let entries: Vec<(String, u32, u64)> = archive
            .entries()
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                let path = e.path().unwrap().display().to_string();
                (
                    path,
                    e.header().mode().unwrap(),
                    e.header().mtime().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            entries,
            [
                (String::from("xfn"), 0o755, 1_700_000_000),
                (String::from("function.wasm"), 0o644, 1_700_000_000)
            ]
        );
    }
}

#[cfg(test)]
mod package_tests {
    use oci_client::manifest::{OciImageIndex, OciImageManifest};

    use super::*;
    use crate::xpkg::tests::{FUNCTION, hello, package};

    fn binary() -> EntrypointBinary {
        EntrypointBinary {
            bytes: b"\x7fELF static xfn".to_vec(),
            architecture: "amd64",
        }
    }

    fn runnable(created: Option<i64>) -> RunnablePackage {
        build(
            "reg.example/fn:v1",
            hello(),
            &package(FUNCTION),
            &binary(),
            &BTreeMap::new(),
            created,
        )
        .expect("builds")
    }

    /// Crossplane's package manager takes the linux image, and finds a
    /// package it installs there; xfn takes the wasm xpkg.
    #[test]
    fn crossplane_takes_the_image_and_xfn_the_wasm() {
        let built = runnable(Some(1_700_000_000));
        let index: OciImageIndex = serde_json::from_slice(&built.index).unwrap();
        let crossplane = crate::xpkg::crossplane_index_entry(&index).expect("a linux/amd64 entry");
        assert_eq!(
            crossplane.digest,
            Digest::of(&built.image.manifest).to_string()
        );
        let xfn = crate::layout::wasm_index_entry(&index).expect("a wasm entry");
        assert_eq!(xfn.digest, Digest::of(&built.wasm.manifest).to_string());

        let manifest: OciImageManifest = serde_json::from_slice(&built.image.manifest).unwrap();
        let check =
            crate::xpkg::check(&manifest, &built.image.config, Some(&built.image.layers[0]));
        assert!(check.is_ok(), "{:?}", check.problems);
        assert_eq!(check.package.unwrap().metadata.name, "function-hello");
        // The same package.yaml layer in both images: stored once.
        assert_eq!(built.image.layers[0], built.wasm.layers[0]);
        // No layer of the runnable image is something a container runtime
        // can't unpack.
        assert!(
            manifest
                .layers
                .iter()
                .all(|l| l.media_type == OCI_LAYER_TAR_GZIP)
        );
    }

    #[test]
    fn the_image_runs_the_entrypoint_as_a_function_pod_does() {
        let built = runnable(Some(1_700_000_000));
        let config = crate::ImageConfig::parse(&built.image.config).unwrap();
        assert_eq!(config.platform(), "linux/amd64");
        let raw: serde_json::Value = serde_json::from_slice(&built.image.config).unwrap();
        assert_eq!(
            raw["config"]["Entrypoint"],
            serde_json::json!([
                "/xfn",
                "entrypoint",
                "--name",
                "function-hello",
                "/function.wasm"
            ])
        );
        assert_eq!(raw["config"]["User"], "65532:65532");
        assert!(raw["config"]["ExposedPorts"]["9443/tcp"].is_object());
        assert_eq!(raw["created"], "2023-11-14T22:13:20Z");
        // The files layer holds the binary and the component as built.
        let gz = flate2::read::GzDecoder::new(built.image.layers[1].as_slice());
        let mut archive = tar::Archive::new(gz);
        let mut files = BTreeMap::new();
        for entry in archive.entries().unwrap() {
            let mut entry = entry.unwrap();
            let mut bytes = Vec::new();
            std::io::Read::read_to_end(&mut entry, &mut bytes).unwrap();
            files.insert(entry.path().unwrap().display().to_string(), bytes);
        }
        assert_eq!(files["xfn"], binary().bytes);
        assert_eq!(files["function.wasm"], hello());
        // Reproducible.
        let again = runnable(Some(1_700_000_000));
        assert_eq!(again.index, built.index);
    }
}
