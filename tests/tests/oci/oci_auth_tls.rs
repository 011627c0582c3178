//! Authentication and TLS against real `docker-registry` instances: one
//! with htpasswd basic auth (Docker config, pull secret, wrong password,
//! anonymous), one serving TLS with a certificate from a test CA.

use crate::oci_support::{Registry, RegistryConfig, files_under, hello_wasm, xfn};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use xfn_oci::{Error, PullPolicy, RegistryOptions, resolve};

const USER: &str = "crossplane";
const PASSWORD: &str = "s3cret-pa55";

fn docker_config(
    dir: &std::path::Path,
    registry: &str,
    user: &str,
    password: &str,
) -> std::path::PathBuf {
    let path = dir.join(format!("docker-config-{user}-{password}.json"));
    let config = serde_json::json!({
        "auths": {
            format!("https://{registry}"): {"auth": BASE64.encode(format!("{user}:{password}"))}
        }
    });
    std::fs::write(&path, config.to_string()).unwrap();
    path
}

fn htpasswd_registry() -> Registry {
    Registry::start_with(RegistryConfig {
        htpasswd: Some((USER.to_owned(), PASSWORD.to_owned())),
        tls: false,
    })
}

#[tokio::test]
async fn basic_auth_from_the_docker_config() {
    let registry = htpasswd_registry();
    let dir = tempfile::tempdir().unwrap();
    let good = RegistryOptions {
        docker_config: Some(docker_config(dir.path(), &registry.addr, USER, PASSWORD)),
        ..crate::oci_support::options(&dir.path().join("cache"))
    };
    let reference = registry.reference("private/hello:v1");

    // The CLI pushes with the Docker config's credentials.
    let hello_path = crate::oci_support::hello_wasm_path();
    let config_arg = good
        .docker_config
        .as_ref()
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned();
    xfn(&[
        "push",
        hello_path.to_str().unwrap(),
        &reference,
        "--docker-config",
        &config_arg,
    ])
    .await
    .expect("push with credentials");
    let pulled = resolve(&reference, PullPolicy::Always, &good)
        .await
        .expect("pull with credentials");
    assert_eq!(pulled.wasm, hello_wasm());

    // A wrong password, and no credentials at all, are refused.
    let wrong = RegistryOptions {
        docker_config: Some(docker_config(dir.path(), &registry.addr, USER, "wrong")),
        cache_dir: dir.path().join("cache-wrong"),
        ..good.clone()
    };
    let anonymous = crate::oci_support::options(&dir.path().join("cache-anonymous"));
    for options in [&wrong, &anonymous] {
        let err = resolve(&reference, PullPolicy::Always, options)
            .await
            .unwrap_err();
        eprintln!("{err}");
        assert!(
            matches!(&err, Error::Unauthorized { reference: r, registry: reg, .. } if r == &reference && reg == &registry.addr),
            "{err:?}"
        );
        assert!(err.to_string().contains("authentication"), "{err}");
        assert!(
            files_under(&options.cache_dir).is_empty(),
            "nothing cached after a refusal"
        );
    }
    let err = xfn_oci::push(
        hello_wasm(),
        &registry.reference("private/other:v1"),
        &Default::default(),
        &wrong,
    )
    .await
    .unwrap_err();
    eprintln!("{err}");
    assert!(matches!(err, Error::Unauthorized { .. }), "{err:?}");
}

#[tokio::test]
async fn basic_auth_from_a_pull_secret() {
    let registry = htpasswd_registry();
    let dir = tempfile::tempdir().unwrap();
    let pusher = RegistryOptions {
        docker_config: Some(docker_config(dir.path(), &registry.addr, USER, PASSWORD)),
        ..crate::oci_support::options(&dir.path().join("push-cache"))
    };
    let reference = registry.reference("private/hello:v1");
    xfn_oci::push(hello_wasm(), &reference, &Default::default(), &pusher)
        .await
        .expect("push");

    // A packagePullSecrets-style Secret, as CI would mount it.
    let dockerconfigjson = serde_json::json!({
        "auths": {registry.addr.clone(): {"username": USER, "password": PASSWORD}}
    })
    .to_string();
    let secret = dir.path().join("pull-secret.yaml");
    std::fs::write(
        &secret,
        format!(
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: registry-credentials\n\
             type: kubernetes.io/dockerconfigjson\ndata:\n  .dockerconfigjson: {}\n",
            BASE64.encode(dockerconfigjson)
        ),
    )
    .unwrap();
    let cache = dir.path().join("cache");
    let options = RegistryOptions {
        pull_secrets: vec![secret.clone()],
        ..crate::oci_support::options(&cache)
    };
    let pulled = resolve(&reference, PullPolicy::Always, &options)
        .await
        .expect("pull with the secret");
    assert_eq!(pulled.wasm, hello_wasm());

    // The CLI takes the same file.
    let cache2 = dir.path().join("cache2");
    let empty = crate::oci_support::options(&cache2).docker_config.unwrap();
    xfn(&[
        "pull",
        &reference,
        "--pull-secret",
        secret.to_str().unwrap(),
        "--cache-dir",
        cache2.to_str().unwrap(),
        "--docker-config",
        empty.to_str().unwrap(),
    ])
    .await
    .expect("xfn pull --pull-secret");
    assert!(
        cache2
            .join("blobs/sha256")
            .join(pulled.wasm_digest.hex())
            .is_file()
    );
}

#[tokio::test]
async fn tls_with_a_test_ca() {
    let registry = Registry::start_with(RegistryConfig {
        htpasswd: None,
        tls: true,
    });
    let ca = registry.ca_pem.clone().expect("CA");
    let dir = tempfile::tempdir().unwrap();
    let options = RegistryOptions {
        ca_certs: vec![ca.clone()],
        ..crate::oci_support::options(&dir.path().join("cache"))
    };
    let reference = registry.reference("tls/hello:v1");

    let hello_path = crate::oci_support::hello_wasm_path();
    let docker_config = options.docker_config.clone().unwrap();
    xfn(&[
        "push",
        hello_path.to_str().unwrap(),
        &reference,
        "--ca-cert",
        ca.to_str().unwrap(),
        "--docker-config",
        docker_config.to_str().unwrap(),
    ])
    .await
    .expect("push over TLS");
    let pulled = resolve(&reference, PullPolicy::Always, &options)
        .await
        .expect("pull over TLS");
    assert_eq!(pulled.wasm, hello_wasm());

    // Without the CA the certificate is not trusted, and xfn says what to do.
    let untrusted = crate::oci_support::options(&dir.path().join("cache-untrusted"));
    let err = resolve(&reference, PullPolicy::Always, &untrusted)
        .await
        .unwrap_err();
    eprintln!("{err}");
    assert!(
        matches!(&err, Error::Tls { reference: r, .. } if r == &reference),
        "{err:?}"
    );
    assert!(err.to_string().contains("--ca-cert"), "{err}");
    assert!(files_under(&untrusted.cache_dir).is_empty());

    // A CA file that is not PEM is reported as such.
    let bogus = dir.path().join("bogus.pem");
    std::fs::write(&bogus, "not a certificate").unwrap();
    let bad_ca = RegistryOptions {
        ca_certs: vec![bogus],
        ..untrusted.clone()
    };
    let err = resolve(&reference, PullPolicy::Always, &bad_ca)
        .await
        .unwrap_err();
    eprintln!("{err}");
    assert!(matches!(err, Error::CaCert { .. }), "{err:?}");
}
