//! function-kcl's programs and packages from a real registry: KCL packages
//! in kpm's artifact format (an OCI image manifest, an empty config, one
//! tar layer of the package directory), built here and copied into a
//! `docker-registry` with skopeo; `xfn render` pulls them on the host,
//! hands the files to the built-in function-kcl, and renders again from
//! its cache with the registry gone. A package runs the files its
//! `kcl.mod` lists as `[profile] entries`, and an error in one of its
//! modules names the module's file.

use std::path::Path;

use crate::oci_support::{Layout, Registry, layer};
use xfn_tests::run_xfn;

/// kpm's layer media types: a plain tar (kpm before April 2026) and a
/// gzipped one (since).
const TAR: &str = "application/vnd.oci.image.layer.v1.tar";
const TAR_GZ: &str = "application/vnd.oci.image.layer.v1.tar+gzip";

/// A tar of `files` with each name written as given (a hostile package may
/// hold `../` paths, which `tar::Builder` itself refuses to write).
fn tar(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut builder = tar::Builder::new(Vec::new());
    for (path, bytes) in files {
        let mut header = tar::Header::new_ustar();
        let name = path.as_bytes();
        header.as_old_mut().name[..name.len()].copy_from_slice(name);
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        header.set_entry_type(tar::EntryType::Regular);
        header.set_cksum();
        builder.append(&header, *bytes).expect("append");
    }
    builder.into_inner().expect("tar")
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, bytes).expect("gzip");
    gz.finish().expect("gzip")
}

/// Publishes a KCL package as kpm does (`kcl mod push`): an OCI image
/// manifest with kpm's artifact type, the empty config, one layer titled
/// `<name>-<version>.tar` and the `org.kcllang.package.*` annotations.
fn push_kcl_package(
    registry: &Registry,
    repo_tag: &str,
    name: &str,
    files: &[(&str, &[u8])],
    gzipped: bool,
) -> String {
    let layout = Layout::new();
    let version = repo_tag.rsplit_once(':').map(|(_, t)| t).unwrap_or("0.0.1");
    let (media_type, bytes, title) = if gzipped {
        (TAR_GZ, gzip(&tar(files)), format!("{name}-{version}.tgz"))
    } else {
        (TAR, tar(files), format!("{name}-{version}.tar"))
    };
    let config = layout.blob(b"{}");
    let layer_blob = layout.blob(&bytes);
    let manifest = layout.json(&serde_json::json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "artifactType": media_type,
        "config": {
            "mediaType": "application/vnd.oci.empty.v1+json",
            "digest": config.digest,
            "size": config.size,
        },
        "layers": [layer(media_type, &layer_blob, &[("org.opencontainers.image.title", &title)])],
        "annotations": {
            "org.kcllang.package.name": name,
            "org.kcllang.package.version": version,
        },
    }));
    layout.copy_to(
        registry,
        &manifest,
        "application/vnd.oci.image.manifest.v1+json",
        repo_tag,
    );
    registry.reference(repo_tag)
}

const XR: &str = "apiVersion: example.org/v1
kind: XApp
metadata:
  name: shop
spec:
  replicas: 2
";

const FUNCTIONS: &str = "apiVersion: pkg.crossplane.io/v1
kind: Function
metadata:
  name: function-kcl
spec:
  package: xpkg.crossplane.io/crossplane-contrib/function-kcl:v0.12.2
";

/// A Composition whose one step is function-kcl with `spec`.
fn composition(spec: &str) -> String {
    format!(
        "apiVersion: apiextensions.crossplane.io/v1
kind: Composition
metadata:
  name: xapps
spec:
  compositeTypeRef:
    apiVersion: example.org/v1
    kind: XApp
  mode: Pipeline
  pipeline:
  - step: kcl
    functionRef:
      name: function-kcl
    input:
      apiVersion: krm.kcl.dev/v1alpha1
      kind: KCLInput
      spec:
{spec}"
    )
}

fn render(work: &Path, cache: &Path, composition: &str) -> xfn_tests::Run {
    std::fs::write(work.join("xr.yaml"), XR).expect("write");
    std::fs::write(work.join("functions.yaml"), FUNCTIONS).expect("write");
    std::fs::write(work.join("composition.yaml"), composition).expect("write");
    let args: Vec<String> = [
        "render",
        "xr.yaml",
        "composition.yaml",
        "functions.yaml",
        "--cache-dir",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([cache.display().to_string()])
    .collect();
    run_xfn(work, &args)
}

/// The library package: a schema and a lambda, in a directory module.
const LIB_MOD: &str = "[package]\nname = \"lib\"\nedition = \"v0.12.3\"\nversion = \"0.1.0\"\n";
const LIB_CONFIG: &str = "schema ConfigMap:
    apiVersion: str = \"v1\"
    kind: str = \"ConfigMap\"
    metadata: {str:str}
    data: {str:str}
";
const LIB_NAMES: &str = "full = lambda app: str, part: str -> str {
    \"${app}-${part}\"
}
";

fn push_lib(registry: &Registry) -> String {
    push_kcl_package(
        registry,
        "kcl/lib:0.1.0",
        "lib",
        &[
            ("kcl.mod", LIB_MOD.as_bytes()),
            ("core/configmap.k", LIB_CONFIG.as_bytes()),
            ("core/names.k", LIB_NAMES.as_bytes()),
        ],
        true,
    )
}

/// A program using the library: one ConfigMap per replica.
const MAIN: &str = "import lib.core

_xr = option(\"params\").oxr
items = [core.ConfigMap {
    metadata.name = core.full(_xr.metadata.name, str(i))
    data.index = str(i)
} for i in range(_xr.spec.replicas)]
";

#[test]
fn an_oci_program_and_its_dependencies_render_then_render_offline_from_the_cache() {
    let mut registry = Registry::start();
    let work = tempfile::tempdir().expect("tempdir");
    let cache = work.path().join("cache");
    let lib = push_lib(&registry);
    let (lib_repo, lib_tag) = lib.rsplit_once(':').expect("tag");
    let app_mod = format!(
        "[package]\nname = \"app\"\nversion = \"0.2.0\"\n\n[dependencies]\nlib = {{ oci = \"oci://{lib_repo}\", tag = \"{lib_tag}\" }}\n"
    );
    // The program's package, as kpm published it before April 2026 (a
    // plain tar), with its kcl.mod naming the library.
    let app = push_kcl_package(
        &registry,
        "kcl/app:0.2.0",
        "app",
        &[
            ("kcl.mod", app_mod.as_bytes()),
            ("main.k", MAIN.as_bytes()),
            ("README.md", b"not KCL"),
        ],
        false,
    );
    let oci = composition(&format!("        source: oci://{app}\n"));
    let run = render(work.path(), &cache, &oci);
    assert_eq!(run.code, 0, "{}", run.stderr);
    for want in [
        "name: shop-0",
        "name: shop-1",
        "index: \"1\"",
        "kind: ConfigMap",
    ] {
        assert!(run.stdout.contains(want), "{want}: {}", run.stdout);
    }
    assert!(!run.stdout.contains("shop-2"), "{}", run.stdout);
    let first = run.stdout;

    // An inline program whose spec.dependencies names the library.
    let indented: String = MAIN.lines().map(|l| format!("          {l}\n")).collect();
    let inline = composition(&format!(
        "        dependencies: |\n          lib = {{ oci = \"oci://{lib_repo}\", tag = \"{lib_tag}\" }}\n        source: |\n{indented}"
    ));
    let run = render(work.path(), &cache, &inline);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, first);

    // The registry gone: both render from the cache.
    registry.stop();
    for comp in [&oci, &inline] {
        let run = render(work.path(), &cache, comp);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert_eq!(run.stdout, first);
    }

    // Nothing cached and the registry down: an error naming the package
    // and saying it was not cached.
    let run = render(work.path(), &work.path().join("empty-cache"), &oci);
    assert_ne!(run.code, 0, "{}", run.stdout);
    assert!(
        run.stderr
            .contains(&format!("KCL package {app} is not cached")),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("render once where its registry can be reached"),
        "{}",
        run.stderr
    );
}

#[test]
fn hostile_packages_are_refused() {
    let registry = Registry::start();
    let work = tempfile::tempdir().expect("tempdir");
    let cache = work.path().join("cache");

    // A path out of the package.
    let evil = push_kcl_package(
        &registry,
        "kcl/evil:1.0.0",
        "evil",
        &[("main.k", b"a = 1\n"), ("../../escape.k", b"b = 2\n")],
        true,
    );
    let run = render(
        work.path(),
        &cache,
        &composition(&format!("        source: oci://{evil}\n")),
    );
    assert_ne!(run.code, 0, "{}", run.stdout);
    assert!(
        run.stderr.contains("unsafe path \"../../escape.k\""),
        "{}",
        run.stderr
    );
    assert!(!work.path().join("escape.k").exists());

    // More .k files than a package may hold.
    let names: Vec<String> = (0..10_001).map(|i| format!("m/f{i}.k")).collect();
    let mut files: Vec<(&str, &[u8])> = names.iter().map(|n| (n.as_str(), &b""[..])).collect();
    files.push(("main.k", b"a = 1\n"));
    let many = push_kcl_package(&registry, "kcl/many:1.0.0", "many", &files, true);
    let run = render(
        work.path(),
        &cache,
        &composition(&format!("        source: oci://{many}\n")),
    );
    assert_ne!(run.code, 0, "{}", run.stdout);
    assert!(
        run.stderr.contains("more than 10000 .k files"),
        "{}",
        run.stderr
    );
}

#[test]
fn an_oci_package_runs_its_kcl_mod_entries_and_names_a_failing_file() {
    let registry = Registry::start();
    let work = tempfile::tempdir().expect("tempdir");
    let cache = work.path().join("cache");

    // kcl.mod lists a subdirectory's file first, then main.k; other.k is
    // not listed, so it must not run (it would fail).
    let entries = push_kcl_package(
        &registry,
        "kcl/entries:1.0.0",
        "entries",
        &[
            (
                "kcl.mod",
                b"[package]\nname = \"entries\"\nversion = \"1.0.0\"\n\n[profile]\nentries = [\"base/names.k\", \"main.k\"]\n",
            ),
            (
                "base/names.k",
                b"full = lambda a: str -> str { \"${a}-from-entries\" }\n",
            ),
            (
                "main.k",
                b"items = [{apiVersion = \"v1\", kind = \"ConfigMap\", metadata.name = full(option(\"params\").oxr.metadata.name)}]\n",
            ),
            ("other.k", b"assert False, \"other.k is not an entry\"\n"),
        ],
        true,
    );
    let run = render(
        work.path(),
        &cache,
        &composition(&format!("        source: oci://{entries}\n")),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("name: shop-from-entries"),
        "{}",
        run.stdout
    );

    // A module of the package fails while it runs: the error names its
    // file and line in the package.
    let failing = push_kcl_package(
        &registry,
        "kcl/failing:1.0.0",
        "failing",
        &[
            (
                "kcl.mod",
                b"[package]\nname = \"failing\"\nversion = \"1.0.0\"\n",
            ),
            (
                "main.k",
                b"import models.limits\n\nitems = []\nn = limits.replicas\n",
            ),
            (
                "models/limits.k",
                b"replicas = 3\n\nassert replicas <= 2, \"replicas exceed the maximum\"\n",
            ),
        ],
        true,
    );
    let run = render(
        work.path(),
        &cache,
        &composition(&format!("        source: oci://{failing}\n")),
    );
    assert_ne!(run.code, 0, "{}", run.stdout);
    assert!(
        run.stderr
            .contains("evaluation error at models/limits.k:3: replicas exceed the maximum"),
        "{}",
        run.stderr
    );
}
