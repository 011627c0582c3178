//! A Go `text/template` engine (Go 1.19 semantics): lexer, parser, executor
//! and the predefined functions, with Go's error texts.

pub mod builtins;
pub mod exec;
pub mod func;
pub mod lex;
pub mod node;
pub mod parse;
pub mod value;

use std::collections::{HashMap, HashSet};

pub use exec::{ExecError, MissingKey, Set};
pub use func::{Env, Func, FuncMap, Param};
pub use parse::ParseError;
pub use value::Value;

/// Parses `text` as the template `name` with the given delimiters (empty
/// for `{{`/`}}`), checking function names against `funcs` and
/// `unimplemented`.
pub fn parse<'f>(
    name: &str,
    text: &str,
    left: &str,
    right: &str,
    funcs: &'f FuncMap,
    unimplemented: &'f HashSet<&'static str>,
) -> Result<Set<'f>, ParseError> {
    let mut trees = HashMap::new();
    let has = |n: &str| funcs.contains_key(n) || unimplemented.contains(n);
    parse::parse(name, text, left, right, &has, &mut trees)?;
    Ok(Set {
        trees,
        text: text.to_string(),
        parse_name: name.to_string(),
        funcs,
        unimplemented,
        missing_key: MissingKey::Invalid,
    })
}

/// Applies Go's `Template.Option` strings (`missingkey=default|invalid|zero|error`);
/// an unknown option is Go's panic text.
pub fn apply_option(set: &mut Set<'_>, opt: &str) -> Result<(), String> {
    if opt.is_empty() {
        return Err("empty option string".into());
    }
    if let Some((k, v)) = opt.split_once('=')
        && k == "missingkey"
    {
        set.missing_key = match v {
            "invalid" | "default" => MissingKey::Invalid,
            "zero" => MissingKey::Zero,
            "error" => MissingKey::Error,
            _ => return Err(format!("unrecognized option: {opt}")),
        };
        return Ok(());
    }
    Err(format!("unrecognized option: {opt}"))
}
