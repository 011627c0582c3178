//! The interpreter's errors.

use thiserror::Error;

/// An error of lexing, parsing or evaluating a KCL program.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum Error {
    /// The program is not valid KCL.
    #[error("{}", self.describe(&format!("line {line}")))]
    Syntax {
        /// The line (1-based).
        line: u32,
        /// What is wrong.
        msg: String,
    },
    /// The program uses a KCL feature this interpreter does not implement.
    #[error("{}", self.describe(&format!("line {line}")))]
    Unsupported {
        /// The feature.
        feature: String,
        /// The line (1-based).
        line: u32,
    },
    /// The program failed while it ran (a type error, a failed check or
    /// assert, a conflict of values, ...).
    #[error("{}", self.describe(&format!("line {line}")))]
    Eval {
        /// The line (1-based).
        line: u32,
        /// What went wrong.
        msg: String,
    },
    /// The program went past one of the interpreter's limits.
    #[error("{}", self.describe(&format!("line {line}")))]
    Limit {
        /// The line (1-based).
        line: u32,
        /// Which limit.
        msg: String,
    },
    /// An error in a file of the program's packages (an imported module's,
    /// or one of a package's main files), as opposed to the inline main
    /// program: `error` has its line in that file.
    #[error("{}", .error.describe(&at_file(file, package.as_deref(), .error.line())))]
    InFile {
        /// The file's path in its package (`models/foo.k`).
        file: String,
        /// The file's package, `None` for the main one.
        package: Option<String>,
        /// The error, with its line in the file.
        error: Box<Error>,
    },
}

/// Where an error in a file is: `models/foo.k:12`, and the package when
/// it is not the main one.
fn at_file(file: &str, package: Option<&str>, line: u32) -> String {
    match package {
        Some(p) => format!("{file}:{line} of package {p}"),
        None => format!("{file}:{line}"),
    }
}

impl Error {
    /// The line the error is at (in its file, when it has one; 0 when
    /// it is at no line).
    pub fn line(&self) -> u32 {
        match self {
            Error::Syntax { line, .. }
            | Error::Unsupported { line, .. }
            | Error::Eval { line, .. }
            | Error::Limit { line, .. } => *line,
            Error::InFile { error, .. } => error.line(),
        }
    }

    /// The file of the program's packages the error is in (`None` for the
    /// inline main program, or an error at no line).
    pub fn file(&self) -> Option<&str> {
        match self {
            Error::InFile { file, .. } => Some(file),
            _ => None,
        }
    }

    /// The error without its file: what kind of error it is.
    pub fn without_file(&self) -> &Error {
        match self {
            Error::InFile { error, .. } => error.without_file(),
            other => other,
        }
    }

    /// The unsupported feature, if this error is one.
    pub fn unsupported_feature(&self) -> Option<&str> {
        match self.without_file() {
            Error::Unsupported { feature, .. } => Some(feature),
            _ => None,
        }
    }

    /// The same error at another line.
    pub(crate) fn with_line(self, at: u32) -> Error {
        match self {
            Error::Syntax { msg, .. } => Error::Syntax { line: at, msg },
            Error::Unsupported { feature, .. } => Error::Unsupported { feature, line: at },
            Error::Eval { msg, .. } => Error::Eval { line: at, msg },
            Error::Limit { msg, .. } => Error::Limit { line: at, msg },
            Error::InFile {
                file,
                package,
                error,
            } => Error::InFile {
                file,
                package,
                error: Box::new(error.with_line(at)),
            },
        }
    }

    /// The error's text with its place given as `at` (`line 3`,
    /// `models/foo.k:3`).
    fn describe(&self, at: &str) -> String {
        match self {
            Error::Syntax { msg, .. } => format!("syntax error at {at}: {msg}"),
            Error::Unsupported { feature, .. } => format!("unsupported: {feature} at {at}"),
            Error::Eval { msg, .. } => format!("evaluation error at {at}: {msg}"),
            Error::Limit { msg, .. } => format!("limit exceeded at {at}: {msg}"),
            Error::InFile { error, .. } => error.describe(at),
        }
    }
}

/// Shorthand for an unsupported feature.
pub(crate) fn unsupported<T>(feature: impl Into<String>, line: u32) -> Result<T, Error> {
    Err(Error::Unsupported {
        feature: feature.into(),
        line,
    })
}

/// Shorthand for an evaluation error.
pub(crate) fn eval_err<T>(msg: impl Into<String>, line: u32) -> Result<T, Error> {
    Err(Error::Eval {
        msg: msg.into(),
        line,
    })
}
