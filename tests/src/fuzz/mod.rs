//! The bodies of xfn's fuzz targets, shared by the fuzzers (`tests/fuzz`,
//! `make fuzz`) and by the test that replays their committed corpus
//! (`tests/fuzz_corpus.rs`), so both check the same properties.
//!
//! Each body takes arbitrary bytes, feeds them to the code that reads such
//! input in xfn, and panics if that code panics or if a property of its
//! result does not hold. Inputs the code refuses are fine: refusing is its
//! job. Every body is bounded by the size of its input.

mod fieldpath;
mod oci;
mod proto;
mod pt;
mod yaml;

pub use fieldpath::field_path;
pub use oci::{oci_config, oci_manifest};
pub use proto::proto_wit_roundtrip;
pub use pt::pt_input;
pub use yaml::yaml_loader;

/// A fuzz target's body.
pub type Body = fn(&[u8]);

/// Every target, by the name of its fuzzer and corpus directory.
pub const TARGETS: &[(&str, Body)] = &[
    ("yaml_loader", yaml_loader),
    ("oci_manifest", oci_manifest),
    ("oci_config", oci_config),
    ("proto_wit_roundtrip", proto_wit_roundtrip),
    ("pt_input", pt_input),
    ("field_path", field_path),
];
