//! Parsing the rendered text into objects as upstream does with
//! Kubernetes' `YAMLOrJSONDecoder`: a stream of JSON objects when the text
//! starts with `{`, else YAML documents separated by `---` lines, each
//! converted to JSON and read as an `Unstructured` (which needs a `kind`).
//! YAML errors carry upstream's position text: the line in the whole text,
//! the document and the line in the document, and the offending line.

use serde_json::{Map, Value as J};

/// The most documents one render may produce.
pub const MAX_DOCUMENTS: usize = 100_000;

/// One decoded object.
#[derive(Debug, Clone)]
pub struct Doc {
    /// The object.
    pub object: Map<String, J>,
}

/// Decodes every object of `data`; empty documents are skipped.
pub fn decode(data: &str) -> Result<Vec<Doc>, String> {
    if data.trim_start().starts_with('{') {
        return decode_json(data);
    }
    let lines: Vec<&str> = data.split('\n').collect();
    let mut start_line = move_to_next_doc(&lines, 1);
    let mut out = Vec::new();
    for (doc_index, (doc, _)) in split_documents(data)?.into_iter().enumerate() {
        let _ = doc_index;
        let value = match yaml_to_json(&doc) {
            Ok(v) => v,
            Err(YamlError { line, message }) => {
                let abs = start_line + line;
                if line > 0 && abs >= 1 && abs - 1 < lines.len() {
                    let mut ctx = lines[abs - 1].trim().to_string();
                    if ctx.len() > 80 {
                        let mut cut = 80;
                        while !ctx.is_char_boundary(cut) {
                            cut -= 1;
                        }
                        ctx = format!("{}...", &ctx[..cut]);
                    }
                    return Err(format!(
                        "error converting YAML to JSON: yaml: line {abs} (document {}, line {line}) near: '{ctx}': {message}",
                        out.len() + 1
                    ));
                }
                return Err(format!(
                    "error converting YAML to JSON: yaml: line {line}: {message}"
                ));
            }
        };
        if value.is_null() {
            continue;
        }
        out.push(unstructured(value, None)?);
        if out.len() > MAX_DOCUMENTS {
            return Err(format!("more than {MAX_DOCUMENTS} documents"));
        }
        start_line = move_to_next_doc(&lines, start_line);
    }
    Ok(out)
}

/// Upstream's `moveToNextDoc`: the 1-based line of the next `---` after
/// `start`, or `start`.
fn move_to_next_doc(lines: &[&str], start: usize) -> usize {
    for i in start..=lines.len() {
        if lines[i - 1].trim() == "---" && i > start {
            return i;
        }
    }
    start
}

/// Kubernetes' `YAMLReader`: documents split at lines starting with `---`
/// (followed by nothing but spaces or a comment).
fn split_documents(data: &str) -> Result<Vec<(String, usize)>, String> {
    let mut docs = Vec::new();
    let mut buf = String::new();
    for line in data.split_inclusive('\n') {
        if let Some(rest) = line.strip_prefix("---") {
            let trimmed = rest.trim();
            if !trimmed.is_empty() && !trimmed.starts_with('#') {
                return Err(format!("invalid Yaml document separator: {trimmed}"));
            }
            if !buf.is_empty() {
                docs.push((std::mem::take(&mut buf), 0));
            }
            continue;
        }
        buf.push_str(line);
    }
    if !buf.is_empty() {
        docs.push((buf, 0));
    }
    Ok(docs)
}

use crate::yamlv2::YamlError;

fn yaml_to_json(doc: &str) -> Result<J, YamlError> {
    if doc.trim().is_empty() {
        return Ok(J::Null);
    }
    if doc.len() > 64 << 20 {
        return Err(YamlError {
            line: 0,
            message: "document larger than 64 MiB".into(),
        });
    }
    crate::yamlv2::to_json(doc)
}

/// `Unstructured.UnmarshalJSON`: an object with a kind.
fn unstructured(v: J, raw: Option<&str>) -> Result<Doc, String> {
    let J::Object(o) = v else {
        return Err(format!(
            "json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
            match v {
                J::Array(_) => "array",
                J::String(_) => "string",
                J::Number(_) => "number",
                J::Bool(_) => "bool",
                _ => "null",
            }
        ));
    };
    let kind_ok = matches!(o.get("kind"), Some(J::String(k)) if !k.is_empty());
    if !kind_ok {
        let shown = match raw {
            Some(r) => r.to_string(),
            None => go_json(&J::Object(o.clone())),
        };
        return Err(format!("Object 'Kind' is missing in '{shown}'"));
    }
    Ok(Doc { object: o })
}

fn go_json(v: &J) -> String {
    let g = crate::template::Value::from_json(v);
    crate::sprig::to_json_string(&g).unwrap_or_default()
}

fn decode_json(data: &str) -> Result<Vec<Doc>, String> {
    let mut out = Vec::new();
    let stream = serde_json::Deserializer::from_str(data).into_iter::<J>();
    let mut stream = stream;
    loop {
        let start = stream.byte_offset();
        match stream.next() {
            None => break,
            Some(Ok(v)) => {
                let end = stream.byte_offset();
                let raw = data[start..end].trim();
                if v.is_null() {
                    continue;
                }
                out.push(unstructured(v, Some(raw))?);
                if out.len() > MAX_DOCUMENTS {
                    return Err(format!("more than {MAX_DOCUMENTS} documents"));
                }
            }
            Some(Err(e)) => return Err(e.to_string()),
        }
    }
    Ok(out)
}
