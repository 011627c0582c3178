//! hello
