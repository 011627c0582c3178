//! function-patch-and-transform's requests, as the tests and the benchmark
//! send them to its servers, and the comparison of its answers.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use xfn_sdk as sdk;

/// The docs example (examples/docs) as P&T's request: what `make bench`
/// sends to every server it compares.
pub fn docs_request() -> sdk::Request {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/docs");
    let yaml = |name: &str| -> Value {
        let path = dir.join(name);
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        serde_yaml_ng::from_str(&text)
            .unwrap_or_else(|e| panic!("cannot parse {}: {e}", path.display()))
    };
    let input = yaml("composition.yaml")["spec"]["pipeline"][0]["input"].clone();
    serde_json::from_value(json!({
        "observed": {"composite": {"resource": yaml("xr.yaml")}},
        "input": input,
    }))
    .expect("the docs example is a request")
}

/// The request of every fixture of the P&T port, with its file.
pub fn fixture_requests() -> Vec<(PathBuf, sdk::Request)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../functions/function-patch-and-transform/tests/fixtures");
    crate::fixtures(&dir)
        .into_iter()
        .map(|file| {
            let text = std::fs::read_to_string(&file)
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
            let fixture: Value = serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("{} is not JSON: {e}", file.display()));
            let request = serde_json::from_value(fixture["request"].clone())
                .unwrap_or_else(|e| panic!("{} has no request: {e}", file.display()));
            (file, request)
        })
        .collect()
}

/// Whether two responses are equal as protobuf carries them: a `Struct`
/// holds every number as a double, so 1 and 1.0 are the same number.
pub fn same_on_the_wire(a: &sdk::Response, b: &sdk::Response) -> bool {
    fn doubles(v: Value) -> Value {
        match v {
            Value::Number(n) => n.as_f64().map_or(Value::Number(n), |f| json!(f)),
            Value::Array(items) => Value::Array(items.into_iter().map(doubles).collect()),
            Value::Object(fields) => {
                Value::Object(fields.into_iter().map(|(k, v)| (k, doubles(v))).collect())
            }
            other => other,
        }
    }
    let json = |r: &sdk::Response| doubles(serde_json::to_value(r).expect("serializable"));
    json(a) == json(b)
}

/// How a server answered P&T's fixtures, against the native function.
#[derive(Debug, Default)]
pub struct Answers {
    /// Fixtures answered as the native function does.
    pub same: usize,
    /// Fixtures whose answer the caller set aside (see [`answer_fixtures`]).
    pub set_aside: usize,
    /// What differed or failed: the fixture, and both answers or the error.
    pub differing: Vec<String>,
}

/// Sends each fixture's request through `call` and compares the answer
/// with function-patch-and-transform's own, as protobuf carries it. An
/// answer `set_aside` picks (say, a peer declining input it doesn't
/// implement) is counted apart instead.
pub async fn answer_fixtures<E: std::fmt::Display>(
    fixtures: &[(PathBuf, sdk::Request)],
    mut call: impl AsyncFnMut(&sdk::Request) -> Result<sdk::Response, E>,
    set_aside: impl Fn(&sdk::Response) -> bool,
) -> Answers {
    let mut answers = Answers::default();
    for (file, request) in fixtures {
        let want = function_patch_and_transform::run(request);
        match call(request).await {
            Ok(got) if set_aside(&got) => answers.set_aside += 1,
            Ok(got) if same_on_the_wire(&got, &want) => answers.same += 1,
            Ok(got) => answers.differing.push(format!(
                "{}:\n  native: {want:?}\n  served: {got:?}",
                file.display()
            )),
            Err(e) => answers.differing.push(format!("{}: {e}", file.display())),
        }
    }
    answers
}
