//! Runs the function-status-transformer steps of the corpus's Compositions (`../shared/corpus`,
//! read-only; skipped when absent) once each, and checks that the function
//! accepts every real input (its decoding is strict, as upstream's).

#[test]
fn corpus_inputs_decode() {
    let Some(dir) = xfn_fixtures::corpus::corpus_dir() else {
        eprintln!("skipped: ../shared/corpus is not there");
        return;
    };
    let (steps, refused) =
        xfn_fixtures::corpus::input_refusals::<function_status_transformer::StatusTransformer>(
            &dir,
            "function-status-transformer",
            &["cannot get Function input"],
        );
    eprintln!("{steps} steps, {} refused", refused.len());
    assert!(
        steps > 0,
        "the corpus has no function-status-transformer step"
    );
    // Upstream's own example still carries the function template's
    // placeholder input (`example: "Hello world"`), which v0.5.1 refuses
    // too (go-json-experiment: unknown name "example").
    let expected = [
        "crossplane-contrib__function-status-transformer/example/composition.yaml [run-the-template]: \
         cannot get Function input from *v1.RunFunctionRequest: cannot get function input \
         *v1beta1.StatusTransformation from *v1.RunFunctionRequest: cannot unmarshal JSON from \
         *structpb.Struct into *v1beta1.StatusTransformation: json: cannot unmarshal Go value of \
         type v1beta1.StatusTransformation: unknown name \"example\"",
    ];
    assert_eq!(refused, expected, "{}", refused.join("\n"));
}
