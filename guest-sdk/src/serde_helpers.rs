//! serde adapters for protojson's encodings of bytes and durations.

/// Byte maps as base64 strings, as protojson writes `map<string, bytes>`.
pub mod serde_bytes {
    use base64::Engine as _;
    use base64::engine::general_purpose::STANDARD;
    use serde::de::Error as _;
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::Bytes;

    /// Serializes each value as base64.
    pub fn serialize<S: Serializer>(map: &Bytes, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(map.iter().map(|(k, v)| (k, STANDARD.encode(v))))
    }

    /// Deserializes base64 values.
    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Bytes, D::Error> {
        let encoded = std::collections::BTreeMap::<String, String>::deserialize(deserializer)?;
        encoded
            .into_iter()
            .map(|(k, v)| {
                let bytes = STANDARD
                    .decode(v.as_bytes())
                    .map_err(|e| D::Error::custom(format!("value of {k:?} is not base64: {e}")))?;
                Ok((k, bytes))
            })
            .collect()
    }
}

/// Durations as protojson strings such as `"60s"` or `"1.5s"`.
pub mod serde_duration {
    use std::time::Duration;

    use serde::de::Error as _;
    use serde::{Deserialize, Deserializer, Serializer};

    /// Serializes as seconds with an `s` suffix.
    pub fn serialize<S: Serializer>(
        d: &Option<Duration>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) if d.subsec_nanos() == 0 => {
                serializer.serialize_str(&format!("{}s", d.as_secs()))
            }
            Some(d) => serializer.serialize_str(&format!("{}s", d.as_secs_f64())),
            None => serializer.serialize_none(),
        }
    }

    /// Deserializes `"<seconds>s"`.
    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<Duration>, D::Error> {
        let Some(text) = Option::<String>::deserialize(deserializer)? else {
            return Ok(None);
        };
        let seconds = text
            .strip_suffix('s')
            .and_then(|s| s.parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s >= 0.0)
            .ok_or_else(|| {
                D::Error::custom(format!("invalid duration {text:?}: want e.g. \"60s\""))
            })?;
        Ok(Some(Duration::from_secs_f64(seconds)))
    }
}
