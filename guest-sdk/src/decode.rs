//! Decoding typed values from borrowed JSON, with errors that name the field.

use serde::de::DeserializeOwned;
use serde::de::value::MapDeserializer;
use serde_json::Value;

/// Decodes `T` from a borrowed value, copying nothing but what `T` keeps.
pub(crate) fn from_value<T: DeserializeOwned>(value: &Value) -> Result<T, String> {
    serde_path_to_error::deserialize(value).map_err(describe)
}

/// Decodes `T` from an object given as borrowed entries, so a caller can
/// leave some fields out (an input's `apiVersion` and `kind`) without a copy.
pub(crate) fn from_map<'a, T: DeserializeOwned>(
    entries: impl Iterator<Item = (&'a String, &'a Value)>,
) -> Result<T, String> {
    let map = MapDeserializer::<_, serde_json::Error>::new(entries.map(|(k, v)| (k.as_str(), v)));
    serde_path_to_error::deserialize(map).map_err(describe)
}

/// `field spec.replicas: invalid type: ...`, or the bare error at the top.
fn describe(e: serde_path_to_error::Error<serde_json::Error>) -> String {
    let path = e.path().to_string();
    if path == "." {
        e.into_inner().to_string()
    } else {
        format!("field {path}: {}", e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use serde_json::json;

    use super::*;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Outer {
        spec: Spec,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Spec {
        items: Vec<Item>,
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Item {
        size: u32,
    }

    #[test]
    fn errors_name_the_failing_field() {
        let v = json!({"spec": {"items": [{"size": 1}, {"size": "big"}]}});
        let err = from_value::<Outer>(&v).unwrap_err();
        assert!(
            err.starts_with("field spec.items[1].size: invalid type: string \"big\""),
            "{err}"
        );
        let v = json!({"spec": {"items": [], "colour": 1}});
        let err = from_value::<Outer>(&v).unwrap_err();
        assert!(
            err.starts_with("field spec.colour: unknown field `colour`"),
            "{err}"
        );
    }

    #[test]
    fn map_entries_decode_and_report_unknown_fields() {
        let v = json!({"spec": {"items": []}, "extra": true});
        let Value::Object(o) = &v else { unreachable!() };
        let ok: Result<Outer, _> = from_map(o.iter().filter(|(k, _)| *k != "extra"));
        assert!(ok.is_ok());
        let err = from_map::<Outer>(o.iter()).unwrap_err();
        assert!(err.contains("unknown field `extra`"), "{err}");
    }
}
