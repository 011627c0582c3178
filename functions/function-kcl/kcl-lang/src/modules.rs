//! The modules of a program's packages: `import a.b.c`, `import .mod`,
//! resolved against files the caller gives (no file I/O here).
//!
//! A module is a `.k` file or a directory of `.k` files (all files of the
//! directory, `_test.k` files aside, form one module, as in KCL). An
//! absolute path `a.b.c` is looked up first in the importing module's own
//! package (`a/b/c.k`, then `a/b/c/`), then in the external package named
//! `a` (`b/c.k`, `b/c/` of that package; `import a` is its root
//! directory). A relative path (`.mod`, `..mod`) starts from the importing
//! module's directory, one level up per dot after the first. Each module
//! runs once, when first imported, in its own state; its names are then
//! read as `x.Name`, and its lambdas and schemas see its own globals.

use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

use crate::ast::Stmt;
use crate::error::{Error, eval_err};
use crate::eval::{Interp, ModState};
use crate::sources::SourceMap;

/// A package's files: paths relative to its root (`/`-separated, such as
/// `sub/mod.k`) to their text.
pub type Files = BTreeMap<String, String>;

/// The packages a program may import from.
#[derive(Debug, Clone, Default)]
pub struct Packages {
    /// The main package's files (the program's own directory): what its
    /// absolute and relative imports find first.
    pub main: Files,
    /// External packages (`kcl.mod` dependencies such as `k8s`), by name.
    pub external: BTreeMap<String, Files>,
}

/// How many files the packages of one run may hold, in all.
pub const MAX_FILES: usize = 20_000;

/// How many bytes of source the packages of one run may hold, in all.
pub const MAX_PACKAGE_BYTES: usize = 128 << 20;

/// How many modules one run may import (each runs once).
pub const MAX_MODULES: usize = 4096;

/// How deeply imports may nest (a module importing a module ...).
pub const MAX_IMPORT_DEPTH: usize = 64;

impl Packages {
    /// Checks the bounds on the files and their paths (relative, no `..`,
    /// no empty segment), so that a hostile set is refused before a run.
    pub fn check(&self) -> Result<(), Error> {
        let mut files = 0usize;
        let mut bytes = 0usize;
        for (pkg, set) in std::iter::once(("", &self.main))
            .chain(self.external.iter().map(|(name, set)| (name.as_str(), set)))
        {
            if !pkg.is_empty() && !is_name(pkg) {
                return limit(format!("invalid package name {pkg:?}"));
            }
            for (path, text) in set {
                files += 1;
                bytes = bytes.saturating_add(text.len());
                if path
                    .split('/')
                    .any(|s| s.is_empty() || s == "." || s == "..")
                    || path.contains('\\')
                {
                    return limit(format!("invalid file path {path:?} in package {pkg:?}"));
                }
            }
        }
        if files > MAX_FILES {
            return limit(format!(
                "the packages hold {files} files, more than {MAX_FILES}"
            ));
        }
        if bytes > MAX_PACKAGE_BYTES {
            return limit(format!(
                "the packages hold more than {MAX_PACKAGE_BYTES} bytes of source"
            ));
        }
        Ok(())
    }

    fn files(&self, pkg: &Option<String>) -> Option<&Files> {
        match pkg {
            None => Some(&self.main),
            Some(name) => self.external.get(name),
        }
    }

    /// The `.k` files directly in `dir` of a package (`""` is its root),
    /// sorted, `_test.k` files left out: a directory module's files.
    pub fn dir_files(files: &Files, dir: &str) -> Vec<String> {
        let prefix = if dir.is_empty() {
            String::new()
        } else {
            format!("{dir}/")
        };
        files
            .range(prefix.clone()..)
            .take_while(|(p, _)| p.starts_with(&prefix))
            .map(|(p, _)| p)
            .filter(|p| {
                let rest = &p[prefix.len()..];
                !rest.contains('/') && rest.ends_with(".k") && !rest.ends_with("_test.k")
            })
            .cloned()
            .collect()
    }
}

fn is_name(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

fn limit<T>(msg: String) -> Result<T, Error> {
    Err(Error::Limit { line: 0, msg })
}

/// Where a module is: its package (`None` for the main one) and its
/// directory in the package.
#[derive(Debug, Clone, Default)]
pub struct ModLoc {
    /// The package, `None` for the main one.
    pub package: Option<String>,
    /// The module's directory (`""` for the package root).
    pub dir: String,
}

/// The user modules of a run: their parked states and keys.
#[derive(Default)]
pub(crate) struct Registry {
    /// The files imports resolve against.
    pub packages: std::sync::Arc<Packages>,
    /// Each module's state while it is not running; the running module's
    /// slot is empty. Module 0 is the main program.
    pub states: Vec<ModState>,
    /// The running module.
    pub current: usize,
    /// Module keys (`@package:path`) to their ids; `None` while the module
    /// is being loaded (a cycle).
    pub ids: HashMap<Rc<str>, Option<usize>>,
    /// The import path each module was first imported as, by id.
    pub names: Vec<String>,
    /// How deeply imports nest now.
    pub depth: usize,
    /// The files parsed so far, by the lines they were given.
    pub sources: SourceMap,
}

impl Registry {
    /// A registry for a run over `packages`, with the main module as 0;
    /// `sources` has the main module's files.
    pub fn new(packages: std::sync::Arc<Packages>, sources: SourceMap) -> Registry {
        Registry {
            packages,
            sources,
            states: vec![ModState::default()],
            current: 0,
            ids: HashMap::new(),
            names: vec![String::new()],
            depth: 0,
        }
    }
}

/// A resolved module: its key, where it is, and its files.
struct Resolved {
    key: Rc<str>,
    loc: ModLoc,
    files: Vec<String>,
}

impl Interp {
    /// Imports the user module `path` (not a standard one) from the line
    /// `line`: runs it the first time, and gives its key.
    pub(crate) fn import_user_module(&mut self, path: &str, line: u32) -> Result<Rc<str>, Error> {
        let packages = self.mods.packages.clone();
        let from = self.importing_loc(line);
        let Some(r) = resolve(&packages, &from, path) else {
            return eval_err(
                format!(
                    "cannot find the module {path:?}: no such file or directory of .k files in \
                     the program's packages"
                ),
                line,
            );
        };
        match self.mods.ids.get(&r.key) {
            Some(Some(_)) => return Ok(r.key),
            Some(None) => {
                return eval_err(format!("module {path:?} imports itself (a cycle)"), line);
            }
            None => {}
        }
        if self.mods.states.len() >= MAX_MODULES {
            return Err(Error::Limit {
                line,
                msg: format!("the program imports more than {MAX_MODULES} modules"),
            });
        }
        if self.mods.depth >= MAX_IMPORT_DEPTH {
            return Err(Error::Limit {
                line,
                msg: format!("imports nest deeper than {MAX_IMPORT_DEPTH} modules"),
            });
        }
        let files = packages.files(&r.loc.package).ok_or_else(|| Error::Eval {
            line,
            msg: format!("module {path:?}: its package is missing"),
        })?;
        let mut prog: Vec<Stmt> = Vec::new();
        for f in &r.files {
            let text = files.get(f).map(String::as_str).unwrap_or_default();
            // The file's own lines: its errors name it (see `sources`).
            let first = self.mods.sources.add(r.loc.package.as_deref(), f, text)?;
            let stmts = crate::parser::parse_program_at(text, self.limits.max_stack_bytes, first)?;
            prog.extend(without_docstring(stmts));
        }
        self.mods.ids.insert(r.key.clone(), None);
        let id = self.mods.states.len();
        self.mods.states.push(ModState::with_loc(r.loc));
        self.mods.names.push(path.to_string());
        self.mods.depth += 1;
        let saved = std::mem::take(&mut self.locals);
        let res = self.in_module(id, |it| it.run_top(Rc::new(prog)));
        self.locals = saved;
        self.mods.depth -= 1;
        res?;
        self.mods.ids.insert(r.key.clone(), Some(id));
        Ok(r.key)
    }

    /// Where an import at `line` starts from: the directory of the file
    /// the line is in (the files of one module may come from several
    /// directories: a package's `entries`), or the running module's.
    fn importing_loc(&self, line: u32) -> ModLoc {
        match self.mods.sources.locate(line) {
            Some((file, _)) => ModLoc {
                package: file.package.clone(),
                dir: file.dir().to_string(),
            },
            None => self.module.loc.clone(),
        }
    }

    /// The id of a module key, and the import path it was first imported as.
    pub(crate) fn module_id(&self, key: &str) -> Option<(usize, &str)> {
        let id = (*self.mods.ids.get(key)?)?;
        Some((
            id,
            self.mods.names.get(id).map(String::as_str).unwrap_or(""),
        ))
    }
}

/// A file's statements without its docstring (a string first): the files
/// of a module run as one program, where only a first statement would be
/// taken as the docstring.
pub(crate) fn without_docstring(mut stmts: Vec<Stmt>) -> Vec<Stmt> {
    use crate::ast::{Expr, ExprKind, StmtKind};
    if let Some(Stmt {
        kind: StmtKind::Expr(Expr {
            kind: ExprKind::Str(_),
            ..
        }),
        ..
    }) = stmts.first()
    {
        stmts.remove(0);
    }
    stmts
}

/// Finds the module `path` imports from a module at `from`.
fn resolve(packages: &Packages, from: &ModLoc, path: &str) -> Option<Resolved> {
    let dots = path.chars().take_while(|&c| c == '.').count();
    let rest = &path[dots..];
    let segs: Vec<&str> = if rest.is_empty() {
        Vec::new()
    } else {
        rest.split('.').collect()
    };
    if segs.iter().any(|s| !is_name(s)) {
        return None;
    }
    if dots > 0 {
        // Relative to the importing module's directory.
        let mut dir: Vec<&str> = from.dir.split('/').filter(|s| !s.is_empty()).collect();
        for _ in 1..dots {
            dir.pop()?;
        }
        dir.extend(segs);
        return find(packages, &from.package, &dir);
    }
    if segs.is_empty() {
        return None;
    }
    find(packages, &from.package, &segs).or_else(|| {
        let pkg = Some(segs[0].to_string());
        find(packages, &pkg, &segs[1..])
    })
}

/// The module at `segs` of a package: `a/b.k`, or the directory `a/b/`.
fn find(packages: &Packages, pkg: &Option<String>, segs: &[&str]) -> Option<Resolved> {
    let files = packages.files(pkg)?;
    let p = segs.join("/");
    let key = |p: &str| -> Rc<str> { format!("@{}:{p}", pkg.as_deref().unwrap_or("")).into() };
    if !p.is_empty() {
        let file = format!("{p}.k");
        if files.contains_key(&file) {
            let dir = segs[..segs.len() - 1].join("/");
            return Some(Resolved {
                key: key(&file),
                loc: ModLoc {
                    package: pkg.clone(),
                    dir,
                },
                files: vec![file],
            });
        }
    }
    let in_dir = Packages::dir_files(files, &p);
    if in_dir.is_empty() {
        return None;
    }
    Some(Resolved {
        key: key(&format!("{p}/")),
        loc: ModLoc {
            package: pkg.clone(),
            dir: p,
        },
        files: in_dir,
    })
}
