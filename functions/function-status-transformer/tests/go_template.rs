//! Differential test of `template.rs` against Go's `text/template`: the
//! cases in `template_cases.json` were produced by Go 1.19.8 running
//! `go/template_cases.go`. Templates beyond the supported subset must be
//! refused by name, never rendered differently.

use std::collections::BTreeMap;

use function_status_transformer::template::render;

#[test]
fn templates_render_as_go_or_are_refused() {
    let data: serde_json::Value =
        serde_json::from_str(include_str!("template_cases.json")).unwrap();
    let values: BTreeMap<String, String> = data["values"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_owned()))
        .collect();
    let (mut equal, mut refused, mut different) = (0, 0, Vec::new());
    for c in data["cases"].as_array().unwrap() {
        let t = c["template"].as_str().unwrap();
        let want = match (c["out"].as_str(), c["err"].as_str()) {
            (_, Some(e)) => Err(e.to_owned()),
            (out, None) => Ok(out.unwrap_or("").to_owned()),
        };
        match render(t, &values) {
            Err(e) if e.contains("is not supported by xfn's port") => refused += 1,
            got if got == want => equal += 1,
            got => different.push(format!("{t:?}: got {got:?}, want {want:?}")),
        }
    }
    eprintln!(
        "{equal} equal, {refused} refused, {} different",
        different.len()
    );
    assert!(different.is_empty(), "{}", different.join("\n"));
    assert!(equal >= 20);
}
