[package]
name = "entries_dup"
version = "0.1.0"

[profile]
entries = ["a.k", "${KCL_MOD}/a.k", "./b.k", "sub/../a.k"]
