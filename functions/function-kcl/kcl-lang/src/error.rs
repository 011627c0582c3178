//! The interpreter's errors.

use thiserror::Error;

/// An error of lexing, parsing or evaluating a KCL program.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum Error {
    /// The program is not valid KCL.
    #[error("syntax error at line {line}: {msg}")]
    Syntax {
        /// The line (1-based).
        line: u32,
        /// What is wrong.
        msg: String,
    },
    /// The program uses a KCL feature this interpreter does not implement.
    #[error("unsupported: {feature} at line {line}")]
    Unsupported {
        /// The feature.
        feature: String,
        /// The line (1-based).
        line: u32,
    },
    /// The program failed while it ran (a type error, a failed check or
    /// assert, a conflict of values, ...).
    #[error("evaluation error at line {line}: {msg}")]
    Eval {
        /// The line (1-based).
        line: u32,
        /// What went wrong.
        msg: String,
    },
    /// The program went past one of the interpreter's limits.
    #[error("limit exceeded at line {line}: {msg}")]
    Limit {
        /// The line (1-based).
        line: u32,
        /// Which limit.
        msg: String,
    },
}

impl Error {
    /// The line the error is at.
    pub fn line(&self) -> u32 {
        match self {
            Error::Syntax { line, .. }
            | Error::Unsupported { line, .. }
            | Error::Eval { line, .. }
            | Error::Limit { line, .. } => *line,
        }
    }

    /// The unsupported feature, if this error is one.
    pub fn unsupported_feature(&self) -> Option<&str> {
        match self {
            Error::Unsupported { feature, .. } => Some(feature),
            _ => None,
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
