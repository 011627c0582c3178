[package]
name = "entries_dir"
version = "0.1.0"

[profile]
entries = ["base", "main.k"]
