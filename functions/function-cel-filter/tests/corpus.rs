//! Runs the function-cel-filter steps of the corpus's Compositions (`../shared/corpus`,
//! read-only; skipped when absent) once each, and checks that the function
//! accepts every real input (its decoding is strict, as upstream's).

#[test]
fn corpus_inputs_decode() {
    let Some(dir) = xfn_fixtures::corpus::corpus_dir() else {
        eprintln!("skipped: ../shared/corpus is not there");
        return;
    };
    let (steps, refused) = xfn_fixtures::corpus::input_refusals::<function_cel_filter::CelFilter>(
        &dir,
        "function-cel-filter",
        &["cannot get filters"],
    );
    eprintln!("{steps} steps, {} refused", refused.len());
    assert!(steps > 0, "the corpus has no function-cel-filter step");
    assert!(refused.is_empty(), "{}", refused.join("\n"));
}
