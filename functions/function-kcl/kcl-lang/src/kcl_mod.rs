//! Which files form the program of a package that runs as `kcl run DIR`
//! does: those its `kcl.mod` lists as `[profile] entries`, or, without
//! entries, the `.k` files of its root directory.
//!
//! How entries resolve is kpm's and KCL's (kpm's `applyCompileOptions`,
//! KCL's `get_compile_entries_from_paths`), checked against the reference
//! in `tests/differential.rs`:
//!
//! - an entry is a path relative to the package root (`main.k`,
//!   `sub/extra.k`), or one that starts with `${KCL_MOD}/`, the root;
//! - an entry that is a directory stands for its `.k` files (not those of
//!   its subdirectories, `_test.k` files aside), in the order of their names;
//! - the files are compiled in the order of the entries, each once, as one
//!   module (the main one); files not listed are not part of the program
//!   (a module may still import them);
//! - `entries = []`, no `[profile]` or no `kcl.mod`: the root's `.k` files.
//!
//! What xfn-kcl refuses: an entry that leaves the package root (`..`
//! beyond it, an absolute path) or that names no `.k` file or directory of
//! the package, with an error naming it (the reference skips a missing
//! entry when another one exists; kpm joins any path to the root). An
//! entry of another package (`${name:KCL_MOD}/...`), a settings file
//! (`kcl.yaml`, which kpm reads as compile settings) or a glob pattern is
//! an unsupported feature, and so are the other `[profile]` settings kpm
//! applies (`sort_keys`, `disable_none`, `selectors`, `overrides`,
//! `arguments`) when they would change the output.

use crate::error::Error;
use crate::modules::{Files, Packages};

/// The name of a package's manifest.
pub const KCL_MOD: &str = "kcl.mod";

/// How many entries `[profile] entries` may list.
pub const MAX_ENTRIES: usize = 10_000;

/// The files (paths in the package, in order) that form the program of the
/// package `files`.
pub(crate) fn program_files(files: &Files) -> Result<Vec<String>, Error> {
    let entries = match files.get(KCL_MOD) {
        Some(text) => profile_entries(text)?,
        None => Vec::new(),
    };
    if entries.is_empty() {
        let root = Packages::dir_files(files, "");
        if root.is_empty() {
            return Err(Error::Eval {
                line: 0,
                msg: "the package has no .k file at its root".into(),
            });
        }
        return Ok(root);
    }
    // Each path once: a directory listed again is not expanded again, and a
    // file that came with a directory is not added twice.
    let mut resolved = std::collections::HashSet::new();
    let mut out: Vec<String> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for entry in &entries {
        let path = resolve(entry)?;
        if !resolved.insert(path.clone()) {
            continue;
        }
        for f in entry_files(files, entry, &path)? {
            if seen.insert(f.clone()) {
                out.push(f);
            }
        }
    }
    Ok(out)
}

/// One entry of `[profile] entries`, and its line in `kcl.mod`.
struct Entry {
    text: String,
    line: u32,
}

impl Entry {
    /// An error about this entry, located at its line of `kcl.mod`.
    fn error(&self, msg: String) -> Error {
        in_kcl_mod(Error::Eval {
            line: self.line,
            msg: format!("[profile] entries: the entry {:?} {msg}", self.text),
        })
    }

    /// An unsupported feature of this entry.
    fn unsupported(&self, feature: &str) -> Error {
        in_kcl_mod(Error::Unsupported {
            feature: format!("{feature} in kcl.mod [profile] entries ({:?})", self.text),
            line: self.line,
        })
    }
}

/// An error of `kcl.mod`, which names it.
fn in_kcl_mod(e: Error) -> Error {
    Error::InFile {
        file: KCL_MOD.into(),
        package: None,
        error: Box::new(e),
    }
}

/// The line of byte `at` of `text`.
fn line_of(text: &str, at: usize) -> u32 {
    let before = text.get(..at).unwrap_or(text);
    u32::try_from(before.matches('\n').count()).map_or(u32::MAX, |n| n.saturating_add(1))
}

/// The `[profile] entries` of a `kcl.mod` text (empty without them).
fn profile_entries(text: &str) -> Result<Vec<Entry>, Error> {
    let invalid = |line: u32, msg: String| {
        in_kcl_mod(Error::Eval {
            line,
            msg: format!("invalid kcl.mod: {msg}"),
        })
    };
    let doc = toml_edit::Document::parse(text).map_err(|e| {
        let line = e.span().map_or(0, |s| line_of(text, s.start));
        invalid(line, e.message().to_string())
    })?;
    let Some(profile) = doc.as_table().get("profile") else {
        return Ok(Vec::new());
    };
    let line = |span: Option<std::ops::Range<usize>>| span.map_or(0, |s| line_of(text, s.start));
    let Some(profile) = profile.as_table_like() else {
        return Err(invalid(
            line(profile.span()),
            "[profile] is not a table".into(),
        ));
    };
    check_other_settings(profile, text)?;
    let Some(entries) = profile.get("entries") else {
        return Ok(Vec::new());
    };
    let Some(list) = entries.as_array() else {
        return Err(invalid(
            line(entries.span()),
            "[profile] entries is not a list of strings".into(),
        ));
    };
    if list.len() > MAX_ENTRIES {
        return Err(in_kcl_mod(Error::Limit {
            line: line(list.span()),
            msg: format!("[profile] entries lists more than {MAX_ENTRIES} entries"),
        }));
    }
    list.iter()
        .map(|v| match v.as_str() {
            Some(s) => Ok(Entry {
                text: s.to_string(),
                line: line(v.span()),
            }),
            None => Err(invalid(
                line(v.span()),
                format!("[profile] entries: {} is not a string", v.type_name()),
            )),
        })
        .collect()
}

/// Refuses the `[profile]` settings besides `entries` that kpm applies and
/// that would change the output (`sort_keys = true`, a non-empty
/// `overrides`, ...): xfn-kcl does not apply them. Settings that change
/// nothing (`false`, `[]`) and keys kpm does not know pass.
fn check_other_settings(profile: &dyn toml_edit::TableLike, text: &str) -> Result<(), Error> {
    const FLAGS: [&str; 2] = ["disable_none", "sort_keys"];
    const LISTS: [&str; 3] = ["selectors", "overrides", "arguments"];
    for (key, item) in profile.iter() {
        let in_effect = if FLAGS.contains(&key) {
            item.as_bool() != Some(false)
        } else if LISTS.contains(&key) {
            item.as_array().is_none_or(|a| !a.is_empty())
        } else {
            false
        };
        if in_effect {
            let line = item.span().map_or(0, |s| line_of(text, s.start));
            return Err(in_kcl_mod(Error::Unsupported {
                feature: format!("kcl.mod [profile] {key}"),
                line,
            }));
        }
    }
    Ok(())
}

/// The path in the package an entry names (`""` for its root).
fn resolve(entry: &Entry) -> Result<String, Error> {
    let text = entry.text.as_str();
    let path = if let Some(rest) = text.strip_prefix("${KCL_MOD}") {
        rest
    } else if text.starts_with("${") && text.contains(":KCL_MOD}") {
        return Err(entry.unsupported("an entry of another package (${name:KCL_MOD})"));
    } else {
        text
    };
    if path.ends_with(".yaml") || path.ends_with(".yml") {
        return Err(entry.unsupported("a settings file (kcl.yaml)"));
    }
    if path.contains(['*', '?', '[']) {
        return Err(entry.unsupported("a glob pattern"));
    }
    if path.starts_with('/') && !text.starts_with("${KCL_MOD}") {
        return Err(entry.error("leaves the package root (an absolute path)".into()));
    }
    if path.contains('\\') {
        return Err(entry.error("is not a /-separated path".into()));
    }
    // Resolve `.` and `..` within the package.
    let mut segs: Vec<&str> = Vec::new();
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                if segs.pop().is_none() {
                    return Err(entry.error("leaves the package root".into()));
                }
            }
            s => segs.push(s),
        }
    }
    Ok(segs.join("/"))
}

/// The files entry `entry`, whose path is `resolved`, stands for.
fn entry_files(files: &Files, entry: &Entry, resolved: &str) -> Result<Vec<String>, Error> {
    if resolved.ends_with(".k") && files.contains_key(resolved) {
        return Ok(vec![resolved.to_string()]);
    }
    let in_dir = Packages::dir_files(files, resolved);
    if !in_dir.is_empty() {
        return Ok(in_dir);
    }
    let prefix = format!("{resolved}/");
    let is_dir = files
        .range(prefix.clone()..)
        .next()
        .is_some_and(|(f, _)| f.starts_with(&prefix));
    if !resolved.is_empty() && is_dir {
        return Err(entry.error("is a directory with no .k file".into()));
    }
    Err(entry.error("names no .k file or directory of the package".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn package(kcl_mod: &str, names: &[&str]) -> Files {
        names
            .iter()
            .map(|n| (n.to_string(), String::new()))
            .chain(std::iter::once((KCL_MOD.to_string(), kcl_mod.to_string())))
            .collect()
    }

    #[test]
    fn entries_resolve_in_their_order_each_once() {
        let files = package(
            "[package]\nname = \"p\"\n\n[profile]\nentries = [\n  \"b.k\",\n  \"${KCL_MOD}/sub/../a.k\",\n  \"./dir\",\n  \"a.k\",\n]\n",
            &[
                "a.k",
                "b.k",
                "z.k",
                "dir/y.k",
                "dir/x.k",
                "dir/x_test.k",
                "dir/deep/w.k",
            ],
        );
        assert_eq!(
            program_files(&files).unwrap(),
            ["b.k", "a.k", "dir/x.k", "dir/y.k"]
        );
    }

    #[test]
    fn a_directory_listed_many_times_is_expanded_once() {
        let names: Vec<String> = (0..2000).map(|i| format!("dir/f{i:04}.k")).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let list = vec!["\"dir\""; MAX_ENTRIES].join(", ");
        let files = package(&format!("[profile]\nentries = [{list}]\n"), &refs);
        let start = std::time::Instant::now();
        assert_eq!(program_files(&files).unwrap(), names);
        assert!(start.elapsed() < std::time::Duration::from_secs(5));
        let too_many = vec!["\"dir\""; MAX_ENTRIES + 1].join(", ");
        let files = package(&format!("[profile]\nentries = [{too_many}]\n"), &refs);
        let err = program_files(&files).unwrap_err();
        assert!(matches!(err.without_file(), Error::Limit { .. }), "{err}");
    }

    #[test]
    fn without_entries_the_root_files_run() {
        for kcl_mod in ["[package]\nname = \"p\"\n", "[profile]\nentries = []\n"] {
            let files = package(kcl_mod, &["b.k", "a.k", "sub/c.k"]);
            assert_eq!(program_files(&files).unwrap(), ["a.k", "b.k"], "{kcl_mod}");
        }
    }

    #[test]
    fn bad_entries_are_errors_naming_them_and_their_line() {
        let cases = [
            ("\"../up.k\"", "\"../up.k\" leaves the package root"),
            ("\"/etc/x.k\"", "\"/etc/x.k\" leaves the package root"),
            ("\"${KCL_MOD}/../x.k\"", "leaves the package root"),
            ("\"nope.k\"", "\"nope.k\" names no .k file or directory"),
            ("\"empty\"", "\"empty\" is a directory with no .k file"),
            ("1", "integer is not a string"),
            ("\"a\\\\b.k\"", "is not a /-separated path"),
        ];
        for (entry, want) in cases {
            let text =
                format!("[package]\nname = \"p\"\n[profile]\nentries = [\"a.k\",\n {entry}]\n");
            let files = package(&text, &["a.k", "empty/readme.k.txt"]);
            let err = program_files(&files).unwrap_err();
            assert_eq!(
                (err.file(), err.line()),
                (Some(KCL_MOD), 5),
                "{entry}: {err}"
            );
            assert!(err.to_string().contains(want), "{entry}: {err}");
        }
    }

    #[test]
    fn other_kinds_of_entries_are_unsupported() {
        for entry in ["${k8s:KCL_MOD}/main.k", "kcl.yaml", "*.k"] {
            let text = format!("[profile]\nentries = [{entry:?}]\n");
            let err = program_files(&package(&text, &["a.k"])).unwrap_err();
            let feature = err.unsupported_feature().unwrap_or_default();
            assert!(feature.contains(entry), "{entry}: {err}");
        }
    }

    #[test]
    fn other_profile_settings_in_effect_are_unsupported() {
        for (setting, in_effect) in [
            ("sort_keys = true", true),
            ("disable_none = true", true),
            ("overrides = [\"a=1\"]", true),
            ("arguments = [\"env=prod\"]", true),
            ("selectors = [\"a\"]", true),
            ("sort_keys = false", false),
            ("overrides = []", false),
            ("something_else = 1", false),
        ] {
            let text = format!("[profile]\n{setting}\nentries = [\"a.k\"]\n");
            let got = program_files(&package(&text, &["a.k"]));
            match got {
                Err(e) if in_effect => {
                    let name = setting.split(' ').next().unwrap_or_default();
                    assert_eq!(
                        e.unsupported_feature(),
                        Some(format!("kcl.mod [profile] {name}").as_str()),
                        "{setting}"
                    );
                    assert_eq!((e.file(), e.line()), (Some(KCL_MOD), 2), "{setting}");
                }
                Ok(files) if !in_effect => assert_eq!(files, ["a.k"], "{setting}"),
                other => panic!("{setting}: {other:?}"),
            }
        }
    }

    #[test]
    fn an_invalid_kcl_mod_is_an_error() {
        for text in [
            "[profile\n",
            "[profile]\nentries = \"main.k\"\n",
            "profile = 1\n",
        ] {
            let err = program_files(&package(text, &["a.k"])).unwrap_err();
            assert!(err.to_string().contains("invalid kcl.mod"), "{text}: {err}");
            assert_eq!(err.file(), Some(KCL_MOD));
        }
    }
}
