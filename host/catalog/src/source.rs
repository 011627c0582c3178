//! Where a Function's component comes from, decided once from its
//! annotations and `spec.package`: the one rule `xfn render` and
//! `xfn serve` share.

use std::path::PathBuf;

use xfn_oci::PullPolicy;

use crate::annotations::{
    DEFAULT_DEVELOPMENT_TARGET, DEVELOPMENT_TARGET, DEVELOPMENT_TLS_CERTS_DIR,
    DEVELOPMENT_TLS_SERVER_NAME, DOCKER_IMAGE, PULL_POLICY, RUNTIME, WASM_MODULE, WASM_PULL_POLICY,
};

/// How a Function runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FunctionSource {
    /// A local wasm component file ([`WASM_MODULE`]), whichever of `Wasm`
    /// and `Docker` the runtime annotation names.
    LocalModule(PathBuf),
    /// An OCI package pulled per `policy`: its wasm component, a built-in
    /// function the reference names, or (where the caller runs them, as
    /// render does) its container image. `Docker` and no runtime
    /// annotation honour `runtime-docker-image`.
    Package {
        /// The package reference (`spec.package`).
        reference: String,
        /// The pull policy its annotations ask for.
        policy: PullPolicy,
    },
    /// A conventional gRPC function someone runs (`Development`).
    Development(DevelopmentTarget),
}

/// Where a Development runtime listens, and how to reach it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DevelopmentTarget {
    /// `host:port` ([`DEVELOPMENT_TARGET`], default `localhost:9443`).
    pub target: String,
    /// A directory of client certificates, for mTLS.
    pub tls_certs_dir: Option<PathBuf>,
    /// The name the server's certificate must carry.
    pub tls_server_name: Option<String>,
}

impl FunctionSource {
    /// The source a Function's annotations (read through `annotation`,
    /// which gives `""` for an absent one) and `package` name.
    pub fn of<'a>(
        annotation: impl Fn(&str) -> &'a str,
        package: &str,
    ) -> Result<FunctionSource, String> {
        let optional = |key: &str| Some(annotation(key)).filter(|v| !v.is_empty());
        match annotation(RUNTIME) {
            "" | "Wasm" => {
                if let Some(module) = optional(WASM_MODULE) {
                    return Ok(FunctionSource::LocalModule(PathBuf::from(module)));
                }
                // No annotation is Crossplane's default, Docker: its image
                // override applies (an explicit `Wasm` runs wasm alone).
                let reference = match optional(DOCKER_IMAGE) {
                    Some(image) if annotation(RUNTIME).is_empty() => image,
                    _ => package,
                };
                Ok(FunctionSource::Package {
                    reference: reference.to_owned(),
                    policy: pull_policy(annotation(WASM_PULL_POLICY), annotation(PULL_POLICY))?,
                })
            }
            "Development" => Ok(FunctionSource::Development(DevelopmentTarget {
                target: optional(DEVELOPMENT_TARGET)
                    .unwrap_or(DEFAULT_DEVELOPMENT_TARGET)
                    .to_owned(),
                tls_certs_dir: optional(DEVELOPMENT_TLS_CERTS_DIR).map(PathBuf::from),
                tls_server_name: optional(DEVELOPMENT_TLS_SERVER_NAME).map(str::to_owned),
            })),
            "Docker" => {
                if let Some(module) = optional(WASM_MODULE) {
                    return Ok(FunctionSource::LocalModule(PathBuf::from(module)));
                }
                Ok(FunctionSource::Package {
                    reference: optional(DOCKER_IMAGE).unwrap_or(package).to_owned(),
                    policy: pull_policy("", annotation(PULL_POLICY))?,
                })
            }
            other => Err(format!(
                "unsupported {RUNTIME:?} annotation value {other:?} (unknown runtime)"
            )),
        }
    }
}

/// The pull policy a Function's annotations ask for: the wasm-specific
/// `wasm_policy` wins over the Docker one; neither means `IfNotPresent`.
pub fn pull_policy(wasm_policy: &str, docker_policy: &str) -> Result<PullPolicy, String> {
    match if wasm_policy.is_empty() {
        docker_policy
    } else {
        wasm_policy
    } {
        "" => Ok(PullPolicy::IfNotPresent),
        text => text
            .parse::<PullPolicy>()
            .map_err(|e| format!("invalid pull policy {text:?}: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn source(annotations: &[(&str, &str)], package: &str) -> Result<FunctionSource, String> {
        let map: BTreeMap<&str, &str> = annotations.iter().copied().collect();
        FunctionSource::of(|key| map.get(key).copied().unwrap_or(""), package)
    }

    #[test]
    fn a_local_module_wins_over_the_package() {
        assert_eq!(
            source(&[(WASM_MODULE, "fn.wasm")], "reg.example/fn:v1"),
            Ok(FunctionSource::LocalModule(PathBuf::from("fn.wasm")))
        );
    }

    #[test]
    fn the_wasm_pull_policy_wins_over_dockers() {
        let pkg = |policy| FunctionSource::Package {
            reference: "reg.example/fn:v1".into(),
            policy,
        };
        assert_eq!(
            source(&[], "reg.example/fn:v1"),
            Ok(pkg(PullPolicy::IfNotPresent))
        );
        assert_eq!(
            source(&[(PULL_POLICY, "Always")], "reg.example/fn:v1"),
            Ok(pkg(PullPolicy::Always))
        );
        assert_eq!(
            source(
                &[(PULL_POLICY, "Always"), (WASM_PULL_POLICY, "Never")],
                "reg.example/fn:v1"
            ),
            Ok(pkg(PullPolicy::Never))
        );
        assert!(
            source(&[(PULL_POLICY, "Sometimes")], "reg.example/fn:v1")
                .is_err_and(|e| e.contains("invalid pull policy \"Sometimes\""))
        );
    }

    #[test]
    fn development_and_docker_runtimes() {
        assert_eq!(
            source(&[(RUNTIME, "Development")], ""),
            Ok(FunctionSource::Development(DevelopmentTarget {
                target: DEFAULT_DEVELOPMENT_TARGET.into(),
                tls_certs_dir: None,
                tls_server_name: None,
            }))
        );
        assert_eq!(
            source(&[(RUNTIME, "Docker")], "reg.example/fn:v1"),
            Ok(FunctionSource::Package {
                reference: "reg.example/fn:v1".into(),
                policy: PullPolicy::IfNotPresent
            })
        );
        let image = [(DOCKER_IMAGE, "reg.example/other:v2")];
        for runtime in ["", "Docker"] {
            let annotations = [(RUNTIME, runtime), image[0]];
            assert!(matches!(
                source(&annotations, "reg.example/fn:v1"),
                Ok(FunctionSource::Package { reference, .. }) if reference == "reg.example/other:v2"
            ));
        }
        assert!(matches!(
            source(&[(RUNTIME, "Wasm"), image[0]], "reg.example/fn:v1"),
            Ok(FunctionSource::Package { reference, .. }) if reference == "reg.example/fn:v1"
        ));
        assert!(
            source(&[(RUNTIME, "Podman")], "")
                .is_err_and(|e| e.contains("\"Podman\" (unknown runtime)"))
        );
    }
}
