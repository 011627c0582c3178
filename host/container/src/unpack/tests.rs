//! Unpacking real layer shapes, and refusing hostile ones.

use std::io::Write;
use std::path::Path;

use super::*;

/// One tar entry, written byte for byte (so tests can name `..`).
struct Entry<'a> {
    name: &'a [u8],
    kind: tar::EntryType,
    link: &'a [u8],
    mode: u32,
    data: &'a [u8],
}

fn file<'a>(name: &'a str, data: &'a [u8]) -> Entry<'a> {
    Entry {
        name: name.as_bytes(),
        kind: tar::EntryType::Regular,
        link: b"",
        mode: 0o644,
        data,
    }
}

fn dir(name: &str) -> Entry<'_> {
    Entry {
        name: name.as_bytes(),
        kind: tar::EntryType::Directory,
        link: b"",
        mode: 0o755,
        data: b"",
    }
}

fn link<'a>(kind: tar::EntryType, name: &'a str, target: &'a str) -> Entry<'a> {
    Entry {
        name: name.as_bytes(),
        kind,
        link: target.as_bytes(),
        mode: 0o777,
        data: b"",
    }
}

fn tar(entries: &[Entry<'_>]) -> Vec<u8> {
    let mut builder = tar::Builder::new(Vec::new());
    for entry in entries {
        let mut header = tar::Header::new_ustar();
        header.set_entry_type(entry.kind);
        header.set_mode(entry.mode);
        header.set_size(entry.data.len() as u64);
        let ustar = header.as_ustar_mut().expect("ustar");
        ustar.name[..entry.name.len()].copy_from_slice(entry.name);
        ustar.linkname[..entry.link.len()].copy_from_slice(entry.link);
        header.set_cksum();
        builder.append(&header, entry.data).expect("append");
    }
    builder.into_inner().expect("tar")
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(bytes).expect("gzip");
    encoder.finish().expect("gzip")
}

/// A sandbox directory with `root/` to unpack into and a sibling
/// `outside/` that nothing may touch.
struct Scene {
    dir: tempfile::TempDir,
}

impl Scene {
    fn new() -> Scene {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(dir.path().join("root")).expect("root");
        std::fs::create_dir(dir.path().join("outside")).expect("outside");
        std::fs::write(dir.path().join("outside/secret"), "host").expect("secret");
        Scene { dir }
    }

    fn root(&self) -> std::path::PathBuf {
        self.dir.path().join("root")
    }

    fn unpack(&self, limits: Limits, layers: &[Vec<u8>]) -> Result<Totals, UnpackError> {
        let mut unpacker = Unpacker::new(&self.root(), limits, None).expect("unpacker");
        for layer in layers {
            unpacker.layer(layer.as_slice(), Compression::None)?;
        }
        Ok(unpacker.totals())
    }

    /// The outside directory is as it was.
    fn outside_untouched(&self) {
        let names: Vec<_> = std::fs::read_dir(self.dir.path().join("outside"))
            .expect("outside")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names, ["secret"]);
        assert_eq!(
            std::fs::read_to_string(self.dir.path().join("outside/secret")).expect("secret"),
            "host"
        );
        let top: Vec<_> = std::fs::read_dir(self.dir.path())
            .expect("dir")
            .map(|e| e.expect("entry").file_name().into_string().expect("utf-8"))
            .collect();
        assert!(top.len() == 2, "{top:?}");
    }
}

fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::symlink_metadata(path)
        .expect("stat")
        .permissions()
        .mode()
        & 0o7777
}

#[test]
fn layers_stack_with_whiteouts_links_and_modes() {
    let scene = Scene::new();
    let base = tar(&[
        dir("etc/"),
        file("etc/passwd", b"root:x:0:0::/root:/bin/sh\n"),
        file("etc/doomed", b"gone soon"),
        dir("opt/old/"),
        file("opt/old/a", b"a"),
        file("opt/old/b", b"b"),
        Entry {
            mode: 0o4755,
            ..file("usr/bin/suid", b"#!")
        },
        link(tar::EntryType::Symlink, "bin", "usr/bin"),
        link(tar::EntryType::Symlink, "etc/abs", "/etc/passwd"),
        Entry {
            name: b"dev/null",
            kind: tar::EntryType::Char,
            link: b"",
            mode: 0o666,
            data: b"",
        },
    ]);
    let top = tar(&[
        file("etc/.wh.doomed", b""),
        dir("opt/old/"),
        file("opt/old/.wh..wh..opq", b""),
        file("opt/old/new", b"new"),
        link(tar::EntryType::Link, "etc/passwd-link", "etc/passwd"),
        file("./etc/./passwd", b"replaced\n"),
    ]);
    let totals = scene
        .unpack(Limits::default(), &[base, top])
        .expect("unpack");
    let root = scene.root();
    assert!(!root.join("etc/doomed").exists(), "whiteout");
    let mut old: Vec<_> = std::fs::read_dir(root.join("opt/old"))
        .expect("opt/old")
        .map(|e| e.expect("entry").file_name().into_string().expect("utf-8"))
        .collect();
    old.sort();
    assert_eq!(
        old,
        ["new"],
        "the opaque directory keeps only this layer's entries"
    );
    assert_eq!(mode(&root.join("usr/bin/suid")), 0o755, "setuid dropped");
    assert_eq!(
        std::fs::read_link(root.join("bin")).expect("bin"),
        Path::new("usr/bin")
    );
    assert_eq!(
        std::fs::read_link(root.join("etc/abs")).expect("abs"),
        Path::new("/etc/passwd"),
        "link targets are kept as written"
    );
    assert!(!root.join("dev/null").exists(), "device nodes are skipped");
    assert_eq!(totals.skipped_special, 1);
    assert_eq!(
        std::fs::read(root.join("etc/passwd")).expect("passwd"),
        b"replaced\n"
    );
    assert_eq!(
        std::fs::read(root.join("etc/passwd-link")).expect("link"),
        b"root:x:0:0::/root:/bin/sh\n",
        "a hard link names the file as it was when linked"
    );
    scene.outside_untouched();
}

#[test]
fn hostile_paths_are_refused_and_nothing_leaves_the_root() {
    let cases: Vec<(&str, Vec<Vec<u8>>, &str)> = vec![
        (
            "dot-dot",
            vec![tar(&[file("../outside/evil", b"x")])],
            "contains `..`",
        ),
        (
            "dot-dot inside",
            vec![tar(&[file("a/../../outside/evil", b"x")])],
            "contains `..`",
        ),
        (
            "through an absolute symlink",
            vec![tar(&[
                link(tar::EntryType::Symlink, "escape", "/"),
                file("escape/outside/evil", b"x"),
            ])],
            "goes through the symbolic link \"escape\"",
        ),
        (
            "through a relative symlink, in a later layer",
            vec![
                tar(&[link(tar::EntryType::Symlink, "up", "../outside")]),
                tar(&[file("up/evil", b"x")]),
            ],
            "goes through the symbolic link \"up\"",
        ),
        (
            "hard link out",
            vec![tar(&[link(
                tar::EntryType::Link,
                "stolen",
                "../outside/secret",
            )])],
            "its link target: its path contains `..`",
        ),
        (
            "hard link through a symlink",
            vec![tar(&[
                link(tar::EntryType::Symlink, "up", "../outside"),
                link(tar::EntryType::Link, "stolen", "up/secret"),
            ])],
            "its link target: its path goes through the symbolic link \"up\"",
        ),
        (
            "whiteout through a symlink",
            vec![tar(&[
                link(tar::EntryType::Symlink, "up", "../outside"),
                file("up/.wh.secret", b""),
            ])],
            "goes through the symbolic link \"up\"",
        ),
        (
            "hard link to nothing",
            vec![tar(&[link(tar::EntryType::Link, "ghost", "missing")])],
            "does not exist in the image",
        ),
    ];
    for (what, layers, wanted) in cases {
        let scene = Scene::new();
        let err = scene
            .unpack(Limits::default(), &layers)
            .expect_err(what)
            .to_string();
        assert!(err.contains(wanted), "{what}: {err}");
        scene.outside_untouched();
    }
}

#[test]
fn a_symlink_then_a_file_of_its_name_replaces_the_link() {
    let scene = Scene::new();
    scene
        .unpack(
            Limits::default(),
            &[
                tar(&[link(tar::EntryType::Symlink, "secret", "../outside/secret")]),
                tar(&[file("secret", b"mine")]),
            ],
        )
        .expect("unpack");
    assert_eq!(
        std::fs::read(scene.root().join("secret")).expect("file"),
        b"mine"
    );
    scene.outside_untouched();
}

#[test]
fn a_gzip_bomb_stops_at_the_byte_limit() {
    let scene = Scene::new();
    let zeros = vec![0u8; 64 << 20];
    let bomb = gzip(&tar(&[file("zeros", &zeros)]));
    assert!(bomb.len() < 1 << 20, "the bomb is small: {}", bomb.len());
    let limits = Limits {
        max_bytes: 8 << 20,
        ..Limits::default()
    };
    let mut unpacker = Unpacker::new(&scene.root(), limits, None).expect("unpacker");
    let err = unpacker
        .layer(bomb.as_slice(), Compression::Gzip)
        .expect_err("bomb")
        .to_string();
    assert!(err.contains("expand to more than 8388608 bytes"), "{err}");
    scene.outside_untouched();
}

#[test]
fn too_many_entries_stop_at_the_entry_limit() {
    let names: Vec<String> = (0..5000).map(|n| format!("f{n}")).collect();
    let entries: Vec<Entry<'_>> = names.iter().map(|n| file(n, b"")).collect();
    let limits = Limits {
        max_entries: 1000,
        ..Limits::default()
    };
    let scene = Scene::new();
    let mut unpacker = Unpacker::new(&scene.root(), limits, None).expect("unpacker");
    let err = unpacker
        .layer(gzip(&tar(&entries)).as_slice(), Compression::Gzip)
        .expect_err("too many")
        .to_string();
    assert!(err.contains("more than 1000 entries"), "{err}");
}

#[test]
fn a_layer_that_is_not_a_tar_is_an_error() {
    let scene = Scene::new();
    let mut unpacker = Unpacker::new(&scene.root(), Limits::default(), None).expect("unpacker");
    let err = unpacker
        .layer(&b"not gzip at all"[..], Compression::Gzip)
        .expect_err("garbage");
    assert!(matches!(err, UnpackError::Read(_)), "{err}");
}
