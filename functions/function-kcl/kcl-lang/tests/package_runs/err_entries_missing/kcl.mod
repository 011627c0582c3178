[package]
name = "err_entries_missing"
version = "0.1.0"

[profile]
entries = ["nope.k"]
