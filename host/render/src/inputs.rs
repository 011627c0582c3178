//! Loading what a render works from: the XR, the Composition and its
//! Functions, and the optional files and values the flags name. The CLI
//! only parses flags into [`InputFiles`]; everything render-specific (the
//! checks, `mode: Resources` conversion, `-a` overrides, `--xrd` defaults,
//! context values) happens here, with classic `crossplane render`'s error
//! texts.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use super::object::{self, name};
use super::{Inputs, RenderError, claim, load, preflight, pt_input, resources_mode, xrd};

/// The files and values the flags name.
#[derive(Debug, Clone, Default)]
pub struct InputFiles {
    /// The composite resource (XR).
    pub composite_resource: PathBuf,
    /// The Composition.
    pub composition: PathBuf,
    /// A file or directory of Functions.
    pub functions: PathBuf,
    /// `--context-files`: context keys and the files of their values.
    pub context_files: Vec<(String, PathBuf)>,
    /// `--context-values`: context keys and their values (they win over files).
    pub context_values: Vec<(String, String)>,
    /// `-o`: observed composed resources.
    pub observed_resources: Option<PathBuf>,
    /// `--extra-resources`, each a file or directory.
    pub extra_resources: Vec<PathBuf>,
    /// `-e`, each a file or directory.
    pub required_resources: Vec<PathBuf>,
    /// `-s`: a directory of OpenAPI documents.
    pub required_schemas: Option<PathBuf>,
    /// `--function-credentials`: Secrets.
    pub function_credentials: Option<PathBuf>,
    /// `-a`: annotations set on every Function.
    pub function_annotations: Vec<(String, String)>,
    /// `--xrd`: the XR's definition.
    pub xrd: Option<PathBuf>,
    /// The whole render's deadline.
    pub timeout: Duration,
}

/// Why the inputs could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// A file could not be loaded, or holds the wrong kind of object.
    #[error("cannot load {what} from {path:?}")]
    Load {
        /// What the file holds.
        what: &'static str,
        /// The path, as given.
        path: String,
        /// Why.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The inputs don't fit together.
    #[error(transparent)]
    Invalid(#[from] RenderError),
    /// The XRD's defaults could not be applied.
    #[error("cannot default values for XR {xr:?}")]
    Defaults {
        /// The XR's name.
        xr: String,
        /// Why.
        #[source]
        source: xrd::XrdError,
    },
    /// A claim given with an XRD that offers it could not be converted.
    #[error("cannot render claim {claim} as its composite resource")]
    Claim {
        /// The claim: its kind, namespace and name.
        claim: String,
        /// Why.
        #[source]
        source: Box<claim::ClaimError>,
    },
    /// A context file could not be read.
    #[error("cannot read context value for key {key:?}")]
    ContextFile {
        /// The context key.
        key: String,
        /// Why.
        #[source]
        source: load::LoadError,
    },
    /// An input's value can't be used (a context value that isn't YAML, a
    /// directory of schemas without any); the text says which and why.
    #[error("{0}")]
    Unusable(String),
    /// A file of the required schemas could not be used.
    #[error("cannot {what} {path}")]
    Schema {
        /// What failed: `read` or `parse OpenAPI document`.
        what: &'static str,
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

pub(super) fn load_error(
    what: &'static str,
    path: &Path,
    source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
) -> InputError {
    InputError::Load {
        what,
        path: path.display().to_string(),
        source: source.into(),
    }
}

/// Loads and checks everything `files` names. `note` is told what the
/// user should know as it happens, such as a converted Composition.
pub fn load(files: &InputFiles, note: &mut dyn FnMut(String)) -> Result<Inputs, InputError> {
    let composite = load::read_one(&files.composite_resource)
        .map_err(|e| load_error("composite resource", &files.composite_resource, e))?;
    let composition = load::read_one(&files.composition)
        .map_err(Box::<dyn std::error::Error + Send + Sync>::from)
        .and_then(|c| {
            preflight::is_composition(&c)
                .map(|()| c)
                .map_err(Into::into)
        })
        .map_err(|e| load_error("Composition", &files.composition, e))?;
    let mut composite = composite;
    if let Some(path) = files
        .xrd
        .as_deref()
        .filter(|_| value_kind(&composite) != composition.pointer("/spec/compositeTypeRef/kind"))
    {
        // Only to recognise a claim: a bad XRD is reported below.
        if let Some(xrd) = load::read_one(path)
            .ok()
            .filter(|xrd| claim::offered_by(&composite, xrd))
        {
            composite = claim_to_xr(composite, &xrd, note)?;
        }
    }
    preflight::refuse_claim(&composite, &composition)?;
    preflight::composition_fits(&composite, &composition)?;
    let mut composition = composition;
    let converted = resources_mode::is_resources_mode(&composition);
    if converted {
        note(format!(
            "Composition {:?} uses the deprecated mode: Resources; rendering it as a {} pipeline, as `crossplane beta convert pipeline-composition` would",
            name(&composition),
            resources_mode::PATCH_AND_TRANSFORM
        ));
        resources_mode::to_pipeline(&mut composition);
    }
    if !preflight::is_pipeline(&composition) {
        return Err(preflight::not_a_pipeline(&composition).into());
    }

    let mut functions = functions(&files.functions)?;
    if converted
        && !functions
            .iter()
            .any(|f| name(f) == resources_mode::PATCH_AND_TRANSFORM)
    {
        functions.push(resources_mode::implied_function());
    }
    apply_annotations(&mut functions, &files.function_annotations);
    for dropped in pt_input::drop_unknown_fields(&mut composition, &functions) {
        note(dropped);
    }

    let xrd = match &files.xrd {
        Some(path) => {
            let xrd_object = load::read_one(path).map_err(|e| load_error("XRD", path, e))?;
            xrd::apply_defaults(&mut composite, &xrd_object).map_err(|source| {
                InputError::Defaults {
                    xr: name(&composite).to_owned(),
                    source,
                }
            })?;
            Some(xrd_object)
        }
        None => None,
    };

    let credentials = stream(files.function_credentials.as_deref(), "secrets")?;
    let observed = stream(
        files.observed_resources.as_deref(),
        "observed composed resources",
    )?;
    let mut required = Vec::new();
    for path in &files.extra_resources {
        required.extend(stream(Some(path), "extra resources")?);
    }
    for path in &files.required_resources {
        required.extend(stream(Some(path), "required resources")?);
    }
    let required_schemas = match &files.required_schemas {
        Some(dir) => load_schemas(dir)?,
        None => Vec::new(),
    };
    let context = context(&files.context_files, &files.context_values)?;

    Ok(Inputs {
        composite,
        composition,
        functions,
        observed,
        required_resources: required,
        required_schemas,
        credentials,
        context,
        xrd,
        timeout: files.timeout,
    })
}

/// The XR Crossplane creates for a claim `xrd` offers, said on `note`.
fn claim_to_xr(
    claim_object: Value,
    xrd: &Value,
    note: &mut dyn FnMut(String),
) -> Result<Value, InputError> {
    let (kind, namespace) = (
        object::str_at(&claim_object, &["kind"]),
        object::str_at(&claim_object, &["metadata", "namespace"]),
    );
    let xr = claim::to_xr(&claim_object, xrd).map_err(|source| InputError::Claim {
        claim: format!("{kind} {namespace}/{}", name(&claim_object)),
        source: Box::new(source),
    })?;
    let how = if object::value_at(&xr, &["metadata", "generateName"]).is_some() {
        " (Crossplane ends a new XR's name with 5 random characters; xfn derives them from the claim, \
         and a claim's spec.resourceRef.name names its XR)"
    } else {
        " (the claim's spec.resourceRef.name)"
    };
    note(format!(
        "{kind} {namespace}/{} is a claim that XRD {:?} offers; rendering the XR Crossplane's claim controller \
         would create for it: {} {}{how}",
        name(&claim_object),
        name(xrd),
        object::str_at(&xr, &["kind"]),
        name(&xr),
    ));
    Ok(xr)
}

/// The Functions in a file or directory, each checked to be one.
pub(super) fn functions(path: &Path) -> Result<Vec<Value>, InputError> {
    load::read_stream(path)
        .map_err(Box::<dyn std::error::Error + Send + Sync>::from)
        .and_then(|fns| {
            fns.iter()
                .try_for_each(preflight::is_function)
                .map(|()| fns)
                .map_err(Into::into)
        })
        .map_err(|e| load_error("functions", path, e))
}

fn value_kind(object: &Value) -> Option<&Value> {
    object.get("kind")
}

/// The objects in a file or directory, if a flag names one.
pub(super) fn stream(path: Option<&Path>, what: &'static str) -> Result<Vec<Value>, InputError> {
    match path {
        Some(path) => load::read_stream(path).map_err(|e| load_error(what, path, e)),
        None => Ok(Vec::new()),
    }
}

/// The initial context: `--context-files` first, then `--context-values`,
/// which win for the same key.
pub(super) fn context(
    files: &[(String, PathBuf)],
    values: &[(String, String)],
) -> Result<serde_json::Map<String, Value>, InputError> {
    let mut context = serde_json::Map::new();
    for (key, file) in files {
        let text = load::read_text(file).map_err(|source| InputError::ContextFile {
            key: key.to_owned(),
            source,
        })?;
        load::warn_duplicate_keys(&file.to_string_lossy(), &text);
        context.insert(key.to_owned(), context_value(key, &text)?);
    }
    for (key, value) in values {
        context.insert(key.to_owned(), context_value(key, value)?);
    }
    Ok(context)
}

fn context_value(key: &str, text: &str) -> Result<Value, InputError> {
    load::parse_value(text).map_err(|e| {
        InputError::Unusable(format!(
            "cannot render composite resource: cannot unmarshal YAML/JSON for context key {key:?}: {e}"
        ))
    })
}

/// `-a`: sets each `KEY=VALUE` annotation on every Function.
pub fn apply_annotations(functions: &mut [Value], annotations: &[(String, String)]) {
    for (key, value) in annotations {
        for function in functions.iter_mut() {
            let metadata = function.as_object_mut().map(|o| {
                o.entry("metadata")
                    .or_insert_with(|| Value::Object(Default::default()))
            });
            if let Some(Value::Object(metadata)) = metadata {
                let annotations = metadata
                    .entry("annotations")
                    .or_insert_with(|| Value::Object(Default::default()));
                if let Value::Object(annotations) = annotations {
                    annotations.insert(key.to_owned(), Value::String(value.to_owned()));
                }
            }
        }
    }
}

/// Every `*.json` file under `dir`, recursively, each an OpenAPI v3 document.
pub(super) fn load_schemas(dir: &Path) -> Result<Vec<Value>, InputError> {
    let mut files = Vec::new();
    collect_json(dir, &mut files).map_err(|e| load_error("required schemas", dir, e))?;
    if files.is_empty() {
        return Err(InputError::Unusable(format!(
            "cannot load required schemas from {:?}: no JSON files found",
            dir.display().to_string()
        )));
    }
    files.sort();
    files
        .iter()
        .map(|f| {
            let text = load::read_text(f).map_err(|e| InputError::Schema {
                what: "read",
                path: f.display().to_string(),
                source: e.into(),
            })?;
            serde_json::from_str(&text).map_err(|e| InputError::Schema {
                what: "parse OpenAPI document",
                path: f.display().to_string(),
                source: e.into(),
            })
        })
        .collect()
}

fn collect_json(dir: &Path, files: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            collect_json(&path, files)?;
        } else if path.extension().is_some_and(|e| e == "json") {
            files.push(path);
        }
    }
    Ok(())
}
