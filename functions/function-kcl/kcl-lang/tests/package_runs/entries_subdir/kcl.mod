[package]
name = "entries_subdir"
version = "0.1.0"

[profile]
entries = [
    "main.k",
    "overlays/prod.k",
    "${KCL_MOD}/labels.k",
]
