//! Go-compatible YAML emission.
