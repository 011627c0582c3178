//! Sorting resources by the value at a field path, with the Go functions'
//! typing rules.
//!
//! The Go functions read the value at the path of every resource; a missing
//! field (or `null`) counts as the zero value of the type the others have.
//! Every value must have the same Go type. Resources arrive as
//! `structpb.Struct`s, so every number is a `float64` and only `float64`
//! and `string` values can be ordered; two or more resources whose values
//! are bools, lists or objects are an error. The sort is Go's `sort.Slice`
//! ([`xfn_gocompat::sort`]), which is not stable: resources with equal
//! values end in the order Go leaves them in.

use serde_json::{Map, Value};
use xfn_sdk::fieldpath::{self, FieldPathError};

/// How the error for an unsortable type names it: function-extra-resources
/// v0.3.0 prints the Go type (`map[string]interface {}`),
/// function-environment-configs v0.7.1 its kind (`map`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypeNaming {
    /// `reflect.Type`: `bool`, `[]interface {}`, `map[string]interface {}`.
    GoType,
    /// `reflect.Kind`: `bool`, `slice`, `map`.
    GoKind,
}

/// Why resources cannot be sorted.
#[derive(Debug, thiserror::Error)]
pub enum SortError {
    /// The path is empty.
    #[error("cannot sort by empty field path")]
    EmptyPath,
    /// The path does not parse, or a resource does not have its shape.
    #[error("{0}")]
    FieldPath(FieldPathError),
    /// Two resources have values of different types.
    #[error("cannot sort values of different types \"{0}\" and \"{1}\"")]
    DifferentTypes(&'static str, &'static str),
    /// The values are of a type that has no order.
    #[error("unsupported type \"{0}\" for sorting")]
    Unsupported(&'static str),
}

/// Keys and the permutation Go's sort.Slice builds by swapping.
struct Sorter {
    keys: Vec<Key>,
    order: Vec<usize>,
}

impl xfn_gocompat::sort::LessSwap for Sorter {
    fn less(&mut self, i: usize, j: usize) -> bool {
        match (&self.keys[self.order[i]], &self.keys[self.order[j]]) {
            (Key::Number(x), Key::Number(y)) => x < y,
            (Key::Text(x), Key::Text(y)) => x < y,
            _ => false,
        }
    }

    fn swap(&mut self, i: usize, j: usize) {
        self.order.swap(i, j);
    }
}

/// The value a resource is sorted by.
enum Key {
    Number(f64),
    Text(String),
    Other,
}

fn go_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(_) => "float64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

fn go_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "invalid",
        Value::Bool(_) => "bool",
        Value::Number(_) => "float64",
        Value::String(_) => "string",
        Value::Array(_) => "slice",
        Value::Object(_) => "map",
    }
}

/// Sorts `items` by the value at `path` in `object(item)`, as the Go
/// functions' `sortRequiredByFieldPath` / `sortExtrasByFieldPath` do.
///
/// ```
/// use serde_json::{json, Map, Value};
/// use xfn_select::sort::{sort_by_field_path, TypeNaming};
/// let mut items: Vec<Map<String, Value>> = ["c", "a", "b"]
///     .iter()
///     .map(|n| json!({"metadata": {"name": n}}).as_object().unwrap().clone())
///     .collect();
/// sort_by_field_path(&mut items, |o| Some(o), "metadata.name", TypeNaming::GoKind).unwrap();
/// let names: Vec<_> = items.iter().map(|o| o["metadata"]["name"].as_str().unwrap()).collect();
/// assert_eq!(names, ["a", "b", "c"]);
/// ```
pub fn sort_by_field_path<T>(
    items: &mut Vec<T>,
    object: impl Fn(&T) -> Option<&Map<String, Value>>,
    path: &str,
    naming: TypeNaming,
) -> Result<(), SortError> {
    if path.is_empty() {
        return Err(SortError::EmptyPath);
    }
    let empty = Map::new();
    let mut values: Vec<Option<&Value>> = Vec::with_capacity(items.len());
    let mut first: Option<&Value> = None;
    for item in items.iter() {
        let value = match fieldpath::get_in(object(item).unwrap_or(&empty), path) {
            Ok(Value::Null) => None,
            Ok(v) => Some(v),
            Err(e) if e.is_not_found() => None,
            Err(e) => return Err(SortError::FieldPath(e)),
        };
        if let Some(v) = value {
            match first {
                None => first = Some(v),
                Some(f) if go_type(f) != go_type(v) => {
                    return Err(SortError::DifferentTypes(go_type(f), go_type(v)));
                }
                Some(_) => {}
            }
        }
        values.push(value);
    }
    let Some(first) = first else {
        return Ok(());
    };
    let zero = match first {
        Value::Number(_) => Key::Number(0.0),
        Value::String(_) => Key::Text(String::new()),
        _ => Key::Other,
    };
    if matches!(zero, Key::Other) {
        if items.len() < 2 {
            // sort.Slice never compares a single element.
            return Ok(());
        }
        let name = match naming {
            TypeNaming::GoType => go_type(first),
            TypeNaming::GoKind => go_kind(first),
        };
        return Err(SortError::Unsupported(name));
    }
    let keys: Vec<Key> = values
        .into_iter()
        .map(|v| match v {
            Some(Value::Number(n)) => Key::Number(n.as_f64().unwrap_or(0.0)),
            Some(Value::String(s)) => Key::Text(s.clone()),
            _ => match zero {
                Key::Number(_) => Key::Number(0.0),
                _ => Key::Text(String::new()),
            },
        })
        .collect();
    // Go's sort.Slice (not stable): ties end where Go leaves them.
    let mut sorter = Sorter {
        keys,
        order: (0..items.len()).collect(),
    };
    let n = items.len();
    xfn_gocompat::sort::slice(&mut sorter, n);
    let order = sorter.order;
    let mut slots: Vec<Option<T>> = items.drain(..).map(Some).collect();
    items.extend(order.into_iter().filter_map(|i| slots[i].take()));
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// A resource with `value` at `path` (upstream's `resourceWithFieldPathValue`).
    fn with(path: &str, value: Value) -> Map<String, Value> {
        let mut o = Value::Object(Map::new());
        fieldpath::set(&mut o, path, value).unwrap();
        o.as_object().unwrap().clone()
    }

    fn sorted(
        mut items: Vec<Map<String, Value>>,
        path: &str,
    ) -> Result<Vec<Map<String, Value>>, SortError> {
        sort_by_field_path(&mut items, |o| Some(o), path, TypeNaming::GoKind)?;
        Ok(items)
    }

    // Upstream TestSortRequiredByFieldPath (function-environment-configs
    // v0.7.1) and TestSortExtrasByFieldPath (function-extra-resources
    // v0.3.0) have the same seven cases.

    #[test]
    fn sort_by_string() {
        let got = sorted(
            vec![
                with("metadata.name", json!("c")),
                with("metadata.name", json!("a")),
                with("metadata.name", json!("b")),
            ],
            "metadata.name",
        )
        .unwrap();
        assert_eq!(
            got,
            vec![
                with("metadata.name", json!("a")),
                with("metadata.name", json!("b")),
                with("metadata.name", json!("c"))
            ]
        );
    }

    #[test]
    fn sort_by_int() {
        let got = sorted(
            vec![
                with("data.someInt", json!(3)),
                with("data.someInt", json!(1)),
                with("data.someInt", json!(2)),
            ],
            "data.someInt",
        )
        .unwrap();
        assert_eq!(
            got,
            vec![
                with("data.someInt", json!(1)),
                with("data.someInt", json!(2)),
                with("data.someInt", json!(3))
            ]
        );
    }

    #[test]
    fn sort_by_float() {
        let got = sorted(
            vec![
                with("data.someFloat", json!(1.3)),
                with("data.someFloat", json!(1.1)),
                with("data.someFloat", json!(1.2)),
                with("data.someFloat", json!(1.4)),
            ],
            "data.someFloat",
        )
        .unwrap();
        assert_eq!(
            got,
            vec![
                with("data.someFloat", json!(1.1)),
                with("data.someFloat", json!(1.2)),
                with("data.someFloat", json!(1.3)),
                with("data.someFloat", json!(1.4))
            ]
        );
    }

    #[test]
    fn inconsistent_type_sort_by_int() {
        let err = sorted(
            vec![
                with("data.someInt", json!(3)),
                with("data.someInt", json!(1)),
                with("data.someInt", json!("2")),
            ],
            "data.someInt",
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "cannot sort values of different types \"float64\" and \"string\""
        );
    }

    #[test]
    fn empty_path() {
        let err = sorted(vec![with("metadata.name", json!("c"))], "").unwrap_err();
        assert_eq!(err.to_string(), "cannot sort by empty field path");
    }

    #[test]
    fn invalid_path_all() {
        let items = vec![
            with("metadata.name", json!("c")),
            with("metadata.name", json!("a")),
            with("metadata.name", json!("b")),
        ];
        assert_eq!(sorted(items.clone(), "metadata.invalid").unwrap(), items);
    }

    #[test]
    fn invalid_path_some() {
        let got = sorted(
            vec![
                with("metadata.name", json!("c")),
                with("metadata.invalid", json!("a")),
                with("metadata.name", json!("b")),
            ],
            "metadata.name",
        )
        .unwrap();
        assert_eq!(
            got,
            vec![
                with("metadata.invalid", json!("a")),
                with("metadata.name", json!("b")),
                with("metadata.name", json!("c"))
            ]
        );
    }

    #[test]
    fn unordered_types_fail_only_when_compared() {
        let one = vec![with("data.on", json!(true))];
        assert!(sorted(one, "data.on").is_ok());
        let two = vec![with("data.on", json!(true)), with("data.on", json!(false))];
        assert_eq!(
            sorted(two.clone(), "data.on").unwrap_err().to_string(),
            "unsupported type \"bool\" for sorting"
        );
        let maps = vec![with("data.m", json!({})), with("data.m", json!({"a": 1}))];
        let mut m = maps.clone();
        let err =
            sort_by_field_path(&mut m, |o| Some(o), "data.m", TypeNaming::GoType).unwrap_err();
        assert_eq!(
            err.to_string(),
            "unsupported type \"map[string]interface {}\" for sorting"
        );
        assert_eq!(
            sorted(maps, "data.m").unwrap_err().to_string(),
            "unsupported type \"map\" for sorting"
        );
    }

    #[test]
    fn a_path_through_a_scalar_is_an_error_not_a_missing_value() {
        let err = sorted(
            vec![
                with("metadata.name", json!("c")),
                with("metadata.name", json!("a")),
            ],
            "metadata.name.first",
        )
        .unwrap_err();
        assert_eq!(err.to_string(), "metadata.name: not an object");
    }

    #[test]
    fn ties_among_more_than_twelve_end_where_go_sort_slice_leaves_them() {
        // Priorities [1, 0 x 12]: Go 1.19.8's sort.Slice (pdqsort) leaves the
        // original indexes in the order 6, 1, 2, 3, 4, 5, 7, ..., 12, 0.
        let items: Vec<Map<String, Value>> = (0..13)
            .map(|i| {
                let mut o = with("data.p", json!(if i == 0 { 1 } else { 0 }));
                o.insert("tag".into(), json!(i));
                o
            })
            .collect();
        let got = sorted(items, "data.p").unwrap();
        let tags: Vec<i64> = got.iter().map(|o| o["tag"].as_i64().unwrap()).collect();
        assert_eq!(tags, [6, 1, 2, 3, 4, 5, 7, 8, 9, 10, 11, 12, 0]);
    }

    #[test]
    fn ints_and_floats_are_one_type_and_missing_numbers_are_zero() {
        let got = sorted(
            vec![
                with("data.n", json!(2.5)),
                with("data.n", json!(1)),
                with("data.x", json!(1)),
            ],
            "data.n",
        )
        .unwrap();
        assert_eq!(
            got,
            vec![
                with("data.x", json!(1)),
                with("data.n", json!(1)),
                with("data.n", json!(2.5))
            ]
        );
    }
}
