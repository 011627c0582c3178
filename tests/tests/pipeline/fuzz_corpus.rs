//! Replays the fuzzers' committed corpus (`tests/fuzz/corpus/<target>/`)
//! through the same bodies the fuzzers run (`xfn_tests::fuzz`): a body that
//! panics or a property that breaks on any file fails the test, naming it.
//!
//! The corpus holds seeds made from the repository's own inputs (written by
//! `write_seed_corpus` below, `--ignored`), hand-made edge cases, and what
//! `make fuzz` found, each crash fixed with its input kept here.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use xfn_tests::fuzz::TARGETS;

fn fuzz_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fuzz")
}

fn corpus_files(target: &str) -> Vec<PathBuf> {
    let dir = fuzz_dir().join("corpus").join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.is_file())
        .collect();
    files.sort();
    files
}

/// Runs every corpus file of `target` through its body; the files whose run
/// panicked, with the panic's message.
fn replay(target: &str) -> (usize, Vec<String>) {
    let (_, body) = TARGETS
        .iter()
        .find(|(name, _)| *name == target)
        .unwrap_or_else(|| panic!("no fuzz target {target}"));
    let files = corpus_files(target);
    let mut failures = Vec::new();
    for file in &files {
        let data = std::fs::read(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        if let Err(panic) = catch_unwind(AssertUnwindSafe(|| body(&data))) {
            let message = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("(no message)");
            failures.push(format!("{}: {message}", file.display()));
        }
    }
    (files.len(), failures)
}

fn assert_replays(target: &str) {
    let (count, failures) = replay(target);
    assert!(count >= 5, "{target}: only {count} corpus files");
    assert!(
        failures.is_empty(),
        "{target}: {} of {count} corpus files fail:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn yaml_loader_corpus() {
    assert_replays("yaml_loader");
}

#[test]
fn oci_manifest_corpus() {
    assert_replays("oci_manifest");
}

#[test]
fn oci_config_corpus() {
    assert_replays("oci_config");
}

#[test]
fn proto_wit_roundtrip_corpus() {
    assert_replays("proto_wit_roundtrip");
}

#[test]
fn pt_input_corpus() {
    assert_replays("pt_input");
}

#[test]
fn field_path_corpus() {
    assert_replays("field_path");
}

/// Every body has a fuzzer, and every fuzzer a body and a corpus.
#[test]
fn every_target_has_a_fuzzer_and_a_corpus() {
    let mut fuzzers: Vec<String> = std::fs::read_dir(fuzz_dir().join("fuzz_targets"))
        .expect("tests/fuzz/fuzz_targets")
        .map(|e| e.expect("a directory entry").path())
        .filter_map(|p| Some(p.file_stem()?.to_str()?.to_owned()))
        .collect();
    fuzzers.sort();
    let mut bodies: Vec<String> = TARGETS.iter().map(|(n, _)| (*n).to_owned()).collect();
    bodies.sort();
    assert_eq!(fuzzers, bodies);
    for name in &bodies {
        assert!(!corpus_files(name).is_empty(), "{name} has no corpus");
    }
}

// ---------------------------------------------------------------------------
// Seeds

/// Writes the seed corpus from the repository's own inputs (files named
/// `seed-*`; the fuzzers' finds are left alone). Run with `--ignored` after
/// the inputs change; needs the wasm components (`make wasm`).
#[test]
#[ignore = "writes tests/fuzz/corpus; run by hand"]
fn write_seed_corpus() {
    seeds::write_all();
}

mod seeds {
    use super::*;
    use std::collections::BTreeMap;

    use prost::Message as _;
    use xfn_oci::{ImageRef, PackageFile, PushMetadata};

    fn write(target: &str, name: &str, data: &[u8]) {
        let dir = fuzz_dir().join("corpus").join(target);
        std::fs::create_dir_all(&dir).expect("create the corpus directory");
        let safe: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                    c
                } else {
                    '-'
                }
            })
            .collect();
        std::fs::write(dir.join(format!("seed-{safe}")), data).expect("write a seed");
    }

    fn repo() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
    }

    fn files(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("read a directory") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                files(&path, ext, out);
            } else if path.extension().is_some_and(|e| e == ext) {
                out.push(path);
            }
        }
        out.sort();
    }

    fn relative(path: &Path) -> String {
        path.strip_prefix(repo())
            .unwrap_or(path)
            .display()
            .to_string()
    }

    /// The requests of function-patch-and-transform's fixtures.
    fn pt_requests() -> Vec<(String, serde_json::Value)> {
        let mut paths = Vec::new();
        files(
            &repo().join("functions/function-patch-and-transform/tests/fixtures"),
            "json",
            &mut paths,
        );
        paths
            .iter()
            .filter_map(|p| {
                let fixture: serde_json::Value =
                    serde_json::from_slice(&std::fs::read(p).ok()?).ok()?;
                Some((
                    p.file_stem()?.to_str()?.to_owned(),
                    fixture.get("request")?.clone(),
                ))
            })
            .collect()
    }

    pub fn write_all() {
        yaml();
        oci();
        let requests = pt_requests();
        for (name, request) in &requests {
            write("pt_input", name, request.to_string().as_bytes());
            let sdk: xfn_sdk::Request =
                serde_json::from_value(request.clone()).expect("a fixture request");
            let host = xfn_tests::convert::request(sdk);
            let proto = xfn_grpc::convert::request_to_proto(host).expect("converts");
            write("proto_wit_roundtrip", name, &proto.encode_to_vec());
        }
        field_paths(&requests);
    }

    fn yaml() {
        let mut paths = Vec::new();
        files(&repo().join("examples"), "yaml", &mut paths);
        let mut cases = Vec::new();
        files(&repo().join("tests/render/cases"), "yaml", &mut cases);
        // One file of each kind is enough: the cases repeat their XRs.
        let mut seen = std::collections::BTreeSet::new();
        for case in cases {
            let kind = case.file_name().map(|n| n.to_owned());
            if seen.insert(kind) || relative(&case).contains("err-") {
                paths.push(case);
            }
        }
        for path in paths {
            let data = std::fs::read(&path).expect("read a YAML file");
            write("yaml_loader", &relative(&path), &data);
        }
        let edge_cases: &[(&str, &str)] = &[
            (
                "anchors",
                "a: &x {b: [1, 2.5, -3e-7, 0x1f]}\nc: *x\nd: [*x, *x]\n",
            ),
            ("merge-key", "base: &b {x: 1}\nderived:\n  <<: *b\n  y: 2\n"),
            (
                "scalars",
                "a: yes\nb: ~\nc: 0o17\nd: '010'\ne: 1_000\nf: .inf\ng: -.NaN\nh: 2024-01-01T00:00:00Z\ni: \"\\u00e9\\t\"\nj: |\n  multi\n  line\nk: >-\n  folded\n  text\n",
            ),
            ("duplicate-keys", "a: 1\na: 2\n"),
            (
                "multi-doc",
                "---\na: 1\n...\n---\n# only a comment\n---\nb: [x, {c: d}]\n",
            ),
            (
                "tags",
                "a: !!str 5\nb: !!binary aGVsbG8=\nc: !custom {x: 1}\n",
            ),
            (
                "deep-flow",
                &format!("a: {}{}\n", "[".repeat(200), "]".repeat(200)),
            ),
            (
                "big-numbers",
                "a: 18446744073709551615\nb: -9223372036854775808\nc: 1e308\nd: 123456789012345678901234567890\n",
            ),
            ("not-an-object", "- a\n- b\n"),
            ("scalar", "just text\n"),
            ("long-string", &format!("a: {}\n", "word ".repeat(40))),
        ];
        for (name, text) in edge_cases {
            write("yaml_loader", name, text.as_bytes());
        }
    }

    fn oci() {
        let wasm = xfn_tests::component("hello");
        let reference = ImageRef::parse("127.0.0.1:5000/fuzz/function-hello:v1").expect("a ref");
        let cncf = xfn_oci::build_artifact(
            &reference,
            wasm.clone(),
            &PushMetadata {
                name: Some("function-hello".into()),
                capabilities: vec!["composition".into(), "operation".into()],
                description: Some("Says hello".into()),
                annotations: BTreeMap::new(),
                package: None,
            },
        )
        .expect("a CNCF artifact");
        write("oci_manifest", "cncf-manifest.json", &cncf.manifest);
        write("oci_config", "cncf-config.json", &cncf.config);
        let package = PackageFile {
            source: "crossplane.yaml".into(),
            bytes: b"apiVersion: meta.pkg.crossplane.io/v1\nkind: Function\nmetadata:\n  name: function-hello\nspec:\n  capabilities: [composition]\n".to_vec(),
        };
        let xpkg = xfn_oci::build_artifact(
            &reference,
            wasm,
            &PushMetadata {
                name: None,
                capabilities: Vec::new(),
                description: None,
                annotations: BTreeMap::new(),
                package: Some(package),
            },
        )
        .expect("an xpkg");
        write("oci_manifest", "xpkg-manifest.json", &xpkg.manifest);
        write("oci_config", "xpkg-config.json", &xpkg.config);
        let digest = |c: char| format!("sha256:{}", c.to_string().repeat(64));
        let index = serde_json::json!({
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.index.v1+json",
            "manifests": [
                {"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": digest('1'), "size": 500,
                 "platform": {"os": "linux", "architecture": "amd64"}},
                {"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": digest('2'), "size": 500,
                 "platform": {"os": "wasip2", "architecture": "wasm"}},
                {"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": digest('3'), "size": 500,
                 "artifactType": "application/vnd.wasm.config.v0+json"}
            ]
        });
        write("oci_manifest", "index.json", index.to_string().as_bytes());
        let docker_list = serde_json::json!({
            "schemaVersion": 2,
            "mediaType": "application/vnd.docker.distribution.manifest.list.v2+json",
            "manifests": [{"mediaType": "application/vnd.docker.distribution.manifest.v2+json",
                           "digest": digest('4'), "size": 1, "platform": {"os": "linux", "architecture": "arm64", "variant": "v8"}}]
        });
        write(
            "oci_manifest",
            "docker-list.json",
            docker_list.to_string().as_bytes(),
        );
        let legacy = serde_json::json!({
            "schemaVersion": 2,
            "config": {"mediaType": "application/vnd.wasm.config.v1+json", "digest": digest('5'), "size": 2},
            "layers": [{"mediaType": "application/vnd.wasm.content.layer.v1+wasm", "digest": digest('6'), "size": 9_007_199_254_740_993_i64}],
            "annotations": {"dev.xfn.function.name": "", "dev.xfn.function.capabilities": " , "}
        });
        write(
            "oci_manifest",
            "legacy-huge-layer.json",
            legacy.to_string().as_bytes(),
        );
        let labelled = serde_json::json!({
            "config": {"Labels": {
                format!("io.crossplane.xpkg:{}", digest('b')): "base",
                format!("io.crossplane.xpkg:{}", digest('a')): "wasm",
                format!("io.crossplane.xpkg:{}", digest('9')): "base"
            }},
            "rootfs": {"type": "layers", "diff_ids": [digest('b'), digest('a'), digest('0')]},
            "xfn": {"name": "labelled", "capabilities": ["operation"]},
            "component": {"imports": ["wasi:cli/environment@0.2.0", "evil:net/socket@1.0.0"]}
        });
        write(
            "oci_config",
            "labelled.json",
            labelled.to_string().as_bytes(),
        );
        for (name, text) in [
            ("empty.json", "{}"),
            ("null.json", "null"),
            ("not-json", "config: yaml"),
            (
                "xfn-empty.json",
                r#"{"xfn": {"name": "", "capabilities": ["", 5]}}"#,
            ),
        ] {
            write("oci_config", name, text.as_bytes());
        }
    }

    fn field_paths(requests: &[(String, serde_json::Value)]) {
        let mut paths = std::collections::BTreeSet::new();
        fn collect(v: &serde_json::Value, out: &mut std::collections::BTreeSet<String>) {
            match v {
                serde_json::Value::Object(m) => {
                    for (k, v) in m {
                        if k.ends_with("FieldPath")
                            && let Some(s) = v.as_str()
                        {
                            out.insert(s.to_owned());
                        }
                        collect(v, out);
                    }
                }
                serde_json::Value::Array(a) => a.iter().for_each(|v| collect(v, out)),
                _ => {}
            }
        }
        for (_, request) in requests {
            collect(request, &mut paths);
        }
        for extra in [
            "",
            "metadata.annotations['crossplane.io/external-name']",
            "data[.config.yml]",
            "spec.items[0][8]",
            "[42]",
            "spec.list[*].name",
            "a.0",
            "spec.list[1024]",
            "spec.list[4294967296]",
            "a..b",
            "a[",
            "a]b",
            "[\"quoted\"]",
        ] {
            paths.insert(extra.to_owned());
        }
        for (i, path) in paths.iter().enumerate() {
            write("field_path", &format!("{i:03}"), path.as_bytes());
        }
    }
}
