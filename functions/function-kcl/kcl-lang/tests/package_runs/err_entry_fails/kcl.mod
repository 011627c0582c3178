[package]
name = "err_entry_fails"
version = "0.1.0"

[profile]
entries = ["main.k", "checks.k"]
