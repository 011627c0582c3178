//! Field paths over JSON objects, with the syntax and semantics of
//! crossplane-runtime's `pkg/fieldpath`.
//!
//! A field path names a value inside a Kubernetes object:
//!
//! * `metadata.name`, `spec.containers[0].name`, `spec.items[0][8]`, `[42]`;
//! * bracketed names may contain periods: `data[.config.yml]`,
//!   `metadata.annotations['crossplane.io/external-name']` (leading and
//!   trailing `'` and `"` are trimmed);
//! * bracket content that is an unsigned 32-bit decimal is an array index,
//!   anything else a field name; `a.0` is the field `"0"`;
//! * `*` is an ordinary field name except to [`expand_wildcards`].
//!
//! [`get`] reads, [`set`] writes (creating what is missing on the way, as
//! crossplane-runtime does), [`merge_value`] merges with the semantics of
//! `Paved.MergeValue` (mergo), [`delete`] removes. Error messages are the
//! ones crossplane-runtime produces, and [`FieldPathError::is_not_found`]
//! tells a missing field from a type mismatch, like `fieldpath.IsNotFound`.
//!
//! Numbers: Go keeps `int64` and `float64` apart. serde_json does too (a
//! number made from an `i64` is not equal to one made from an `f64`), and
//! this module relies on that: [`set`] and [`merge_value`] normalise the value
//! they write as the Kubernetes JSON decoder would, so integral floats become
//! integers, exactly as crossplane-runtime's `SetValue` does.

use std::fmt;

use serde_json::{Map, Number, Value};

/// The largest array index [`set`] accepts (crossplane-runtime's `DefaultMaxFieldPathIndex`).
pub const MAX_FIELD_PATH_INDEX: u32 = 1024;

const WILDCARD: &str = "*";

static NULL: Value = Value::Null;

/// What kind of problem a [`FieldPathError`] is.
///
/// ```
/// use xfn_sdk::fieldpath::{self, ErrorKind};
/// let obj = serde_json::json!({"spec": {"replicas": 3}});
/// let missing = fieldpath::get(&obj, "spec.size").unwrap_err();
/// assert_eq!(missing.kind(), ErrorKind::NotFound);
/// let unparsable = fieldpath::get(&obj, "spec..size").unwrap_err();
/// assert_eq!(unparsable.kind(), ErrorKind::Parse);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The path does not parse.
    Parse,
    /// A field, element or wildcard parent does not exist
    /// (crossplane-runtime's `IsNotFound`).
    NotFound,
    /// The object does not have the shape the path needs, or the value cannot be written.
    Invalid,
}

/// A field path that could not be parsed, read or written.
///
/// The message is crossplane-runtime's, e.g. `spec.x: no such field` or
/// `cannot parse path "a..b": unexpected '.' at position 2`.
///
/// ```
/// use xfn_sdk::fieldpath;
/// let obj = serde_json::json!({"spec": {}});
/// let err = fieldpath::get(&obj, "spec.size").unwrap_err();
/// assert!(err.is_not_found());
/// let wrapped = err.wrap("cannot read the size");
/// assert!(wrapped.is_not_found());
/// assert!(wrapped.message().starts_with("cannot read the size: "));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldPathError {
    kind: ErrorKind,
    message: String,
}

impl FieldPathError {
    fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        FieldPathError {
            kind,
            message: message.into(),
        }
    }

    pub(crate) fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Invalid, message)
    }

    fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::NotFound, message)
    }

    /// The kind of problem.
    ///
    /// ```
    /// use xfn_sdk::fieldpath::{self, ErrorKind};
    /// let obj = serde_json::json!({"spec": "not an object"});
    /// let err = fieldpath::get(&obj, "spec.size").unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::Invalid);
    /// ```
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// Whether the path names something that does not exist (as opposed to a
    /// type mismatch or a syntax error). Survives [`FieldPathError::wrap`].
    ///
    /// ```
    /// use xfn_sdk::fieldpath;
    /// let obj = serde_json::json!({"metadata": {}});
    /// assert!(fieldpath::get(&obj, "metadata.labels").unwrap_err().is_not_found());
    /// ```
    pub fn is_not_found(&self) -> bool {
        self.kind == ErrorKind::NotFound
    }

    /// The message.
    ///
    /// ```
    /// use xfn_sdk::fieldpath;
    /// let obj = serde_json::json!({"spec": {}});
    /// let err = fieldpath::get(&obj, "spec.size").unwrap_err();
    /// assert_eq!(err.message(), err.to_string());
    /// ```
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Prefixes the message with `context: `, keeping the kind, as Go's `errors.Wrap` does.
    ///
    /// ```
    /// use xfn_sdk::fieldpath;
    /// let err = fieldpath::parse("a..b").unwrap_err().wrap("bad patch");
    /// assert!(err.to_string().starts_with("bad patch: cannot parse path"));
    /// ```
    pub fn wrap(self, context: impl fmt::Display) -> Self {
        FieldPathError {
            kind: self.kind,
            message: format!("{context}: {}", self.message),
        }
    }
}

impl fmt::Display for FieldPathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for FieldPathError {}

/// One segment of a field path.
///
/// ```
/// use xfn_sdk::fieldpath::{self, Segment};
/// let path = fieldpath::parse("spec.items[2]").unwrap();
/// assert_eq!(path.0[2], Segment::Index(2));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Segment {
    /// A field of an object.
    Field(String),
    /// An element of an array.
    Index(u32),
}

impl Segment {
    /// A field segment; leading and trailing `'` and `"` are trimmed
    /// (crossplane-runtime's `Field`).
    ///
    /// ```
    /// use xfn_sdk::fieldpath::Segment;
    /// assert_eq!(Segment::field("'app.kubernetes.io/name'"), Segment::Field("app.kubernetes.io/name".into()));
    /// ```
    pub fn field(name: &str) -> Segment {
        Segment::Field(name.trim_matches(|c| c == '\'' || c == '"').to_owned())
    }

    /// An index segment if `s` is an unsigned 32-bit decimal, else a field
    /// segment (crossplane-runtime's `FieldOrIndex`).
    ///
    /// ```
    /// use xfn_sdk::fieldpath::Segment;
    /// assert_eq!(Segment::field_or_index("7"), Segment::Index(7));
    /// assert_eq!(Segment::field_or_index("x7"), Segment::Field("x7".into()));
    /// ```
    pub fn field_or_index(s: &str) -> Segment {
        if !s.is_empty()
            && s.bytes().all(|b| b.is_ascii_digit())
            && let Ok(i) = s.parse::<u32>()
        {
            return Segment::Index(i);
        }
        Segment::field(s)
    }
}

/// A parsed field path. Its [`Display`](fmt::Display) is crossplane-runtime's
/// normalised form: `.field`, `[i]`, or `[field]` when the field contains a
/// period or is `*`, without a leading period. A field with an empty name
/// (`['']`) prints as nothing, as in crossplane-runtime, so that form does
/// not parse back to the same path.
///
/// ```
/// use xfn_sdk::fieldpath;
/// let path = fieldpath::parse("metadata.labels[app.kubernetes.io/name]").unwrap();
/// assert_eq!(path.0.len(), 3);
/// assert_eq!(path.to_string(), "metadata.labels[app.kubernetes.io/name]");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Segments(pub Vec<Segment>);

impl Segments {
    fn prefix(segments: &[Segment]) -> String {
        display_segments(segments)
    }
}

impl fmt::Display for Segments {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&display_segments(&self.0))
    }
}

fn display_segments(segments: &[Segment]) -> String {
    let mut out = String::new();
    for s in segments {
        match s {
            Segment::Field(name) if name == WILDCARD || name.contains('.') => {
                out.push('[');
                out.push_str(name);
                out.push(']');
            }
            Segment::Field(name) => {
                out.push('.');
                out.push_str(name);
            }
            Segment::Index(i) => {
                out.push('[');
                out.push_str(&i.to_string());
                out.push(']');
            }
        }
    }
    match out.strip_prefix('.') {
        Some(rest) => rest.to_owned(),
        None => out,
    }
}

/// Parses a field path.
///
/// The empty path parses to no segments. Errors read like
/// crossplane-runtime's: `cannot parse path "a.": unexpected '.' at position 1`.
///
/// ```
/// use xfn_sdk::fieldpath;
/// let segments = fieldpath::parse("metadata.annotations[crossplane.io/external-name]").unwrap();
/// assert_eq!(segments.0.len(), 3);
/// assert_eq!(segments.to_string(), "metadata.annotations[crossplane.io/external-name]");
/// ```
pub fn parse(path: &str) -> Result<Segments, FieldPathError> {
    lex(path).map(Segments).map_err(|(what, pos)| {
        FieldPathError::new(
            ErrorKind::Parse,
            format!(
                "cannot parse path {}: {what} at position {pos}",
                go_quote(path)
            ),
        )
    })
}

/// The lexer of crossplane-runtime (a simplified text/template lexer),
/// returning the segments or the error text and byte position.
fn lex(input: &str) -> Result<Vec<Segment>, (String, usize)> {
    let bytes = input.as_bytes();
    let len = bytes.len();
    let mut segments = Vec::new();
    let mut pos = 0;
    enum State {
        Field,
        Period,
        LeftBracket,
    }
    let mut state = State::Field;
    loop {
        match state {
            State::Field => {
                let start = pos;
                let mut next = None;
                for (i, b) in bytes[pos..].iter().enumerate() {
                    match b {
                        b']' => return Err(("unexpected ']'".into(), pos + i)),
                        b'[' => {
                            next = Some((pos + i, State::LeftBracket));
                            break;
                        }
                        b'.' => {
                            next = Some((pos + i, State::Period));
                            break;
                        }
                        _ => {}
                    }
                }
                match next {
                    Some((end, s)) => {
                        if end > start {
                            segments.push(Segment::field(&input[start..end]));
                        }
                        pos = end;
                        state = s;
                    }
                    None => {
                        if len > start {
                            segments.push(Segment::field(&input[start..]));
                        }
                        return Ok(segments);
                    }
                }
            }
            State::Period => {
                if pos == 0 || pos == len - 1 {
                    return Err(("unexpected '.'".into(), pos));
                }
                pos += 1;
                match bytes[pos] {
                    b'.' => return Err(("unexpected '.'".into(), pos)),
                    b'[' => return Err(("unexpected '['".into(), pos)),
                    _ => state = State::Field,
                }
            }
            State::LeftBracket => {
                let Some(rbi) = input[pos..].find(']') else {
                    return Err(("unterminated '['".into(), pos));
                };
                // rbi is relative to the '['; the content starts after it.
                pos += 1;
                let rbi = rbi - 1;
                if rbi == 0 {
                    return Err(("unexpected ']'".into(), pos));
                }
                if let Some(lbi) = input[pos..pos + rbi].find('[') {
                    return Err(("unexpected '['".into(), pos + lbi));
                }
                segments.push(Segment::field_or_index(&input[pos..pos + rbi]));
                pos += rbi + 1;
                state = State::Field;
            }
        }
    }
}

/// Reads the value at `path`.
///
/// Errors: `<prefix>: no such field`, `<prefix>: no such element` and
/// `<prefix>: expected map, got nil` are "not found"
/// ([`FieldPathError::is_not_found`]); `<prefix>: not an array` and
/// `<prefix>: not an object` are not. A JSON `null` at the end of the path is
/// found. The empty path reads as `null`, as crossplane-runtime's does.
///
/// ```
/// use xfn_sdk::fieldpath;
/// let obj = serde_json::json!({"spec": {"items": [{"name": "a"}, {"name": "b"}], "on": true, "n": 2}});
/// assert_eq!(fieldpath::get(&obj, "spec.items[1].name").unwrap(), "b");
/// assert!(fieldpath::get(&obj, "spec.items[5]").unwrap_err().is_not_found());
/// ```
pub fn get<'a>(obj: &'a Value, path: &str) -> Result<&'a Value, FieldPathError> {
    let segments = parse(path)?;
    get_segments(obj, &segments.0)
}

/// Reads the value at already parsed segments (see [`get`]).
///
/// ```
/// use xfn_sdk::fieldpath;
/// let obj = serde_json::json!({"spec": {"items": [{"name": "a"}, {"name": "b"}], "on": true, "n": 2}});
/// let segments = fieldpath::parse("spec.n").unwrap();
/// assert_eq!(fieldpath::get_segments(&obj, &segments.0).unwrap(), 2);
/// ```
pub fn get_segments<'a>(obj: &'a Value, segments: &[Segment]) -> Result<&'a Value, FieldPathError> {
    if segments.is_empty() {
        return Ok(&NULL);
    }
    let mut it = obj;
    for i in 0..segments.len() {
        it = step(it, segments, i)?;
    }
    Ok(it)
}

/// Reads the value at `path` inside a JSON object, borrowing it (see [`get`]).
///
/// This is [`get`] for a bare map, such as a resource's object, without
/// wrapping (and so copying) the map into a [`Value`] first.
///
/// ```
/// let object = serde_json::json!({"spec": {"region": "eu-west-1"}});
/// let map = object.as_object().unwrap();
/// let region = xfn_sdk::fieldpath::get_in(map, "spec.region").unwrap();
/// assert_eq!(region, "eu-west-1");
/// ```
pub fn get_in<'a>(obj: &'a Map<String, Value>, path: &str) -> Result<&'a Value, FieldPathError> {
    let segments = parse(path)?;
    let segments = &segments.0;
    let Some(first) = segments.first() else {
        return Ok(&NULL);
    };
    let mut it = match first {
        Segment::Field(name) => field(obj, segments, 0, name)?,
        Segment::Index(_) => {
            return Err(FieldPathError::invalid(format!(
                "{}: not an array",
                Segments::prefix(&[])
            )));
        }
    };
    for i in 1..segments.len() {
        it = step(it, segments, i)?;
    }
    Ok(it)
}

/// One step of a lookup: segment `i` of `segments`, applied to `it`.
fn step<'a>(it: &'a Value, segments: &[Segment], i: usize) -> Result<&'a Value, FieldPathError> {
    match &segments[i] {
        Segment::Index(idx) => {
            let Value::Array(array) = it else {
                return Err(FieldPathError::invalid(format!(
                    "{}: not an array",
                    Segments::prefix(&segments[..i])
                )));
            };
            array.get(*idx as usize).ok_or_else(|| {
                FieldPathError::not_found(format!(
                    "{}: no such element",
                    Segments::prefix(&segments[..=i])
                ))
            })
        }
        Segment::Field(name) => match it {
            Value::Object(o) => field(o, segments, i, name),
            Value::Null => Err(FieldPathError::not_found(format!(
                "{}: expected map, got nil",
                Segments::prefix(&segments[..i])
            ))),
            _ => Err(FieldPathError::invalid(format!(
                "{}: not an object",
                Segments::prefix(&segments[..i])
            ))),
        },
    }
}

fn field<'a>(
    object: &'a Map<String, Value>,
    segments: &[Segment],
    i: usize,
    name: &str,
) -> Result<&'a Value, FieldPathError> {
    object.get(name).ok_or_else(|| {
        FieldPathError::not_found(format!(
            "{}: no such field",
            Segments::prefix(&segments[..=i])
        ))
    })
}

/// Reads a string (`<path>: not a string` if the value is something else).
///
/// ```
/// use xfn_sdk::fieldpath;
/// let obj = serde_json::json!({"spec": {"items": [{"name": "a"}, {"name": "b"}], "on": true, "n": 2}});
/// assert_eq!(fieldpath::get_string(&obj, "spec.items[0].name").unwrap(), "a");
/// ```
pub fn get_string<'a>(obj: &'a Value, path: &str) -> Result<&'a str, FieldPathError> {
    match get(obj, path)? {
        Value::String(s) => Ok(s),
        _ => Err(FieldPathError::invalid(format!("{path}: not a string"))),
    }
}

/// Reads a bool (`<path>: not a bool` if the value is something else).
///
/// ```
/// use xfn_sdk::fieldpath;
/// let obj = serde_json::json!({"spec": {"items": [{"name": "a"}, {"name": "b"}], "on": true, "n": 2}});
/// assert!(fieldpath::get_bool(&obj, "spec.on").unwrap());
/// ```
pub fn get_bool(obj: &Value, path: &str) -> Result<bool, FieldPathError> {
    match get(obj, path)? {
        Value::Bool(b) => Ok(*b),
        _ => Err(FieldPathError::invalid(format!("{path}: not a bool"))),
    }
}

/// Reads an integer (`<path>: not a (int64) number` if the value is something
/// else, including a float: Go's `GetInteger` only accepts `int64`).
///
/// ```
/// use xfn_sdk::fieldpath;
/// let obj = serde_json::json!({"spec": {"items": [{"name": "a"}, {"name": "b"}], "on": true, "n": 2}});
/// assert_eq!(fieldpath::get_integer(&obj, "spec.n").unwrap(), 2);
/// ```
pub fn get_integer(obj: &Value, path: &str) -> Result<i64, FieldPathError> {
    match get(obj, path)? {
        Value::Number(n) if !n.is_f64() => n
            .as_i64()
            .ok_or_else(|| FieldPathError::invalid(format!("{path}: not a (int64) number"))),
        _ => Err(FieldPathError::invalid(format!(
            "{path}: not a (int64) number"
        ))),
    }
}

/// Writes `value` at `path`.
///
/// Missing intermediates are created: an object if the next segment is a
/// field, an array of `index + 1` nulls if it is an index. Arrays that are too
/// short are extended with nulls, and a null array element is replaced, but a
/// null object value in the middle of the path is not (`a.b is not an
/// object`). Indexes above [`MAX_FIELD_PATH_INDEX`] are refused. The value is
/// normalised first with [`normalize_numbers`]. The empty path writes nothing.
///
/// ```
/// use xfn_sdk::fieldpath;
/// let mut obj = serde_json::json!({"spec": {"items": [{"name": "a"}, {"name": "b"}], "on": true, "n": 2}});
/// fieldpath::set(&mut obj, "spec.tags[2]", "x".into()).unwrap();
/// assert_eq!(obj["spec"]["tags"], serde_json::json!([null, null, "x"]));
/// ```
pub fn set(obj: &mut Value, path: &str, value: Value) -> Result<(), FieldPathError> {
    let segments = parse(path)?;
    set_segments(obj, &segments.0, value)
}

/// Writes `value` at already parsed segments (see [`set`]).
///
/// ```
/// use xfn_sdk::fieldpath;
/// let mut obj = serde_json::json!({"spec": {"items": [{"name": "a"}, {"name": "b"}], "on": true, "n": 2}});
/// let segments = fieldpath::parse("spec.n").unwrap();
/// fieldpath::set_segments(&mut obj, &segments.0, 3.0.into()).unwrap();
/// assert_eq!(obj["spec"]["n"], 3); // integral floats become integers
/// ```
pub fn set_segments(
    obj: &mut Value,
    segments: &[Segment],
    mut value: Value,
) -> Result<(), FieldPathError> {
    normalize_numbers(&mut value);
    for s in segments {
        if let Segment::Index(i) = s
            && *i > MAX_FIELD_PATH_INDEX
        {
            return Err(FieldPathError::invalid(format!(
                "index {i} is greater than max allowed index {MAX_FIELD_PATH_INDEX}"
            )));
        }
    }
    let mut value = Some(value);
    let mut current = obj;
    for (i, segment) in segments.iter().enumerate() {
        let last = i + 1 == segments.len();
        match segment {
            Segment::Index(idx) => {
                let idx = *idx as usize;
                let Value::Array(array) = current else {
                    return Err(FieldPathError::invalid(format!(
                        "{} is not an array",
                        Segments::prefix(&segments[..i])
                    )));
                };
                if array.len() <= idx {
                    // Only reachable for an array at the root, which Go never has.
                    array.resize(idx + 1, Value::Null);
                }
                if last {
                    array[idx] = value.take().unwrap_or(Value::Null);
                    return Ok(());
                }
                prepare(&mut array[idx], &segments[i + 1], true);
                current = &mut array[idx];
            }
            Segment::Field(name) => {
                let Value::Object(object) = current else {
                    return Err(FieldPathError::invalid(format!(
                        "{} is not an object",
                        Segments::prefix(&segments[..i])
                    )));
                };
                if last {
                    object.insert(name.clone(), value.take().unwrap_or(Value::Null));
                    return Ok(());
                }
                // A missing field is created; an existing null field is not
                // replaced (Go tells "missing" from "null" here).
                let missing = !object.contains_key(name);
                let slot = object.entry(name.clone()).or_insert(Value::Null);
                prepare(slot, &segments[i + 1], missing);
                current = slot;
            }
        }
    }
    Ok(())
}

/// Prepares `slot` (an array element, or an object field) for the `next`
/// segment: a missing or null slot becomes a new container when `replace_null`
/// is set; an array that is too short for an index is extended with nulls.
fn prepare(slot: &mut Value, next: &Segment, replace_null: bool) {
    if slot.is_null() {
        if replace_null {
            *slot = match next {
                Segment::Index(n) => Value::Array(vec![Value::Null; *n as usize + 1]),
                Segment::Field(_) => Value::Object(Map::new()),
            };
        }
        return;
    }
    if let (Segment::Index(n), Value::Array(array)) = (next, slot) {
        let n = *n as usize;
        if n >= array.len() {
            array.resize(n + 1, Value::Null);
        }
    }
}

/// Removes the value at `path`: a field from its object, or an element from
/// its array (later elements move down). Missing paths are not an error.
///
/// ```
/// use xfn_sdk::fieldpath;
/// let mut obj = serde_json::json!({"spec": {"items": [{"name": "a"}, {"name": "b"}], "on": true, "n": 2}});
/// fieldpath::delete(&mut obj, "spec.items[0]").unwrap();
/// assert_eq!(fieldpath::get_string(&obj, "spec.items[0].name").unwrap(), "b");
/// ```
pub fn delete(obj: &mut Value, path: &str) -> Result<(), FieldPathError> {
    let segments = parse(path)?;
    let Some((last, parents)) = segments.0.split_last() else {
        return Ok(());
    };
    let mut current = obj;
    for (i, segment) in parents.iter().enumerate() {
        match segment {
            Segment::Index(idx) => {
                let Value::Array(array) = current else {
                    return Err(FieldPathError::invalid(format!(
                        "{} is not an array",
                        Segments::prefix(&segments.0[..i])
                    )));
                };
                match array.get_mut(*idx as usize) {
                    Some(v) => current = v,
                    None => return Ok(()),
                }
            }
            Segment::Field(name) => {
                let Value::Object(object) = current else {
                    return Err(FieldPathError::invalid(format!(
                        "{} is not an object",
                        Segments::prefix(&segments.0[..i])
                    )));
                };
                match object.get_mut(name) {
                    Some(v) => current = v,
                    None => return Ok(()),
                }
            }
        }
    }
    let n = parents.len();
    match (last, current) {
        (Segment::Index(idx), Value::Array(array)) => {
            if (*idx as usize) < array.len() {
                array.remove(*idx as usize);
            }
            Ok(())
        }
        (Segment::Field(name), Value::Object(object)) => {
            object.remove(name);
            Ok(())
        }
        (Segment::Index(_), _) => Err(FieldPathError::invalid(format!(
            "cannot delete {}: {} is not an array",
            segments,
            Segments::prefix(&segments.0[..n])
        ))),
        (Segment::Field(_), _) => Err(FieldPathError::invalid(format!(
            "cannot delete {}: {} is not an object",
            segments,
            Segments::prefix(&segments.0[..n])
        ))),
    }
}

/// Expands the `*` segments of `path` against `obj`: over an array to each
/// index, over an object to each key (in key order). An expanded path is kept
/// only if it exists in full, so wildcards never create fields.
///
/// Errors, wrapped as `cannot expand wildcards for segments: "<path>": ...`:
/// a `*` over `null` is not found (`wildcard field "a.b" is not found in the
/// path`); a `*` over a scalar is `"a.b": unexpected wildcard usage`.
///
/// ```
/// use xfn_sdk::fieldpath;
/// let obj = serde_json::json!({"spec": {"items": [{"name": "a"}, {"name": "b"}], "on": true, "n": 2}});
/// let paths = fieldpath::expand_wildcards(&obj, "spec.items[*].name").unwrap();
/// assert_eq!(paths, ["spec.items[0].name", "spec.items[1].name"]);
/// ```
pub fn expand_wildcards(obj: &Value, path: &str) -> Result<Vec<String>, FieldPathError> {
    let segments = parse(path)?;
    let expanded = expand(obj, segments.0.clone()).map_err(|e| {
        e.wrap(format!(
            "cannot expand wildcards for segments: {}",
            go_quote(&segments.to_string())
        ))
    })?;
    Ok(expanded.iter().map(|s| display_segments(s)).collect())
}

fn expand(data: &Value, segments: Vec<Segment>) -> Result<Vec<Vec<Segment>>, FieldPathError> {
    let mut it = data;
    for (i, current) in segments.iter().enumerate() {
        if matches!(current, Segment::Field(f) if f == WILDCARD) {
            let mut out = Vec::new();
            let replacements: Vec<Segment> = match it {
                Value::Array(a) => (0..a.len())
                    .map(|ix| Segment::field_or_index(&ix.to_string()))
                    .collect(),
                Value::Object(m) => {
                    let mut keys: Vec<&String> = m.keys().collect();
                    keys.sort();
                    keys.into_iter().map(|k| Segment::field(k)).collect()
                }
                Value::Null => {
                    return Err(FieldPathError::not_found(format!(
                        "wildcard field {} is not found in the path",
                        go_quote(&display_segments(&segments[..i]))
                    )));
                }
                _ => {
                    return Err(FieldPathError::invalid(format!(
                        "{}: unexpected wildcard usage",
                        go_quote(&display_segments(&segments[..i]))
                    )));
                }
            };
            for r in replacements {
                let mut expanded = segments.clone();
                expanded[i] = r;
                let quoted = go_quote(&display_segments(&expanded));
                let more = expand(data, expanded)
                    .map_err(|e| e.wrap(format!("{quoted}: cannot expand wildcards")))?;
                out.extend(more);
            }
            return Ok(out);
        }
        match get_segments(data, &segments[..=i]) {
            Ok(v) => it = v,
            Err(e) if e.is_not_found() => return Ok(Vec::new()),
            Err(e) => return Err(e),
        }
    }
    Ok(vec![segments])
}

/// How [`merge_value`] merges (crossplane-runtime's `MergeOptions`).
///
/// ```
/// use xfn_sdk::fieldpath::{self, MergeOptions};
/// let keep = MergeOptions { keep_map_values: true, ..Default::default() };
/// let merged = fieldpath::merge(
///     Some(serde_json::json!({"a": 1})),
///     serde_json::json!({"a": 2, "b": 3}),
///     &keep,
/// )
/// .unwrap();
/// assert_eq!(merged, serde_json::json!({"a": 1, "b": 3}));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MergeOptions {
    /// Keep existing non-empty values instead of overwriting them.
    pub keep_map_values: bool,
    /// Append arrays instead of replacing them.
    pub append_slice: bool,
}

/// Merges `value` into the value at `path` (crossplane-runtime's
/// `Paved.MergeValue`, which uses mergo), then writes the result with [`set`].
///
/// Without options, or if nothing (or `null`) is at `path`, or `value` is
/// `null`, the value replaces what is there. Otherwise:
///
/// * with `append_slice`, when both are arrays, elements of `value` equal to
///   an element already there are dropped first (top level only);
/// * maps are merged key by key, recursively; a key's new value replaces the
///   old one if the old one is missing or empty (`null`, `""`, `0`, `false`,
///   `[]`, `{}`), or, unless `keep_map_values`, whenever it is not a map
///   merged recursively; a `null` new value is only written unless
///   `keep_map_values`; with `append_slice` arrays are concatenated, and an
///   array meeting a non-array is an error (`failed to merge values: cannot
///   append two slices with different type ([]interface {}, string)`).
///
/// ```
/// use xfn_sdk::fieldpath;
/// let mut obj = serde_json::json!({"spec": {"items": [{"name": "a"}, {"name": "b"}], "on": true, "n": 2}});
/// let opts = fieldpath::MergeOptions { append_slice: true, ..Default::default() };
/// fieldpath::merge_value(&mut obj, "spec.items", serde_json::json!([{"name": "c"}]), Some(&opts)).unwrap();
/// assert_eq!(obj["spec"]["items"].as_array().unwrap().len(), 3);
/// ```
pub fn merge_value(
    obj: &mut Value,
    path: &str,
    value: Value,
    options: Option<&MergeOptions>,
) -> Result<(), FieldPathError> {
    let Some(options) = options else {
        return set(obj, path, value);
    };
    let dst = match get(obj, path) {
        Ok(v) => Some(v.clone()),
        Err(e) if e.is_not_found() => None,
        Err(e) => return Err(e),
    };
    let merged = merge(dst, value, options)?;
    set(obj, path, merged)
}

/// Merges `src` into `dst` as [`merge_value`] does, returning the result.
///
/// ```
/// use xfn_sdk::fieldpath;
/// let opts = fieldpath::MergeOptions::default();
/// let merged = fieldpath::merge(Some(serde_json::json!({"a": 1})), serde_json::json!({"b": 2}), &opts).unwrap();
/// assert_eq!(merged, serde_json::json!({"a": 1, "b": 2}));
/// ```
pub fn merge(
    dst: Option<Value>,
    src: Value,
    options: &MergeOptions,
) -> Result<Value, FieldPathError> {
    let dst = match dst {
        None | Some(Value::Null) => return Ok(src),
        Some(d) => d,
    };
    if src.is_null() {
        return Ok(src);
    }
    let src = match (&dst, src) {
        (Value::Array(d), Value::Array(s)) if options.append_slice => {
            Value::Array(s.into_iter().filter(|item| !d.contains(item)).collect())
        }
        (_, s) => s,
    };
    let mut wrapper = Map::new();
    wrapper.insert("arg".to_owned(), dst);
    merge_key(
        &mut wrapper,
        "arg",
        src,
        !options.keep_map_values,
        options.append_slice,
    )
    .map_err(|e| e.wrap("failed to merge values"))?;
    Ok(wrapper.remove("arg").unwrap_or(Value::Null))
}

fn merge_key(
    dst: &mut Map<String, Value>,
    key: &str,
    src: Value,
    overwrite: bool,
    append: bool,
) -> Result<(), FieldPathError> {
    let existing = dst.get_mut(key);
    match src {
        Value::Null => {
            if overwrite {
                dst.insert(key.to_owned(), Value::Null);
            }
        }
        Value::Object(s) => match existing {
            Some(Value::Object(d)) => {
                for (k, v) in s {
                    merge_key(d, &k, v, overwrite, append)?;
                }
            }
            Some(d) if !overwrite && !is_empty(d) => {}
            _ => {
                dst.insert(key.to_owned(), Value::Object(s));
            }
        },
        Value::Array(s) if append => match existing {
            None | Some(Value::Null) => {
                dst.insert(key.to_owned(), Value::Array(s));
            }
            Some(Value::Array(d)) => d.extend(s),
            Some(other) => {
                return Err(FieldPathError::invalid(format!(
                    "cannot append two slices with different type ([]interface {{}}, {})",
                    go_type_name(other)
                )));
            }
        },
        scalar_or_array => match existing {
            Some(d) if !overwrite && !is_empty(d) => {}
            _ => {
                dst.insert(key.to_owned(), scalar_or_array);
            }
        },
    }
    Ok(())
}

/// Whether mergo considers a value empty: `null`, `""`, `0`, `false`, `[]`, `{}`.
fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
    }
}

/// The Go type a JSON value has in an unstructured object (`%T`).
///
/// ```
/// assert_eq!(xfn_sdk::fieldpath::go_type_name(&serde_json::json!(1.5)), "float64");
/// ```
pub fn go_type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float64",
        Value::Number(_) => "int64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

/// Normalises numbers as a JSON round trip through the Kubernetes decoder
/// would: a float that is integral, below 1e21 in magnitude and fits in an
/// `i64` becomes an integer; an integer that does not fit in an `i64`
/// becomes a float.
///
/// ```
/// let mut v = serde_json::json!({"n": 2.0});
/// xfn_sdk::fieldpath::normalize_numbers(&mut v);
/// assert!(v["n"].is_i64());
/// ```
pub fn normalize_numbers(v: &mut Value) {
    match v {
        Value::Number(n) => {
            if let Some(f) = n.as_f64().filter(|_| n.is_f64()) {
                if let Some(i) = integral_f64_as_i64(f) {
                    *n = Number::from(i);
                }
            } else if n.as_i64().is_none()
                && let Some(f) = n.as_f64().and_then(Number::from_f64)
            {
                *n = f;
            }
        }
        Value::Array(a) => a.iter_mut().for_each(normalize_numbers),
        Value::Object(o) => o.values_mut().for_each(normalize_numbers),
        _ => {}
    }
}

/// The `i64` a float64 becomes after Go's JSON encoding and the Kubernetes
/// decoder (integral, written without an exponent, within `i64`).
///
/// ```
/// assert_eq!(xfn_sdk::fieldpath::integral_f64_as_i64(3.0), Some(3));
/// assert_eq!(xfn_sdk::fieldpath::integral_f64_as_i64(3.5), None);
/// ```
pub fn integral_f64_as_i64(f: f64) -> Option<i64> {
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    if f.is_finite() && f.trunc() == f && f.abs() < 1e21 && (-TWO_63..TWO_63).contains(&f) {
        Some(f as i64)
    } else {
        None
    }
}

/// Quotes a string as Go's `strconv.Quote` does (close enough for paths).
fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\x07' => out.push_str("\\a"),
            '\x08' => out.push_str("\\b"),
            '\x0c' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\x0b' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if c.is_control() || (c.is_whitespace() && c != ' ') => {
                if (c as u32) <= 0xffff {
                    out.push_str(&format!("\\u{:04x}", c as u32));
                } else {
                    out.push_str(&format!("\\U{:08x}", c as u32));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn get_in_agrees_with_get_on_values_and_errors() {
        let value = serde_json::json!({"a": {"b": [1, {"c": null}]}, "s": "x", "n": null});
        let map = value.as_object().expect("object");
        for path in [
            "", "a", "a.b[1].c", "a.b[2]", "a.b.c", "s.t", "n.m", "[0]", "missing", "a[b]", "a..b",
        ] {
            let want = get(&value, path).map_err(|e| e.to_string());
            let got = get_in(map, path).map_err(|e| e.to_string());
            assert_eq!(got, want, "path {path:?}");
        }
    }

    fn segs(path: &str) -> Vec<Segment> {
        parse(path).unwrap().0
    }

    fn f(s: &str) -> Segment {
        Segment::Field(s.to_owned())
    }

    #[test]
    fn parses_fields_indexes_and_brackets() {
        assert_eq!(segs("metadata.name"), vec![f("metadata"), f("name")]);
        assert_eq!(
            segs("spec.containers[0].name"),
            vec![f("spec"), f("containers"), Segment::Index(0), f("name")]
        );
        assert_eq!(segs("data[.config.yml]"), vec![f("data"), f(".config.yml")]);
        assert_eq!(
            segs("metadata.annotations['crossplane.io/external-name']"),
            vec![
                f("metadata"),
                f("annotations"),
                f("crossplane.io/external-name")
            ]
        );
        assert_eq!(segs("a[\"x\"]"), vec![f("a"), f("x")]);
        assert_eq!(segs("a[''b'']"), vec![f("a"), f("b")]);
        assert_eq!(segs("a['0']"), vec![f("a"), f("0")]);
        assert_eq!(segs("a[-1]"), vec![f("a"), f("-1")]);
        assert_eq!(segs("a[ 1 ]"), vec![f("a"), f(" 1 ")]);
        assert_eq!(segs("a.0"), vec![f("a"), f("0")]);
        assert_eq!(segs("[42]"), vec![Segment::Index(42)]);
        assert_eq!(
            segs("nested[0][1]"),
            vec![f("nested"), Segment::Index(0), Segment::Index(1)]
        );
        assert_eq!(segs("a[*].b"), vec![f("a"), f("*"), f("b")]);
        assert_eq!(segs("a.*.b"), vec![f("a"), f("*"), f("b")]);
        assert_eq!(
            segs("a[4294967295]"),
            vec![f("a"), Segment::Index(u32::MAX)]
        );
        assert_eq!(segs("a[4294967296]"), vec![f("a"), f("4294967296")]);
        assert_eq!(segs("a[007]"), vec![f("a"), Segment::Index(7)]);
        assert_eq!(segs("a[+1]"), vec![f("a"), f("+1")]);
        assert_eq!(segs("a[0]b"), vec![f("a"), Segment::Index(0), f("b")]);
        assert_eq!(segs(""), Vec::<Segment>::new());
        assert_eq!(segs(" a "), vec![f(" a ")]);
    }

    #[test]
    fn parse_errors_read_like_crossplane_runtime() {
        let cases = [
            (".metadata", "unexpected '.' at position 0"),
            ("metadata.", "unexpected '.' at position 8"),
            ("metadata..uid", "unexpected '.' at position 9"),
            ("spec.[0]", "unexpected '[' at position 5"),
            ("spec.containers[]", "unexpected ']' at position 16"),
            ("spec[0", "unterminated '[' at position 4"),
            ("spec]", "unexpected ']' at position 4"),
            ("a[b[c]", "unexpected '[' at position 3"),
            (".", "unexpected '.' at position 0"),
        ];
        for (path, want) in cases {
            let err = parse(path).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Parse);
            assert_eq!(
                err.to_string(),
                format!("cannot parse path {path:?}: {want}"),
                "{path}"
            );
        }
    }

    #[test]
    fn segments_display_normalised() {
        assert_eq!(
            parse("a.b[0]['c.d'][*].e").unwrap().to_string(),
            "a.b[0][c.d][*].e"
        );
        assert_eq!(parse("[0].a").unwrap().to_string(), "[0].a");
    }

    #[test]
    fn get_values_and_errors() {
        let obj = json!({
            "spec": {"widgets": "10", "list": [1, {"x": null}], "nul": null},
            "data": {".config.yml": "cfg"}
        });
        assert_eq!(get(&obj, "spec.widgets").unwrap(), &json!("10"));
        assert_eq!(get(&obj, "spec.list[1].x").unwrap(), &Value::Null);
        assert_eq!(get(&obj, "data[.config.yml]").unwrap(), &json!("cfg"));
        assert_eq!(get(&obj, "").unwrap(), &Value::Null);

        let cases = [
            ("spec.x", "spec.x: no such field", true),
            ("spec.list[5]", "spec.list[5]: no such element", true),
            ("spec.nul.n", "spec.nul: expected map, got nil", true),
            ("spec.widgets[0]", "spec.widgets: not an array", false),
            ("spec.widgets.a", "spec.widgets: not an object", false),
            ("spec.list.a", "spec.list: not an object", false),
            ("[0]", ": not an array", false),
            ("spec.nul[0]", "spec.nul: not an array", false),
            ("data['x.y'].z", "data[x.y]: no such field", true),
        ];
        for (path, want, not_found) in cases {
            let err = get(&obj, path).unwrap_err();
            assert_eq!(err.to_string(), want, "{path}");
            assert_eq!(err.is_not_found(), not_found, "{path}");
        }
        assert!(
            get(&obj, "a..b")
                .unwrap_err()
                .to_string()
                .starts_with("cannot parse path")
        );
    }

    #[test]
    fn typed_getters() {
        let obj = json!({"s": "x", "b": true, "i": 3, "f": 3.0});
        assert_eq!(get_string(&obj, "s").unwrap(), "x");
        assert_eq!(
            get_string(&obj, "b").unwrap_err().to_string(),
            "b: not a string"
        );
        assert!(get_bool(&obj, "b").unwrap());
        assert_eq!(
            get_bool(&obj, "s").unwrap_err().to_string(),
            "s: not a bool"
        );
        assert_eq!(get_integer(&obj, "i").unwrap(), 3);
        assert_eq!(
            get_integer(&obj, "f").unwrap_err().to_string(),
            "f: not a (int64) number"
        );
        assert!(get_integer(&obj, "nope").unwrap_err().is_not_found());
    }

    #[test]
    fn set_creates_intermediates() {
        let mut obj = json!({});
        set(&mut obj, "a[2].b", json!(9)).unwrap();
        assert_eq!(obj, json!({"a": [null, null, {"b": 9}]}));

        let mut obj = json!({"a": [1, 2]});
        set(&mut obj, "a[3]", json!(9)).unwrap();
        assert_eq!(obj, json!({"a": [1, 2, null, 9]}));

        let mut obj = json!({"a": [null]});
        set(&mut obj, "a[0][1]", json!("x")).unwrap();
        assert_eq!(obj, json!({"a": [[null, "x"]]}));

        let mut obj = json!({"a": [[1]]});
        set(&mut obj, "a[0][2]", json!(3)).unwrap();
        assert_eq!(obj, json!({"a": [[1, null, 3]]}));

        let mut obj = json!({});
        set(
            &mut obj,
            "metadata.annotations[crossplane.io/name]",
            json!("n"),
        )
        .unwrap();
        assert_eq!(
            obj,
            json!({"metadata": {"annotations": {"crossplane.io/name": "n"}}})
        );

        let mut obj = json!({"a": 1});
        set(&mut obj, "", json!(2)).unwrap();
        assert_eq!(obj, json!({"a": 1}));
    }

    #[test]
    fn set_errors() {
        let mut obj = json!({"a": {"b": null}, "s": "x"});
        assert_eq!(
            set(&mut obj, "a.b.c", json!(1)).unwrap_err().to_string(),
            "a.b is not an object"
        );
        assert_eq!(
            set(&mut obj, "a.b[0]", json!(1)).unwrap_err().to_string(),
            "a.b is not an array"
        );
        assert_eq!(
            set(&mut obj, "s.x", json!(1)).unwrap_err().to_string(),
            "s is not an object"
        );
        assert_eq!(
            set(&mut obj, "[0]", json!(1)).unwrap_err().to_string(),
            " is not an array"
        );
        assert_eq!(
            set(&mut obj, "l[1025]", json!(1)).unwrap_err().to_string(),
            "index 1025 is greater than max allowed index 1024"
        );
        set(&mut obj, "l[1024]", json!(1)).unwrap();
    }

    #[test]
    fn set_normalises_numbers() {
        let mut obj = json!({});
        set(
            &mut obj,
            "a",
            json!({"i": 3.0, "f": 1.5, "big": 1e21, "neg": -2.0}),
        )
        .unwrap();
        let a = &obj["a"];
        assert!(a["i"].is_i64());
        assert!(a["f"].is_f64());
        assert!(a["big"].is_f64());
        assert_eq!(a["neg"], json!(-2));
        assert_eq!(integral_f64_as_i64(i64::MAX as f64), None);
        assert_eq!(integral_f64_as_i64(i64::MIN as f64), Some(i64::MIN));
    }

    #[test]
    fn delete_fields_and_elements() {
        let mut obj = json!({"a": {"b": 1, "c": 2}, "l": [1, 2, 3]});
        delete(&mut obj, "a.b").unwrap();
        delete(&mut obj, "l[1]").unwrap();
        delete(&mut obj, "x.y").unwrap();
        assert_eq!(obj, json!({"a": {"c": 2}, "l": [1, 3]}));
        assert_eq!(
            delete(&mut obj, "a.c.d").unwrap_err().to_string(),
            "cannot delete a.c.d: a.c is not an object"
        );
    }

    #[test]
    fn wildcards_expand_existing_paths_only() {
        let obj = json!({
            "spec": {
                "rules": [{"g": [1]}, {"g": [2]}, {"other": 1}],
                "m": {"b": {"x": 1}, "a": {"x": 2}},
                "nul": null,
                "s": "str"
            }
        });
        assert_eq!(
            expand_wildcards(&obj, "spec.rules[*].g").unwrap(),
            vec!["spec.rules[0].g", "spec.rules[1].g"]
        );
        assert_eq!(
            expand_wildcards(&obj, "spec.m.*.x").unwrap(),
            vec!["spec.m.a.x", "spec.m.b.x"]
        );
        assert_eq!(
            expand_wildcards(&obj, "spec.m[*]").unwrap(),
            vec!["spec.m.a", "spec.m.b"]
        );
        assert_eq!(
            expand_wildcards(&obj, "spec.rules[*].g[*]").unwrap().len(),
            2
        );
        assert_eq!(
            expand_wildcards(&obj, "spec.nope[*].x").unwrap(),
            Vec::<String>::new()
        );
        assert_eq!(
            expand_wildcards(&obj, "spec.rules[*].bad").unwrap(),
            Vec::<String>::new()
        );

        let err = expand_wildcards(&obj, "spec.nul[*].x").unwrap_err();
        assert!(err.is_not_found());
        assert_eq!(
            err.to_string(),
            "cannot expand wildcards for segments: \"spec.nul[*].x\": wildcard field \"spec.nul\" is not found in the path"
        );
        let err = expand_wildcards(&obj, "spec.s[*]").unwrap_err();
        assert!(!err.is_not_found());
        assert_eq!(
            err.to_string(),
            "cannot expand wildcards for segments: \"spec.s[*]\": \"spec.s\": unexpected wildcard usage"
        );
        let err = expand_wildcards(&obj, "spec.rules[*].other[*]").unwrap_err();
        assert_eq!(
            err.to_string(),
            "cannot expand wildcards for segments: \"spec.rules[*].other[*]\": \
             \"spec.rules[2].other[*]\": cannot expand wildcards: \"spec.rules[2].other\": unexpected wildcard usage"
        );
    }

    fn merged(d: Value, s: Value, policy: &str) -> Result<Value, String> {
        let opts = match policy {
            "Replace" => None,
            "MergeObjects" => Some(MergeOptions {
                keep_map_values: true,
                append_slice: false,
            }),
            "MergeObjectsAppendArrays" => Some(MergeOptions {
                keep_map_values: true,
                append_slice: true,
            }),
            "ForceMergeObjects" => Some(MergeOptions {
                keep_map_values: false,
                append_slice: false,
            }),
            "ForceMergeObjectsAppendArrays" => Some(MergeOptions {
                keep_map_values: false,
                append_slice: true,
            }),
            _ => unreachable!(),
        };
        let mut obj = json!({ "a": d });
        merge_value(&mut obj, "a", s, opts.as_ref()).map_err(|e| e.to_string())?;
        Ok(obj["a"].clone())
    }

    /// Every row of the verified merge table (patch-and-transform.md §5.3).
    #[test]
    fn merge_table() {
        const POLICIES: [&str; 5] = [
            "Replace",
            "MergeObjects",
            "MergeObjectsAppendArrays",
            "ForceMergeObjects",
            "ForceMergeObjectsAppendArrays",
        ];
        let err = |t: &str| {
            Err(format!(
                "failed to merge values: cannot append two slices with different type ([]interface {{}}, {t})"
            ))
        };
        // (D, S, [Replace, MO, MOAA, FMO, FMOAA]); None = unchanged D, Some(S) = S.
        type Row = (Value, Value, [Result<Value, String>; 5]);
        let rows: Vec<Row> = vec![
            (
                json!({"x":1,"y":{"p":1,"q":2}}),
                json!({"y":{"q":3,"r":4},"z":5}),
                [
                    Ok(json!({"y":{"q":3,"r":4},"z":5})),
                    Ok(json!({"x":1,"y":{"p":1,"q":2,"r":4},"z":5})),
                    Ok(json!({"x":1,"y":{"p":1,"q":2,"r":4},"z":5})),
                    Ok(json!({"x":1,"y":{"p":1,"q":3,"r":4},"z":5})),
                    Ok(json!({"x":1,"y":{"p":1,"q":3,"r":4},"z":5})),
                ],
            ),
            (
                json!({"x":1,"arr":[1,2]}),
                json!({"arr":[2,3]}),
                [
                    Ok(json!({"arr":[2,3]})),
                    Ok(json!({"x":1,"arr":[1,2]})),
                    Ok(json!({"x":1,"arr":[1,2,2,3]})),
                    Ok(json!({"x":1,"arr":[2,3]})),
                    Ok(json!({"x":1,"arr":[1,2,2,3]})),
                ],
            ),
            (
                json!([1, 2]),
                json!([2, 3]),
                [
                    Ok(json!([2, 3])),
                    Ok(json!([1, 2])),
                    Ok(json!([1, 2, 3])),
                    Ok(json!([2, 3])),
                    Ok(json!([1, 2, 3])),
                ],
            ),
            (
                json!([1, 2, 2]),
                json!([2, 3, 3]),
                [
                    Ok(json!([2, 3, 3])),
                    Ok(json!([1, 2, 2])),
                    Ok(json!([1, 2, 2, 3, 3])),
                    Ok(json!([2, 3, 3])),
                    Ok(json!([1, 2, 2, 3, 3])),
                ],
            ),
            (
                json!([{"n":1}]),
                json!([{"n":1},{"n":2}]),
                [
                    Ok(json!([{"n":1},{"n":2}])),
                    Ok(json!([{"n":1}])),
                    Ok(json!([{"n":1},{"n":2}])),
                    Ok(json!([{"n":1},{"n":2}])),
                    Ok(json!([{"n":1},{"n":2}])),
                ],
            ),
            (
                json!([1]),
                json!([]),
                [
                    Ok(json!([])),
                    Ok(json!([1])),
                    Ok(json!([1])),
                    Ok(json!([])),
                    Ok(json!([1])),
                ],
            ),
            (
                json!([1, 2]),
                json!("str"),
                [
                    Ok(json!("str")),
                    Ok(json!([1, 2])),
                    Ok(json!([1, 2])),
                    Ok(json!("str")),
                    Ok(json!("str")),
                ],
            ),
            (
                json!("str"),
                json!([1]),
                [
                    Ok(json!([1])),
                    Ok(json!("str")),
                    err("string"),
                    Ok(json!([1])),
                    err("string"),
                ],
            ),
            (
                json!(""),
                json!([1]),
                [
                    Ok(json!([1])),
                    Ok(json!([1])),
                    err("string"),
                    Ok(json!([1])),
                    err("string"),
                ],
            ),
            (
                json!({"k":1}),
                json!([1]),
                [
                    Ok(json!([1])),
                    Ok(json!({"k":1})),
                    err("map[string]interface {}"),
                    Ok(json!([1])),
                    err("map[string]interface {}"),
                ],
            ),
            (
                json!("str"),
                json!({"k":"v"}),
                [
                    Ok(json!({"k":"v"})),
                    Ok(json!("str")),
                    Ok(json!("str")),
                    Ok(json!({"k":"v"})),
                    Ok(json!({"k":"v"})),
                ],
            ),
            (
                json!({"k":"v"}),
                json!(null),
                [
                    Ok(json!(null)),
                    Ok(json!(null)),
                    Ok(json!(null)),
                    Ok(json!(null)),
                    Ok(json!(null)),
                ],
            ),
            (
                json!(null),
                json!({"k":"v"}),
                [
                    Ok(json!({"k":"v"})),
                    Ok(json!({"k":"v"})),
                    Ok(json!({"k":"v"})),
                    Ok(json!({"k":"v"})),
                    Ok(json!({"k":"v"})),
                ],
            ),
            (
                json!({"k":"v"}),
                json!({"k":""}),
                [
                    Ok(json!({"k":""})),
                    Ok(json!({"k":"v"})),
                    Ok(json!({"k":"v"})),
                    Ok(json!({"k":""})),
                    Ok(json!({"k":""})),
                ],
            ),
            (
                json!({"k":""}),
                json!({"k":"x"}),
                [
                    Ok(json!({"k":"x"})),
                    Ok(json!({"k":"x"})),
                    Ok(json!({"k":"x"})),
                    Ok(json!({"k":"x"})),
                    Ok(json!({"k":"x"})),
                ],
            ),
            (
                json!({"k":0}),
                json!({"k":2}),
                [
                    Ok(json!({"k":2})),
                    Ok(json!({"k":2})),
                    Ok(json!({"k":2})),
                    Ok(json!({"k":2})),
                    Ok(json!({"k":2})),
                ],
            ),
            (
                json!({"k":false}),
                json!({"k":true}),
                [
                    Ok(json!({"k":true})),
                    Ok(json!({"k":true})),
                    Ok(json!({"k":true})),
                    Ok(json!({"k":true})),
                    Ok(json!({"k":true})),
                ],
            ),
            (
                json!({"k":5}),
                json!({"k":0}),
                [
                    Ok(json!({"k":0})),
                    Ok(json!({"k":5})),
                    Ok(json!({"k":5})),
                    Ok(json!({"k":0})),
                    Ok(json!({"k":0})),
                ],
            ),
            (
                json!({"k":"v"}),
                json!({"k":null}),
                [
                    Ok(json!({"k":null})),
                    Ok(json!({"k":"v"})),
                    Ok(json!({"k":"v"})),
                    Ok(json!({"k":null})),
                    Ok(json!({"k":null})),
                ],
            ),
            (
                json!({"x":1}),
                json!({"k":null}),
                [
                    Ok(json!({"k":null})),
                    Ok(json!({"x":1})),
                    Ok(json!({"x":1})),
                    Ok(json!({"k":null,"x":1})),
                    Ok(json!({"k":null,"x":1})),
                ],
            ),
            (
                json!({"k":{"n":1}}),
                json!({"k":{}}),
                [
                    Ok(json!({"k":{}})),
                    Ok(json!({"k":{"n":1}})),
                    Ok(json!({"k":{"n":1}})),
                    Ok(json!({"k":{"n":1}})),
                    Ok(json!({"k":{"n":1}})),
                ],
            ),
            (
                json!({"k":1}),
                json!({}),
                [
                    Ok(json!({})),
                    Ok(json!({"k":1})),
                    Ok(json!({"k":1})),
                    Ok(json!({"k":1})),
                    Ok(json!({"k":1})),
                ],
            ),
            (
                json!({"k":[1]}),
                json!({"k":[]}),
                [
                    Ok(json!({"k":[]})),
                    Ok(json!({"k":[1]})),
                    Ok(json!({"k":[1]})),
                    Ok(json!({"k":[]})),
                    Ok(json!({"k":[1]})),
                ],
            ),
            (
                json!({"k":[]}),
                json!({"k":[1]}),
                [
                    Ok(json!({"k":[1]})),
                    Ok(json!({"k":[1]})),
                    Ok(json!({"k":[1]})),
                    Ok(json!({"k":[1]})),
                    Ok(json!({"k":[1]})),
                ],
            ),
            (
                json!({"k":[1,2]}),
                json!({"k":[1,2]}),
                [
                    Ok(json!({"k":[1,2]})),
                    Ok(json!({"k":[1,2]})),
                    Ok(json!({"k":[1,2,1,2]})),
                    Ok(json!({"k":[1,2]})),
                    Ok(json!({"k":[1,2,1,2]})),
                ],
            ),
            (
                json!({"k":{"d":{"e":[1]}}}),
                json!({"k":{"d":{"e":[1,2],"f":1}}}),
                [
                    Ok(json!({"k":{"d":{"e":[1,2],"f":1}}})),
                    Ok(json!({"k":{"d":{"e":[1],"f":1}}})),
                    Ok(json!({"k":{"d":{"e":[1,1,2],"f":1}}})),
                    Ok(json!({"k":{"d":{"e":[1,2],"f":1}}})),
                    Ok(json!({"k":{"d":{"e":[1,1,2],"f":1}}})),
                ],
            ),
            (
                json!(5),
                json!(7),
                [
                    Ok(json!(7)),
                    Ok(json!(5)),
                    Ok(json!(5)),
                    Ok(json!(7)),
                    Ok(json!(7)),
                ],
            ),
            (
                json!(5),
                json!("x"),
                [
                    Ok(json!("x")),
                    Ok(json!(5)),
                    Ok(json!(5)),
                    Ok(json!("x")),
                    Ok(json!("x")),
                ],
            ),
            (
                json!(5),
                json!(5.5),
                [
                    Ok(json!(5.5)),
                    Ok(json!(5)),
                    Ok(json!(5)),
                    Ok(json!(5.5)),
                    Ok(json!(5.5)),
                ],
            ),
            (
                json!(""),
                json!("x"),
                [
                    Ok(json!("x")),
                    Ok(json!("x")),
                    Ok(json!("x")),
                    Ok(json!("x")),
                    Ok(json!("x")),
                ],
            ),
            (
                json!(0),
                json!(3),
                [
                    Ok(json!(3)),
                    Ok(json!(3)),
                    Ok(json!(3)),
                    Ok(json!(3)),
                    Ok(json!(3)),
                ],
            ),
            (
                json!(false),
                json!(true),
                [
                    Ok(json!(true)),
                    Ok(json!(true)),
                    Ok(json!(true)),
                    Ok(json!(true)),
                    Ok(json!(true)),
                ],
            ),
        ];
        for (d, s, wants) in rows {
            for (policy, want) in POLICIES.iter().zip(wants) {
                assert_eq!(
                    merged(d.clone(), s.clone(), policy),
                    want,
                    "D={d} S={s} policy={policy}"
                );
            }
        }
    }

    #[test]
    fn merge_dedupe_keeps_int_and_float_apart() {
        // Go's reflect.DeepEqual: int64(1) != float64(1).
        let opts = MergeOptions {
            keep_map_values: false,
            append_slice: true,
        };
        let out = merge(Some(json!([1.0])), json!([1, 2]), &opts).unwrap();
        assert_eq!(out, json!([1.0, 1, 2]));
        let out = merge(Some(json!([1])), json!([1, 2]), &opts).unwrap();
        assert_eq!(out, json!([1, 2]));
    }

    #[test]
    fn merge_value_errors_and_missing_targets() {
        let opts = MergeOptions {
            keep_map_values: true,
            append_slice: false,
        };
        let mut obj = json!({"a": {"s": "x"}});
        merge_value(&mut obj, "a.new.deep", json!({"k": 1}), Some(&opts)).unwrap();
        assert_eq!(obj["a"]["new"], json!({"deep": {"k": 1}}));
        // With a merge policy, a get error other than not found is returned.
        let err = merge_value(&mut obj, "a.s.x", json!(1), Some(&opts)).unwrap_err();
        assert_eq!(err.to_string(), "a.s: not an object");
        // With Replace, the set error is returned instead.
        let err = merge_value(&mut obj, "a.s.x", json!(1), None).unwrap_err();
        assert_eq!(err.to_string(), "a.s is not an object");
    }

    #[test]
    fn quoting_matches_go() {
        assert_eq!(
            go_quote("a\"b\\c\n\u{7}\u{1}é"),
            "\"a\\\"b\\\\c\\n\\a\\x01é\""
        );
    }
}
