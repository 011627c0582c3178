//! `xfn-kcl`: an interpreter of KCL, the configuration language, written
//! for xfn's function-kcl. It follows the language of KCL v0.12.3 (the
//! `kcl-lang.io/lib` that function-kcl v0.12.2 embeds) and runs natively and
//! in `wasm32-wasip2`.
//!
//! What it does not implement fails with [`Error::Unsupported`], naming the
//! feature and the line, never with a wrong value. Every run is bounded by
//! [`Limits`]: steps, call depth, string and collection sizes, and the
//! nesting of the source.
//!
//! ```
//! let out = xfn_kcl::run("a = 1\nb = {x: a + 1}\n", &xfn_kcl::RunOptions::default()).unwrap();
//! assert_eq!(out.values["b"].canonical(), r#"{"x":2}"#);
//! ```

mod ast;
mod builtins;
mod error;
mod eval;
mod kcl_mod;
mod lexer;
mod modules;
mod parser;
mod sources;
mod stack;
mod stdlib;
mod value;
mod yaml;

use std::collections::HashMap;

use sources::SourceMap;

pub use error::Error;
pub use eval::Limits;
pub use kcl_mod::MAX_ENTRIES;
pub use modules::{Files, MAX_FILES, MAX_IMPORT_DEPTH, MAX_MODULES, MAX_PACKAGE_BYTES, Packages};
pub use value::{Dict, Map, Value};

/// How large the program's output may be, as text.
pub const MAX_OUTPUT_BYTES: usize = 64 << 20;

/// How deeply the program's output may nest.
pub const MAX_OUTPUT_DEPTH: usize = 1000;

/// The KCL version whose language this interpreter follows.
pub const KCL_VERSION: &str = "0.12.3";

/// What a run is given besides the source.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// The values `option(key)` returns.
    pub options: HashMap<String, Value>,
    /// The run's bounds.
    pub limits: Limits,
    /// The files `import` resolves against: the main package's own and
    /// external packages (empty: only the standard modules).
    pub packages: std::sync::Arc<Packages>,
}

/// What a run produced.
#[derive(Debug, Clone)]
pub struct Output {
    /// The program's public top-level values, in the order they were set.
    pub values: Map,
    /// What `print()` wrote.
    pub printed: String,
    /// When the program's output is a top-level list expression, its
    /// elements: a stream of YAML documents (then `values` is empty).
    pub stream: Option<Vec<Value>>,
}

/// Parses and runs a program: `src` is the main file, at the root of the
/// main package of `opts.packages`. Its errors give their line; those of
/// the modules it imports, their file and line ([`Error::InFile`]).
pub fn run(src: &str, opts: &RunOptions) -> Result<Output, Error> {
    let prog = parser::parse_program(src, opts.limits.max_stack_bytes)?;
    // The imported modules' files are numbered after the program's lines.
    let lines = u32::try_from(src.matches('\n').count()).unwrap_or(u32::MAX);
    run_parsed(prog, opts, SourceMap::after(lines.saturating_add(1)))
}

/// Runs the main package of `opts.packages` as `kcl run` of a package
/// directory does: the files its `kcl.mod` lists as `[profile] entries`,
/// in that order, or without entries its root directory's `.k` files
/// (`_test.k` aside) in the order of their names, as one module (see
/// `kcl_mod.rs` for how entries resolve). Its errors give their file and
/// line ([`Error::InFile`]).
pub fn run_package(opts: &RunOptions) -> Result<Output, Error> {
    opts.packages.check()?;
    let files = kcl_mod::program_files(&opts.packages.main)?;
    let mut sources = SourceMap::after(0);
    let mut prog = Vec::new();
    for f in files {
        let text = opts.packages.main.get(&f).map(String::as_str).unwrap_or("");
        let first = sources.add(None, &f, text)?;
        let stmts = parser::parse_program_at(text, opts.limits.max_stack_bytes, first)
            .map_err(|e| sources.locate_error(e))?;
        prog.extend(modules::without_docstring(stmts));
    }
    run_parsed(prog, opts, sources)
}

/// Runs a parsed main module; `sources` has its files (none for an
/// inline program).
fn run_parsed(
    prog: Vec<ast::Stmt>,
    opts: &RunOptions,
    sources: SourceMap,
) -> Result<Output, Error> {
    opts.packages.check()?;
    let mut it = eval::Interp::new(opts.options.clone(), opts.limits.clone());
    it.mods = modules::Registry::new(opts.packages.clone(), sources);
    let values = it
        .run(std::rc::Rc::new(prog))
        .map_err(|e| it.mods.sources.locate_error(e))?;
    // The output is walked recursively (JSON, YAML): bound its nesting.
    for (k, v) in &values {
        if v.text_size(MAX_OUTPUT_BYTES) > MAX_OUTPUT_BYTES {
            return Err(Error::Limit {
                line: 0,
                msg: format!("the value of {k:?} is larger than {MAX_OUTPUT_BYTES} bytes as text"),
            });
        }
        if v.depth(MAX_OUTPUT_DEPTH) > MAX_OUTPUT_DEPTH {
            return Err(Error::Limit {
                line: 0,
                msg: format!("the value of {k:?} nests deeper than {MAX_OUTPUT_DEPTH} levels"),
            });
        }
    }
    Ok(Output {
        values,
        printed: std::mem::take(&mut it.printed),
        stream: it.module.stream.take().map(|(docs, _)| docs),
    })
}

/// Parses a program without running it (a syntax check).
pub fn check_syntax(src: &str) -> Result<(), Error> {
    parser::parse_program(src, stack::DEFAULT_STACK_BUDGET).map(|_| ())
}
