//! The `xfn` command line: one module per subcommand.

pub mod allocator;
pub mod controller;
pub mod oci;
pub mod render;
pub mod serve;
pub mod validate;
