//! Reading Kubernetes objects from YAML files and directories, as
//! `crossplane render` does: a file or a directory of `*.yaml`/`*.yml`
//! files (not recursive, sorted by name), each a stream of documents.
//! Errors name the file and, for malformed YAML, the line.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;
use xfn_component::localfile::{self, Limit};

/// Why objects could not be read.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The path could not be read.
    #[error("cannot read {path}: {error}")]
    Read {
        /// The file or directory.
        path: PathBuf,
        /// The cause (its text is part of the message).
        error: std::io::Error,
    },
    /// A directory holds no YAML files.
    #[error("no YAML files found in {0:?} (.yaml or .yml)")]
    NoYaml(PathBuf),
    /// A document is not valid YAML, or not an object.
    #[error("cannot parse YAML in {}{}: {reason}", path.display(), line.map(|l| format!(" at line {l}")).unwrap_or_default())]
    Parse {
        /// The file.
        path: PathBuf,
        /// The line where parsing failed, if known.
        line: Option<usize>,
        /// What is wrong.
        reason: String,
    },
}

/// Every object in a file, or in the YAML files of a directory.
pub fn read_stream(path: &Path) -> Result<Vec<Value>, LoadError> {
    let read_error = |error| LoadError::Read {
        path: path.to_owned(),
        error,
    };
    let metadata = std::fs::metadata(path).map_err(read_error)?;
    if !metadata.is_dir() {
        return read_file(path);
    }
    let mut files = Vec::new();
    for entry in std::fs::read_dir(path).map_err(read_error)? {
        let entry = entry.map_err(read_error)?;
        let file = entry.path();
        let is_yaml = matches!(
            file.extension().and_then(|e| e.to_str()),
            Some("yaml" | "yml")
        );
        if is_yaml && !file.is_dir() {
            files.push(file);
        }
    }
    if files.is_empty() {
        return Err(LoadError::NoYaml(path.to_owned()));
    }
    files.sort();
    let mut objects = Vec::new();
    for file in files {
        objects.extend(read_file(&file)?);
    }
    Ok(objects)
}

/// The first object in a file.
pub fn read_one(path: &Path) -> Result<Value, LoadError> {
    read_file(path)?
        .into_iter()
        .next()
        .ok_or_else(|| LoadError::Parse {
            path: path.to_owned(),
            line: None,
            reason: "the file holds no YAML document".into(),
        })
}

/// Every non-empty document of one file.
pub fn read_file(path: &Path) -> Result<Vec<Value>, LoadError> {
    let text = read_text(path)?;
    let objects = parse_stream(&text).map_err(|(line, reason)| LoadError::Parse {
        path: path.to_owned(),
        line,
        reason,
    })?;
    warn_duplicate_keys(&path.display().to_string(), &text);
    Ok(objects)
}

/// Warns about each key repeated in a mapping of `text` (read from
/// `source`). Crossplane reads its inputs with `sigs.k8s.io/yaml`, where
/// the last value of a repeated key wins without a word; xfn does the same
/// and says so.
pub fn warn_duplicate_keys(source: &str, text: &str) {
    let duplicates = xfn_yaml::duplicate_keys(text);
    for duplicate in &duplicates.found {
        let document = if duplicate.document > 1 {
            format!(" (document {})", duplicate.document)
        } else {
            String::new()
        };
        tracing::warn!(
            "{source}: duplicate key {} at line {}{document}; its last value wins, as in Crossplane",
            duplicate.path,
            duplicate.line,
        );
    }
    if duplicates.more {
        tracing::warn!(
            "{source}: more duplicate keys after these {}; the last value of each wins",
            duplicates.found.len()
        );
    }
}

/// The text of a YAML input: a regular file of at most
/// [`Limit::YAML`](xfn_component::localfile::Limit::YAML), read without blocking.
pub fn read_text(path: &Path) -> Result<String, LoadError> {
    localfile::read_to_string(path, Limit::YAML).map_err(|error| LoadError::Read {
        path: path.to_owned(),
        error,
    })
}

/// Parses a YAML stream into JSON values, skipping empty documents.
/// Errors carry the 1-based line where parsing failed.
pub fn parse_stream(text: &str) -> Result<Vec<Value>, (Option<usize>, String)> {
    xfn_yaml::check(text).map_err(|refusal| {
        let line = match refusal {
            xfn_yaml::Refusal::TooDeep { line, .. } => Some(line),
            xfn_yaml::Refusal::TooLarge { .. } | xfn_yaml::Refusal::TooManyNodes { .. } => None,
        };
        (line, refusal.to_string())
    })?;
    let mut out = Vec::new();
    for document in serde_yaml_ng::Deserializer::from_str(text) {
        let value = Value::deserialize(document).map_err(|e| {
            let line = e.location().map(|l| l.line());
            (line, e.to_string())
        })?;
        match value {
            Value::Null => {}
            Value::Object(_) => out.push(value),
            other => {
                return Err((
                    None,
                    format!("want a Kubernetes object, got {}", kind_of(&other)),
                ));
            }
        }
    }
    Ok(out)
}

/// Parses one YAML or JSON value (for `--context-values` and context files).
pub fn parse_value(text: &str) -> Result<Value, String> {
    xfn_yaml::check(text).map_err(|refusal| refusal.to_string())?;
    serde_yaml_ng::from_str::<Value>(text).map_err(|e| e.to_string())
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_multi_document_streams_and_skips_empty_documents() {
        let docs = parse_stream("---\na: 1\n---\n---\nb: [x]\n").expect("parses");
        assert_eq!(docs, vec![json!({"a": 1}), json!({"b": ["x"]})]);
    }

    #[test]
    fn reports_the_line_of_malformed_yaml() {
        let (line, reason) = parse_stream("a: 1\nb: [\n").expect_err("malformed");
        assert!(line.is_some(), "{reason}");
    }

    #[test]
    fn refuses_documents_that_are_not_objects() {
        let (_, reason) = parse_stream("- a\n- b\n").expect_err("a list");
        assert_eq!(reason, "want a Kubernetes object, got a list");
    }

    #[test]
    fn refuses_alias_amplification() {
        // 64 KiB referenced 2,000 times: a 72 KiB text that expands to 128 MiB.
        let mut text = format!("a: &big {}\nb: [", "x".repeat(64 << 10));
        text.push_str(&vec!["*big"; 2000].join(", "));
        text.push_str("]\n");
        let (_, reason) = parse_stream(&text).expect_err("amplification");
        assert!(reason.contains("aliases expand the document"), "{reason}");
        let reason = parse_value(&text).expect_err("amplification");
        assert!(reason.contains("aliases expand the document"), "{reason}");
    }

    #[test]
    fn refuses_deep_flow_nesting_in_linear_time() {
        let text = format!("a: {}", "[".repeat(400_000));
        let started = std::time::Instant::now();
        let (line, reason) = parse_stream(&text).expect_err("too deep");
        assert!(reason.contains("nested more than"), "{reason}");
        assert_eq!(line, Some(1));
        // The parser alone took 28 s or more on such a text.
        assert!(
            started.elapsed() < std::time::Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
    }
}
