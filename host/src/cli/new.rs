//! `xfn new NAME`: scaffolds a function crate that builds, tests, renders
//! and pushes as it is. The files are templates under `host/templates/new`.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};

/// Create a function crate: Cargo.toml, src/lib.rs with a typed input and
/// unit tests, example/ inputs for `xfn render`, package/crossplane.yaml
/// for `xfn push --package`, a README and a Makefile.
#[derive(Debug, clap::Args)]
pub struct NewArgs {
    /// The function's name, e.g. function-greet: lowercase letters, digits and '-', starting with a letter (a DNS-1123 label and a Rust crate name).
    pub name: String,
    /// The directory to create (default: ./NAME). It must not exist, or be empty.
    #[arg(long, value_name = "DIR")]
    pub path: Option<PathBuf>,
    /// Depend on the xfn-sdk at PATH (a checkout's guest-sdk/) instead of the copy `xfn new` writes into the crate's xfn-sdk/.
    #[arg(long, value_name = "PATH")]
    pub sdk_path: Option<PathBuf>,
}

/// The version of xfn-sdk a new crate depends on: xfn's own.
pub const SDK_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The directory of a new crate that holds the vendored xfn-sdk.
pub const SDK_DIR: &str = "xfn-sdk";

// SDK_FILES and SDK_LOCK, written by build.rs (build/sdk_vendor.rs).
include!(concat!(env!("OUT_DIR"), "/sdk_vendor.rs"));

/// The Rust toolchain a new crate pins: the one xfn is built with.
pub const TOOLCHAIN: &str = "1.97.0";

/// Longest name: a DNS-1123 label has at most 63 characters.
const MAX_NAME_LEN: usize = 63;

/// Names cargo refuses for a package (Rust keywords and the standard
/// library's crates).
/// The crates a new function depends on (as Rust names them): a crate of
/// the same name could not depend on them.
const DEPENDENCIES: &[&str] = &["xfn_sdk", "serde", "serde_json", "schemars"];

const RESERVED: &[&str] = &[
    "abstract",
    "alloc",
    "as",
    "async",
    "await",
    "become",
    "box",
    "break",
    "const",
    "continue",
    "core",
    "crate",
    "do",
    "dyn",
    "else",
    "enum",
    "extern",
    "false",
    "final",
    "fn",
    "for",
    "gen",
    "if",
    "impl",
    "in",
    "let",
    "loop",
    "macro",
    "match",
    "mod",
    "move",
    "mut",
    "override",
    "priv",
    "proc-macro",
    "pub",
    "ref",
    "return",
    "self",
    "static",
    "std",
    "struct",
    "super",
    "test",
    "trait",
    "true",
    "try",
    "type",
    "typeof",
    "unsafe",
    "unsized",
    "use",
    "virtual",
    "where",
    "while",
    "yield",
];

/// The files of a new crate: path in the crate, template text.
const TEMPLATES: &[(&str, &str)] = &[
    (
        "Cargo.toml",
        include_str!("../../templates/new/Cargo.toml.in"),
    ),
    (
        ".cargo/config.toml",
        include_str!("../../templates/new/cargo-config.toml"),
    ),
    (
        "rust-toolchain.toml",
        include_str!("../../templates/new/rust-toolchain.toml"),
    ),
    (".gitignore", include_str!("../../templates/new/gitignore")),
    ("src/lib.rs", include_str!("../../templates/new/src/lib.rs")),
    (
        "example/xr.yaml",
        include_str!("../../templates/new/example/xr.yaml"),
    ),
    (
        "example/composition.yaml",
        include_str!("../../templates/new/example/composition.yaml"),
    ),
    (
        "example/functions.yaml",
        include_str!("../../templates/new/example/functions.yaml"),
    ),
    (
        "package/crossplane.yaml",
        include_str!("../../templates/new/package/crossplane.yaml"),
    ),
    ("README.md", include_str!("../../templates/new/README.md")),
    ("Makefile", include_str!("../../templates/new/Makefile")),
    (
        ".github/workflows/ci.yaml",
        include_str!("../../templates/new/ci.yaml"),
    ),
    (
        "tests/fixtures/request.yaml",
        include_str!("../../templates/new/tests/fixtures/request.yaml"),
    ),
    (
        "tests/fixtures/response.yaml",
        include_str!("../../templates/new/tests/fixtures/response.yaml"),
    ),
    (
        "tests/fixtures/request-observed.yaml",
        include_str!("../../templates/new/tests/fixtures/request-observed.yaml"),
    ),
    (
        "tests/fixtures/response-observed.yaml",
        include_str!("../../templates/new/tests/fixtures/response-observed.yaml"),
    ),
    (
        "tests/function.rs",
        include_str!("../../templates/new/tests/function.rs"),
    ),
    (
        "examples/input-crd.rs",
        include_str!("../../templates/new/examples/input-crd.rs"),
    ),
    (
        "example/observed.yaml",
        include_str!("../../templates/new/example/observed.yaml"),
    ),
    (
        "package/input/{{name}}.fn.example.org_inputs.yaml",
        include_str!("../../templates/new/package/input/inputs.yaml"),
    ),
];

/// Runs `xfn new`.
pub fn run(args: NewArgs) -> Result<()> {
    check_name(&args.name)?;
    let dir = args
        .path
        .clone()
        .unwrap_or_else(|| PathBuf::from(&args.name));
    let sdk = match &args.sdk_path {
        Some(path) => SdkSource::Path(sdk_checkout(path)?),
        None => SdkSource::Vendored,
    };
    let mut files = render(&args.name, &sdk, &xfn_for_makefile());
    files.push((
        "Cargo.lock".to_owned(),
        SDK_LOCK.replace("{{name}}", &args.name),
    ));
    if sdk == SdkSource::Vendored {
        for (file, text) in SDK_FILES {
            files.push((format!("{SDK_DIR}/{file}"), (*text).to_owned()));
        }
    }
    prepare_dir(&dir)?;
    for (file, text) in &files {
        write_new(&dir.join(file), text)?;
    }
    println!(
        "Created function {} in {}\n\n  cd {}\n  make test      # cargo test\n  make build     # the wasm component\n  make render    # xfn render example/\n",
        args.name,
        dir.display(),
        dir.display()
    );
    Ok(())
}

/// Where a new crate gets xfn-sdk from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SdkSource {
    /// The copy of the SDK this binary carries, written into the crate's
    /// [`SDK_DIR`]: a relative `path` (the crate builds wherever it is
    /// copied) with a `version` that a published xfn-sdk will satisfy.
    Vendored,
    /// A local checkout of the SDK (its directory, absolute).
    Path(PathBuf),
}

impl SdkSource {
    /// The line of Cargo.toml's `[dependencies]` for xfn-sdk.
    fn dependency(&self) -> String {
        match self {
            SdkSource::Vendored => format!(
                "# xfn-sdk is not on crates.io yet: `xfn new` wrote the SDK this xfn was\n\
                 # built with into {SDK_DIR}/. Once it is published, delete that directory\n\
                 # and the `path` below.\n\
                 xfn-sdk = {{ version = \"{SDK_VERSION}\", path = \"{SDK_DIR}\", features = [\"schema\"] }}"
            ),
            SdkSource::Path(path) => {
                let path = toml_string(&path.display().to_string());
                format!(
                    "# A local xfn-sdk (xfn new --sdk-path).\nxfn-sdk = {{ version = \"{SDK_VERSION}\", path = {path}, features = [\"schema\"] }}"
                )
            }
        }
    }
}

/// Checks that `name` is a DNS-1123 label (Crossplane's package names are)
/// and a crate name cargo accepts.
pub fn check_name(name: &str) -> Result<()> {
    let why = if name.is_empty() {
        Some("it is empty".to_owned())
    } else if name.len() > MAX_NAME_LEN {
        Some(format!("it is longer than {MAX_NAME_LEN} characters"))
    } else if !name.starts_with(|c: char| c.is_ascii_lowercase()) {
        Some("it must start with a lowercase letter".to_owned())
    } else if name.ends_with('-') {
        Some("it must not end with '-'".to_owned())
    } else if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-'))
    {
        Some(format!(
            "{c:?} is not allowed: use lowercase letters, digits and '-'"
        ))
    } else if RESERVED.contains(&name) {
        Some("it is a Rust keyword or a standard library crate".to_owned())
    } else if DEPENDENCIES.contains(&name.replace('-', "_").as_str()) {
        Some("the new crate depends on a crate of that name".to_owned())
    } else {
        None
    };
    match why {
        Some(why) => bail!(
            "invalid function name {name:?}: {why} (a function's name is a DNS-1123 label and a Rust crate name, e.g. function-greet)"
        ),
        None => Ok(()),
    }
}

/// What the new crate's Makefile runs as `xfn` by default: this binary
/// when make can name it (an absolute path without spaces or quotes) and it
/// is still there, else the `xfn` on PATH.
fn xfn_for_makefile() -> String {
    let own = std::env::current_exe()
        .ok()
        .map(|p| p.display().to_string())
        .filter(|p| {
            !p.chars()
                .any(|c| c.is_whitespace() || "'\"$`\\#%".contains(c))
        });
    match own {
        Some(path) => format!("$(shell test -x '{path}' && echo '{path}' || echo xfn)"),
        None => "xfn".to_owned(),
    }
}

/// The files of crate `name`, placeholders filled in; `xfn` is the
/// Makefile's default `XFN`.
pub fn render(name: &str, sdk: &SdkSource, xfn: &str) -> Vec<(String, String)> {
    let crate_name = name.replace('-', "_");
    let dependency = sdk.dependency();
    TEMPLATES
        .iter()
        .map(|(file, template)| {
            let text = template
                .replace("{{sdk_dependency}}", &dependency)
                .replace("{{toolchain}}", TOOLCHAIN)
                .replace("{{xfn}}", xfn)
                .replace("{{crate}}", &crate_name)
                .replace("{{name}}", name);
            (file.replace("{{name}}", name), text)
        })
        .collect()
}

/// The most of an `--sdk-path`'s `Cargo.toml` read: 1 MiB.
const SDK_MANIFEST_LIMIT: xfn_oci::localfile::Limit =
    xfn_oci::localfile::Limit::new("Cargo.toml", 1 << 20);

/// The absolute path of an xfn-sdk checkout, checked to be one.
fn sdk_checkout(path: &Path) -> Result<PathBuf> {
    let dir = std::fs::canonicalize(path)
        .with_context(|| format!("--sdk-path {:?}", path.display().to_string()))?;
    // A regular file of bounded size: a FIFO or a device is refused, not
    // read.
    let manifest = xfn_oci::localfile::read_to_string(&dir.join("Cargo.toml"), SDK_MANIFEST_LIMIT)
        .map_err(|e| {
            anyhow::anyhow!(
                "--sdk-path {:?} is not a crate directory (it should be xfn's guest-sdk/): \
                 cannot read its Cargo.toml: {e}",
                path.display().to_string()
            )
        })?;
    if !manifest.lines().any(|l| l.trim() == "name = \"xfn-sdk\"") {
        bail!(
            "--sdk-path {:?}: its Cargo.toml is not xfn-sdk's (it should be xfn's guest-sdk/)",
            path.display().to_string()
        );
    }
    Ok(dir)
}

/// Creates `dir`, or accepts it if it exists and is empty.
fn prepare_dir(dir: &Path) -> Result<()> {
    let shown = dir.display().to_string();
    match std::fs::read_dir(dir) {
        Ok(mut entries) => {
            if entries.next().is_some() {
                bail!(
                    "{shown:?} already exists and is not empty: xfn new never overwrites files; choose another name or --path"
                );
            }
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(dir).with_context(|| format!("cannot create {shown:?}"))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => {
            bail!("{shown:?} already exists and is not a directory")
        }
        Err(e) => Err(e).with_context(|| format!("cannot read {shown:?}")),
    }
}

/// Writes a file that must not exist yet.
fn write_new(path: &Path, text: &str) -> Result<()> {
    let shown = path.display().to_string();
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).with_context(|| format!("cannot create {parent:?}"))?;
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .with_context(|| format!("cannot create {shown:?}"))?;
    file.write_all(text.as_bytes())
        .with_context(|| format!("cannot write {shown:?}"))
}

/// `text` as a TOML basic string.
fn toml_string(text: &str) -> String {
    let mut quoted = String::with_capacity(text.len() + 2);
    quoted.push('"');
    for c in text.chars() {
        match c {
            '"' => quoted.push_str("\\\""),
            '\\' => quoted.push_str("\\\\"),
            c if c.is_control() => quoted.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => quoted.push(c),
        }
    }
    quoted.push('"');
    quoted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_dns_labels_and_crate_names() {
        for good in ["function-greet", "f", "fn2", "a-b-c"] {
            assert!(check_name(good).is_ok(), "{good}");
        }
        for (bad, why) in [
            ("", "it is empty"),
            ("Function", "start with a lowercase letter"),
            ("2fn", "start with a lowercase letter"),
            ("-fn", "start with a lowercase letter"),
            ("fn-", "must not end with '-'"),
            ("my_fn", "'_' is not allowed"),
            ("my.fn", "'.' is not allowed"),
            ("test", "Rust keyword"),
            ("std", "standard library"),
            // The attack round's low finding: these collided with the
            // crate's own dependencies.
            ("xfn-sdk", "depends on a crate of that name"),
            ("serde-json", "depends on a crate of that name"),
            ("serde", "depends on a crate of that name"),
        ] {
            let err = check_name(bad).unwrap_err().to_string();
            assert!(err.contains(why), "{bad:?}: {err}");
            assert!(err.contains("e.g. function-greet"), "{err}");
        }
        let long = "a".repeat(64);
        assert!(check_name(&long).unwrap_err().to_string().contains("63"));
        assert!(check_name(&"a".repeat(63)).is_ok());
    }

    #[test]
    fn every_placeholder_is_filled() {
        let files = render("function-greet", &SdkSource::Vendored, "xfn");
        assert_eq!(files.len(), TEMPLATES.len());
        for (file, text) in &files {
            // (GitHub's own `${{ expressions }}` are not placeholders.)
            let unfilled = text
                .match_indices("{{")
                .any(|(at, _)| text[at + 2..].starts_with(|c: char| c.is_ascii_lowercase()));
            assert!(!unfilled && !file.contains("{{"), "{file}: {text}");
        }
        assert!(
            files
                .iter()
                .any(|(f, _)| f == "package/input/function-greet.fn.example.org_inputs.yaml")
        );
        let text = |name: &str| &files.iter().find(|(f, _)| *f == name).unwrap().1;
        assert!(text("Cargo.toml").contains("name = \"function-greet\""));
        assert!(text("Cargo.toml").contains(&format!(
            "xfn-sdk = {{ version = \"{SDK_VERSION}\", path = \"xfn-sdk\""
        )));
        assert!(text("Cargo.toml").contains("crate-type = [\"cdylib\", \"rlib\"]"));
        assert!(
            text("example/functions.yaml")
                .contains("target/wasm32-wasip2/wasm/function_greet.wasm")
        );
        assert!(text("Makefile").contains("\tcargo build --profile wasm --target wasm32-wasip2"));
        assert!(text("Makefile").contains("XFN ?= xfn\n"));
    }

    /// The Makefile runs the xfn that wrote it while it is there, else the
    /// one on PATH; a path make can't quote is never written.
    #[test]
    fn the_makefile_finds_the_xfn_that_wrote_it() {
        let xfn = xfn_for_makefile();
        let own = std::env::current_exe().expect("this test's path");
        assert_eq!(
            xfn,
            format!(
                "$(shell test -x '{0}' && echo '{0}' || echo xfn)",
                own.display()
            )
        );
        let files = render("function-greet", &SdkSource::Vendored, &xfn);
        let makefile = &files
            .iter()
            .find(|(f, _)| f == "Makefile")
            .expect("a Makefile")
            .1;
        assert!(makefile.contains(&format!("XFN ?= {xfn}\n")), "{makefile}");
    }

    /// The vendored SDK stands alone: no key is inherited from a workspace
    /// it no longer has, and the lock pins the SDK's dependencies.
    #[test]
    fn the_vendored_sdk_builds_outside_the_workspace() {
        let manifest = SDK_FILES
            .iter()
            .find(|(f, _)| *f == "Cargo.toml")
            .expect("a manifest")
            .1;
        assert!(!manifest.contains("workspace"), "{manifest}");
        assert!(manifest.contains("name = \"xfn-sdk\""));
        for file in [
            "src/lib.rs",
            "src/testing.rs",
            "src/crd.rs",
            "src/merge.rs",
            "wit/function.wit",
            "README.md",
        ] {
            assert!(SDK_FILES.iter().any(|(f, _)| *f == file), "{file}");
        }
        for locked in [
            "name = \"wit-bindgen\"",
            "name = \"schemars\"",
            "name = \"{{name}}\"",
        ] {
            assert!(SDK_LOCK.contains(locked), "{locked}");
        }
        assert!(
            !SDK_LOCK.contains("name = \"wasmtime\""),
            "only what a function uses"
        );
    }

    /// The attack round's low finding: `--sdk-path` read a FIFO or
    /// `/dev/zero` as its Cargo.toml (a hang, or memory until killed).
    #[test]
    fn an_sdk_path_whose_manifest_is_not_a_file_is_refused_at_once() {
        let dir = std::env::temp_dir().join(format!("xfn-new-fifo-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("dir");
        let made = std::process::Command::new("mkfifo")
            .arg(dir.join("Cargo.toml"))
            .status();
        assert!(made.is_ok_and(|s| s.success()), "mkfifo");
        let started = std::time::Instant::now();
        let err = sdk_checkout(&dir)
            .expect_err("a FIFO is refused")
            .to_string();
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        assert!(err.contains("not a regular file"), "{err}");
        std::fs::remove_dir_all(&dir).expect("cleanup");
    }

    #[test]
    fn an_sdk_path_becomes_a_path_dependency() {
        let sdk = SdkSource::Path(PathBuf::from("/src/x\"fn/guest-sdk"));
        let files = render("function-greet", &sdk, "xfn");
        let cargo = &files[0].1;
        assert!(
            cargo.contains("path = \"/src/x\\\"fn/guest-sdk\""),
            "{cargo}"
        );
    }

    /// The wasm profile and the initial-memory flag are the workspace's,
    /// and the toolchain is the one xfn builds with: a new crate builds as
    /// the first-party functions do.
    #[test]
    fn the_build_settings_match_the_workspace() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let read = |p: &str| std::fs::read_to_string(root.join(p)).expect(p);
        let section = |text: &str, header: &str| -> String {
            let start = text.find(header).unwrap_or_else(|| panic!("{header}"));
            text[start..]
                .lines()
                .skip(1)
                .take_while(|l| !l.starts_with('[') && !l.is_empty())
                .filter(|l| !l.starts_with('#'))
                .collect::<Vec<_>>()
                .join("\n")
        };
        let files = render("function-greet", &SdkSource::Vendored, "xfn");
        let text = |name: &str| files.iter().find(|(f, _)| *f == name).unwrap().1.clone();
        let workspace = read("Cargo.toml");
        assert_eq!(
            section(&text("Cargo.toml"), "[profile.wasm]"),
            section(&workspace, "[profile.wasm]")
        );
        let config = read(".cargo/config.toml");
        assert_eq!(
            section(&text(".cargo/config.toml"), "[target.wasm32-wasip2]"),
            section(&config, "[target.wasm32-wasip2]")
        );
        let toolchain = read("rust-toolchain.toml");
        assert!(
            toolchain.contains(&format!("channel = \"{TOOLCHAIN}\"")),
            "{toolchain}"
        );
    }

    #[test]
    fn a_non_empty_directory_is_refused_and_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("keep.txt"), "mine").unwrap();
        let err = run(NewArgs {
            name: "function-greet".into(),
            path: Some(dir.path().to_owned()),
            sdk_path: None,
        })
        .unwrap_err()
        .to_string();
        assert!(err.contains("already exists and is not empty"), "{err}");
        assert!(err.contains("never overwrites"), "{err}");
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 1);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("keep.txt")).unwrap(),
            "mine"
        );
    }

    #[test]
    fn an_empty_directory_is_filled() {
        let dir = tempfile::tempdir().unwrap();
        run(NewArgs {
            name: "function-greet".into(),
            path: Some(dir.path().to_owned()),
            sdk_path: None,
        })
        .unwrap();
        for (file, _) in TEMPLATES {
            let file = file.replace("{{name}}", "function-greet");
            assert!(dir.path().join(&file).is_file(), "{file}");
        }
        for (file, text) in SDK_FILES {
            let written = std::fs::read_to_string(dir.path().join(SDK_DIR).join(file)).unwrap();
            assert_eq!(&written, text, "{file}");
        }
        let lock = std::fs::read_to_string(dir.path().join("Cargo.lock")).unwrap();
        assert!(lock.contains("name = \"function-greet\""), "{lock}");
    }
}
