//! `google.protobuf.Struct` carried as JSON object text, with no value tree
//! in between.
//!
//! [`JsonStruct`] is a prost message with the wire format of
//! `google.protobuf.Struct`. Decoding one keeps the bytes of its map
//! entries as they arrived (slices of the received buffer, not copies);
//! [`JsonStruct::to_json`] then writes JSON object text straight from those
//! bytes. [`JsonStruct::from_json`] goes the other way: it checks and
//! measures JSON text, which is then written as protobuf straight into the
//! encoder's buffer. The messages of [`crate::json::v1`] and
//! [`crate::json::v1beta1`] hold their Structs this way, so a server can
//! hand a function the JSON text it reads without building a
//! `prost_types::Struct` tree first.
//!
//! The JSON follows the rules of Crossplane's Go code:
//!
//! * Protobuf numbers are `f64`. A JSON integer becomes the nearest `f64`
//!   (exact up to ±2^53). On the way back an integral `f64` within ±2^53
//!   is written as a JSON integer (`9001`, not `9001.0`), any other finite
//!   number in the shortest form that reads back as the same `f64`. NaN and
//!   ±infinity have no JSON form and are an error.
//! * A `Value` with no kind set is `null`.
//! * Object keys come out sorted; of entries with the same key, the last
//!   one wins, as protobuf's map semantics have it. Fields repeated or
//!   split across a message merge as protobuf merges them.
//! * Unknown fields are skipped.

mod from_json;
mod json_struct;
mod reuse;
mod to_json;
mod value;

pub use from_json::MAX_JSON_DEPTH;
pub use json_struct::{JsonError, JsonStruct};
pub use reuse::TextPool;
pub use value::parse_value;

/// `apiextensions.fn.proto.v1` with JSON Structs.
pub mod v1 {
    include!(concat!(
        env!("OUT_DIR"),
        "/json/apiextensions.r#fn.proto.v1.rs"
    ));
}

/// `apiextensions.fn.proto.v1beta1` with JSON Structs.
pub mod v1beta1 {
    include!(concat!(
        env!("OUT_DIR"),
        "/json/apiextensions.r#fn.proto.v1beta1.rs"
    ));
}

#[cfg(test)]
mod tests;
