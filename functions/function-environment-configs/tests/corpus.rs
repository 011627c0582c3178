//! Runs the function-environment-configs steps of the corpus's Compositions
//! (`../shared/corpus`, read-only; skipped when absent) through the
//! required-resources loop with the EnvironmentConfigs the corpus keeps for
//! them, and checks that each one builds an environment without a fatal
//! result.

use xfn_sdk::{CONTEXT_KEY_ENVIRONMENT, Severity};

#[test]
fn corpus_steps_build_an_environment() {
    let Some(dir) = xfn_fixtures::corpus::corpus_dir() else {
        eprintln!("skipped: ../shared/corpus is not there");
        return;
    };
    let outcomes = xfn_fixtures::corpus::run_steps::<
        function_environment_configs::EnvironmentConfigs,
    >(&dir, "function-environment-configs", None);
    assert!(
        !outcomes.is_empty(),
        "the corpus has no function-environment-configs step"
    );
    let mut failures = Vec::new();
    for o in &outcomes {
        let problem = match &o.response {
            Err(e) => Some(e.clone()),
            Ok(rsp) => {
                let fatal = rsp.results.iter().find(|r| r.severity == Severity::Fatal);
                let env = rsp
                    .context
                    .as_ref()
                    .and_then(|c| c.get(CONTEXT_KEY_ENVIRONMENT));
                match (fatal, env) {
                    (Some(f), _) => Some(format!("fatal: {}", f.message)),
                    // Nothing required (every label optional and missing):
                    // Crossplane does not call again, and there is no environment.
                    (None, None)
                        if rsp
                            .requirements
                            .as_ref()
                            .is_none_or(|r| r.resources.is_empty()) =>
                    {
                        eprintln!("{} [{}]: nothing required", o.composition, o.step);
                        None
                    }
                    (None, None) => Some("no environment".to_owned()),
                    (None, Some(env)) => {
                        eprintln!(
                            "{} [{}]: {} keys",
                            o.composition,
                            o.step,
                            env.as_object().map_or(0, |e| e.len())
                        );
                        None
                    }
                }
            }
        };
        if let Some(p) = problem {
            failures.push(format!("{} [{}]: {p}", o.composition, o.step));
        }
    }
    eprintln!("{} steps, {} failed", outcomes.len(), failures.len());
    // The corpus keeps no EnvironmentConfig named dns-config for this one
    // (its repository does not have it): the step rightly fails.
    let expected = [
        "open-service-portal__template-whoami/configuration/composition.yaml [load-environment]: \
         fatal: cannot get selected environment configs: cannot process environment config \
         \"dns-config\" by reference, \"environment-config-0\": Required environment config \
         \"dns-config\" not found",
    ];
    assert_eq!(failures, expected, "{}", failures.join("\n"));
}
