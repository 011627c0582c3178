//! The `FileSystem` source of function-go-templating, read on the host.
//!
//! Upstream's function (`template.go`, `readTemplates`) reads the templates
//! from a directory of its container, usually a mounted ConfigMap. xfn's
//! built-in port runs in a wasm sandbox with no file system, so `xfn render`
//! reads the directory here, on its host, exactly as upstream walks it, and
//! hands the text to the function in the step's input
//! ([`TEMPLATES_KEY`], or [`READ_ERROR_KEY`] with the error upstream would
//! report). The port takes the text from there, drops both keys from the
//! request its templates see, and `meta.tag` is computed without them.
//!
//! How upstream walks the directory (`io/fs.WalkDir` over an `os.Open`
//! file system), and so how this module does:
//!
//! * `dirPath` is opened as given, cleaned as Go's `filepath.Clean` does;
//!   a relative path is relative to the current directory (upstream's is
//!   its container's working directory; `xfn render`'s is where it runs).
//!   The path itself may be a symbolic link, and may name a single file.
//! * Entries are visited depth first, each directory's in byte order of
//!   their names; every regular file's content is appended, each followed
//!   by `"\n---\n"`.
//! * A directory whose name starts with `.` is skipped with all it holds
//!   (a ConfigMap mount's `..2024_01_01_00_00_00.123` data directory), and
//!   so is a file or link whose name starts with `.` (its `..data` link);
//!   the named path itself is skipped if its name starts with `.` (so
//!   `dirPath: .` reads nothing).
//! * A symbolic link in the directory is read as the file it points to (a
//!   ConfigMap's `templates.yaml -> ..data/templates.yaml`), never walked
//!   as a directory: a link to a directory fails as reading a directory
//!   does (`read PATH: is a directory`).
//! * Errors are Go's `*fs.PathError` texts (`open PATH: no such file or
//!   directory`), which the function wraps as upstream does:
//!   `invalid function input: cannot read tmpl from the folder {DIR}: ...`.
//!
//! What xfn adds, because the host's files are not a container's: a link
//! that leads out of the directory is refused (upstream would read it), so
//! are files that are not regular (a FIFO would block), files that are not
//! UTF-8, and more than [`Limits`] allow. Each refusal is an error naming
//! the path, never a partial read.

use std::fs::{self, File};
use std::io::{self, Read as _};
use std::path::{Path, PathBuf};

use serde_json::Value;

/// The key of `input.fileSystem` that carries the templates `xfn render`
/// read. function-go-templating's port reads the same key.
pub const TEMPLATES_KEY: &str = "xfn.dev/templates";

/// The key of `input.fileSystem` that carries why the directory could not
/// be read, as upstream would word it.
pub const READ_ERROR_KEY: &str = "xfn.dev/readError";

/// The name of the built-in function whose input this module fills in.
pub const BUILTIN: &str = "function-go-templating";

/// Bounds on reading a template directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Directory entries listed, hidden ones and directories included.
    pub entries: usize,
    /// Bytes of template text, with the separators between files.
    pub bytes: usize,
    /// Levels of directories below the one named.
    pub depth: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            entries: 10_000,
            bytes: 8 << 20,
            depth: 64,
        }
    }
}

/// What upstream appends after each file.
const SEPARATOR: &str = "\n---\n";

/// The step input `input` (JSON text) with the templates of its
/// `FileSystem` source read, or `None` when it has no such source to read
/// (another source, no `dirPath`, or not an object: the function reports
/// those itself, as upstream does).
pub fn fill_input(input: &str, limits: Limits) -> Option<String> {
    let mut value: Value = serde_json::from_str(input).ok()?;
    if value.get("source").and_then(Value::as_str) != Some("FileSystem") {
        return None;
    }
    let file_system = value.get_mut("fileSystem")?.as_object_mut()?;
    let dir = file_system
        .get("dirPath")
        .and_then(Value::as_str)
        .filter(|d| !d.is_empty())?
        .to_owned();
    file_system.remove(TEMPLATES_KEY);
    file_system.remove(READ_ERROR_KEY);
    match read_templates(&dir, limits) {
        Ok(text) => file_system.insert(TEMPLATES_KEY.to_owned(), Value::String(text)),
        Err(e) => file_system.insert(READ_ERROR_KEY.to_owned(), Value::String(e)),
    };
    Some(value.to_string())
}

/// The step input `input` (JSON text) as the Composition gave it: without
/// what [`fill_input`] added. `meta.tag` is computed on it, as Crossplane
/// computes it on the input it sends upstream's function.
pub fn original_input(input: &str) -> Option<String> {
    if !input.contains(TEMPLATES_KEY) && !input.contains(READ_ERROR_KEY) {
        return None;
    }
    let mut value: Value = serde_json::from_str(input).ok()?;
    let file_system = value.get_mut("fileSystem")?.as_object_mut()?;
    let removed = [TEMPLATES_KEY, READ_ERROR_KEY]
        .iter()
        .filter(|key| file_system.remove(**key).is_some())
        .count();
    (removed > 0).then(|| value.to_string())
}

/// The templates under `dir`, joined as upstream joins them, or the error
/// upstream's walk would stop with (or xfn's refusal), as text.
pub fn read_templates(dir: &str, limits: Limits) -> Result<String, String> {
    let root = clean(dir);
    // Like Go's fs.Stat on an os.Open file system: open, then stat the
    // open file (following a link).
    let file = File::open(&root).map_err(|e| path_error("open", &root, &e))?;
    let meta = file.metadata().map_err(|e| path_error("stat", &root, &e))?;
    drop(file);
    if base_name(&root).starts_with('.') {
        return Ok(String::new());
    }
    let mut walk = Walk {
        limits,
        inside: None,
        entries: 0,
        text: String::new(),
    };
    if meta.is_dir() {
        let inside = fs::canonicalize(&root).map_err(|e| path_error("open", &root, &e))?;
        walk.inside = Some(inside);
        walk.dir(Path::new(&root), &root, 0)?;
    } else if meta.is_file() {
        walk.file(Path::new(&root), &root)?;
    } else {
        return Err(not_regular(&root));
    }
    Ok(walk.text)
}

/// A walk in progress.
struct Walk {
    limits: Limits,
    /// The directory named, resolved: links must stay under it.
    inside: Option<PathBuf>,
    entries: usize,
    text: String,
}

impl Walk {
    /// Reads the directory at `path` (`shown` in messages), `depth` levels
    /// below the one named.
    fn dir(&mut self, path: &Path, shown: &str, depth: usize) -> Result<(), String> {
        if depth > self.limits.depth {
            return Err(format!(
                "open {shown}: xfn reads templates at most {} directories deep",
                self.limits.depth
            ));
        }
        let mut entries = Vec::new();
        for entry in fs::read_dir(path).map_err(|e| path_error("open", shown, &e))? {
            let entry = entry.map_err(|e| path_error("readdirent", shown, &e))?;
            self.entries += 1;
            if self.entries > self.limits.entries {
                return Err(format!(
                    "open {shown}: xfn reads at most {} files and directories of templates",
                    self.limits.entries
                ));
            }
            entries.push(entry);
        }
        // Go's fs.ReadDir sorts by name, byte by byte.
        entries.sort_by(|a, b| {
            a.file_name()
                .as_encoded_bytes()
                .cmp(b.file_name().as_encoded_bytes())
        });
        for entry in entries {
            let name = entry.file_name();
            let child = path.join(&name);
            let child_shown = join(shown, &name.to_string_lossy());
            let hidden = name.as_encoded_bytes().first() == Some(&b'.');
            let kind = entry
                .file_type()
                .map_err(|e| path_error("lstat", &child_shown, &e))?;
            if hidden {
                // A hidden directory is skipped with what it holds, a
                // hidden file (or link) alone.
                continue;
            }
            if kind.is_dir() {
                self.dir(&child, &child_shown, depth + 1)?;
            } else if kind.is_symlink() {
                self.link(&child, &child_shown)?;
            } else if kind.is_file() {
                self.file(&child, &child_shown)?;
            } else {
                return Err(not_regular(&child_shown));
            }
        }
        Ok(())
    }

    /// Reads the file a link in the directory points to, if it stays in
    /// the directory.
    fn link(&mut self, path: &Path, shown: &str) -> Result<(), String> {
        let target = fs::canonicalize(path).map_err(|e| path_error("open", shown, &e))?;
        if let Some(inside) = &self.inside
            && !target.starts_with(inside)
        {
            return Err(format!(
                "open {shown}: xfn follows no link out of the template directory, and this one leads to {}",
                target.display()
            ));
        }
        let meta = fs::metadata(&target).map_err(|e| path_error("open", shown, &e))?;
        if meta.is_dir() {
            // Go opens a directory as a file, and reading it fails.
            return Err(format!("read {shown}: is a directory"));
        }
        if !meta.is_file() {
            return Err(not_regular(shown));
        }
        self.file(&target, shown)
    }

    /// Appends the regular file at `path`, and the separator.
    fn file(&mut self, path: &Path, shown: &str) -> Result<(), String> {
        let file = File::open(path).map_err(|e| path_error("open", shown, &e))?;
        let room = self.limits.bytes.saturating_sub(self.text.len());
        let mut bytes = Vec::new();
        file.take(room as u64 + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| path_error("read", shown, &e))?;
        if bytes.len() + SEPARATOR.len() > room {
            return Err(format!(
                "read {shown}: xfn reads at most {} bytes of templates",
                self.limits.bytes
            ));
        }
        let text = String::from_utf8(bytes).map_err(|_| {
            format!("read {shown}: xfn reads templates as UTF-8 text, and this file is not")
        })?;
        self.text.push_str(&text);
        self.text.push_str(SEPARATOR);
        Ok(())
    }
}

/// xfn's refusal of a file that is not regular (a FIFO, a socket, a device).
fn not_regular(shown: &str) -> String {
    format!("open {shown}: xfn reads templates from regular files only, and this is not one")
}

/// Go's `*fs.PathError` text: `OP PATH: ERROR`, the error as Go's
/// `syscall.Errno` words it.
fn path_error(op: &str, path: &str, error: &io::Error) -> String {
    format!("{op} {path}: {}", errno_text(error))
}

/// An OS error as Go words it: the C library's text without Rust's
/// `(os error N)`, its first letter lower-cased (Go's table of errno texts
/// is the C library's so spelled, e.g. `no such file or directory`).
fn errno_text(error: &io::Error) -> String {
    let text = error.to_string();
    let text = match text.find(" (os error ") {
        Some(at) => &text[..at],
        None => text.as_str(),
    };
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// Go's `path.Join(dir, name)` for a clean `dir` and a plain `name`.
fn join(dir: &str, name: &str) -> String {
    if dir.ends_with('/') {
        format!("{dir}{name}")
    } else {
        format!("{dir}/{name}")
    }
}

/// Go's `path.Clean` (and `filepath.Clean` on Unix): one slash between
/// elements, no `.` elements, `..` elements resolved lexically (dropped at
/// the root), no trailing slash; `.` for nothing.
pub fn clean(path: &str) -> String {
    let rooted = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|p| *p != "..") {
                    parts.pop();
                } else if !rooted {
                    parts.push("..");
                }
            }
            element => parts.push(element),
        }
    }
    let joined = parts.join("/");
    if rooted {
        format!("/{joined}")
    } else if joined.is_empty() {
        ".".to_owned()
    } else {
        joined
    }
}

/// The last element of a clean path, as Go's `os` names an opened file
/// (`/` for the root).
fn base_name(clean: &str) -> &str {
    if clean == "/" {
        return clean;
    }
    clean.rsplit('/').next().unwrap_or(clean)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    use std::os::unix::fs::symlink;

    /// A temporary directory whose name is not hidden (tempfile's default
    /// `.tmp` prefix would make every walk read nothing).
    fn tempdir() -> tempfile::TempDir {
        tempfile::Builder::new()
            .prefix("xfn-templates-")
            .tempdir()
            .unwrap()
    }

    fn write(dir: &Path, rel: &str, text: &str) {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).unwrap();
        }
        fs::write(path, text).unwrap();
    }

    fn read(dir: &Path) -> Result<String, String> {
        read_templates(dir.to_str().unwrap(), Limits::default())
    }

    #[test]
    fn go_cleans_paths() {
        for (path, want) in [
            ("", "."),
            (".", "."),
            ("./", "."),
            ("a/../..", ".."),
            ("/..", "/"),
            ("/", "/"),
            ("//a//b/", "/a/b"),
            ("./templates/.", "templates"),
            ("../x/./y/../z", "../x/z"),
        ] {
            assert_eq!(clean(path), want, "{path:?}");
        }
        assert_eq!(base_name("/"), "/");
        assert_eq!(base_name(".."), "..");
        assert_eq!(base_name("/templates"), "templates");
    }

    #[test]
    fn files_in_byte_order_depth_first_each_followed_by_a_separator() {
        let tmp = tempdir();
        let d = tmp.path();
        write(d, "b.yaml", "B");
        write(d, "a/z.yaml", "AZ");
        write(d, "a/b/c.yaml", "ABC");
        write(d, "A.yaml", "upper");
        write(d, "a.yaml", "a-file");
        write(d, "a-b.yaml", "dash");
        // Byte order: "A.yaml" < "a" < "a-b.yaml" < "a.yaml" < "b.yaml";
        // "a" is walked where it sorts, before its later siblings.
        assert_eq!(
            read(d).unwrap(),
            "upper\n---\nABC\n---\nAZ\n---\ndash\n---\na-file\n---\nB\n---\n"
        );
    }

    #[test]
    fn hidden_directories_and_files_are_skipped_as_in_a_configmap_mount() {
        let tmp = tempdir();
        let d = tmp.path();
        // What a ConfigMap volume holds: a hidden data directory, a hidden
        // link to it, and links to the files through that link.
        write(d, "..2024_01_01_00_00_00.1/templates.yaml", "kind: T");
        write(
            d,
            "..2024_01_01_00_00_00.1/_helpers.tpl",
            "{{ define \"x\" }}{{ end }}",
        );
        symlink("..2024_01_01_00_00_00.1", d.join("..data")).unwrap();
        symlink("..data/templates.yaml", d.join("templates.yaml")).unwrap();
        symlink("..data/_helpers.tpl", d.join("_helpers.tpl")).unwrap();
        write(d, ".hidden.yaml", "not read");
        write(d, "sub/.also-hidden", "not read");
        write(d, ".git/config", "not read");
        assert_eq!(
            read(d).unwrap(),
            "{{ define \"x\" }}{{ end }}\n---\nkind: T\n---\n"
        );
    }

    #[test]
    fn a_hidden_root_reads_nothing_and_a_file_root_reads_the_file() {
        let tmp = tempdir();
        let d = tmp.path();
        write(d, ".hidden/a.yaml", "A");
        write(d, "one.yaml", "ONE");
        let path = |rel: &str| d.join(rel).to_str().unwrap().to_owned();
        assert_eq!(
            read_templates(&path(".hidden"), Limits::default()),
            Ok(String::new())
        );
        assert_eq!(
            read_templates(&path("one.yaml"), Limits::default()),
            Ok("ONE\n---\n".into())
        );
        // Cleaned first, as Go opens it: "x/.hidden/." is ".hidden".
        assert_eq!(
            read_templates(&path(".hidden/."), Limits::default()),
            Ok(String::new())
        );
        let empty = tempdir();
        assert_eq!(read(empty.path()), Ok(String::new()));
    }

    #[test]
    fn a_missing_directory_is_gos_open_error() {
        let tmp = tempdir();
        let missing = format!("{}/nope//", tmp.path().display());
        assert_eq!(
            read_templates(&missing, Limits::default()),
            Err(format!(
                "open {}/nope: no such file or directory",
                tmp.path().display()
            ))
        );
    }

    #[test]
    fn links_in_the_directory_are_read_and_links_out_of_it_refused() {
        let tmp = tempdir();
        let outside = tmp.path().join("outside.yaml");
        fs::write(&outside, "secret").unwrap();
        let d = tmp.path().join("templates");
        write(&d, "real.yaml", "REAL");
        symlink("real.yaml", d.join("z-link.yaml")).unwrap();
        assert_eq!(read(&d), Ok("REAL\n---\nREAL\n---\n".into()));

        symlink(&outside, d.join("escape.yaml")).unwrap();
        let err = read(&d).unwrap_err();
        assert!(
            err.starts_with(&format!(
                "open {}/escape.yaml: xfn follows no link out",
                d.display()
            )),
            "{err}"
        );
        fs::remove_file(d.join("escape.yaml")).unwrap();

        symlink("../outside.yaml", d.join("escape-relative.yaml")).unwrap();
        assert!(read(&d).unwrap_err().contains("xfn follows no link out"));
        fs::remove_file(d.join("escape-relative.yaml")).unwrap();

        // A link to a directory is read as a file, as Go's walk does.
        fs::create_dir(d.join("subdir")).unwrap();
        symlink("subdir", d.join("dir-link")).unwrap();
        assert_eq!(
            read(&d),
            Err(format!("read {}/dir-link: is a directory", d.display()))
        );
        fs::remove_file(d.join("dir-link")).unwrap();

        symlink("gone.yaml", d.join("dangling.yaml")).unwrap();
        assert_eq!(
            read(&d),
            Err(format!(
                "open {}/dangling.yaml: no such file or directory",
                d.display()
            ))
        );
    }

    #[test]
    fn the_named_directory_may_itself_be_a_link() {
        let tmp = tempdir();
        write(tmp.path(), "real/a.yaml", "A");
        symlink("a.yaml", tmp.path().join("real/b.yaml")).unwrap();
        symlink("real", tmp.path().join("via-link")).unwrap();
        assert_eq!(
            read(&tmp.path().join("via-link")),
            Ok("A\n---\nA\n---\n".into())
        );
    }

    #[test]
    fn bounds_are_errors() {
        let tmp = tempdir();
        let d = tmp.path();
        for i in 0..5 {
            write(d, &format!("f{i}.yaml"), "12345");
        }
        let dir = d.to_str().unwrap();
        let few = Limits {
            entries: 4,
            ..Limits::default()
        };
        assert!(
            read_templates(dir, few)
                .unwrap_err()
                .contains("xfn reads at most 4 files and directories")
        );
        // Five files of 5 bytes and five separators of 5: 50 bytes.
        let exact = Limits {
            bytes: 50,
            ..Limits::default()
        };
        assert_eq!(read_templates(dir, exact).map(|t| t.len()), Ok(50));
        let small = Limits {
            bytes: 49,
            ..Limits::default()
        };
        assert!(
            read_templates(dir, small)
                .unwrap_err()
                .contains("xfn reads at most 49 bytes of templates")
        );
        let deep = tempdir();
        write(deep.path(), "a/b/c/d.yaml", "D");
        let shallow = Limits {
            depth: 2,
            ..Limits::default()
        };
        let err = read_templates(deep.path().to_str().unwrap(), shallow).unwrap_err();
        assert!(err.contains("at most 2 directories deep"), "{err}");
        let enough = Limits {
            depth: 3,
            ..Limits::default()
        };
        assert_eq!(
            read_templates(deep.path().to_str().unwrap(), enough),
            Ok("D\n---\n".into())
        );
    }

    #[test]
    fn files_that_are_not_utf8_or_not_regular_are_refused() {
        let tmp = tempdir();
        fs::write(tmp.path().join("bin.yaml"), [0xff, 0xfe]).unwrap();
        assert!(read(tmp.path()).unwrap_err().contains("as UTF-8 text"));
        let fifo = tempdir();
        let made = std::process::Command::new("mkfifo")
            .arg(fifo.path().join("pipe"))
            .status();
        if made.is_ok_and(|s| s.success()) {
            assert!(
                read(fifo.path())
                    .unwrap_err()
                    .contains("regular files only")
            );
        }
    }

    #[test]
    fn fill_input_reads_only_a_filesystem_source_with_a_dir_path() {
        let tmp = tempdir();
        write(tmp.path(), "t.yaml", "T");
        let dir = tmp.path().to_str().unwrap();
        let input = serde_json::json!({
            "apiVersion": "gotemplating.fn.crossplane.io/v1beta1",
            "kind": "GoTemplate",
            "source": "FileSystem",
            "fileSystem": {"dirPath": dir, TEMPLATES_KEY: "forged", READ_ERROR_KEY: "forged"},
        });
        let filled: Value =
            serde_json::from_str(&fill_input(&input.to_string(), Limits::default()).unwrap())
                .unwrap();
        assert_eq!(
            filled["fileSystem"],
            serde_json::json!({"dirPath": dir, TEMPLATES_KEY: "T\n---\n"})
        );
        assert_eq!(filled["source"], "FileSystem");

        let missing =
            serde_json::json!({"source": "FileSystem", "fileSystem": {"dirPath": "/no/such/dir"}});
        let filled: Value =
            serde_json::from_str(&fill_input(&missing.to_string(), Limits::default()).unwrap())
                .unwrap();
        assert_eq!(
            filled["fileSystem"][READ_ERROR_KEY],
            "open /no/such/dir: no such file or directory"
        );

        let original =
            serde_json::json!({"source": "FileSystem", "fileSystem": {"dirPath": "/no/such/dir"}});
        let back: Value =
            serde_json::from_str(&original_input(&filled.to_string()).unwrap()).unwrap();
        assert_eq!(back, original);
        assert_eq!(original_input(&original.to_string()), None);

        for untouched in [
            serde_json::json!({"source": "Inline", "fileSystem": {"dirPath": dir}}),
            serde_json::json!({"source": "FileSystem"}),
            serde_json::json!({"source": "FileSystem", "fileSystem": {"dirPath": ""}}),
            serde_json::json!({"source": "FileSystem", "fileSystem": "x"}),
        ] {
            assert_eq!(fill_input(&untouched.to_string(), Limits::default()), None);
        }
        assert_eq!(fill_input("not json", Limits::default()), None);
    }
}
