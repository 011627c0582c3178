[package]
name = "basic"
version = "0.1.0"
