[package]
name = "k8s_app"
version = "0.1.0"

[dependencies]
k8s = "1.28"
