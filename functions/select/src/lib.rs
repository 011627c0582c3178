//! Selecting required resources by name or by labels, as
//! function-environment-configs and function-extra-resources do.
//!
//! Both Go functions share one design: each entry of their input becomes a
//! requirement (`matchName`, or `matchLabels` whose values are literals or
//! read from the XR), Crossplane calls the function again with what matched,
//! and the function checks the counts (`minMatch`, `maxMatch`), sorts by a
//! field path and keeps the first `maxMatch`. This crate is that shared part:
//!
//! * [`input`]: the input types both functions decode (`matchLabels`
//!   entries, the resolution policy, `metadata`) and the input decoding with
//!   function-sdk-go's strictness and error prefix;
//! * [`labels`]: label matchers to the labels of a requirement;
//! * [`sort`]: sorting resources by a field path with Go's typing rules;
//! * [`goquote`]: Go's `%q`, for messages.

pub mod goquote;
pub mod input;
pub mod labels;
pub mod sort;
