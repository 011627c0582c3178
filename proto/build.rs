//! Compiles Crossplane's function protocol with `protox` (pure Rust, no `protoc`)
//! and generates prost messages plus tonic clients and servers.
//!
//! `proto/fn/v1/run_function.proto` is the only source. The v1beta1 file is
//! derived from it here by rewriting the `package` line, exactly as Crossplane
//! derives its own v1beta1 file, so the two packages stay wire-identical.

use std::error::Error;
use std::fs;
use std::path::{Path, PathBuf};

use prost::Message as _;

const V1_FILE: &str = "fn/v1/run_function.proto";
const V1BETA1_FILE: &str = "fn/v1beta1/run_function.proto";
const V1_PACKAGE_LINE: &str = "package apiextensions.fn.proto.v1;";
const V1BETA1_PACKAGE_LINE: &str = "package apiextensions.fn.proto.v1beta1;";

/// Name of the encoded `FileDescriptorSet` written to `OUT_DIR`.
const DESCRIPTOR_SET_FILE: &str = "xfn_proto_descriptor_set.bin";

fn main() -> Result<(), Box<dyn Error>> {
    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?);
    let out_dir = PathBuf::from(std::env::var("OUT_DIR")?);

    let src_root = manifest_dir.join("proto");
    let v1_path = src_root.join(V1_FILE);
    println!("cargo:rerun-if-changed={}", v1_path.display());
    println!("cargo:rerun-if-changed=build.rs");

    // Derive v1beta1 from v1: only the package line changes.
    let v1_source = fs::read_to_string(&v1_path)?;
    let v1beta1_source = derive_v1beta1(&v1_source)?;
    let gen_root = out_dir.join("proto");
    write_if_changed(&gen_root.join(V1BETA1_FILE), v1beta1_source.as_bytes())?;

    // Compile both files; the google well-known types come bundled with protox.
    let mut compiler = protox::Compiler::new([&src_root, &gen_root])?;
    compiler.include_imports(true).include_source_info(true);
    compiler.open_files([V1_FILE, V1BETA1_FILE])?;
    let fds = compiler.file_descriptor_set();

    // Full set (ours plus imports) for gRPC reflection and for tests.
    write_if_changed(&out_dir.join(DESCRIPTOR_SET_FILE), &fds.encode_to_vec())?;

    // prost-build needs the imported files to analyse types, but skips the
    // google.protobuf ones: they map to prost-types.
    generator().compile_fds(fds.clone())?;

    // The same messages with every google.protobuf.Struct held as JSON text
    // (crate::json::JsonStruct), for the serving path.
    let json_dir = out_dir.join("json");
    fs::create_dir_all(&json_dir)?;
    generator()
        .out_dir(&json_dir)
        .extern_path(".google.protobuf.Struct", "crate::json::JsonStruct")
        .compile_fds(fds)?;
    Ok(())
}

/// The generator of messages, clients and servers.
fn generator() -> tonic_prost_build::Builder {
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        .build_transport(true)
        // prost's own recursion limit is off (see Cargo.toml); this codec
        // bounds the depth instead.
        .codec_path("crate::codec::DepthCodec")
}

/// Returns the v1beta1 source: the v1 source with its single package line rewritten.
fn derive_v1beta1(v1_source: &str) -> Result<String, Box<dyn Error>> {
    let mut found = 0;
    let lines: Vec<&str> = v1_source
        .lines()
        .map(|line| {
            if line.trim() == V1_PACKAGE_LINE {
                found += 1;
                V1BETA1_PACKAGE_LINE
            } else {
                line
            }
        })
        .collect();
    if found != 1 {
        return Err(format!(
            "{V1_FILE}: expected exactly one line `{V1_PACKAGE_LINE}`, found {found}"
        )
        .into());
    }
    let mut out = lines.join("\n");
    out.push('\n');
    Ok(out)
}

/// Writes `contents` to `path` unless it already holds exactly that, creating parents.
fn write_if_changed(path: &Path, contents: &[u8]) -> Result<(), Box<dyn Error>> {
    if fs::read(path).is_ok_and(|old| old == contents) {
        return Ok(());
    }
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent)?;
    }
    fs::write(path, contents)?;
    Ok(())
}
