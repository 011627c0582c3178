//! # xfn-container: container functions without a container engine
//!
//! `crossplane render` starts every function that is a container image
//! with Docker. This crate runs such an image as a local process instead,
//! sandboxed at least as tightly as Docker's defaults, with no daemon and
//! no root:
//!
//! * [`unpack`] turns the image's layers into a root filesystem, treating
//!   every layer as hostile (no path outside the root, no write through a
//!   link, no device nodes or setuid bits, bounded size and entries);
//! * [`rootfs`] keeps unpacked roots in the cache, keyed by their layers,
//!   and never uses a half-unpacked one;
//! * [`sandbox`] is the launcher, a fresh `xfn` process that builds user,
//!   mount, PID, IPC, UTS and network namespaces, a read-only root with a
//!   private `/tmp`, limits, no capabilities, and relays the function's
//!   gRPC port to a Unix socket;
//! * [`runtime`] starts a function and calls it ([`ContainerFunction`]).
//!
//! Linux only: elsewhere [`runtime::ContainerFunction::start`] is absent
//! and callers say what works there.

#![cfg(target_os = "linux")]

pub mod rootfs;
pub mod runtime;
pub mod sandbox;
pub mod unpack;
pub mod user;

pub use rootfs::{Layer, RootfsCache};
pub use runtime::{
    ContainerError, ContainerFunction, ContainerOptions, FUNCTION_PORT, FunctionSettings, Image,
    StartTimes,
};
pub use sandbox::{LAUNCHER_ARG, ResourceLimits, launcher_main};
pub use unpack::{Compression, Limits};
