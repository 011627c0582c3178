//! A Function's local wasm module (the `runtime-wasm-module` annotation or
//! `--function NAME=PATH`): where its path points, and whether the file is
//! a component xfn can run. `xfn render`, `xfn serve` and `xfn validate`
//! check modules here, so each reports a problem the same way.

use std::path::{Path, PathBuf};

use xfn_component::ComponentInfo;
use xfn_component::localfile::{self, Limit};

/// Where `given` points: itself if absolute, else joined to the current
/// directory (as every `xfn` command resolves it).
pub fn resolve(given: &Path) -> PathBuf {
    std::path::absolute(given).unwrap_or_else(|_| given.to_owned())
}

/// Why `given` names no file: the path tried and, for a relative path,
/// how it was resolved.
pub fn not_found(given: &Path) -> String {
    let tried = resolve(given);
    if given.is_absolute() {
        return format!("wasm module {:?} not found", given.display().to_string());
    }
    let cwd =
        std::env::current_dir().map_or_else(|_| String::from("?"), |d| d.display().to_string());
    format!(
        "wasm module {:?} not found at {:?}: a relative path is resolved against the current directory ({cwd}), \
         not the Functions file's directory; use an absolute path, or run xfn from the directory it is relative to",
        given.display().to_string(),
        tried.display().to_string(),
    )
}

/// Why `given` cannot be read as a module, if it can't: first of all,
/// when there is nothing there.
pub fn missing(given: &Path) -> Option<String> {
    std::fs::metadata(resolve(given))
        .err()
        .map(|e| read_error(given, &e))
}

/// Every problem of `missing` for `modules` (a Function's name and its
/// module's path), one line each, so that all are reported at once.
pub fn all_missing<'a>(modules: impl IntoIterator<Item = (&'a str, &'a Path)>) -> Vec<String> {
    modules
        .into_iter()
        .filter_map(|(function, module)| {
            missing(module).map(|reason| format!("Function {function:?}: {reason}"))
        })
        .collect()
}

/// The bytes of the module `given` names, bounded; a missing file is
/// reported with the path tried.
pub fn read(given: &Path) -> Result<Vec<u8>, String> {
    localfile::read(&resolve(given), Limit::WASM).map_err(|e| read_error(given, &e))
}

/// Why the module `given` names could not be read.
fn read_error(given: &Path, error: &std::io::Error) -> String {
    if error.kind() == std::io::ErrorKind::NotFound {
        return not_found(given);
    }
    format!(
        "cannot read wasm module {:?}: {error}",
        given.display().to_string()
    )
}

/// The outline of component `bytes`, if the host would try to run it:
/// a component (not a core module), within the sandbox's limits, that
/// exports xfn's `run-function`. Each refusal says what to do.
pub fn check_component(bytes: &[u8]) -> Result<ComponentInfo, String> {
    let outline = ComponentInfo::read(bytes)
        .map_err(|reason| format!("cannot compile component: {reason}"))?;
    if let Some(reason) = outline.sandbox_problem() {
        return Err(reason);
    }
    if let Some(reason) = outline.function_problem() {
        return Err(reason);
    }
    Ok(outline)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_relative_path_names_the_path_tried_and_why() {
        let cwd = std::env::current_dir().unwrap();
        let message = missing(Path::new("no/such/fn.wasm")).expect("missing");
        let tried = cwd.join("no/such/fn.wasm");
        assert!(
            message.contains(&format!("{:?}", tried.display().to_string())),
            "{message}"
        );
        assert!(
            message.contains("resolved against the current directory"),
            "{message}"
        );
        assert!(message.contains(&cwd.display().to_string()), "{message}");
        let absolute = missing(Path::new("/no/such/fn.wasm")).expect("missing");
        assert_eq!(absolute, "wasm module \"/no/such/fn.wasm\" not found");
        assert_eq!(read(Path::new("no/such/fn.wasm")).unwrap_err(), message);
    }

    #[test]
    fn a_core_module_and_a_component_without_the_export_are_explained() {
        let core = check_component(b"\0asm\x01\0\0\0").unwrap_err();
        assert!(
            core.contains("core wasm module") && core.contains("wasm32-wasip2"),
            "{core}"
        );
        let empty = wasm_encoder::Component::new().finish();
        let hint = check_component(&empty).unwrap_err();
        assert!(hint.contains("xfn_sdk::export!(YourFunction);"), "{hint}");
    }
}
