//! `xfn render`, `operation render` and `validate` as users run them: goldens byte for byte, Development runtimes, local files, function logs, and the paths of authors.
//!
//! One test binary of the area, a module per file (see `tests/README.md`).

#[path = "../grpc_support/mod.rs"]
mod grpc_support;
#[path = "../oci_support/mod.rs"]
mod oci_support;

mod author_hints;
mod author_path;
mod docs_example;
mod function_logs;
mod kcl_embedded;
mod local_files;
mod operation_render;
mod precompiled;
mod render;
mod render_development;
mod sdk_package;
mod typed_resources;
mod upstream_examples;
mod validate;
