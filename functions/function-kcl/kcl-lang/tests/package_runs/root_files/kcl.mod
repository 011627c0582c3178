[package]
name = "root_files"
version = "0.1.0"

[dependencies]
k8s = "1.28"
