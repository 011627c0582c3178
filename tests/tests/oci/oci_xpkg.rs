//! `xfn push --package crossplane.yaml`: one image that Crossplane's package
//! manager installs (its `io.crossplane.xpkg: base` layer holds
//! `package.yaml`) and xfn runs (its `io.crossplane.xpkg: wasm` layer),
//! pushed to a real `docker-registry`, read back with skopeo and with xfn.

use std::io::Read as _;

use crate::oci_support::{
    Layout, Registry, hello_wasm, hello_wasm_path, layer, sha256_hex, skopeo_raw, tar_gz, xfn,
    xfn_inspect,
};
use serde_json::{Value, json};
use xfn_oci::{Layout as Kind, MetadataSource, PullPolicy, resolve};
use xfn_runtime::HostConfig;
use xfn_runtime::protocol::RunFunctionRequest;

const MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
const IMAGE_CONFIG: &str = "application/vnd.oci.image.config.v1+json";
const TAR_GZIP: &str = "application/vnd.oci.image.layer.v1.tar+gzip";

const CROSSPLANE_YAML: &str = "\
# The package metadata of function-hello.
apiVersion: meta.pkg.crossplane.io/v1
kind: Function
metadata:
  name: function-hello
  annotations:
    meta.crossplane.io/description: Greets the composite resource
spec:
  capabilities:
  - composition
  - operation
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: inputs.hello.fn.xfn.dev
spec:
  group: hello.fn.xfn.dev
  names: {kind: Input, plural: inputs}
  scope: Namespaced
  versions:
  - name: v1alpha1
    served: true
    storage: false
    schema:
      openAPIV3Schema:
        type: object
        properties:
          greeting: {type: string}
";

/// The `io.crossplane.xpkg` annotation of a layer descriptor.
fn xpkg_annotation(layer: &Value) -> Option<&str> {
    layer["annotations"]["io.crossplane.xpkg"].as_str()
}

/// The one file of a gzipped tar: its path, mode, mtime and text.
fn only_file(gzipped: &[u8]) -> (String, u32, u64, String) {
    let mut tar = Vec::new();
    flate2::read::GzDecoder::new(gzipped)
        .read_to_end(&mut tar)
        .expect("gzip");
    let mut archive = tar::Archive::new(tar.as_slice());
    let mut entries = archive.entries().unwrap();
    let mut entry = entries.next().expect("an entry").unwrap();
    let header = entry.header().clone();
    let mut text = String::new();
    entry.read_to_string(&mut text).unwrap();
    assert!(entries.next().is_none(), "one file only");
    (
        entry.path().unwrap().display().to_string(),
        header.mode().unwrap(),
        header.mtime().unwrap(),
        text,
    )
}

#[tokio::test]
async fn push_an_xpkg_that_crossplane_installs_and_xfn_runs() {
    let registry = Registry::start();
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let cache_arg = cache.to_str().unwrap();
    let docker_config = dir.path().join("docker-config.json");
    std::fs::write(&docker_config, "{}").unwrap();
    let docker_arg = docker_config.to_str().unwrap();
    let crossplane_yaml = dir.path().join("crossplane.yaml");
    std::fs::write(&crossplane_yaml, CROSSPLANE_YAML).unwrap();
    let hello = hello_wasm();
    let hello_path = hello_wasm_path();
    let reference = registry.reference("xpkg/function-hello:v1");
    let push = |reference: String| {
        let args = [
            "push",
            "--package",
            crossplane_yaml.to_str().unwrap(),
            hello_path.to_str().unwrap(),
            &reference,
            "--annotation",
            "org.example/team=platform",
            "--docker-config",
            docker_arg,
        ]
        .map(str::to_owned);
        async move {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            xfn(&args).await
        }
    };
    push(reference.clone()).await.expect("xfn push --package");

    // The manifest, as the registry serves it (read by skopeo).
    let raw = skopeo_raw(&reference, false);
    let manifest: Value = serde_json::from_slice(&raw).unwrap();
    assert_eq!(manifest["mediaType"], MANIFEST);
    assert_eq!(manifest["config"]["mediaType"], IMAGE_CONFIG);
    assert_eq!(
        manifest["annotations"]["org.opencontainers.image.title"],
        "function-hello"
    );
    assert_eq!(manifest["annotations"]["org.example/team"], "platform");
    assert!(
        manifest["annotations"]
            .get("org.opencontainers.image.created")
            .is_none(),
        "no creation time without SOURCE_DATE_EPOCH: {manifest}"
    );
    let layers = manifest["layers"].as_array().unwrap();
    assert_eq!(layers.len(), 2, "{manifest}");
    // Crossplane's rule: exactly one layer annotated `io.crossplane.xpkg: base`.
    let bases: Vec<&Value> = layers
        .iter()
        .filter(|l| xpkg_annotation(l) == Some("base"))
        .collect();
    assert_eq!(bases.len(), 1, "{manifest}");
    let (base, wasm) = (&layers[0], &layers[1]);
    assert_eq!(xpkg_annotation(base), Some("base"));
    assert_eq!(base["mediaType"], TAR_GZIP);
    assert_eq!(xpkg_annotation(wasm), Some("wasm"));
    assert_eq!(wasm["mediaType"], "application/wasm");
    assert_eq!(wasm["digest"], format!("sha256:{}", sha256_hex(&hello)));
    let base_digest = base["digest"].as_str().unwrap();
    let wasm_digest = wasm["digest"].as_str().unwrap();

    // The base layer: a gzipped tar of package.yaml, as written.
    let base_blob = std::fs::read(registry.blob_file(base_digest)).unwrap();
    assert_eq!(format!("sha256:{}", sha256_hex(&base_blob)), base_digest);
    let (path, mode, mtime, text) = only_file(&base_blob);
    assert_eq!(
        (path.as_str(), mode, mtime, text.as_str()),
        ("package.yaml", 0o644, 0, CROSSPLANE_YAML)
    );
    let mut tar = Vec::new();
    flate2::read::GzDecoder::new(base_blob.as_slice())
        .read_to_end(&mut tar)
        .unwrap();

    // The config (read by skopeo): platform, labels and diff IDs.
    let config: Value = serde_json::from_slice(&skopeo_raw(&reference, true)).unwrap();
    assert_eq!(config["architecture"], "wasm");
    assert_eq!(config["os"], "wasip2");
    assert_eq!(
        config["config"]["Labels"],
        json!({
            format!("io.crossplane.xpkg:{base_digest}"): "base",
            format!("io.crossplane.xpkg:{wasm_digest}"): "wasm",
        })
    );
    assert_eq!(config["rootfs"]["type"], "layers");
    assert_eq!(
        config["rootfs"]["diff_ids"],
        json!([format!("sha256:{}", sha256_hex(&tar)), wasm_digest])
    );
    assert!(config.get("created").is_none(), "{config}");

    // xfn's checker of Crossplane's rules agrees.
    let check = xfn_oci::xpkg::check(
        &serde_json::from_slice(&raw).unwrap(),
        &skopeo_raw(&reference, true),
        Some(&base_blob),
    );
    assert!(check.is_ok(), "{:?}", check.problems);

    // The same inputs push the same image.
    let again = registry.reference("xpkg/function-hello:again");
    push(again.clone()).await.expect("push again");
    assert_eq!(skopeo_raw(&again, false), raw);

    // Pulled by xfn: the component, and the metadata from package.yaml.
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
    let options = crate::oci_support::options(&cache);
    let pulled = resolve(&reference, PullPolicy::Never, &options)
        .await
        .expect("cached by the pull");
    assert_eq!(
        pulled.digest.to_string(),
        format!("sha256:{}", sha256_hex(&raw))
    );
    assert_eq!(pulled.layout, Kind::Xpkg);
    assert_eq!(pulled.wasm, hello);
    assert_eq!(pulled.metadata.name, "function-hello");
    assert_eq!(pulled.metadata.capabilities, ["composition", "operation"]);
    assert_eq!(
        pulled.metadata.description.as_deref(),
        Some("Greets the composite resource")
    );
    assert_eq!(pulled.metadata.source, MetadataSource::PackageYaml);
    assert_eq!(
        pulled
            .package_layer
            .as_ref()
            .map(ToString::to_string)
            .as_deref(),
        Some(base_digest)
    );
    assert!(
        pulled.package_problems.is_empty(),
        "{:?}",
        pulled.package_problems
    );

    // inspect shows the package metadata and where it came from.
    let report = xfn_inspect(&[
        &reference,
        "--cache-dir",
        cache_arg,
        "--pull-policy",
        "Never",
    ])
    .await
    .expect("xfn inspect");
    let text = report.to_text();
    for line in [
        "function name: function-hello\n",
        "function capabilities: composition, operation\n",
        "function source: package.yaml\n",
        &format!("function packageLayer: {base_digest}\n"),
        "crossplane installable: true\n",
    ] {
        assert!(text.contains(line), "`{line}` not in:\n{text}");
    }
    assert!(!text.contains("problem"), "{text}");
    let report = report.to_json();
    assert_eq!(report["layout"], "xpkg with a wasm layer");
    assert_eq!(
        report["function"],
        json!({
            "name": "function-hello",
            "capabilities": ["composition", "operation"],
            "description": "Greets the composite resource",
            "source": "package.yaml",
            "packageLayer": base_digest,
        })
    );
    assert_eq!(
        report["crossplane"],
        json!({"installable": true, "problems": []})
    );
    assert_eq!(report["world"], "xfn:function/function@0.1.0");

    // And the pulled component runs.
    let runtime = xfn_tests::runtime(HostConfig::default());
    let function = runtime
        .load("function-hello", &pulled.wasm)
        .expect("load the pulled component");
    let response = function
        .run(&RunFunctionRequest::default(), None)
        .await
        .expect("run the pulled component");
    let messages: Vec<&str> = response
        .results
        .iter()
        .map(|r| r.message.as_str())
        .collect();
    assert_eq!(messages, ["Hello, world!"]);
}

#[tokio::test]
async fn push_refuses_a_bad_crossplane_yaml_before_uploading() {
    let registry = Registry::start();
    let dir = tempfile::tempdir().unwrap();
    let docker_config = dir.path().join("docker-config.json");
    std::fs::write(&docker_config, "{}").unwrap();
    let hello_path = hello_wasm_path();
    let reference = registry.reference("xpkg/bad:v1");
    let cases = [
        (
            CROSSPLANE_YAML.replace("- operation", "- rendering"),
            "unknown capability `rendering`; a Function's capabilities are composition and operation",
        ),
        (
            CROSSPLANE_YAML.replace("kind: Function", "kind: Provider"),
            "document 1 is a Provider package (meta.pkg.crossplane.io/v1), not a Function",
        ),
        (
            CROSSPLANE_YAML.replace("  name: function-hello\n", ""),
            "metadata.name is missing",
        ),
    ];
    for (text, expected) in cases {
        let path = dir.path().join("crossplane.yaml");
        std::fs::write(&path, &text).unwrap();
        let err = xfn(&[
            "push",
            "--package",
            path.to_str().unwrap(),
            hello_path.to_str().unwrap(),
            &reference,
            "--docker-config",
            docker_config.to_str().unwrap(),
        ])
        .await
        .expect_err("a bad crossplane.yaml is refused");
        let message = format!("{err:#}");
        assert!(
            message.starts_with(&format!("{}: invalid package metadata: ", path.display()))
                && message.contains(expected),
            "{message}"
        );
    }
    // Nothing reached the registry.
    assert!(crate::oci_support::files_under(&registry.storage).is_empty());

    // --name and --package don't go together.
    let err = xfn(&[
        "push",
        "--package",
        "crossplane.yaml",
        "--name",
        "other",
        hello_path.to_str().unwrap(),
        &reference,
    ])
    .await
    .expect_err("conflicting flags");
    assert!(err.to_string().contains("--name"), "{err}");
}

#[tokio::test]
async fn pull_reports_what_crossplane_would_refuse() {
    // An xpkg whose base layer is marked only by a config label: xfn finds
    // it, but Crossplane reads only layer annotations and would flatten the
    // image instead, which fails on the wasm layer.
    let registry = Registry::start();
    let dir = tempfile::tempdir().unwrap();
    let options = crate::oci_support::anonymous_options(dir.path());
    let hello = hello_wasm();
    let layout = Layout::new();
    let package = tar_gz(&[("package.yaml", CROSSPLANE_YAML.as_bytes())]);
    let package_blob = layout.blob(&package);
    let wasm = layout.blob(&hello);
    let mut tar = Vec::new();
    flate2::read::GzDecoder::new(package.as_slice())
        .read_to_end(&mut tar)
        .unwrap();
    let config = layout.json(&json!({
        "architecture": "wasm",
        "os": "wasip2",
        "config": {"Labels": {format!("io.crossplane.xpkg:{}", package_blob.digest): "base"}},
        "rootfs": {"type": "layers", "diff_ids": [format!("sha256:{}", sha256_hex(&tar)), wasm.digest]},
    }));
    let manifest = layout.manifest(
        IMAGE_CONFIG,
        &config,
        json!([
            layer(TAR_GZIP, &package_blob, &[]),
            layer("application/wasm", &wasm, &[("io.crossplane.xpkg", "wasm")]),
        ]),
    );
    layout.copy_to(&registry, &manifest, MANIFEST, "xpkg/labelled:v1");

    let reference = registry.reference("xpkg/labelled:v1");
    let pulled = resolve(&reference, PullPolicy::IfNotPresent, &options)
        .await
        .expect("xfn still pulls and runs it");
    assert_eq!(pulled.layout, Kind::Xpkg);
    assert_eq!(pulled.metadata.name, "function-hello");
    let problems = pulled.package_problems.join("; ");
    assert!(
        problems.contains("no layer is annotated `io.crossplane.xpkg: base`")
            && problems.contains("labelled `base` in the config but not annotated in the manifest"),
        "{problems}"
    );
    let report = xfn_inspect(&[
        &reference,
        "--cache-dir",
        options.cache_dir.to_str().unwrap(),
        "--docker-config",
        options.docker_config.as_ref().unwrap().to_str().unwrap(),
        "--pull-policy",
        "Never",
    ])
    .await
    .expect("inspect");
    let text = report.to_text();
    assert!(text.contains("crossplane installable: false\n"), "{text}");
    assert!(
        text.contains("crossplane problem: no layer is annotated `io.crossplane.xpkg: base`"),
        "{text}"
    );
    let report = report.to_json();
    assert_eq!(report["crossplane"]["installable"], false);
    assert_eq!(
        report["crossplane"]["problems"].as_array().unwrap().len(),
        pulled.package_problems.len()
    );
}
