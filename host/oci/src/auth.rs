//! Registry credentials: `packagePullSecrets`-style Kubernetes Secret files
//! first, then the Docker `config.json` (`credHelpers`, `credsStore`,
//! `auths`), else anonymous.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use oci_client::secrets::RegistryAuth;
use serde::Deserialize;
use tokio::io::AsyncWriteExt;

use crate::error::{Error, Result};
use crate::options::RegistryOptions;

/// How long a credential helper may take.
const HELPER_TIMEOUT: Duration = Duration::from_secs(30);

/// The Docker Hub key in `config.json`.
const DOCKER_HUB_SERVER: &str = "https://index.docker.io/v1/";

/// A Docker `config.json` (or the `.dockerconfigjson` of a Secret).
#[derive(Debug, Default, Deserialize)]
pub(crate) struct DockerConfig {
    #[serde(default)]
    auths: BTreeMap<String, AuthEntry>,
    #[serde(default, rename = "credHelpers")]
    cred_helpers: BTreeMap<String, String>,
    #[serde(default, rename = "credsStore")]
    creds_store: Option<String>,
}

#[derive(Debug, Default, Clone, Deserialize)]
struct AuthEntry {
    #[serde(default)]
    auth: Option<String>,
    #[serde(default)]
    username: Option<String>,
    #[serde(default)]
    password: Option<String>,
    #[serde(default)]
    registrytoken: Option<String>,
}

/// Where a registry's credentials are to be found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Lookup {
    /// Ask `docker-credential-<helper>`; fall back to the `auths` entry.
    Helper(String, Option<RegistryAuth>),
    /// Use these.
    Found(RegistryAuth),
    /// Nothing configured.
    None,
}

/// The credentials to use for `registry` (`host[:port]`).
pub(crate) async fn credentials_for(
    registry: &str,
    options: &RegistryOptions,
) -> Result<RegistryAuth> {
    for (source, document) in &options.docker_configs {
        let config: DockerConfig =
            serde_json::from_slice(document).map_err(|e| Error::Credentials {
                source_name: source.clone(),
                reason: format!("not a Docker config: {e}"),
            })?;
        if let Some(auth) = config.entry_auth(registry, source)? {
            tracing::debug!("using credentials for {registry} from {source}");
            return Ok(auth);
        }
    }
    for path in &options.pull_secrets {
        let source = path.display().to_string();
        for config in read_pull_secret(path)? {
            if let Some(auth) = config.entry_auth(registry, &source)? {
                tracing::debug!("using credentials for {registry} from pull secret {source}");
                return Ok(auth);
            }
        }
    }
    let Some((path, explicit)) = docker_config_path(options.docker_config.as_deref()) else {
        return Ok(RegistryAuth::Anonymous);
    };
    let text = match xfn_component::localfile::read_to_string(
        &path,
        xfn_component::localfile::Limit::CREDENTIALS,
    ) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !explicit => {
            return Ok(RegistryAuth::Anonymous);
        }
        Err(e) => {
            return Err(Error::Credentials {
                source_name: path.display().to_string(),
                reason: e.to_string(),
            });
        }
    };
    let source = path.display().to_string();
    let config: DockerConfig = serde_json::from_str(&text).map_err(|e| Error::Credentials {
        source_name: source.clone(),
        reason: format!("not a Docker config: {e}"),
    })?;
    match config.lookup(registry, &source)? {
        Lookup::Found(auth) => Ok(auth),
        Lookup::None => Ok(RegistryAuth::Anonymous),
        Lookup::Helper(helper, fallback) => {
            let program = PathBuf::from(format!("docker-credential-{helper}"));
            match run_helper(&program, &helper_server(registry)).await? {
                Some(auth) => Ok(auth),
                None => Ok(fallback.unwrap_or(RegistryAuth::Anonymous)),
            }
        }
    }
}

/// `--docker-config` (a file, or a directory holding `config.json`), else
/// `$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`. The flag
/// makes a missing file an error.
fn docker_config_path(flag: Option<&Path>) -> Option<(PathBuf, bool)> {
    if let Some(path) = flag {
        let path = if path.is_dir() {
            path.join("config.json")
        } else {
            path.to_owned()
        };
        return Some((path, true));
    }
    if let Some(dir) = std::env::var_os("DOCKER_CONFIG").filter(|d| !d.is_empty()) {
        return Some((PathBuf::from(dir).join("config.json"), false));
    }
    dirs::home_dir().map(|home| (home.join(".docker").join("config.json"), false))
}

impl DockerConfig {
    /// Where `registry`'s credentials are: `credHelpers`, then
    /// `credsStore`, then `auths`.
    pub(crate) fn lookup(&self, registry: &str, source: &str) -> Result<Lookup> {
        let key = normalize_registry(registry);
        let entry = self.entry_auth(registry, source)?;
        if let Some((_, helper)) = self
            .cred_helpers
            .iter()
            .find(|(k, _)| normalize_registry(k) == key)
        {
            return Ok(Lookup::Helper(helper.clone(), entry));
        }
        if let Some(store) = self.creds_store.as_ref().filter(|s| !s.is_empty()) {
            return Ok(Lookup::Helper(store.clone(), entry));
        }
        Ok(entry.map_or(Lookup::None, Lookup::Found))
    }

    /// The `auths` entry for `registry`, decoded.
    fn entry_auth(&self, registry: &str, source: &str) -> Result<Option<RegistryAuth>> {
        let key = normalize_registry(registry);
        let Some((_, entry)) = self
            .auths
            .iter()
            .find(|(k, _)| normalize_registry(k) == key)
        else {
            return Ok(None);
        };
        let bad = |reason: String| Error::Credentials {
            source_name: source.to_owned(),
            reason: format!("entry for {registry}: {reason}"),
        };
        if let Some(token) = entry.registrytoken.as_ref().filter(|t| !t.is_empty()) {
            return Ok(Some(RegistryAuth::Bearer(token.clone())));
        }
        if let Some(encoded) = entry.auth.as_ref().filter(|a| !a.is_empty()) {
            let decoded = BASE64
                .decode(encoded.trim())
                .map_err(|e| bad(format!("`auth` is not base64: {e}")))?;
            let decoded =
                String::from_utf8(decoded).map_err(|_| bad(String::from("`auth` is not UTF-8")))?;
            let (user, password) = decoded
                .split_once(':')
                .ok_or_else(|| bad(String::from("`auth` is not user:password")))?;
            return Ok(Some(RegistryAuth::Basic(
                user.to_owned(),
                password.to_owned(),
            )));
        }
        match (&entry.username, &entry.password) {
            (Some(user), Some(password)) => {
                Ok(Some(RegistryAuth::Basic(user.clone(), password.clone())))
            }
            _ => Ok(None),
        }
    }
}

/// `host[:port]`, lowercased, without scheme or path; Docker Hub's
/// aliases map to `docker.io`.
fn normalize_registry(key: &str) -> String {
    let key = key.trim();
    let key = key
        .strip_prefix("https://")
        .or_else(|| key.strip_prefix("http://"))
        .unwrap_or(key);
    let host = key.split('/').next().unwrap_or(key).to_ascii_lowercase();
    match host.as_str() {
        "index.docker.io" | "registry-1.docker.io" => String::from("docker.io"),
        _ => host,
    }
}

/// The server URL a credential helper expects for `registry`.
fn helper_server(registry: &str) -> String {
    if normalize_registry(registry) == "docker.io" {
        DOCKER_HUB_SERVER.to_owned()
    } else {
        registry.to_owned()
    }
}

/// Runs `<program> get` with `server` on stdin, per the Docker credential
/// helper protocol. `None` when the helper has no credentials for it.
pub(crate) async fn run_helper(program: &Path, server: &str) -> Result<Option<RegistryAuth>> {
    #[derive(Deserialize)]
    struct HelperReply {
        #[serde(rename = "Username", default)]
        username: String,
        #[serde(rename = "Secret", default)]
        secret: String,
    }
    let source_name = program.display().to_string();
    let fail = |reason: String| Error::Credentials {
        source_name: source_name.clone(),
        reason,
    };
    let mut child = tokio::process::Command::new(program)
        .arg("get")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| fail(format!("cannot run the credential helper: {e}")))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(server.as_bytes())
            .await
            .map_err(|e| fail(format!("cannot write to the credential helper: {e}")))?;
    }
    let output = tokio::time::timeout(HELPER_TIMEOUT, child.wait_with_output())
        .await
        .map_err(|_| {
            fail(format!(
                "the credential helper did not answer in {HELPER_TIMEOUT:?}"
            ))
        })?
        .map_err(|e| fail(format!("the credential helper failed: {e}")))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        let said = format!(
            "{} {}",
            stdout.trim(),
            String::from_utf8_lossy(&output.stderr).trim()
        );
        if said.contains("credentials not found") {
            return Ok(None);
        }
        return Err(fail(format!(
            "the credential helper failed ({}): {}",
            output.status,
            said.trim()
        )));
    }
    let reply: HelperReply = serde_json::from_str(&stdout)
        .map_err(|e| fail(format!("the credential helper's answer is not JSON: {e}")))?;
    if reply.secret.is_empty() {
        return Ok(None);
    }
    Ok(Some(RegistryAuth::Basic(reply.username, reply.secret)))
}

/// Reads the Docker configs in a Kubernetes Secret YAML file (one or more
/// documents) of type `kubernetes.io/dockerconfigjson` (or the older
/// `kubernetes.io/dockercfg`).
pub(crate) fn read_pull_secret(path: &Path) -> Result<Vec<DockerConfig>> {
    #[derive(Deserialize)]
    struct Secret {
        #[serde(default)]
        kind: Option<String>,
        #[serde(default, rename = "type")]
        secret_type: Option<String>,
        #[serde(default)]
        data: BTreeMap<String, String>,
        #[serde(default, rename = "stringData")]
        string_data: BTreeMap<String, String>,
    }
    let source_name = path.display().to_string();
    let fail = |reason: String| Error::Credentials {
        source_name: source_name.clone(),
        reason,
    };
    let text = xfn_component::localfile::read_to_string(
        path,
        xfn_component::localfile::Limit::CREDENTIALS,
    )
    .map_err(|e| fail(e.to_string()))?;
    xfn_yaml::check(&text).map_err(|refusal| fail(refusal.to_string()))?;
    let mut configs = Vec::new();
    for document in serde_yaml_ng::Deserializer::from_str(&text) {
        let secret = Secret::deserialize(document)
            .map_err(|e| fail(format!("not a Kubernetes Secret: {e}")))?;
        if secret.kind.as_deref().is_some_and(|k| k != "Secret") {
            return Err(fail(format!(
                "kind is {:?}, not Secret",
                secret.kind.unwrap_or_default()
            )));
        }
        let (key, legacy) = match secret.secret_type.as_deref() {
            Some("kubernetes.io/dockerconfigjson") => (".dockerconfigjson", false),
            Some("kubernetes.io/dockercfg") => (".dockercfg", true),
            other => {
                return Err(fail(format!(
                    "type is {other:?}; a pull secret has type kubernetes.io/dockerconfigjson"
                )));
            }
        };
        let json = if let Some(plain) = secret.string_data.get(key) {
            plain.clone()
        } else {
            let encoded = secret
                .data
                .get(key)
                .ok_or_else(|| fail(format!("the Secret has no `{key}` data")))?;
            let bytes = BASE64
                .decode(encoded.trim())
                .map_err(|e| fail(format!("`{key}` is not base64: {e}")))?;
            String::from_utf8(bytes).map_err(|_| fail(format!("`{key}` is not UTF-8")))?
        };
        let config = if legacy {
            DockerConfig {
                auths: serde_json::from_str(&json)
                    .map_err(|e| fail(format!("bad `{key}`: {e}")))?,
                ..DockerConfig::default()
            }
        } else {
            serde_json::from_str(&json).map_err(|e| fail(format!("bad `{key}`: {e}")))?
        };
        configs.push(config);
    }
    Ok(configs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn basic(user: &str, password: &str) -> RegistryAuth {
        RegistryAuth::Basic(user.to_owned(), password.to_owned())
    }

    #[test]
    fn auths_entries_match_with_or_without_scheme() {
        let config: DockerConfig = serde_json::from_value(serde_json::json!({
            "auths": {
                "https://reg.example.com:5000/v2/": {"auth": BASE64.encode("alice:s3cr3t:with:colons")},
                "https://index.docker.io/v1/": {"username": "bob", "password": "pw"},
                "tok.example.com": {"registrytoken": "abc"}
            }
        }))
        .unwrap();
        assert_eq!(
            config.lookup("reg.example.com:5000", "t").unwrap(),
            Lookup::Found(basic("alice", "s3cr3t:with:colons"))
        );
        assert_eq!(
            config.lookup("docker.io", "t").unwrap(),
            Lookup::Found(basic("bob", "pw"))
        );
        assert_eq!(
            config.lookup("tok.example.com", "t").unwrap(),
            Lookup::Found(RegistryAuth::Bearer("abc".into()))
        );
        assert_eq!(config.lookup("reg.example.com", "t").unwrap(), Lookup::None);
    }

    #[test]
    fn helpers_take_precedence() {
        let config: DockerConfig = serde_json::from_value(serde_json::json!({
            "auths": {"a.example.com": {"auth": BASE64.encode("u:p")}},
            "credHelpers": {"a.example.com": "pass"},
            "credsStore": "desktop"
        }))
        .unwrap();
        assert_eq!(
            config.lookup("a.example.com", "t").unwrap(),
            Lookup::Helper("pass".into(), Some(basic("u", "p")))
        );
        assert_eq!(
            config.lookup("b.example.com", "t").unwrap(),
            Lookup::Helper("desktop".into(), None)
        );
    }

    #[test]
    fn bad_auth_is_an_error() {
        let config: DockerConfig =
            serde_json::from_value(serde_json::json!({"auths": {"x": {"auth": "!!!"}}})).unwrap();
        assert!(matches!(
            config.lookup("x", "t"),
            Err(Error::Credentials { .. })
        ));
    }

    #[test]
    fn pull_secrets() {
        let dir = tempfile::tempdir().unwrap();
        let docker =
            serde_json::json!({"auths": {"reg:5000": {"auth": BASE64.encode("u:p")}}}).to_string();
        let path = dir.path().join("secret.yaml");
        std::fs::write(
            &path,
            format!(
                "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\ntype: kubernetes.io/dockerconfigjson\n\
                 data:\n  .dockerconfigjson: {}\n---\nkind: Secret\ntype: kubernetes.io/dockerconfigjson\n\
                 stringData:\n  .dockerconfigjson: '{docker}'\n",
                BASE64.encode(&docker)
            ),
        )
        .unwrap();
        let configs = read_pull_secret(&path).unwrap();
        assert_eq!(configs.len(), 2);
        for c in &configs {
            assert_eq!(
                c.lookup("reg:5000", "t").unwrap(),
                Lookup::Found(basic("u", "p"))
            );
        }

        std::fs::write(&path, "kind: Secret\ntype: Opaque\ndata: {}\n").unwrap();
        let err = read_pull_secret(&path).unwrap_err().to_string();
        assert!(err.contains("kubernetes.io/dockerconfigjson"), "{err}");
    }

    #[tokio::test]
    async fn in_memory_docker_configs_come_first() {
        let docker = serde_json::json!({"auths": {"reg:5000": {"auth": BASE64.encode("u:p")}}});
        let options = RegistryOptions {
            docker_configs: vec![("secret ns/regcred".into(), docker.to_string().into_bytes())],
            docker_config: Some(PathBuf::from("/nonexistent/config.json")),
            ..RegistryOptions::default()
        };
        // Found in memory: the (missing) Docker config is never read.
        assert_eq!(
            credentials_for("reg:5000", &options).await.unwrap(),
            basic("u", "p")
        );
        let bad = RegistryOptions {
            docker_configs: vec![("secret ns/broken".into(), b"not json".to_vec())],
            ..RegistryOptions::default()
        };
        let err = credentials_for("reg:5000", &bad)
            .await
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("secret ns/broken") && err.contains("not a Docker config"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn credential_helper_protocol() {
        let dir = tempfile::tempdir().unwrap();
        let helper = dir.path().join("docker-credential-test");
        std::fs::write(
            &helper,
            "#!/bin/sh\nread server\ncase \"$server\" in\n\
             reg:5000) echo '{\"ServerURL\":\"reg:5000\",\"Username\":\"u\",\"Secret\":\"p\"}';;\n\
             *) echo 'credentials not found in native keychain'; exit 1;;\nesac\n",
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&helper, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(
            run_helper(&helper, "reg:5000").await.unwrap(),
            Some(basic("u", "p"))
        );
        assert_eq!(run_helper(&helper, "other").await.unwrap(), None);
        let missing = dir.path().join("docker-credential-missing");
        assert!(matches!(
            run_helper(&missing, "reg").await,
            Err(Error::Credentials { .. })
        ));
    }

    #[test]
    fn docker_hub_server_url() {
        assert_eq!(helper_server("docker.io"), DOCKER_HUB_SERVER);
        assert_eq!(helper_server("reg:5000"), "reg:5000");
    }
}
