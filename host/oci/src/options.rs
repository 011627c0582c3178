//! What a pull or push is allowed to do: the pull policy, the cache, TLS,
//! credentials and limits.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use crate::cache::Cache;

/// When to contact the registry, as in Kubernetes' `imagePullPolicy` and
/// the render annotation `render.crossplane.io/runtime-docker-pull-policy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PullPolicy {
    /// Use the cached artifact if the cache holds it; pull otherwise.
    #[default]
    IfNotPresent,
    /// Always resolve the reference at the registry (blobs already cached
    /// are not downloaded again).
    Always,
    /// Never contact the registry: the cache alone must hold the artifact.
    Never,
}

impl FromStr for PullPolicy {
    type Err = String;

    fn from_str(s: &str) -> Result<PullPolicy, String> {
        match s.to_ascii_lowercase().as_str() {
            "ifnotpresent" => Ok(PullPolicy::IfNotPresent),
            "always" => Ok(PullPolicy::Always),
            "never" => Ok(PullPolicy::Never),
            _ => Err(format!(
                "unknown pull policy `{s}` (expected IfNotPresent, Always or Never)"
            )),
        }
    }
}

impl fmt::Display for PullPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PullPolicy::IfNotPresent => "IfNotPresent",
            PullPolicy::Always => "Always",
            PullPolicy::Never => "Never",
        })
    }
}

/// The default largest layer xfn downloads: 64 MiB.
pub const DEFAULT_MAX_LAYER_SIZE: u64 = 64 << 20;

/// The default largest layer of a container image xfn downloads: 2 GiB.
pub const DEFAULT_MAX_IMAGE_LAYER_SIZE: u64 = 2 << 30;

/// The default largest container image xfn downloads, all its layers
/// together: 8 GiB.
pub const DEFAULT_MAX_IMAGE_SIZE: u64 = 8 << 30;

/// The largest manifest or image config xfn reads: 4 MiB.
pub const MAX_METADATA_SIZE: u64 = 4 << 20;

/// The default longest a pull from a registry may take, all requests
/// together: 5 minutes.
pub const DEFAULT_PULL_TIMEOUT: Duration = Duration::from_secs(300);

/// How to reach registries and where to cache what they return.
#[derive(Debug, Clone)]
pub struct RegistryOptions {
    /// The cache root (`blobs/`, `refs/`; the compile cache uses `compiled/`).
    pub cache_dir: PathBuf,
    /// Registries (`host` or `host:port`) reached over plain HTTP.
    /// Loopback registries fall back to plain HTTP when they don't speak TLS.
    pub insecure_registries: Vec<String>,
    /// PEM files of extra CA certificates to trust.
    pub ca_certs: Vec<PathBuf>,
    /// Kubernetes Secret YAML files of type `kubernetes.io/dockerconfigjson`,
    /// tried before the Docker config.
    pub pull_secrets: Vec<PathBuf>,
    /// Docker config documents (the `.dockerconfigjson` of pull secrets read
    /// from the API), each with a name for errors; tried first.
    pub docker_configs: Vec<(String, Vec<u8>)>,
    /// The Docker `config.json` (or the directory holding it). `None` means
    /// `$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`.
    pub docker_config: Option<PathBuf>,
    /// The largest layer to download, in bytes.
    pub max_layer_size: u64,
    /// The largest layer of a container image (a function that is not
    /// wasm) to download, in bytes. Such layers are streamed to the cache,
    /// never held in memory.
    pub max_image_layer_size: u64,
    /// The largest container image to download, in bytes: the sum of its
    /// layers' sizes.
    pub max_image_size: u64,
    /// How long to wait for a connection.
    pub connect_timeout: Duration,
    /// How long to wait for a read before giving up (each read).
    pub read_timeout: Duration,
    /// The longest a whole pull from a registry may take (every request
    /// and body of it), however steadily the registry sends.
    pub pull_timeout: Duration,
}

impl Default for RegistryOptions {
    fn default() -> RegistryOptions {
        RegistryOptions {
            cache_dir: Cache::default_root(),
            insecure_registries: Vec::new(),
            ca_certs: Vec::new(),
            pull_secrets: Vec::new(),
            docker_configs: Vec::new(),
            docker_config: None,
            max_layer_size: DEFAULT_MAX_LAYER_SIZE,
            max_image_layer_size: DEFAULT_MAX_IMAGE_LAYER_SIZE,
            max_image_size: DEFAULT_MAX_IMAGE_SIZE,
            connect_timeout: Duration::from_secs(10),
            read_timeout: Duration::from_secs(60),
            pull_timeout: DEFAULT_PULL_TIMEOUT,
        }
    }
}

impl RegistryOptions {
    /// Whether the user marked `registry` (`host:port`, or its bare host) insecure.
    pub fn is_insecure(&self, registry: &str) -> bool {
        let host = crate::reference::registry_host(registry);
        self.insecure_registries.iter().any(|r| {
            let r = r.trim();
            r.eq_ignore_ascii_case(registry) || r.eq_ignore_ascii_case(host)
        })
    }
}

/// Parses a size in bytes, with an optional binary suffix: `1048576`,
/// `512Ki`, `64Mi`, `1Gi` (`K`, `M`, `G`, `KiB`, `MiB`, `GiB` also accepted).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (number, suffix) = t.split_at(split);
    let number: u64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a size (e.g. 67108864, 64Mi)"))?;
    let shift = match suffix.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "ki" | "kib" => 10,
        "m" | "mi" | "mib" => 20,
        "g" | "gi" | "gib" => 30,
        _ => {
            return Err(format!(
                "`{text}` has an unknown size suffix (use Ki, Mi or Gi)"
            ));
        }
    };
    number
        .checked_mul(1u64 << shift)
        .ok_or_else(|| format!("`{text}` is too large"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pull_policies_round_trip() {
        for p in [
            PullPolicy::IfNotPresent,
            PullPolicy::Always,
            PullPolicy::Never,
        ] {
            assert_eq!(p.to_string().parse::<PullPolicy>().unwrap(), p);
        }
        assert_eq!("never".parse::<PullPolicy>().unwrap(), PullPolicy::Never);
        assert!("sometimes".parse::<PullPolicy>().is_err());
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("1024").unwrap(), 1024);
        assert_eq!(parse_size("64Mi").unwrap(), 64 << 20);
        assert_eq!(parse_size("2 GiB").unwrap(), 2 << 30);
        // The container image defaults, as a flag would spell them.
        assert_eq!(parse_size("2Gi").unwrap(), DEFAULT_MAX_IMAGE_LAYER_SIZE);
        assert_eq!(parse_size("8Gi").unwrap(), DEFAULT_MAX_IMAGE_SIZE);
        assert_eq!(parse_size("512k").unwrap(), 512 << 10);
        assert!(parse_size("").is_err());
        assert!(parse_size("12Tb").is_err());
        assert!(parse_size("99999999999999999999Gi").is_err());
    }

    #[test]
    fn insecure_matches_host_or_host_port() {
        let o = RegistryOptions {
            insecure_registries: vec!["reg.local".into(), "other:5000".into()],
            ..RegistryOptions::default()
        };
        assert!(o.is_insecure("reg.local:443"));
        assert!(o.is_insecure("other:5000"));
        assert!(!o.is_insecure("other:5001"));
        assert!(!o.is_insecure("elsewhere"));
    }
}
