//! xfn's container image, as `make image` writes it (deploy/oci-image.py).
//!
//! `make test` builds the image once, with xfn in the quick `image-check`
//! profile (`make image-check`), and points `$XFN_IMAGE_LAYOUT` at it. These
//! tests check that skopeo accepts the layout and copies it into a real
//! `docker-registry` on loopback with its digests kept; that the binary
//! unpacked from the layer is static, runs `xfn --version` with an empty
//! environment and carries the built-in functions; that the image runs as
//! the non-root user its /etc/passwd names; that writing the layout again
//! from what it holds gives the same bytes; and that deploy/ runs this
//! image as this user.

mod oci_support;

use std::collections::BTreeMap;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use oci_support::{Registry, require, sha256_hex};
use serde_json::Value;

/// The user the image runs as (deploy/oci-image.py).
const UID: u64 = 65532;

/// The layout `make image-check` wrote.
fn layout_dir() -> PathBuf {
    match std::env::var_os("XFN_IMAGE_LAYOUT") {
        Some(dir) => PathBuf::from(dir),
        None => panic!(
            "XFN_IMAGE_LAYOUT is not set: `make test` builds the image with `make image-check` \
             and sets it (to $CARGO_TARGET_DIR/image-for-tests)"
        ),
    }
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/oci-image.py")
}

/// One entry of the image's layer.
#[derive(Debug)]
struct Entry {
    path: String,
    directory: bool,
    mode: u32,
    uid: u64,
    gid: u64,
    mtime: u64,
    data: Vec<u8>,
}

/// The image in a layout, read and checked against its own digests.
struct Image {
    dir: PathBuf,
    /// The tag (`org.opencontainers.image.ref.name`).
    tag: String,
    /// The full name, `repository:tag`.
    name: String,
    manifest_digest: String,
    manifest: Vec<u8>,
    config: Value,
    layer_digest: String,
    entries: Vec<Entry>,
}

impl Image {
    fn read(dir: &Path) -> Image {
        let index: Value = serde_json::from_slice(&read(&dir.join("index.json"))).expect("index");
        let layout: Value = serde_json::from_slice(&read(&dir.join("oci-layout"))).expect("json");
        assert_eq!(layout["imageLayoutVersion"], "1.0.0");
        let manifests = index["manifests"].as_array().expect("manifests");
        assert_eq!(manifests.len(), 1, "one image: {index}");
        let top = &manifests[0];
        assert_eq!(
            top["mediaType"],
            "application/vnd.oci.image.manifest.v1+json"
        );
        assert_eq!(top["platform"]["architecture"], "amd64");
        assert_eq!(top["platform"]["os"], "linux");
        let text = |v: &Value| v.as_str().expect("a string").to_owned();
        let tag = text(&top["annotations"]["org.opencontainers.image.ref.name"]);
        let name = text(&top["annotations"]["io.containerd.image.name"]);
        let manifest_digest = text(&top["digest"]);
        let manifest = blob(dir, top);
        let parsed: Value = serde_json::from_slice(&manifest).expect("manifest");
        assert_eq!(parsed["schemaVersion"], 2);
        assert_eq!(
            parsed["config"]["mediaType"],
            "application/vnd.oci.image.config.v1+json"
        );
        let config: Value = serde_json::from_slice(&blob(dir, &parsed["config"])).expect("config");
        let layers = parsed["layers"].as_array().expect("layers");
        assert_eq!(layers.len(), 1, "one layer");
        assert_eq!(
            layers[0]["mediaType"],
            "application/vnd.oci.image.layer.v1.tar+gzip"
        );
        let layer_digest = text(&layers[0]["digest"]);
        let mut tar = Vec::new();
        flate2::read::GzDecoder::new(&blob(dir, &layers[0])[..])
            .read_to_end(&mut tar)
            .expect("gunzip the layer");
        // The diff ID is the digest of the uncompressed layer.
        assert_eq!(
            config["rootfs"],
            serde_json::json!({"type": "layers", "diff_ids": [format!("sha256:{}", sha256_hex(&tar))]})
        );
        Image {
            dir: dir.to_owned(),
            tag,
            name,
            manifest_digest,
            manifest,
            config,
            layer_digest,
            entries: entries(&tar),
        }
    }

    fn entry(&self, path: &str) -> &Entry {
        self.entries
            .iter()
            .find(|e| e.path == path)
            .unwrap_or_else(|| panic!("no {path} in the layer"))
    }

    /// `oci:<dir>:<tag>`, as skopeo names it.
    fn skopeo_name(&self) -> String {
        format!("oci:{}:{}", self.dir.display(), self.tag)
    }

    /// The layout's files, by path relative to it.
    fn files(&self) -> BTreeMap<String, Vec<u8>> {
        files_in(&self.dir)
    }
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// The blob a descriptor names, checked against its digest and size.
fn blob(dir: &Path, descriptor: &Value) -> Vec<u8> {
    let digest = descriptor["digest"].as_str().expect("digest");
    let hex = digest.strip_prefix("sha256:").expect("a sha256 digest");
    let bytes = read(&dir.join("blobs/sha256").join(hex));
    assert_eq!(sha256_hex(&bytes), hex, "blob {digest} matches its digest");
    assert_eq!(descriptor["size"].as_u64(), Some(bytes.len() as u64));
    bytes
}

/// The entries of an uncompressed tar layer, in archive order.
fn entries(tar: &[u8]) -> Vec<Entry> {
    let mut archive = tar::Archive::new(tar);
    let mut out = Vec::new();
    for entry in archive.entries().expect("a tar archive") {
        let mut entry = entry.expect("a tar entry");
        let header = entry.header().clone();
        let kind = header.entry_type();
        assert!(
            kind.is_dir() || kind.is_file(),
            "only files and directories: {kind:?}"
        );
        let mut data = Vec::new();
        entry.read_to_end(&mut data).expect("read an entry");
        let path = entry.path().expect("a path").to_string_lossy().into_owned();
        out.push(Entry {
            path: path.trim_end_matches('/').to_owned(),
            directory: kind.is_dir(),
            mode: header.mode().expect("mode"),
            uid: header.uid().expect("uid"),
            gid: header.gid().expect("gid"),
            mtime: header.mtime().expect("mtime"),
            data,
        });
    }
    out
}

fn files_in(root: &Path) -> BTreeMap<String, Vec<u8>> {
    oci_support::files_under(root)
        .into_iter()
        .map(|path| {
            let bytes = read(&root.join(&path));
            (path, bytes)
        })
        .collect()
}

/// Runs `skopeo <args>` and returns its standard output.
fn skopeo(args: &[&str]) -> Vec<u8> {
    let output = Command::new(require("skopeo"))
        .args(args)
        .output()
        .expect("run skopeo");
    assert!(
        output.status.success(),
        "skopeo {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output.stdout
}

/// Writes the layer's files into `dir` (modes kept, owners not).
fn unpack(image: &Image, dir: &Path) {
    use std::os::unix::fs::PermissionsExt as _;
    for entry in &image.entries {
        let path = dir.join(&entry.path);
        if entry.directory {
            std::fs::create_dir_all(&path).expect("create a directory");
        } else {
            std::fs::write(&path, &entry.data).expect("write a file");
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(entry.mode))
                .expect("set a mode");
        }
    }
}

#[test]
fn the_layer_holds_a_static_xfn_run_as_a_non_root_user() {
    let image = Image::read(&layout_dir());

    let paths: Vec<&str> = image.entries.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "etc",
            "etc/group",
            "etc/passwd",
            "etc/ssl",
            "etc/ssl/certs",
            "etc/ssl/certs/ca-certificates.crt",
            "home",
            "home/nonroot",
            "tmp",
            "xfn",
        ]
    );
    // Reproducible: one mtime, the image's creation time.
    let mtime = image.entries[0].mtime;
    assert!(image.entries.iter().all(|e| e.mtime == mtime));
    let created = image.config["created"].as_str().expect("created");
    assert_eq!(
        humantime::format_rfc3339(std::time::UNIX_EPOCH + std::time::Duration::from_secs(mtime))
            .to_string(),
        created
    );

    let config = &image.config["config"];
    assert_eq!(config["User"], format!("{UID}:{UID}"));
    assert_eq!(config["Entrypoint"], serde_json::json!(["/xfn"]));
    assert_eq!(image.config["architecture"], "amd64");
    assert_eq!(image.config["os"], "linux");
    let passwd = String::from_utf8(image.entry("etc/passwd").data.clone()).expect("text");
    assert!(
        passwd
            .lines()
            .any(|l| l == "nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin"),
        "{passwd}"
    );
    let home = image.entry("home/nonroot");
    assert_eq!((home.uid, home.gid, home.mode), (UID, UID, 0o700));
    // Nothing else belongs to that user: the binary and /etc are root's,
    // so the process cannot change them.
    for entry in image.entries.iter().filter(|e| e.path != "home/nonroot") {
        assert_eq!((entry.uid, entry.gid), (0, 0), "{entry:?}");
    }
    let xfn = image.entry("xfn");
    assert_eq!(xfn.mode, 0o755);
    // xfn's registry client trusts the system's roots (rustls-native-certs).
    let cas = &image.entry("etc/ssl/certs/ca-certificates.crt").data;
    assert!(
        String::from_utf8_lossy(cas)
            .matches("-----BEGIN CERTIFICATE-----")
            .count()
            > 10
    );

    // Static: no program interpreter (PT_INTERP) for a libc the image
    // doesn't have.
    let elf = &xfn.data;
    assert_eq!(&elf[..4], b"\x7fELF");
    let u16_at = |at: usize| u16::from_le_bytes([elf[at], elf[at + 1]]);
    let phoff = u64::from_le_bytes(elf[0x20..0x28].try_into().expect("8 bytes")) as usize;
    let (phentsize, phnum) = (usize::from(u16_at(0x36)), usize::from(u16_at(0x38)));
    let program_headers: Vec<u32> = (0..phnum)
        .map(|i| {
            let at = phoff + i * phentsize;
            u32::from_le_bytes(elf[at..at + 4].try_into().expect("4 bytes"))
        })
        .collect();
    assert!(!program_headers.is_empty());
    assert!(!program_headers.contains(&3), "xfn has a PT_INTERP");

    // The built-in functions are embedded, byte for byte, as `make build`
    // embeds them.
    for file in [
        "function_patch_and_transform.wasm",
        "function_auto_ready.wasm",
        "hello.wasm",
        "function_annotate.wasm",
        "function_environment_configs.wasm",
        "function_extra_resources.wasm",
        "function_sequencer.wasm",
        "function_status_transformer.wasm",
        "function_cel_filter.wasm",
        "function_cidr.wasm",
        "function_go_templating.wasm",
        "function_kcl.wasm",
    ] {
        let component = read(&xfn_tests::wasm_dir().join(file));
        assert!(
            memchr::memmem::find(elf, &component).is_some(),
            "{file} is not built into the image's xfn"
        );
    }

    // Plain unpack and run, with nothing from this environment.
    let root = tempfile::tempdir().expect("temp dir");
    unpack(&image, root.path());
    let output = Command::new(root.path().join("xfn"))
        .arg("--version")
        .env_clear()
        .current_dir(root.path())
        .output()
        .expect("run the image's xfn");
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        format!("xfn {}\n", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn skopeo_accepts_the_layout_and_copies_it_into_a_registry_unchanged() {
    let image = Image::read(&layout_dir());

    let inspected: Value = serde_json::from_slice(&skopeo(&["inspect", &image.skopeo_name()]))
        .expect("skopeo inspect prints JSON");
    assert_eq!(inspected["Digest"], image.manifest_digest.as_str());
    assert_eq!(inspected["Architecture"], "amd64");
    assert_eq!(inspected["Os"], "linux");
    assert_eq!(
        inspected["Layers"],
        serde_json::json!([image.layer_digest.as_str()])
    );

    let registry = Registry::start();
    let (repository, tag) = image.name.rsplit_once(':').expect("name:tag");
    assert_eq!(tag, image.tag);
    // The repository without its registry host, under the test registry.
    let path = repository.split_once('/').map_or(repository, |(_, p)| p);
    let reference = registry.reference(&format!("{path}:{tag}"));
    // --preserve-digests: skopeo fails rather than rewrite the image.
    skopeo(&[
        "copy",
        "--insecure-policy",
        "--preserve-digests",
        "--dest-tls-verify=false",
        &image.skopeo_name(),
        &format!("docker://{reference}"),
    ]);
    assert_eq!(
        oci_support::skopeo_raw(&reference, false),
        image.manifest,
        "the registry serves the layout's manifest"
    );
    let served: Value =
        serde_json::from_slice(&oci_support::skopeo_raw(&reference, true)).expect("config JSON");
    assert_eq!(served, image.config);
    assert!(registry.blob_file(&image.layer_digest).is_file());
}

#[test]
fn writing_the_layout_again_gives_the_same_bytes() {
    let image = Image::read(&layout_dir());
    let inputs = tempfile::tempdir().expect("temp dir");
    unpack(&image, inputs.path());
    let (repository, tag) = image.name.rsplit_once(':').expect("name:tag");
    let epoch = image.entry("xfn").mtime.to_string();
    let write = |out: &Path| {
        Command::new(require("python3"))
            .arg(script())
            .arg("--binary")
            .arg(inputs.path().join("xfn"))
            .arg("--ca-bundle")
            .arg(inputs.path().join("etc/ssl/certs/ca-certificates.crt"))
            .args(["--name", repository, "--tag", tag, "--epoch", &epoch])
            .arg("--out")
            .arg(out)
            .output()
            .expect("run deploy/oci-image.py")
    };
    // A directory that is not a layout is never replaced (the unpacked
    // files, here).
    let refused = write(inputs.path());
    assert_eq!(refused.status.code(), Some(1), "{refused:?}");
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("is not empty and not an OCI layout")
    );
    assert!(inputs.path().join("xfn").is_file());

    let out = inputs.path().join("layout");
    let run = write(&out);
    assert!(run.status.success(), "{run:?}");
    // Written over itself, it is the same again.
    let run = write(&out);
    assert!(run.status.success(), "{run:?}");
    let again = files_in(&out);
    let first = image.files();
    assert_eq!(
        again.keys().collect::<Vec<_>>(),
        first.keys().collect::<Vec<_>>()
    );
    for (path, bytes) in &first {
        assert!(again[path] == *bytes, "{path} differs");
    }
}

#[test]
fn the_image_tool_refuses_a_dynamically_linked_binary() {
    // This test's own executable needs glibc's loader, which the image lacks.
    let me = std::env::current_exe().expect("this test's path");
    let out = tempfile::tempdir().expect("temp dir");
    let run = Command::new(require("python3"))
        .arg(script())
        .arg("--binary")
        .arg(&me)
        .args(["--ca-bundle", "/dev/null", "--name", "xfn", "--tag", "v1"])
        .arg("--out")
        .arg(out.path().join("layout"))
        .output()
        .expect("run deploy/oci-image.py");
    assert_eq!(run.status.code(), Some(1), "{run:?}");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains("is dynamically linked; build it for x86_64-unknown-linux-musl"),
        "{stderr}"
    );
    assert!(!out.path().join("layout").exists());
}

#[test]
fn deploy_runs_this_image_as_its_user() {
    let image = Image::read(&layout_dir());
    let deploy = Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy");
    let yaml = |file: &str| -> Value {
        serde_yaml_ng::from_slice(&read(&deploy.join(file))).expect("YAML")
    };
    let deployment = yaml("deployment.yaml");
    let pod = &deployment["spec"]["template"]["spec"];
    assert_eq!(pod["containers"][0]["image"], image.name.as_str());
    assert_eq!(pod["securityContext"]["runAsUser"], UID);
    assert_eq!(pod["securityContext"]["runAsGroup"], UID);
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    // kustomize's images: names the same image, for users to override.
    let (repository, tag) = image.name.rsplit_once(':').expect("name:tag");
    let kustomization = yaml("kustomization.yaml");
    assert_eq!(
        kustomization["images"],
        serde_json::json!([{"name": repository, "newName": repository, "newTag": tag}])
    );
}
