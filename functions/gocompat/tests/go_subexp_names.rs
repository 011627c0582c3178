//! Differential test of `goregex::subexp_names` against Go's
//! `regexp.SubexpNames`: `go_subexp_names.json` was produced by Go 1.19.8
//! running `go_subexp_names.go`.

use std::collections::BTreeMap;

use xfn_gocompat::goregex::{GoRegex, subexp_names};

#[test]
fn subexp_names_are_go_s() {
    let cases: BTreeMap<String, Vec<String>> =
        serde_json::from_str(include_str!("go_subexp_names.json")).unwrap();
    let mut different = Vec::new();
    for (pattern, want) in &cases {
        assert!(GoRegex::compile(pattern).is_ok(), "{pattern}");
        let got = subexp_names(pattern);
        if &got != want {
            different.push(format!("{pattern}: got {got:?}, want {want:?}"));
        }
    }
    eprintln!(
        "{} patterns compared, {} different",
        cases.len(),
        different.len()
    );
    assert!(different.is_empty(), "{}", different.join("\n"));
}
