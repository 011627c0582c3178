//! function-patch-and-transform's input: a request (JSON, as its fixtures
//! hold one) decoded ([`input::decode`]) and run natively ([`run`]).

use function_patch_and_transform::{input, run};
use xfn_sdk::{Request, Severity};

/// The prefix of the fatal result for an input that does not decode.
const BAD_INPUT: &str = "cannot get Function input:";

/// Reads `data` as a request and runs the function on it. Whatever the
/// input, the function answers with results, never a panic; an input that
/// does not decode is a fatal result that says so; and the same request
/// gets the same response.
pub fn pt_input(data: &[u8]) {
    let Ok(request) = serde_json::from_slice::<Request>(data) else {
        return;
    };
    let decoded = request.input_object().map(input::decode);
    let response = run(&request);
    let fatal = response
        .results
        .iter()
        .find(|r| r.severity == Severity::Fatal);
    if let Some(Err(e)) = &decoded {
        let fatal = fatal.unwrap_or_else(|| panic!("an input that does not decode ran: {e}"));
        assert!(
            fatal.message.starts_with(BAD_INPUT) && fatal.message.ends_with(e.as_str()),
            "the fatal result for an input that does not decode: {}",
            fatal.message
        );
    }
    assert!(
        run(&request) == response,
        "the same request, another response"
    );
}
