//! Runs the function-extra-resources steps of the corpus's Compositions (`../shared/corpus`,
//! read-only; skipped when absent) once each, and checks that the function
//! accepts every real input (its decoding is strict, as upstream's).

#[test]
fn corpus_inputs_decode() {
    let Some(dir) = xfn_fixtures::corpus::corpus_dir() else {
        eprintln!("skipped: ../shared/corpus is not there");
        return;
    };
    let (steps, refused) =
        xfn_fixtures::corpus::input_refusals::<function_extra_resources::ExtraResources>(
            &dir,
            "function-extra-resources",
            &["cannot get Function input"],
        );
    eprintln!("{steps} steps, {} refused", refused.len());
    assert!(steps > 0, "the corpus has no function-extra-resources step");
    assert!(refused.is_empty(), "{}", refused.join("\n"));
}
