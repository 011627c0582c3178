//! function-patch-and-transform's input as the pinned version reads it.
//!
//! Versions up to v0.3.0 were built with function-sdk-go v0.1.0, whose
//! `GetInput` decoded the input without `RejectUnknownMembers`, so they
//! ignored input fields they didn't know. From v0.4.0 (function-sdk-go
//! v0.2.0) an unknown field is a fatal result, and xfn's port, which
//! follows the latest version, refuses them too. For a Function whose
//! package tag is v0.3.0 or older, render drops the fields the port
//! doesn't know from that Function's step inputs before the call, and
//! says which. Fields that later versions added and the port knows are
//! kept and honoured: only the unknown-field rule follows the pin.

use serde_json::Value;

use super::object::{name, str_at};
use super::resources_mode::PATCH_AND_TRANSFORM;

/// The last version that ignored unknown input fields.
const LAST_LENIENT: Version = Version {
    major: 0,
    minor: 3,
    patch: 0,
    release: true,
};

/// Drops the input fields the port doesn't know from every pipeline step
/// whose Function is function-patch-and-transform v0.3.0 or older. Returns
/// one note per step that had any, naming them and the rule.
pub fn drop_unknown_fields(composition: &mut Value, functions: &[Value]) -> Vec<String> {
    let Some(steps) = composition
        .pointer_mut("/spec/pipeline")
        .and_then(Value::as_array_mut)
    else {
        return Vec::new();
    };
    let mut notes = Vec::new();
    for step in steps {
        let function_name = str_at(step, &["functionRef", "name"]).to_owned();
        let Some(tag) = functions
            .iter()
            .find(|f| name(f) == function_name)
            .and_then(|f| lenient_tag(str_at(f, &["spec", "package"])))
        else {
            continue;
        };
        let step_name = str_at(step, &["step"]).to_owned();
        let Some(input) = step.get_mut("input") else {
            continue;
        };
        let dropped = function_patch_and_transform::input::drop_unknown_members(input);
        if dropped.is_empty() {
            continue;
        }
        notes.push(format!(
            "pipeline step {step_name:?}: Function {function_name:?} pins {PATCH_AND_TRANSFORM} {tag}; versions up to v0.3.0 \
             ignored input fields they didn't know (later ones refuse them, as xfn's port does), so xfn drops them: {}",
            dropped.join(", ")
        ));
    }
    notes
}

/// The tag of a function-patch-and-transform package at v0.3.0 or older.
fn lenient_tag(package: &str) -> Option<&str> {
    let reference = package.split('@').next().unwrap_or(package);
    let last = reference.rsplit('/').next().unwrap_or(reference);
    let (repository, tag) = last.split_once(':')?;
    (repository == PATCH_AND_TRANSFORM && Version::parse(tag)? <= LAST_LENIENT).then_some(tag)
}

/// A release's semantic version; a pre-release sorts before its release.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Version {
    major: u64,
    minor: u64,
    patch: u64,
    /// Not a pre-release: `true` sorts after `false`, so `v1.0.0-rc.1`
    /// comes before `v1.0.0`.
    release: bool,
}

impl Version {
    /// `v1.2.3`, `1.2.3`, `v1.2.3-rc.1` or `v1.2.3+build`; anything else,
    /// such as `latest`, is no version.
    fn parse(tag: &str) -> Option<Version> {
        let tag = tag.strip_prefix('v').unwrap_or(tag);
        let tag = tag.split('+').next().unwrap_or(tag);
        let (core, pre_release) = match tag.split_once('-') {
            Some((core, pre)) if !pre.is_empty() => (core, true),
            Some(_) => return None,
            None => (tag, false),
        };
        let mut numbers = core.split('.').map(|n| {
            (!n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
                .then(|| n.parse::<u64>().ok())
                .flatten()
        });
        let version = Version {
            major: numbers.next()??,
            minor: numbers.next()??,
            patch: numbers.next()??,
            release: !pre_release,
        };
        numbers.next().is_none().then_some(version)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_patch_and_transform_up_to_v0_3_0_is_lenient() {
        let pt = |tag: &str| {
            format!("xpkg.crossplane.io/crossplane-contrib/function-patch-and-transform:{tag}")
        };
        for old in [
            "v0.1.0",
            "v0.2.1",
            "v0.3.0",
            "0.3.0",
            "v0.3.0-rc.1",
            "v0.3.0+build",
        ] {
            assert_eq!(lenient_tag(&pt(old)), Some(old), "{old}");
        }
        for new in [
            "v0.3.1",
            "v0.4.0",
            "v0.4.0-rc.0",
            "v1.0.0",
            "latest",
            "v0.3",
            "v0.3.0.1",
            "v0.3.0-",
        ] {
            assert_eq!(lenient_tag(&pt(new)), None, "{new}");
        }
        assert_eq!(
            lenient_tag("localhost:5000/function-patch-and-transform:v0.2.0@sha256:abcd"),
            Some("v0.2.0")
        );
        assert_eq!(
            lenient_tag(
                "xpkg.crossplane.io/crossplane-contrib/function-patch-and-transform@sha256:abcd"
            ),
            None
        );
        assert_eq!(
            lenient_tag("xpkg.crossplane.io/crossplane-contrib/function-go-templating:v0.2.0"),
            None
        );
    }

    fn composition() -> Value {
        json!({"spec": {"mode": "Pipeline", "pipeline": [
            {"step": "old", "functionRef": {"name": "pt-old"}, "input": {
                "apiVersion": "pt.fn.crossplane.io/v1beta1", "kind": "Resources",
                "resources": [{"name": "a", "base": {"kind": "X", "unknownInBase": 1}, "readinessCheck": []}]}},
            {"step": "new", "functionRef": {"name": "pt-new"}, "input": {
                "apiVersion": "pt.fn.crossplane.io/v1beta1", "kind": "Resources",
                "resources": [{"name": "a", "readinessCheck": []}]}}]}})
    }

    #[test]
    fn unknown_fields_go_only_from_old_patch_and_transform_steps() {
        let functions = [
            json!({"metadata": {"name": "pt-old"}, "spec": {"package": "xpkg.crossplane.io/crossplane-contrib/function-patch-and-transform:v0.2.1"}}),
            json!({"metadata": {"name": "pt-new"}, "spec": {"package": "xpkg.crossplane.io/crossplane-contrib/function-patch-and-transform:v0.4.0"}}),
        ];
        let mut c = composition();
        let notes = drop_unknown_fields(&mut c, &functions);
        assert_eq!(
            notes,
            [
                "pipeline step \"old\": Function \"pt-old\" pins function-patch-and-transform v0.2.1; versions up to v0.3.0 \
              ignored input fields they didn't know (later ones refuse them, as xfn's port does), so xfn drops them: \
              /resources/0/readinessCheck"
            ]
        );
        assert_eq!(
            c["spec"]["pipeline"][0]["input"]["resources"][0],
            json!({"name": "a", "base": {"kind": "X", "unknownInBase": 1}})
        );
        assert_eq!(
            c["spec"]["pipeline"][1],
            composition()["spec"]["pipeline"][1]
        );
    }

    #[test]
    fn known_inputs_and_other_shapes_are_left_alone() {
        let functions = [
            json!({"metadata": {"name": "pt-old"}, "spec": {"package": "function-patch-and-transform:v0.1.0"}}),
        ];
        let mut c = json!({"spec": {"pipeline": [{"step": "s", "functionRef": {"name": "pt-old"},
                                                  "input": {"resources": []}}, {"step": "no-input", "functionRef": {"name": "pt-old"}}]}});
        let before = c.clone();
        assert!(drop_unknown_fields(&mut c, &functions).is_empty());
        assert_eq!(c, before);
        assert!(drop_unknown_fields(&mut json!({"spec": {}}), &functions).is_empty());
    }
}
