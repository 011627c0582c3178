//! A Rust port of crossplane-contrib/function-go-templating (v0.12.2) for
//! xfn: Go templates rendered into desired composed resources, with a Go
//! `text/template` engine written for it, sprig's functions and upstream's.

pub mod fns;
pub mod render;
pub mod sprig;
pub mod template;
pub mod yamlv3;
