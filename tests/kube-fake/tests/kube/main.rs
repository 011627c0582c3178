//! Integration tests: real kube 5 clients, watchers, controllers and kube-lease-manager against the fake.

mod common;
mod controller;
mod crud;
mod errors;
mod lease;
mod patching;
mod serve;
mod watching;
