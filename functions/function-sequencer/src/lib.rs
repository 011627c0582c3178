//! function-sequencer, ported to Rust for xfn.
//!
//! A port of crossplane-contrib/function-sequencer v0.6.0: for each rule's
//! sequence of composed-resource names (or regular expressions), a resource
//! that does not exist yet is removed from the desired state until every
//! resource matching each name before it is desired and ready; with
//! `enableDeletionSequencing`, Usages keep the reverse order on deletion.
//! Differences from the Go function are listed in the README.

pub mod condition;
pub mod input;
pub mod usage;

use std::collections::BTreeMap;

use serde_json::{Map, Value};
use xfn_gocompat::duration;
use xfn_gocompat::goregex::GoRegex;
use xfn_sdk::{Ready, Request, Resource, Response};

use crate::input::{Input, Rule};

/// The function, for [`xfn_sdk::export!`].
pub struct Sequencer;

impl xfn_sdk::Function for Sequencer {
    fn run(request: &Request) -> Result<Response, xfn_sdk::Error> {
        run(request).map_err(xfn_sdk::Error::from)
    }
}

xfn_sdk::export!(Sequencer);

/// A desired composed resource as function-sdk-go's `DesiredComposed`
/// keeps it: the object and its readiness (connection details are not
/// kept, as the Go SDK does not keep them).
struct Desired {
    object: Map<String, Value>,
    ready: Ready,
}

/// Go's `%v` of a `[]resource.Name`: `[a b c]`.
fn go_list(names: &[String]) -> String {
    format!("[{}]", names.join(" "))
}

/// Go's `getStrictRegex`: a pattern with neither `^` at the start nor `$`
/// at the end must match the whole name.
fn strict_regex(pattern: &str) -> Result<GoRegex, String> {
    if !pattern.starts_with('^') && !pattern.ends_with('$') {
        GoRegex::compile(&format!("^{pattern}$"))
    } else {
        GoRegex::compile(pattern)
    }
}

/// Runs the function on one request (Go's `RunFunction`).
///
/// `Err` is a failed call, as when the Go function returns an error (a
/// sequence whose regular expression does not compile while generating
/// Usages).
pub fn run(req: &Request) -> Result<Response, String> {
    let mut rsp = Response::to(req);
    let input: Input = match xfn_select::input::decode(req, "*v1beta1.Input") {
        Ok(input) => input,
        Err(e) => {
            rsp.fatal(format!(
                "cannot get Function input from *v1.RunFunctionRequest: {e}"
            ));
            return Ok(rsp);
        }
    };
    if let Some(ttl) = input.cache_ttl.as_deref().filter(|t| !t.is_empty()) {
        match duration::parse(ttl) {
            Ok(nanos) => {
                rsp.set_ttl(std::time::Duration::from_nanos(nanos.max(0).unsigned_abs()));
            }
            Err(e) => {
                rsp.fatal(format!("cannot set cacheTTL: {e}"));
                return Ok(rsp);
            }
        }
    }

    let mut desired: BTreeMap<String, Desired> = req
        .desired_composed()
        .iter()
        .map(|(name, r)| {
            let d = Desired {
                object: r.resource.clone().unwrap_or_default(),
                ready: r.ready,
            };
            (name.clone(), d)
        })
        .collect();
    let observed = req.observed_composed();
    let mut usages: BTreeMap<String, Desired> = BTreeMap::new();
    let usage_version = input.usage_version.clone().unwrap_or_default();

    for rule in input.rules.as_deref().unwrap_or_default() {
        let sequence = rule.sequence.clone().unwrap_or_default();
        let condition = rule.condition.as_deref().unwrap_or("");
        let mut skip = false;
        if !condition.is_empty() {
            match condition::evaluate(req, condition) {
                Ok(true) => {}
                Ok(false) => {
                    rsp.normal(format!(
                        "Skipping sequence {}: condition {} evaluated to false",
                        go_list(&sequence),
                        xfn_select::goquote::quote(condition)
                    ));
                    skip = true;
                }
                Err(e) => {
                    rsp.fatal(format!(
                        "cannot evaluate condition {} for sequence {}: {e}",
                        xfn_select::goquote::quote(condition),
                        go_list(&sequence)
                    ));
                    return Ok(rsp);
                }
            }
        }

        if input.enable_deletion_sequencing.unwrap_or(false) {
            observed_usages(
                &sequence,
                observed,
                &desired,
                &mut usages,
                input.replay_deletion.unwrap_or(false),
                &usage_version,
            )
            .map_err(|e| format!("cannot generate usages for sequence: {e}"))?;
        }
        if skip {
            continue;
        }
        if let Some(fatal) = sequence_creation(
            rule,
            &sequence,
            observed,
            &mut desired,
            &mut rsp,
            input.reset_composite_readiness.unwrap_or(false),
        )? {
            rsp.fatal(fatal);
            return Ok(rsp);
        }
    }

    desired.append(&mut usages);
    let state = rsp.desired_mut();
    state.resources = desired
        .into_iter()
        .map(|(name, d)| {
            let mut r = Resource::from_object(d.object);
            r.ready = d.ready;
            (name, r)
        })
        .collect();
    Ok(rsp)
}

/// Delays the creation of the rule's resources whose predecessors are not
/// all ready. Returns a fatal message if a name is not a valid regular
/// expression.
fn sequence_creation(
    rule: &Rule,
    sequence: &[String],
    observed: &BTreeMap<String, Resource>,
    desired: &mut BTreeMap<String, Desired>,
    rsp: &mut Response,
    reset_composite_readiness: bool,
) -> Result<Option<String>, String> {
    for (i, r) in sequence.iter().enumerate() {
        if i == 0 || observed.contains_key(r) || rule.delete_only.unwrap_or(false) {
            continue;
        }
        for before in &sequence[..i] {
            let before_re = match strict_regex(before) {
                Ok(re) => re,
                Err(e) => return Ok(Some(format!("cannot compile regex {before}: {e}"))),
            };
            let keys: Vec<&String> = desired.keys().filter(|k| before_re.is_match(k)).collect();
            let wanted = keys.len();
            let ready = keys
                .iter()
                .filter(|k| desired.get(**k).is_some_and(|d| d.ready == Ready::True))
                .count();
            let current_re = match strict_regex(r) {
                Ok(re) => re,
                Err(e) => return Ok(Some(format!("cannot compile regex {r}: {e}"))),
            };
            if wanted != 0 && wanted == ready {
                continue;
            }
            let quote = xfn_select::goquote::quote;
            let message = if wanted > 0 {
                format!(
                    "Delaying creation of resource(s) matching {} because {} is not fully ready ({ready} of {wanted})",
                    quote(r),
                    quote(before)
                )
            } else {
                format!(
                    "Delaying creation of resource(s) matching {} because {} does not exist yet",
                    quote(r),
                    quote(before)
                )
            };
            rsp.normal(message);
            let delayed: Vec<String> = desired
                .keys()
                .filter(|k| current_re.is_match(k) && !observed.contains_key(*k))
                .cloned()
                .collect();
            for k in delayed {
                desired.remove(&k);
                if reset_composite_readiness {
                    // Go sets the desired composite's readiness and crashes
                    // if the request has no desired composite.
                    let composite = rsp
                        .desired
                        .as_mut()
                        .and_then(|d| d.composite.as_mut())
                        .ok_or("resetCompositeReadiness: the request has no desired composite resource")?;
                    composite.ready = Ready::False;
                }
            }
            break;
        }
    }
    Ok(None)
}

/// Go's `generateObservedUsages`: a Usage for every observed resource
/// matching a name of the sequence (not a Usage itself) of every observed
/// and desired resource matching the name before it.
fn observed_usages(
    sequence: &[String],
    observed: &BTreeMap<String, Resource>,
    desired: &BTreeMap<String, Desired>,
    usages: &mut BTreeMap<String, Desired>,
    replay_deletion: bool,
    usage_version: &str,
) -> Result<(), String> {
    let empty = Map::new();
    let object = |r: &Resource| r.resource.clone().unwrap_or_else(|| empty.clone());
    for i in 1..sequence.len() {
        let by_re = strict_regex(&sequence[i])
            .map_err(|e| format!("cannot compile regex {}: {e}", sequence[i]))?;
        let of_re = strict_regex(&sequence[i - 1])
            .map_err(|e| format!("cannot compile regex {}: {e}", sequence[i - 1]))?;
        for (c, by) in observed {
            let by = object(by);
            if !by_re.is_match(c) || usage::is_usage(&by, usage_version) {
                continue;
            }
            for k in desired.keys().filter(|k| of_re.is_match(k)) {
                let Some(of) = observed.get(k) else {
                    continue;
                };
                let u = usage::generate_usage(&object(of), &by, replay_deletion, usage_version);
                usages.insert(
                    format!("{c}-{k}-usage"),
                    Desired {
                        object: u,
                        ready: Ready::True,
                    },
                );
            }
        }
    }
    Ok(())
}
