//! Output state of go-yaml's emitter: the column, the indentation stack and
//! the whitespace/indentation flags that decide where spaces and line breaks
//! go.

/// Spaces per indentation level.
const BEST_INDENT: isize = 2;
/// The column after which scalars fold at the next space.
pub(crate) const BEST_WIDTH: usize = 80;

/// Text written so far and the emitter state that depends on it.
pub(crate) struct Emitter {
    out: String,
    /// Characters written on the current line.
    pub column: usize,
    /// The last character written was whitespace (or nothing yet).
    pub whitespace: bool,
    /// Only indentation has been written on the current line.
    pub indention: bool,
    indent: isize,
    indents: Vec<isize>,
}

impl Emitter {
    /// State at the start of a document.
    pub(crate) fn new() -> Self {
        Self {
            out: String::new(),
            column: 0,
            whitespace: true,
            indention: true,
            indent: -1,
            indents: Vec::new(),
        }
    }

    /// The text written so far.
    pub(crate) fn into_output(self) -> String {
        self.out
    }

    /// Pushes an indentation level: flow and scalar content indents by one
    /// step, an indentless sequence keeps the current level.
    pub(crate) fn increase_indent(&mut self, flow: bool, indentless: bool) {
        self.indents.push(self.indent);
        if self.indent < 0 {
            self.indent = if flow { BEST_INDENT } else { 0 };
        } else if !indentless {
            self.indent += BEST_INDENT;
        }
    }

    /// Pops the indentation level pushed last.
    pub(crate) fn decrease_indent(&mut self) {
        self.indent = self.indents.pop().unwrap_or(-1);
    }

    /// Writes one character (never a line break).
    pub(crate) fn put(&mut self, c: char) {
        self.out.push(c);
        self.column += 1;
    }

    /// Starts a new line.
    pub(crate) fn put_break(&mut self) {
        self.out.push('\n');
        self.column = 0;
    }

    /// Copies a line-break character from a scalar: LF starts a new line,
    /// the others are written as they are and reset the column.
    pub(crate) fn write_break(&mut self, c: char) {
        if c == '\n' {
            self.put_break();
        } else {
            self.out.push(c);
            self.column = 0;
        }
    }

    /// Moves to the current indentation, on a new line unless only
    /// indentation has been written so far.
    pub(crate) fn write_indent(&mut self) {
        let indent = usize::try_from(self.indent).unwrap_or(0);
        if !self.indention || self.column > indent || (self.column == indent && !self.whitespace) {
            self.put_break();
        }
        while self.column < indent {
            self.put(' ');
        }
        self.whitespace = true;
        self.indention = true;
    }

    /// Writes an indicator such as `-`, `:` or `'`, preceded by a space when
    /// `need_whitespace` and the last character was not whitespace.
    pub(crate) fn write_indicator(
        &mut self,
        indicator: &str,
        need_whitespace: bool,
        is_whitespace: bool,
        is_indention: bool,
    ) {
        if need_whitespace && !self.whitespace {
            self.put(' ');
        }
        for c in indicator.chars() {
            self.put(c);
        }
        self.whitespace = is_whitespace;
        self.indention = self.indention && is_indention;
    }
}

#[cfg(test)]
mod tests {
    use super::Emitter;

    #[test]
    fn indicators_and_indent() {
        let mut e = Emitter::new();
        e.increase_indent(false, false);
        e.write_indent();
        e.write_indicator("-", true, false, true);
        e.increase_indent(false, false);
        e.write_indent();
        e.write_indicator("-", true, false, true);
        assert_eq!(e.into_output(), "- -");
    }
}
