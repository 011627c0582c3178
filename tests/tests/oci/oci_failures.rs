//! What goes wrong, against a real `docker-registry`: a tampered blob, a
//! registry that is down, unknown names, a layer over the size limit, a
//! component importing too much, a corrupted cache; and working offline
//! from a warm cache. Each failure names the reference and leaves nothing
//! half-written in the cache.

use crate::oci_support::{Layout, Registry, component_importing, files_under, hello_wasm, layer};
use serde_json::json;
use xfn_oci::{Error, PullPolicy, RegistryOptions, resolve};

/// Pushes hello.wasm to `repo_tag` with xfn and returns its reference.
async fn push_hello(
    registry: &Registry,
    options: &RegistryOptions,
    repo_tag: &str,
) -> (String, xfn_oci::Pushed) {
    let reference = registry.reference(repo_tag);
    let pushed = xfn_oci::push(hello_wasm(), &reference, &Default::default(), options)
        .await
        .expect("push");
    (reference, pushed)
}

/// The cache holds no blob, no tag record and no temporary file.
fn assert_cache_empty(options: &RegistryOptions) {
    let files = files_under(&options.cache_dir);
    assert!(files.is_empty(), "the cache should be empty: {files:?}");
}

#[tokio::test]
async fn refuses_a_tampered_blob() {
    let registry = Registry::start();
    let dir = tempfile::tempdir().unwrap();
    let options = crate::oci_support::anonymous_options(dir.path());
    let (reference, pushed) = push_hello(&registry, &options, "tampered/hello:v1").await;

    // Corrupt the layer in the registry's own storage: same size, one byte off.
    let blob = registry.blob_file(&pushed.wasm_digest.to_string());
    let mut bytes = std::fs::read(&blob).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    std::fs::write(&blob, &bytes).unwrap();

    let err = resolve(&reference, PullPolicy::Always, &options)
        .await
        .unwrap_err();

    eprintln!("{err}");
    match &err {
        Error::DigestMismatch {
            reference: r,
            expected,
            actual,
            ..
        } => {
            assert_eq!(r, &reference);
            assert_eq!(expected, &pushed.wasm_digest.to_string());
            assert_ne!(actual, expected);
        }
        other => panic!("expected a digest mismatch, got {other:?}"),
    }
    assert!(err.to_string().contains("digest mismatch"), "{err}");
    assert_cache_empty(&options);

    // A truncated blob is refused too.
    std::fs::write(&blob, &bytes[..middle]).unwrap();
    let err = resolve(&reference, PullPolicy::Always, &options)
        .await
        .unwrap_err();
    eprintln!("{err}");
    assert!(
        matches!(
            err,
            Error::DigestMismatch { .. } | Error::Unavailable { .. }
        ),
        "a truncated blob must not be accepted: {err:?}"
    );
    assert_cache_empty(&options);
}

#[tokio::test]
async fn works_offline_from_a_warm_cache() {
    let mut registry = Registry::start();
    let dir = tempfile::tempdir().unwrap();
    let options = crate::oci_support::anonymous_options(dir.path());
    let (reference, pushed) = push_hello(&registry, &options, "offline/hello:v1").await;

    let err = resolve(&reference, PullPolicy::Never, &options)
        .await
        .unwrap_err();

    eprintln!("{err}");
    assert!(
        matches!(&err, Error::NotCached { reference: r, .. } if r == &reference),
        "{err:?}"
    );
    assert!(err.to_string().contains("xfn pull"), "{err}");

    let pulled = resolve(&reference, PullPolicy::IfNotPresent, &options)
        .await
        .expect("pull");
    assert!(!pulled.from_cache);
    registry.stop();

    for policy in [PullPolicy::Never, PullPolicy::IfNotPresent] {
        let cached = resolve(&reference, policy, &options)
            .await
            .expect("from the cache alone");
        assert!(cached.from_cache);
        assert_eq!(cached.digest, pushed.digest);
        assert_eq!(cached.wasm, hello_wasm());
    }
    let pinned = format!("{}/offline/hello@{}", registry.addr, pushed.digest);
    assert!(
        resolve(&pinned, PullPolicy::Never, &options)
            .await
            .unwrap()
            .from_cache
    );

    // Always asks the registry, which is gone.
    let err = resolve(&reference, PullPolicy::Always, &options)
        .await
        .unwrap_err();
    eprintln!("{err}");
    assert!(matches!(err, Error::Unavailable { .. }), "{err:?}");
}

#[tokio::test]
async fn refetches_a_corrupted_cache_entry() {
    let registry = Registry::start();
    let dir = tempfile::tempdir().unwrap();
    let options = crate::oci_support::anonymous_options(dir.path());
    let (reference, _) = push_hello(&registry, &options, "corrupt/hello:v1").await;
    let pulled = resolve(&reference, PullPolicy::IfNotPresent, &options)
        .await
        .expect("pull");

    std::fs::write(&pulled.wasm_path, b"garbage").unwrap();
    // Never can't repair it: the corrupt entry is dropped, not used.
    let err = resolve(&reference, PullPolicy::Never, &options)
        .await
        .unwrap_err();
    eprintln!("{err}");
    assert!(matches!(err, Error::NotCached { .. }), "{err:?}");
    assert!(!pulled.wasm_path.exists(), "the corrupt entry is removed");

    std::fs::write(&pulled.wasm_path, b"garbage again").unwrap();
    let repaired = resolve(&reference, PullPolicy::IfNotPresent, &options)
        .await
        .expect("refetch");
    assert!(!repaired.from_cache, "the corrupt entry is fetched again");
    assert_eq!(repaired.wasm, hello_wasm());
    assert_eq!(std::fs::read(&pulled.wasm_path).unwrap(), hello_wasm());

    // A corrupt manifest is refetched the same way.
    let manifest = options
        .cache_dir
        .join("blobs/sha256")
        .join(repaired.digest.hex());
    std::fs::write(&manifest, b"{}").unwrap();
    let again = resolve(&reference, PullPolicy::IfNotPresent, &options)
        .await
        .expect("refetch manifest");
    assert!(!again.from_cache);
    assert!(
        resolve(&reference, PullPolicy::Never, &options)
            .await
            .unwrap()
            .from_cache
    );
}

#[tokio::test]
async fn reports_a_registry_that_is_down() {
    let dir = tempfile::tempdir().unwrap();
    let options = crate::oci_support::anonymous_options(dir.path());
    let port = crate::oci_support::free_port();
    let reference = format!("127.0.0.1:{port}/down/hello:v1");
    for policy in [PullPolicy::IfNotPresent, PullPolicy::Always] {
        let err = resolve(&reference, policy, &options).await.unwrap_err();
        eprintln!("{err}");
        assert!(
            matches!(&err, Error::Unavailable { reference: r, .. } if r == &reference),
            "{err:?}"
        );
        assert!(err.to_string().contains("unavailable"), "{err}");
    }
    let err = xfn_oci::push(hello_wasm(), &reference, &Default::default(), &options)
        .await
        .unwrap_err();
    eprintln!("{err}");
    assert!(matches!(err, Error::Unavailable { .. }), "{err:?}");
    assert_cache_empty(&options);
}

#[tokio::test]
async fn reports_unknown_repositories_and_tags() {
    let registry = Registry::start();
    let dir = tempfile::tempdir().unwrap();
    let options = crate::oci_support::anonymous_options(dir.path());
    push_hello(&registry, &options, "known/hello:v1").await;
    for missing in ["known/hello:v2", "unknown/repo:v1"] {
        let reference = registry.reference(missing);
        let err = resolve(&reference, PullPolicy::IfNotPresent, &options)
            .await
            .unwrap_err();
        eprintln!("{err}");
        assert!(
            matches!(&err, Error::NotFound { reference: r, .. } if r == &reference),
            "{err:?}"
        );
        assert!(err.to_string().contains("not found"), "{err}");
    }
    assert_cache_empty(&options);
}

#[tokio::test]
async fn refuses_a_layer_over_the_size_limit() {
    let registry = Registry::start();
    let dir = tempfile::tempdir().unwrap();
    let options = crate::oci_support::anonymous_options(dir.path());
    let (reference, pushed) = push_hello(&registry, &options, "big/hello:v1").await;
    let small = RegistryOptions {
        max_layer_size: 64 << 10,
        ..options.clone()
    };
    let err = resolve(&reference, PullPolicy::Always, &small)
        .await
        .unwrap_err();
    eprintln!("{err}");
    match &err {
        Error::LayerTooLarge {
            digest,
            size,
            limit,
            ..
        } => {
            assert_eq!(digest, &pushed.wasm_digest.to_string());
            assert_eq!(*size, hello_wasm().len() as u64);
            assert_eq!(*limit, 64 << 10);
        }
        other => panic!("expected LayerTooLarge, got {other:?}"),
    }
    assert!(err.to_string().contains("--max-layer-size"), "{err}");
    assert_cache_empty(&options);
    // With the default limit it pulls.
    resolve(&reference, PullPolicy::Always, &options)
        .await
        .expect("pull");
}

#[tokio::test]
async fn refuses_a_component_importing_outside_the_world() {
    let registry = Registry::start();
    let dir = tempfile::tempdir().unwrap();
    let options = crate::oci_support::anonymous_options(dir.path());
    let rogue =
        component_importing(&["xfn:function/log@0.1.0", "wasi:http/outgoing-handler@0.2.0"]);

    // xfn push refuses to publish it...
    let reference = registry.reference("rogue/fn:v1");
    let err = xfn_oci::push(rogue.clone(), &reference, &Default::default(), &options)
        .await
        .unwrap_err();
    eprintln!("{err}");
    assert!(
        matches!(&err, Error::ForbiddenImports { imports, .. } if imports == &["wasi:http/outgoing-handler@0.2.0"]),
        "{err:?}"
    );

    // ...and xfn refuses to run it when someone else published it, whether
    // its config declares the import (refused before the layer is
    // downloaded) or not (refused once the component is read).
    let layout = Layout::new();
    let wasm = layout.blob(&rogue);
    let silent = layout
        .json(&json!({"architecture": "wasm", "os": "wasip2", "layerDigests": [wasm.digest]}));
    let declared = layout.json(&json!({
        "architecture": "wasm", "os": "wasip2", "layerDigests": [wasm.digest],
        "component": {"imports": ["wasi:http/outgoing-handler@0.2.0"], "exports": []},
    }));
    for (config, tag) in [(&silent, "silent"), (&declared, "declared")] {
        let manifest = layout.manifest(
            "application/vnd.wasm.config.v0+json",
            config,
            json!([layer("application/wasm", &wasm, &[])]),
        );
        layout.copy_to(
            &registry,
            &manifest,
            "application/vnd.oci.image.manifest.v1+json",
            &format!("rogue/fn:{tag}"),
        );
        let reference = registry.reference(&format!("rogue/fn:{tag}"));
        let err = resolve(&reference, PullPolicy::IfNotPresent, &options)
            .await
            .unwrap_err();
        eprintln!("{err}");
        assert!(
            matches!(&err, Error::ForbiddenImports { reference: r, .. } if r == &reference),
            "{err:?}"
        );
        assert!(
            err.to_string().contains("wasi:http/outgoing-handler@0.2.0"),
            "{err}"
        );
    }
    assert_cache_empty(&options);
}

#[tokio::test]
async fn refuses_a_core_module() {
    let registry = Registry::start();
    let dir = tempfile::tempdir().unwrap();
    let options = crate::oci_support::anonymous_options(dir.path());
    let module = wasm_encoder::Module::new().finish();
    let layout = Layout::new();
    let wasm = layout.blob(&module);
    let config = layout
        .json(&json!({"architecture": "wasm", "os": "wasip1", "layerDigests": [wasm.digest]}));
    let manifest = layout.manifest(
        "application/vnd.wasm.config.v0+json",
        &config,
        json!([layer("application/wasm", &wasm, &[])]),
    );
    layout.copy_to(
        &registry,
        &manifest,
        "application/vnd.oci.image.manifest.v1+json",
        "module/fn:v1",
    );
    let err = resolve(
        &registry.reference("module/fn:v1"),
        PullPolicy::Always,
        &options,
    )
    .await
    .unwrap_err();
    eprintln!("{err}");
    assert!(
        matches!(&err, Error::InvalidComponent { reason, .. } if reason.contains("core wasm module")),
        "{err:?}"
    );
    assert_cache_empty(&options);
}

/// Options for a hostile loopback registry: plain HTTP, an empty cache.
fn hostile_options(
    dir: &std::path::Path,
    registry: &crate::oci_support::hostile::Hostile,
) -> RegistryOptions {
    RegistryOptions {
        insecure_registries: vec![registry.addr.clone()],
        ..crate::oci_support::anonymous_options(dir)
    }
}

#[tokio::test]
async fn refuses_an_endless_manifest_while_reading_it() {
    use crate::oci_support::hostile::{Hostile, Misbehaviour};
    // Up to 256 MiB if nothing stops reading; the limit is 4 MiB.
    let registry = Hostile::start(Misbehaviour::EndlessManifest { cap: 256 << 20 }).await;
    let dir = tempfile::tempdir().unwrap();
    let options = hostile_options(dir.path(), &registry);
    let reference = registry.reference("endless/hello:v1");
    let err = resolve(&reference, PullPolicy::Always, &options)
        .await
        .unwrap_err();
    eprintln!("{err}");
    assert!(
        matches!(&err, Error::BodyTooLarge { what, limit, .. } if what == "manifest" && *limit == 4 << 20),
        "{err:?}"
    );
    assert!(
        err.to_string().contains("over the limit of 4194304 bytes"),
        "{err}"
    );
    let sent = registry.sent.load(std::sync::atomic::Ordering::Relaxed);
    assert!(sent < 64 << 20, "read {sent} bytes of an endless manifest");
    assert_cache_empty(&options);
}

#[tokio::test]
async fn refuses_an_endless_token_response_while_reading_it() {
    use crate::oci_support::hostile::{Hostile, Misbehaviour};
    // Up to 256 MiB if nothing stops reading; the limit is 1 MiB.
    let registry = Hostile::start(Misbehaviour::EndlessToken { cap: 256 << 20 }).await;
    let dir = tempfile::tempdir().unwrap();
    let options = hostile_options(dir.path(), &registry);
    let reference = registry.reference("endless/token:v1");
    let err = resolve(&reference, PullPolicy::Always, &options)
        .await
        .unwrap_err();
    eprintln!("{err}");
    assert!(
        matches!(&err, Error::BodyTooLarge { what, limit, .. } if what == "token response" && *limit == 1 << 20),
        "{err:?}"
    );
    assert!(err.to_string().contains(&registry.addr), "{err}");
    let sent = registry.sent.load(std::sync::atomic::Ordering::Relaxed);
    assert!(sent < 64 << 20, "read {sent} bytes of an endless token");
    assert_cache_empty(&options);
}

#[tokio::test]
async fn a_bearer_token_from_the_registrys_realm_is_sent_with_each_request() {
    use crate::oci_support::hostile::{Hostile, Misbehaviour};
    // The registry answers 404 to a manifest request that carries its token
    // and 401 to one that doesn't: NotFound shows the token was sent.
    let registry = Hostile::start(Misbehaviour::TokenAuth).await;
    let dir = tempfile::tempdir().unwrap();
    let options = hostile_options(dir.path(), &registry);
    let reference = registry.reference("token/hello:v1");
    let err = resolve(&reference, PullPolicy::Always, &options)
        .await
        .unwrap_err();
    eprintln!("{err}");
    assert!(matches!(&err, Error::NotFound { .. }), "{err:?}");
}

#[tokio::test]
async fn a_pull_that_drips_stops_at_its_deadline() {
    use crate::oci_support::hostile::{Hostile, Misbehaviour};
    // A byte every 200 ms never trips the 60 s read timeout; 2,000 bytes
    // would take 400 s.
    let registry = Hostile::start(Misbehaviour::Drip {
        every: std::time::Duration::from_millis(200),
        bytes: 2000,
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let options = RegistryOptions {
        pull_timeout: std::time::Duration::from_secs(2),
        ..hostile_options(dir.path(), &registry)
    };
    let reference = registry.reference("drip/hello:v1");
    let started = std::time::Instant::now();
    let err = resolve(&reference, PullPolicy::Always, &options)
        .await
        .unwrap_err();
    eprintln!("{err}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    assert!(matches!(&err, Error::Deadline { .. }), "{err:?}");
    let message = err.to_string();
    assert!(
        message.contains(&registry.addr) && message.contains("within 2s"),
        "{message}"
    );
    assert_cache_empty(&options);
}
