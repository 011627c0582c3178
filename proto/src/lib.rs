//! Crossplane function protocol.
