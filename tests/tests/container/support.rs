//! The container function under test (tests/container-function, a Go
//! function built from Debian's packages by `make deps`), packed into an
//! OCI image of three layers: a base, the binary, and a layer of
//! whiteouts.

use std::path::{Path, PathBuf};
use std::time::Duration;

use sha2::Digest as _;

/// The Go function: `$XFN_CONTAINER_FUNCTION`, else where
/// `tests/container-function/build.sh` puts it.
pub fn function_binary() -> PathBuf {
    if let Some(path) = std::env::var_os("XFN_CONTAINER_FUNCTION") {
        return PathBuf::from(path);
    }
    let workspace = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| workspace.join("target"), PathBuf::from);
    let path = target.join("container-function/xfn-container-function");
    assert!(
        path.is_file(),
        "{path:?} is missing: run `make deps` (or tests/container-function/build.sh)"
    );
    path
}

/// One layer: its gzipped bytes and digest.
pub struct LayerBlob {
    /// gzip of the tar.
    pub gz: Vec<u8>,
    /// `sha256:…` of `gz`.
    pub digest: String,
    /// `sha256:…` of the tar (the config's diff_id).
    pub diff_id: String,
}

fn sha256(bytes: &[u8]) -> String {
    format!("sha256:{:x}", sha2::Sha256::digest(bytes))
}

/// A tar entry: path, bytes (None for a directory), mode.
pub type TarEntry<'a> = (&'a str, Option<&'a [u8]>, u32);

/// A layer of `entries`.
pub fn layer(entries: &[TarEntry<'_>]) -> LayerBlob {
    let mut builder = tar::Builder::new(Vec::new());
    for (path, bytes, mode) in entries {
        let mut header = tar::Header::new_gnu();
        match bytes {
            Some(bytes) => {
                header.set_entry_type(tar::EntryType::Regular);
                header.set_size(bytes.len() as u64);
            }
            None => {
                header.set_entry_type(tar::EntryType::Directory);
                header.set_size(0);
            }
        }
        header.set_mode(*mode);
        header.set_uid(0);
        header.set_gid(0);
        header.set_cksum();
        builder
            .append_data(&mut header, path, bytes.unwrap_or_default())
            .expect("append");
    }
    let tar = builder.into_inner().expect("tar");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, &tar).expect("gzip");
    let gz = gz.finish().expect("gzip");
    LayerBlob {
        digest: sha256(&gz),
        diff_id: sha256(&tar),
        gz,
    }
}

/// The image's three layers: a base with a non-root user and files to
/// hide, the function, and whiteouts.
pub fn function_layers() -> Vec<LayerBlob> {
    let passwd = b"root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n";
    let group = b"root:x:0:\nnonroot:x:65532:\n";
    let base = layer(&[
        ("etc/", None, 0o755),
        ("etc/passwd", Some(passwd), 0o644),
        ("etc/group", Some(group), 0o644),
        ("etc/doomed", Some(b"removed by a whiteout"), 0o644),
        ("home/nonroot/", None, 0o700),
        ("opt/layered/", None, 0o755),
        ("opt/layered/old-a", Some(b"a"), 0o644),
        ("opt/layered/old-b", Some(b"b"), 0o644),
        ("tmp/", None, 0o1777),
    ]);
    let binary = std::fs::read(function_binary()).expect("read the function");
    let function = layer(&[("usr/local/bin/function", Some(&binary), 0o755)]);
    let whiteouts = layer(&[
        ("etc/.wh.doomed", Some(b""), 0o644),
        ("opt/layered/", None, 0o755),
        ("opt/layered/.wh..wh..opq", Some(b""), 0o644),
        ("opt/layered/new", Some(b"new"), 0o644),
    ]);
    vec![base, function, whiteouts]
}

/// The image config: the function as a non-root user, with `env` added.
pub fn function_config(env: &[&str], layers: &[LayerBlob]) -> serde_json::Value {
    let mut all_env = vec![
        "PATH=/usr/local/bin:/usr/bin:/bin".to_owned(),
        "XFN_IMAGE_ENV=from-the-image".to_owned(),
    ];
    all_env.extend(env.iter().map(|e| (*e).to_owned()));
    serde_json::json!({
        "architecture": host_architecture(),
        "os": "linux",
        "config": {
            "Entrypoint": ["/usr/local/bin/function"],
            "Cmd": ["--debug"],
            "Env": all_env,
            "User": "65532:65532",
            "WorkingDir": "/home/nonroot",
        },
        "rootfs": {
            "type": "layers",
            "diff_ids": layers.iter().map(|l| l.diff_id.clone()).collect::<Vec<_>>(),
        },
    })
}

/// The OCI name of this machine's architecture.
pub fn host_architecture() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => other,
    }
}

/// The image as the sandbox takes it, with its layers written to `dir`.
pub fn local_image(dir: &Path, env: &[&str]) -> xfn_container::Image {
    let layers = function_layers();
    let config = function_config(env, &layers);
    local_image_of(dir, &layers, &config)
}

/// An image of `layers` and `config`, its blobs written to `dir`.
pub fn local_image_of(
    dir: &Path,
    layers: &[LayerBlob],
    config: &serde_json::Value,
) -> xfn_container::Image {
    let strings = |value: &serde_json::Value| -> Vec<String> {
        value
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    xfn_container::Image {
        reference: "local/test-function".to_owned(),
        layers: layers
            .iter()
            .map(|l| {
                let path = dir.join(l.digest.replace(':', "-"));
                std::fs::write(&path, &l.gz).expect("write layer");
                xfn_container::Layer {
                    digest: l.digest.clone(),
                    path,
                    compression: xfn_container::Compression::Gzip,
                }
            })
            .collect(),
        entrypoint: strings(&config["config"]["Entrypoint"]),
        env: strings(&config["config"]["Env"]),
        working_dir: config["config"]["WorkingDir"]
            .as_str()
            .unwrap_or("")
            .to_owned(),
        user: config["config"]["User"].as_str().unwrap_or("").to_owned(),
    }
}

/// Options for a test: the `xfn` binary as the launcher, the cache in
/// `cache`, a short start deadline.
pub fn options(cache: &Path) -> xfn_container::ContainerOptions {
    xfn_container::ContainerOptions {
        launcher: xfn_tests::xfn_bin(),
        cache_root: cache.to_owned(),
        unpack_limits: xfn_container::Limits::default(),
        resources: xfn_container::ResourceLimits::default(),
        start_timeout: Duration::from_secs(20),
        network: false,
    }
}

/// Pids of live processes running the function binary of any root
/// unpacked under `cache` (matched by inode: a sandboxed process's
/// executable has another path in its own mount namespace).
pub fn processes_running_from(cache: &Path) -> Vec<u32> {
    use std::os::unix::fs::MetadataExt;
    let Ok(roots) = std::fs::read_dir(cache.join("rootfs")) else {
        return Vec::new();
    };
    let binaries: Vec<(u64, u64)> = roots
        .flatten()
        .filter_map(|root| std::fs::metadata(root.path().join("root/usr/local/bin/function")).ok())
        .map(|m| (m.dev(), m.ino()))
        .collect();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::metadata(format!("/proc/{pid}/exe"))
                .is_ok_and(|m| binaries.contains(&(m.dev(), m.ino())))
        })
        .collect()
}
