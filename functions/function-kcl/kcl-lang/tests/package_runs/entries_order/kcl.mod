[package]
name = "entries_order"
version = "0.1.0"

[profile]
# The second file first: its values come first in the output.
entries = ["second.k", "first.k"]
