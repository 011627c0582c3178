//! Push and pull wasm function packages against a real `docker-registry`:
//! `xfn push`/`pull`/`inspect`, every accepted layout (built and copied
//! with skopeo, not by xfn), and interop with skopeo.

use std::time::Instant;

use crate::oci_support::{
    Layout, Registry, files_under, hello_wasm, hello_wasm_path, layer, sha256_hex, skopeo_raw,
    tar_gz, xfn,
};
use serde_json::{Value, json};
use xfn_oci::{Error, Layout as Kind, MetadataSource, PullPolicy, resolve};

const CNCF_CONFIG: &str = "application/vnd.wasm.config.v0+json";
const MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
const INDEX: &str = "application/vnd.oci.image.index.v1+json";

#[tokio::test]
async fn push_then_pull_with_the_cli() {
    let registry = Registry::start();
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let cache_arg = cache.to_str().unwrap();
    let docker_config = dir.path().join("docker-config.json");
    std::fs::write(&docker_config, "{}").unwrap();
    let docker_arg = docker_config.to_str().unwrap();
    let hello = hello_wasm();
    let hello_path = hello_wasm_path();
    let reference = registry.reference("functions/hello:v1");

    xfn(&[
        "push",
        hello_path.to_str().unwrap(),
        &reference,
        "--name",
        "function-hello",
        "--capability",
        "composition",
        "--capability",
        "operation",
        "--annotation",
        "org.example/team=platform",
        "--docker-config",
        docker_arg,
    ])
    .await
    .expect("xfn push");

    // What the registry holds, read by skopeo: a CNCF wasm artifact.
    let raw = skopeo_raw(&reference, false);
    let manifest: Value = serde_json::from_slice(&raw).unwrap();
    assert_eq!(manifest["config"]["mediaType"], CNCF_CONFIG);
    assert_eq!(manifest["layers"].as_array().unwrap().len(), 1);
    assert_eq!(manifest["layers"][0]["mediaType"], "application/wasm");
    assert_eq!(
        manifest["layers"][0]["digest"],
        format!("sha256:{}", sha256_hex(&hello))
    );
    let annotations = &manifest["annotations"];
    assert_eq!(annotations["dev.xfn.function.name"], "function-hello");
    assert_eq!(
        annotations["dev.xfn.function.capabilities"],
        "composition,operation"
    );
    assert_eq!(
        annotations["dev.xfn.wit.world"],
        "xfn:function/function@0.1.0"
    );
    assert_eq!(annotations["org.example/team"], "platform");
    let config: Value = serde_json::from_slice(&skopeo_raw(&reference, true)).unwrap();
    assert_eq!(config["architecture"], "wasm");
    assert_eq!(config["os"], "wasip2");
    assert_eq!(config["layerDigests"][0], manifest["layers"][0]["digest"]);
    assert_eq!(config["component"]["target"], "xfn:function/function@0.1.0");
    assert!(
        config["component"]["exports"]
            .as_array()
            .unwrap()
            .contains(&json!("run-function"))
    );
    let imports = config["component"]["imports"].as_array().unwrap();
    assert!(
        imports.contains(&json!("xfn:function/log@0.1.0")),
        "{imports:?}"
    );
    assert_eq!(config["xfn"]["name"], "function-hello");
    let manifest_digest = format!("sha256:{}", sha256_hex(&raw));

    xfn(&[
        "pull",
        &reference,
        "--cache-dir",
        cache_arg,
        "--docker-config",
        docker_arg,
    ])
    .await
    .expect("xfn pull");

    // The pull filled the cache: the registry is no longer needed.
    let options = crate::oci_support::options(&cache);
    let pulled = resolve(&reference, PullPolicy::Never, &options)
        .await
        .expect("cached");
    assert!(pulled.from_cache);
    assert_eq!(pulled.digest.to_string(), manifest_digest);
    assert_eq!(pulled.wasm, hello);
    assert_eq!(pulled.layout, Kind::WasmArtifact);
    assert_eq!(pulled.metadata.name, "function-hello");
    assert_eq!(pulled.metadata.capabilities, ["composition", "operation"]);
    assert_eq!(pulled.metadata.source, MetadataSource::Annotations);
    assert_eq!(std::fs::read(&pulled.wasm_path).unwrap(), hello);
    let tag_record = cache.join(format!(
        "refs/{}/functions/hello/_tags/v1",
        registry.addr.replace(':', "_")
    ));
    assert_eq!(
        std::fs::read_to_string(tag_record).unwrap().trim(),
        manifest_digest
    );
    assert!(
        files_under(&cache.join("tmp")).is_empty(),
        "no temporary file is left"
    );

    // Pinned by digest, too.
    let pinned = registry.reference(&format!("functions/hello@{manifest_digest}"));
    let by_digest = resolve(&pinned, PullPolicy::Always, &options)
        .await
        .expect("pull by digest");
    assert_eq!(by_digest.wasm_digest, pulled.wasm_digest);

    // inspect, of the reference (from the cache) and of the file.
    xfn(&[
        "inspect",
        &reference,
        "--cache-dir",
        cache_arg,
        "--pull-policy",
        "Never",
    ])
    .await
    .expect("inspect reference");
    xfn(&["inspect", hello_path.to_str().unwrap(), "--json"])
        .await
        .expect("inspect file");
    let info = xfn_oci::inspect_file(&hello_path).unwrap();
    assert!(info.exports_run_function());
    assert!(info.forbidden_imports().is_empty());
}

#[tokio::test]
async fn cold_pull_and_warm_resolve_timings() {
    let registry = Registry::start();
    let dir = tempfile::tempdir().unwrap();
    let options = crate::oci_support::anonymous_options(dir.path());
    let reference = registry.reference("functions/hello:timing");
    xfn_oci::push(hello_wasm(), &reference, &Default::default(), &options)
        .await
        .expect("push");

    let start = Instant::now();
    let cold = resolve(&reference, PullPolicy::IfNotPresent, &options)
        .await
        .expect("cold pull");
    let cold_time = start.elapsed();
    assert!(!cold.from_cache);
    let start = Instant::now();
    let warm = resolve(&reference, PullPolicy::IfNotPresent, &options)
        .await
        .expect("warm resolve");
    let warm_time = start.elapsed();
    assert!(warm.from_cache);
    assert_eq!(warm.digest, cold.digest);
    let start = Instant::now();
    let always = resolve(&reference, PullPolicy::Always, &options)
        .await
        .expect("always");
    let always_time = start.elapsed();
    assert!(!always.from_cache);
    eprintln!(
        "hello.wasm ({} bytes): cold pull {cold_time:?}, warm resolve {warm_time:?}, \
         Always with warm blobs {always_time:?}",
        cold.wasm.len()
    );
}

#[tokio::test]
async fn skopeo_pulls_what_xfn_pushed() {
    let registry = Registry::start();
    let dir = tempfile::tempdir().unwrap();
    // Marked insecure: plain HTTP straight away, no TLS attempt first.
    let options = xfn_oci::RegistryOptions {
        insecure_registries: vec![registry.addr.clone()],
        ..crate::oci_support::anonymous_options(dir.path())
    };
    let reference = registry.reference("interop/hello:v1");
    let pushed = xfn_oci::push(hello_wasm(), &reference, &Default::default(), &options)
        .await
        .expect("push");

    let out = dir.path().join("skopeo-dir");
    let output = std::process::Command::new(crate::oci_support::require("skopeo"))
        .args(["copy", "--insecure-policy", "--src-tls-verify=false"])
        .arg(format!("docker://{reference}"))
        .arg(format!("dir:{}", out.display()))
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let manifest = std::fs::read(out.join("manifest.json")).unwrap();
    assert_eq!(
        format!("sha256:{}", sha256_hex(&manifest)),
        pushed.digest.to_string()
    );
    assert_eq!(
        std::fs::read(out.join(pushed.wasm_digest.hex())).unwrap(),
        hello_wasm()
    );
    let config: Value =
        serde_json::from_slice(&std::fs::read(out.join(pushed.config_digest.hex())).unwrap())
            .unwrap();
    assert_eq!(config["xfn"]["name"], "hello");
}

#[tokio::test]
async fn pulls_a_cncf_artifact_xfn_did_not_write() {
    let registry = Registry::start();
    let dir = tempfile::tempdir().unwrap();
    let options = crate::oci_support::anonymous_options(dir.path());
    let hello = hello_wasm();
    let layout = Layout::new();
    let wasm = layout.blob(&hello);
    let config = layout
        .json(&json!({"architecture": "wasm", "os": "wasip2", "layerDigests": [wasm.digest]}));
    let manifest = layout.manifest(
        CNCF_CONFIG,
        &config,
        json!([layer("application/wasm", &wasm, &[])]),
    );
    layout.copy_to(
        &registry,
        &manifest,
        MANIFEST,
        "third-party/function-hello:v1",
    );

    let reference = registry.reference("third-party/function-hello:v1");
    let pulled = resolve(&reference, PullPolicy::IfNotPresent, &options)
        .await
        .expect("pull");
    assert_eq!(pulled.digest.to_string(), manifest.digest);
    assert_eq!(pulled.wasm, hello);
    assert_eq!(pulled.layout, Kind::WasmArtifact);
    // Nothing declares a name: the repository's last segment.
    assert_eq!(pulled.metadata.name, "function-hello");
    assert_eq!(pulled.metadata.capabilities, ["composition"]);
    assert_eq!(pulled.metadata.source, MetadataSource::Default);
}

#[tokio::test]
async fn pulls_the_older_wasm_media_type() {
    let registry = Registry::start();
    let dir = tempfile::tempdir().unwrap();
    let options = crate::oci_support::anonymous_options(dir.path());
    let hello = hello_wasm();
    let layout = Layout::new();
    let wasm = layout.blob(&hello);
    let config = layout.blob(b"{}");
    let manifest = layout.manifest(
        "application/vnd.wasm.config.v1+json",
        &config,
        json!([layer(
            "application/vnd.wasm.content.layer.v1+wasm",
            &wasm,
            &[]
        )]),
    );
    layout.copy_to(&registry, &manifest, MANIFEST, "legacy/hello:v1");

    let pulled = resolve(
        &registry.reference("legacy/hello:v1"),
        PullPolicy::Always,
        &options,
    )
    .await
    .expect("pull");
    assert_eq!(pulled.layout, Kind::LegacyWasm);
    assert_eq!(pulled.wasm, hello);
}

const PACKAGE_YAML: &str = "apiVersion: meta.pkg.crossplane.io/v1\nkind: Function\nmetadata:\n  \
    name: function-hello-xpkg\n  annotations:\n    meta.crossplane.io/description: Says hello\n\
    spec:\n  capabilities:\n  - composition\n  - operation\n";

#[tokio::test]
async fn pulls_an_xpkg_with_a_wasm_layer_and_reads_package_yaml() {
    let registry = Registry::start();
    let dir = tempfile::tempdir().unwrap();
    let options = crate::oci_support::anonymous_options(dir.path());
    let hello = hello_wasm();
    let layout = Layout::new();
    // A "fat" xpkg: a runtime layer, the package.yaml base layer, the wasm.
    let runtime = tar_gz(&[("function", b"#!/bin/sh\n")]);
    let runtime_blob = layout.blob(&runtime);
    let package = tar_gz(&[("package.yaml", PACKAGE_YAML.as_bytes())]);
    let package_blob = layout.blob(&package);
    let wasm = layout.blob(&hello);
    let config = layout.json(&json!({
        "architecture": "amd64",
        "os": "linux",
        "config": {"Labels": {format!("io.crossplane.xpkg:{}", package_blob.digest): "base"}},
        "rootfs": {"type": "layers", "diff_ids": []},
    }));
    let manifest = layout.manifest(
        "application/vnd.oci.image.config.v1+json",
        &config,
        json!([
            layer(
                "application/vnd.oci.image.layer.v1.tar+gzip",
                &runtime_blob,
                &[]
            ),
            layer(
                "application/vnd.oci.image.layer.v1.tar+gzip",
                &package_blob,
                &[("io.crossplane.xpkg", "base")]
            ),
            layer("application/wasm", &wasm, &[("io.crossplane.xpkg", "wasm")]),
        ]),
    );
    layout.copy_to(
        &registry,
        &manifest,
        MANIFEST,
        "crossplane/function-hello:v1",
    );

    let reference = registry.reference("crossplane/function-hello:v1");
    let pulled = resolve(&reference, PullPolicy::IfNotPresent, &options)
        .await
        .expect("pull");
    assert_eq!(pulled.layout, Kind::Xpkg);
    assert_eq!(pulled.wasm, hello);
    assert_eq!(pulled.metadata.name, "function-hello-xpkg");
    assert_eq!(pulled.metadata.capabilities, ["composition", "operation"]);
    assert_eq!(pulled.metadata.description.as_deref(), Some("Says hello"));
    assert_eq!(pulled.metadata.source, MetadataSource::PackageYaml);
    // The runtime layer is never downloaded; the package layer is cached.
    let cache = options.cache_dir.join("blobs/sha256");
    assert!(!cache.join(&runtime_blob.digest[7..]).exists());
    assert!(cache.join(&package_blob.digest[7..]).exists());
    let again = resolve(&reference, PullPolicy::Never, &options)
        .await
        .expect("from cache");
    assert_eq!(again.metadata, pulled.metadata);
}

#[tokio::test]
async fn picks_the_wasm_entry_of_an_image_index() {
    let registry = Registry::start();
    let dir = tempfile::tempdir().unwrap();
    let options = crate::oci_support::anonymous_options(dir.path());
    let hello = hello_wasm();
    let layout = Layout::new();
    let wasm = layout.blob(&hello);
    let wasm_config = layout
        .json(&json!({"architecture": "wasm", "os": "wasip2", "layerDigests": [wasm.digest]}));
    let wasm_manifest = layout.manifest(
        CNCF_CONFIG,
        &wasm_config,
        json!([layer("application/wasm", &wasm, &[])]),
    );
    let runtime = tar_gz(&[("function", b"binary")]);
    let runtime_blob = layout.blob(&runtime);
    let image_config = layout.json(&json!({
        "architecture": "amd64", "os": "linux",
        "rootfs": {"type": "layers", "diff_ids": [format!("sha256:{}", sha256_hex(b"unused"))]},
    }));
    let image = layout.manifest(
        "application/vnd.oci.image.config.v1+json",
        &image_config,
        json!([layer(
            "application/vnd.oci.image.layer.v1.tar+gzip",
            &runtime_blob,
            &[]
        )]),
    );
    let index = layout.json(&json!({
        "schemaVersion": 2,
        "mediaType": INDEX,
        "manifests": [
            {"mediaType": MANIFEST, "digest": image.digest, "size": image.size,
             "platform": {"architecture": "amd64", "os": "linux"}},
            {"mediaType": MANIFEST, "digest": wasm_manifest.digest, "size": wasm_manifest.size,
             "platform": {"architecture": "wasm", "os": "wasip2"}},
        ],
    }));
    layout.copy_to(&registry, &index, INDEX, "multi/hello:v1");

    let reference = registry.reference("multi/hello:v1");
    let pulled = resolve(&reference, PullPolicy::IfNotPresent, &options)
        .await
        .expect("pull");
    assert_eq!(pulled.digest.to_string(), wasm_manifest.digest);
    assert_eq!(
        pulled.index_digest.as_ref().map(ToString::to_string),
        Some(index.digest.clone())
    );
    assert_eq!(pulled.wasm, hello);
    let cached = resolve(&reference, PullPolicy::Never, &options)
        .await
        .expect("from cache");
    assert_eq!(cached.digest, pulled.digest);
    assert_eq!(cached.index_digest, pulled.index_digest);
}

#[tokio::test]
async fn refuses_a_container_image_without_wasm() {
    let registry = Registry::start();
    let dir = tempfile::tempdir().unwrap();
    let options = crate::oci_support::anonymous_options(dir.path());
    let layout = Layout::new();
    let runtime = layout.blob(&tar_gz(&[("function", b"binary")]));
    let config = layout.json(&json!({"architecture": "amd64", "os": "linux", "rootfs": {"type": "layers", "diff_ids": []}}));
    let manifest = layout.manifest(
        "application/vnd.oci.image.config.v1+json",
        &config,
        json!([layer(
            "application/vnd.oci.image.layer.v1.tar+gzip",
            &runtime,
            &[]
        )]),
    );
    layout.copy_to(&registry, &manifest, MANIFEST, "containers/fn:v1");

    let reference = registry.reference("containers/fn:v1");
    let err = resolve(&reference, PullPolicy::IfNotPresent, &options)
        .await
        .unwrap_err();
    eprintln!("{err}");
    assert!(
        matches!(&err, Error::WrongMediaType { found, .. } if found == &["application/vnd.oci.image.layer.v1.tar+gzip"]),
        "{err}"
    );
    let message = err.to_string();
    assert!(
        message.contains(&reference) && message.contains("application/wasm"),
        "{message}"
    );
    assert!(files_under(&options.cache_dir.join("blobs")).is_empty());
    assert!(files_under(&options.cache_dir.join("refs")).is_empty());
}
