//! Which file each line of a run comes from.
//!
//! The files of a run's packages are numbered in one sequence of lines:
//! each file parsed gets lines of its own, after those of the files before
//! it (and after the inline main program's, which keep their own numbers).
//! An error carries one line; at the end of the run, [`SourceMap::locate`]
//! turns it back into the file and the line in that file, so that an error
//! raised in an imported module names the module's file, as KCL does.

use crate::error::Error;

/// One file's place in the run's numbering of lines.
#[derive(Debug, Clone)]
pub(crate) struct SourceFile {
    /// The run's number of the file's first line.
    first: u32,
    /// The run's number of the file's last line.
    last: u32,
    /// The file's package, `None` for the main one.
    pub package: Option<String>,
    /// The file's path in its package (`models/foo.k`).
    pub path: String,
}

impl SourceFile {
    /// The directory of the file in its package (`""` for its root).
    pub fn dir(&self) -> &str {
        self.path.rsplit_once('/').map_or("", |(dir, _)| dir)
    }
}

/// The files of a run, by the lines they were given.
#[derive(Debug, Clone, Default)]
pub(crate) struct SourceMap {
    /// In the order they were added: their lines increase.
    files: Vec<SourceFile>,
    /// The line the next file starts at.
    next: u32,
}

impl SourceMap {
    /// A map whose files are numbered after the first `reserved` lines
    /// (the inline main program's, whose errors name no file).
    pub fn after(reserved: u32) -> SourceMap {
        SourceMap {
            files: Vec::new(),
            next: reserved.saturating_add(1),
        }
    }

    /// Gives file `path` of `package`, whose text is `text`, its lines:
    /// the number its first line has in the run.
    pub fn add(&mut self, package: Option<&str>, path: &str, text: &str) -> Result<u32, Error> {
        let first = self.next;
        let count = u32::try_from(text.matches('\n').count()).unwrap_or(u32::MAX);
        // The line after the last newline too (where the end of the file
        // is reported), and one line apart from the next file.
        let last = first.checked_add(count).filter(|l| *l < u32::MAX - 1);
        let Some(last) = last else {
            return Err(Error::Limit {
                line: 0,
                msg: "the program's files hold more than 4294967294 lines in all".into(),
            });
        };
        self.next = last + 1;
        self.files.push(SourceFile {
            first,
            last,
            package: package.map(str::to_string),
            path: path.to_string(),
        });
        Ok(first)
    }

    /// The file run line `line` is in, and the line's number in that file.
    pub fn locate(&self, line: u32) -> Option<(&SourceFile, u32)> {
        let i = self.files.partition_point(|f| f.first <= line);
        let file = self.files.get(i.checked_sub(1)?)?;
        (line <= file.last).then(|| (file, line - file.first + 1))
    }

    /// `e` with the file its line is in and its line in that file (an
    /// error of the inline main program, or with no line, as it is).
    pub fn locate_error(&self, e: Error) -> Error {
        if let Error::InFile { .. } = e {
            return e;
        }
        let Some((file, line)) = self.locate(e.line()) else {
            return e;
        };
        Error::InFile {
            file: file.path.clone(),
            package: file.package.clone(),
            error: Box::new(e.with_line(line)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_map_back_to_their_files() {
        let mut map = SourceMap::after(3);
        assert_eq!(map.add(None, "main.k", "a = 1\nb = 2\n").unwrap(), 4);
        assert_eq!(
            map.add(Some("k8s"), "api/pod.k", "x = 1").unwrap(),
            7,
            "main.k has lines 4 to 6 (the one after its last newline included)"
        );
        assert!(map.locate(3).is_none(), "the inline program's lines");
        assert!(map.locate(0).is_none());
        let (f, l) = map.locate(5).unwrap();
        assert_eq!((f.path.as_str(), l), ("main.k", 2));
        let (f, l) = map.locate(7).unwrap();
        assert_eq!(
            (f.path.as_str(), f.package.as_deref(), l),
            ("api/pod.k", Some("k8s"), 1)
        );
        assert_eq!(f.dir(), "api");
        assert!(map.locate(8).is_none());
    }

    #[test]
    fn an_error_is_located_in_its_file() {
        let mut map = SourceMap::after(0);
        map.add(None, "main.k", "a = 1\n").unwrap();
        map.add(None, "models/foo.k", "x = 1\ny = 2\n").unwrap();
        let e = map.locate_error(Error::Eval {
            line: 4,
            msg: "boom".into(),
        });
        assert_eq!(e.to_string(), "evaluation error at models/foo.k:2: boom");
        assert_eq!((e.file(), e.line()), (Some("models/foo.k"), 2));
        let no_line = Error::Limit {
            line: 0,
            msg: "steps".into(),
        };
        assert_eq!(map.locate_error(no_line.clone()), no_line);
    }
}
