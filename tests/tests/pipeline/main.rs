//! Pipelines of real wasm components in-process: the pipeline's rules, protocol round trips, every function's fixtures through its component, and the fuzz corpus replayed.
//!
//! One test binary of the area, a module per file (see `tests/README.md`).

mod fixtures_auto_ready;
mod fixtures_library;
mod fixtures_patch_and_transform;
mod fuzz_corpus;
mod pipeline;
mod roundtrip;
