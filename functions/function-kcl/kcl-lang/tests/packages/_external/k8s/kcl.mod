[package]
name = "k8s"
edition = "v0.12.3"
version = "1.28"
