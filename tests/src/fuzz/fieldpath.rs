//! Field paths as function-patch-and-transform reads them
//! ([`xfn_sdk::fieldpath`], crossplane-runtime's syntax).

use serde_json::json;
use xfn_sdk::fieldpath::{self, ErrorKind, MAX_FIELD_PATH_INDEX, MergeOptions, Segment};

/// Parses `data` as a field path. A path that parses must print in its
/// normal form and parse back to the same segments, and reading, writing,
/// merging, expanding and deleting along it must not panic; what `set`
/// writes, `get` reads back.
pub fn field_path(data: &[u8]) {
    let Ok(path) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(segments) = fieldpath::parse(path) else {
        return;
    };
    // crossplane-runtime prints a field with an empty name (`['']`) as
    // nothing, so such a path has no normal form that parses back; the
    // port prints what Go prints.
    let unprintable = segments
        .0
        .iter()
        .any(|s| matches!(s, Segment::Field(name) if name.is_empty()));
    if !unprintable {
        let printed = segments.to_string();
        let again = fieldpath::parse(&printed).unwrap_or_else(|e| {
            panic!("{path:?} prints as {printed:?}, which does not parse: {e}")
        });
        assert_eq!(
            again, segments,
            "{path:?} prints as {printed:?}, which parses differently"
        );
    }

    let mut object =
        json!({"metadata": {"name": "x", "labels": {"a": "b"}}, "spec": {"list": [1, {"k": "v"}]}});
    let _ = fieldpath::get(&object, path);
    let _ = fieldpath::expand_wildcards(&object, path);
    let written = json!({"written": true});
    let too_far = segments
        .0
        .iter()
        .any(|s| matches!(s, Segment::Index(i) if *i > MAX_FIELD_PATH_INDEX));
    match fieldpath::set(&mut object, path, written.clone()) {
        Ok(()) if !segments.0.is_empty() => {
            let read = fieldpath::get(&object, path)
                .unwrap_or_else(|e| panic!("{path:?}: set, then get fails: {e}"));
            assert_eq!(read, &written, "{path:?}: get does not read what set wrote");
        }
        Ok(()) => {}
        Err(e) => assert!(
            too_far || e.kind() != ErrorKind::Parse,
            "{path:?} parses but set calls it unparsable: {e}"
        ),
    }
    let options = MergeOptions {
        keep_map_values: true,
        append_slice: true,
    };
    let _ = fieldpath::merge_value(&mut object, path, json!([1, {"k": "w"}]), Some(&options));
    let _ = fieldpath::delete(&mut object, path);
}
