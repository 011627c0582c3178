//! Input validation (validate.go), with Kubernetes `field.Error` messages:
//! `resources[0].name: Required value: name is required`,
//! `...transforms[0].type: Invalid value: "foo": unknown transform type`.

use std::fmt;

use crate::goregex::GoRegex;
use crate::input::{
    Combine, ConnectionDetail, ConvertTransform, MatchTransform, MathTransform, Patch, PatchKind,
    ReadinessCheck, Resources, StringTransform, Transform,
};

/// A bad value in an `Invalid value` error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BadValue {
    /// A Go `string`, printed with `%q`.
    Plain(String),
    /// A named Go string type (e.g. `PatchType`), printed as JSON.
    Typed(String),
}

/// A Kubernetes `field.Error`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// The field path, e.g. `resources[0].patches[1].type`.
    pub field: String,
    /// `None` for `Required value`, else the bad value of `Invalid value`.
    pub bad_value: Option<BadValue>,
    /// The detail.
    pub detail: String,
}

impl FieldError {
    fn required(field: impl Into<String>, detail: impl Into<String>) -> Self {
        FieldError {
            field: field.into(),
            bad_value: None,
            detail: detail.into(),
        }
    }

    fn invalid(field: impl Into<String>, bad: BadValue, detail: impl Into<String>) -> Self {
        FieldError {
            field: field.into(),
            bad_value: Some(bad),
            detail: detail.into(),
        }
    }

    /// Prefixes the field with a parent path (validate.go's `WrapFieldError`).
    pub fn wrap(mut self, parent: impl fmt::Display) -> Self {
        self.field = format!("{parent}.{}", self.field);
        self
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.bad_value {
            None => write!(f, "{}: Required value", self.field)?,
            Some(BadValue::Plain(s)) => write!(
                f,
                "{}: Invalid value: {}",
                self.field,
                crate::gofmt::quote(s)
            )?,
            Some(BadValue::Typed(s)) => {
                let mut j = String::new();
                crate::gojson::encode_string(&mut j, s);
                write!(f, "{}: Invalid value: {j}", self.field)?;
            }
        }
        if !self.detail.is_empty() {
            write!(f, ": {}", self.detail)?;
        }
        Ok(())
    }
}

impl std::error::Error for FieldError {}

fn plain(s: &str) -> BadValue {
    BadValue::Plain(s.to_owned())
}

fn typed(s: &str) -> BadValue {
    BadValue::Typed(s.to_owned())
}

type Result<T = ()> = std::result::Result<T, FieldError>;

/// Validates the whole input; the first error wins.
pub fn validate_resources(r: &Resources) -> Result {
    for ps in &r.patch_sets {
        if ps.name.is_empty() {
            return Err(FieldError::required("name", "name is required"));
        }
        for (i, p) in ps.patches.iter().enumerate() {
            validate_patch(p).map_err(|e| e.wrap(format!("patches[{i}]")))?;
        }
    }
    let env_patches = r.environment.as_ref().map_or(0, |e| e.patches.len());
    if r.resources.is_empty() && env_patches == 0 {
        return Err(FieldError::required(
            "resources",
            "resources or environment patches are required",
        ));
    }
    for (i, t) in r.resources.iter().enumerate() {
        let wrap = |e: FieldError| e.wrap(format!("resources[{i}]"));
        if t.name.is_empty() {
            return Err(wrap(FieldError::required("name", "name is required")));
        }
        for (j, p) in t.patches.iter().enumerate() {
            validate_patch(p).map_err(|e| wrap(e.wrap(format!("patches[{j}]"))))?;
        }
        for (j, cd) in t.connection_details.iter().enumerate() {
            validate_connection_detail(cd)
                .map_err(|e| wrap(e.wrap(format!("connectionDetails[{j}]"))))?;
        }
        for (j, rc) in t.readiness_checks.iter().enumerate() {
            validate_readiness_check(rc)
                .map_err(|e| wrap(e.wrap(format!("readinessChecks[{j}]"))))?;
        }
    }
    if let Some(env) = &r.environment {
        for (i, p) in env.patches.iter().enumerate() {
            match p.patch_type() {
                "FromCompositeFieldPath"
                | "ToCompositeFieldPath"
                | "CombineFromComposite"
                | "CombineToComposite"
                | "FromEnvironmentFieldPath"
                | "ToEnvironmentFieldPath" => {}
                other => {
                    return Err(FieldError::invalid(
                        format!("patches[{i}][type]"),
                        typed(other),
                        "invalid environment patch type",
                    )
                    .wrap("environment"));
                }
            }
            validate_patch(p).map_err(|e| e.wrap(format!("patches[{i}]")).wrap("environment"))?;
        }
    }
    Ok(())
}

/// Validates one patch (`ValidatePatch`).
pub fn validate_patch(p: &Patch) -> Result {
    let t = p.patch_type();
    match t {
        "FromCompositeFieldPath"
        | "ToCompositeFieldPath"
        | "FromEnvironmentFieldPath"
        | "ToEnvironmentFieldPath" => {
            if p.from_field_path().is_empty() {
                return Err(FieldError::required(
                    "fromFieldPath",
                    format!("fromFieldPath must be set for patch type {t}"),
                ));
            }
        }
        "PatchSet" => {
            if p.kind != PatchKind::Composed {
                return Err(FieldError::invalid(
                    "type",
                    typed(t),
                    format!(
                        "patch type {} does not support patch of type {t}",
                        p.kind.go_pointer_type()
                    ),
                ));
            }
            if p.patch_set_name.as_deref().unwrap_or("").is_empty() {
                return Err(FieldError::required(
                    "patchSetName",
                    format!("patchSetName must be set for patch type {t}"),
                ));
            }
        }
        "CombineFromComposite"
        | "CombineToComposite"
        | "CombineFromEnvironment"
        | "CombineToEnvironment" => {
            let Some(c) = &p.combine else {
                return Err(FieldError::required(
                    "combine",
                    format!("combine must be set for patch type {t}"),
                ));
            };
            if p.to_field_path().is_empty() {
                return Err(FieldError::required(
                    "toFieldPath",
                    format!("toFieldPath must be set for patch type {t}"),
                ));
            }
            return validate_combine(c).map_err(|e| e.wrap("combine"));
        }
        other => {
            return Err(FieldError::invalid(
                "type",
                typed(other),
                "unknown patch type",
            ));
        }
    }
    for (i, tr) in p.transforms.iter().enumerate() {
        validate_transform(tr).map_err(|e| e.wrap(format!("transforms[{i}]")))?;
    }
    if let Some(pp) = &p.policy {
        match pp.to_field_path_policy() {
            "Replace"
            | "MergeObjects"
            | "MergeObjectsAppendArrays"
            | "ForceMergeObjects"
            | "ForceMergeObjectsAppendArrays"
            | "MergeObject"
            | "AppendArray" => {}
            other => {
                return Err(FieldError::invalid(
                    "policy.toFieldPathPolicy",
                    typed(other),
                    "unknown toFieldPathPolicy",
                ));
            }
        }
        match pp.from_field_path_policy() {
            "Required" | "Optional" => {}
            other => {
                return Err(FieldError::invalid(
                    "policy.fromFieldPathPolicy",
                    typed(other),
                    "unknown fromFieldPathPolicy",
                ));
            }
        }
    }
    Ok(())
}

fn validate_combine(c: &Combine) -> Result {
    match c.strategy.as_str() {
        "string" => {
            if c.string_fmt.is_none() {
                return Err(FieldError::required(
                    "string",
                    "string must be set for combine strategy string",
                ));
            }
        }
        "" => {
            return Err(FieldError::required(
                "strategy",
                "a combine strategy must be provided",
            ));
        }
        other => {
            return Err(FieldError::invalid(
                "strategy",
                typed(other),
                "unknown strategy type",
            ));
        }
    }
    if c.variables.is_empty() {
        return Err(FieldError::required(
            "variables",
            "at least one variable must be provided",
        ));
    }
    for (i, v) in c.variables.iter().enumerate() {
        if v.is_empty() {
            return Err(FieldError::required(
                format!("variables[{i}].fromFieldPath"),
                "fromFieldPath must be set for each combine variable",
            ));
        }
    }
    Ok(())
}

/// Validates one transform (`ValidateTransform`).
pub fn validate_transform(t: &Transform) -> Result {
    match t.r#type.as_str() {
        "math" => match &t.math {
            None => Err(FieldError::required(
                "math",
                "given transform type math requires configuration",
            )),
            Some(m) => validate_math(m).map_err(|e| e.wrap("math")),
        },
        "map" => match &t.map {
            None => Err(FieldError::required(
                "map",
                "given transform type map requires configuration",
            )),
            Some(m) if m.is_empty() => Err(FieldError::required(
                "pairs",
                "at least one pair must be specified if a map transform is specified",
            )
            .wrap("map")),
            Some(_) => Ok(()),
        },
        "match" => match &t.r#match {
            None => Err(FieldError::required(
                "match",
                "given transform type match requires configuration",
            )),
            Some(m) => validate_match(m).map_err(|e| e.wrap("match")),
        },
        "string" => match &t.string {
            None => Err(FieldError::required(
                "string",
                "given transform type string requires configuration",
            )),
            Some(s) => validate_string(s).map_err(|e| e.wrap("string")),
        },
        "convert" => match &t.convert {
            None => Err(FieldError::required(
                "convert",
                "given transform type convert requires configuration",
            )),
            Some(c) => validate_convert(c).map_err(|e| e.wrap("convert")),
        },
        other => Err(FieldError::invalid(
            "type",
            typed(other),
            "unknown transform type",
        )),
    }
}

/// `ValidateMathTransform`.
pub fn validate_math(m: &MathTransform) -> Result {
    match m.r#type.as_str() {
        "" => Err(FieldError::required(
            "type",
            "math transform type is required",
        )),
        "Multiply" if m.multiply.is_none() => Err(FieldError::required(
            "multiply",
            "must specify a value if a multiply math transform is specified",
        )),
        "ClampMin" if m.clamp_min.is_none() => Err(FieldError::required(
            "clampMin",
            "must specify a value if a clamp min math transform is specified",
        )),
        "ClampMax" if m.clamp_max.is_none() => Err(FieldError::required(
            "clampMax",
            "must specify a value if a clamp max math transform is specified",
        )),
        "Multiply" | "ClampMin" | "ClampMax" => Ok(()),
        other => Err(FieldError::invalid(
            "type",
            typed(other),
            "unknown math transform type",
        )),
    }
}

fn validate_match(m: &MatchTransform) -> Result {
    if m.patterns.is_empty() {
        return Err(FieldError::required(
            "patterns",
            "at least one pattern must be specified if a match transform is specified",
        ));
    }
    for (i, p) in m.patterns.iter().enumerate() {
        let wrap = |e: FieldError| e.wrap(format!("patterns[{i}]"));
        match p.r#type.as_str() {
            "literal" | "" => {
                if p.literal.is_none() {
                    return Err(wrap(FieldError::required(
                        "literal",
                        "literal pattern type requires a literal",
                    )));
                }
            }
            "regexp" => match &p.regexp {
                None => {
                    return Err(wrap(FieldError::required(
                        "regexp",
                        "regexp pattern type requires a regexp",
                    )));
                }
                Some(re) => {
                    if GoRegex::compile(re).is_err() {
                        return Err(wrap(FieldError::invalid(
                            "regexp",
                            plain(re),
                            "invalid regexp",
                        )));
                    }
                }
            },
            other => {
                return Err(wrap(FieldError::invalid(
                    "type",
                    typed(other),
                    "unknown pattern type",
                )));
            }
        }
    }
    Ok(())
}

fn validate_string(s: &StringTransform) -> Result {
    match s.r#type.as_str() {
        "" => Err(FieldError::required(
            "type",
            "string transform type is required",
        )),
        "Format" if s.fmt.is_none() => Err(FieldError::required(
            "fmt",
            "format transform requires a format",
        )),
        "Convert" if s.convert.is_none() => Err(FieldError::required(
            "convert",
            "convert transform requires a conversion type",
        )),
        "TrimPrefix" | "TrimSuffix" if s.trim.is_none() => Err(FieldError::required(
            "trim",
            "trim transform requires a trim value",
        )),
        "Regexp" => match &s.regexp {
            None => Err(FieldError::required(
                "regexp",
                "regexp transform requires a regexp",
            )),
            Some(r) if r.r#match.is_empty() => Err(FieldError::required(
                "regexp.match",
                "regexp transform requires a match",
            )),
            Some(r) => match GoRegex::compile(&r.r#match) {
                Err(_) => Err(FieldError::invalid(
                    "regexp.match",
                    plain(&r.r#match),
                    "invalid regexp",
                )),
                Ok(_) => Ok(()),
            },
        },
        "Join" if s.join.is_none() => Err(FieldError::required(
            "join",
            "join transform requires a join",
        )),
        "Replace" => match &s.replace {
            None => Err(FieldError::required(
                "replace",
                "replace transform requires a replace",
            )),
            Some(r) if r.search.is_empty() => Err(FieldError::required(
                "replace.search",
                "replace transform requires a search",
            )),
            Some(_) => Ok(()),
        },
        "Format" | "Convert" | "TrimPrefix" | "TrimSuffix" | "Join" => Ok(()),
        other => Err(FieldError::invalid(
            "type",
            typed(other),
            "unknown string transform type",
        )),
    }
}

/// `ValidateConvertTransform`.
pub fn validate_convert(c: &ConvertTransform) -> Result {
    if !matches!(c.format(), "none" | "quantity" | "json") {
        return Err(FieldError::invalid(
            "format",
            typed(c.format()),
            "invalid format",
        ));
    }
    if !matches!(
        c.to_type.as_str(),
        "string" | "bool" | "int" | "int64" | "float64" | "object" | "array"
    ) {
        return Err(FieldError::invalid(
            "toType",
            typed(&c.to_type),
            "invalid type",
        ));
    }
    Ok(())
}

/// `ValidateConnectionDetail`.
pub fn validate_connection_detail(cd: &ConnectionDetail) -> Result {
    match cd.r#type.as_str() {
        "" => {
            return Err(FieldError::required(
                "type",
                "connection detail type is required",
            ));
        }
        "FromConnectionSecretKey" | "FromFieldPath" | "FromValue" => {}
        other => {
            return Err(FieldError::invalid(
                "type",
                plain(other),
                "unknown connection detail type",
            ));
        }
    }
    if cd.name.is_empty() {
        return Err(FieldError::required("name", "name is required"));
    }
    match cd.r#type.as_str() {
        "FromValue" if cd.value.is_none() => Err(FieldError::required(
            "value",
            "value connection detail requires a value",
        )),
        "FromConnectionSecretKey" if cd.from_connection_secret_key.is_none() => {
            Err(FieldError::required(
                "fromConnectionSecretKey",
                "from connection secret key connection detail requires a key",
            ))
        }
        "FromFieldPath" if cd.from_field_path.is_none() => Err(FieldError::required(
            "fromFieldPath",
            "from field path connection detail requires a field path",
        )),
        _ => Ok(()),
    }
}

/// `ValidateReadinessCheck`.
pub fn validate_readiness_check(r: &ReadinessCheck) -> Result {
    match r.r#type.as_str() {
        "None" => return Ok(()),
        "MatchString" if r.match_string.is_none() => {
            return Err(FieldError::required(
                "matchString",
                "cannot be nil for type MatchString",
            ));
        }
        "MatchInteger" if r.match_integer.is_none() => {
            return Err(FieldError::required(
                "matchInteger",
                "cannot be nil for type MatchInteger",
            ));
        }
        "MatchCondition" => {
            if let Some(m) = &r.match_condition {
                if m.r#type.is_empty() {
                    return Err(FieldError::required(
                        "type",
                        "cannot be empty for type MatchCondition",
                    )
                    .wrap("matchCondition"));
                }
                if m.status.is_empty() {
                    return Err(FieldError::required(
                        "status",
                        "cannot be empty for type MatchCondition",
                    )
                    .wrap("matchCondition"));
                }
            }
            return Ok(());
        }
        "MatchString" | "MatchInteger" | "NonEmpty" | "MatchTrue" | "MatchFalse" => {}
        other => {
            return Err(FieldError::invalid(
                "type",
                plain(other),
                "unknown readiness check type",
            ));
        }
    }
    if r.field_path.is_none() {
        return Err(FieldError::required("fieldPath", "cannot be empty"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn check(input: Value) -> String {
        let Value::Object(m) = input else { panic!() };
        let r = crate::input::decode(&m).unwrap();
        validate_resources(&r).map_or_else(|e| e.to_string(), |()| "ok".into())
    }

    fn with_patch(p: Value) -> Value {
        json!({"resources": [{"name": "r", "patches": [p]}]})
    }

    fn with_transform(t: Value) -> Value {
        with_patch(json!({"fromFieldPath": "a", "transforms": [t]}))
    }

    #[test]
    fn resources_level() {
        assert_eq!(
            check(json!({})),
            "resources: Required value: resources or environment patches are required"
        );
        assert_eq!(
            check(json!({"resources": [{}]})),
            "resources[0].name: Required value: name is required"
        );
        assert_eq!(
            check(json!({"patchSets": [{}], "resources": []})),
            "name: Required value: name is required"
        );
        assert_eq!(
            check(
                json!({"patchSets": [{"name": "s", "patches": [{"type": "PatchSet"}]}], "resources": [{"name": "r"}]})
            ),
            "patches[0].type: Invalid value: \"PatchSet\": patch type *v1beta1.PatchSetPatch does not support patch of type PatchSet"
        );
        assert_eq!(
            check(json!({"environment": {"patches": [{"fromFieldPath": "a"}]}})),
            "ok"
        );
        assert_eq!(
            check(json!({"environment": {"patches": [{"type": "CombineToEnvironment"}]}})),
            "environment.patches[0][type]: Invalid value: \"CombineToEnvironment\": invalid environment patch type"
        );
        assert_eq!(
            check(json!({"environment": {"patches": [{"type": "ToCompositeFieldPath"}]}})),
            "environment.patches[0].fromFieldPath: Required value: fromFieldPath must be set for patch type ToCompositeFieldPath"
        );
    }

    #[test]
    fn patches() {
        let cases = [
            (
                json!({}),
                "resources[0].patches[0].fromFieldPath: Required value: fromFieldPath must be set for patch type FromCompositeFieldPath",
            ),
            (
                json!({"type": "PatchSet"}),
                "resources[0].patches[0].patchSetName: Required value: patchSetName must be set for patch type PatchSet",
            ),
            (
                json!({"type": "Bogus"}),
                "resources[0].patches[0].type: Invalid value: \"Bogus\": unknown patch type",
            ),
            (
                json!({"type": "CombineFromComposite"}),
                "resources[0].patches[0].combine: Required value: combine must be set for patch type CombineFromComposite",
            ),
            (
                json!({"type": "CombineFromComposite", "combine": {}}),
                "resources[0].patches[0].toFieldPath: Required value: toFieldPath must be set for patch type CombineFromComposite",
            ),
            (
                json!({"type": "CombineFromComposite", "toFieldPath": "x", "combine": {}}),
                "resources[0].patches[0].combine.strategy: Required value: a combine strategy must be provided",
            ),
            (
                json!({"type": "CombineFromComposite", "toFieldPath": "x", "combine": {"strategy": "x"}}),
                "resources[0].patches[0].combine.strategy: Invalid value: \"x\": unknown strategy type",
            ),
            (
                json!({"type": "CombineFromComposite", "toFieldPath": "x", "combine": {"strategy": "string"}}),
                "resources[0].patches[0].combine.string: Required value: string must be set for combine strategy string",
            ),
            (
                json!({"type": "CombineFromComposite", "toFieldPath": "x", "combine": {"strategy": "string", "string": {"fmt": "%s"}}}),
                "resources[0].patches[0].combine.variables: Required value: at least one variable must be provided",
            ),
            (
                json!({"type": "CombineFromComposite", "toFieldPath": "x", "combine": {"strategy": "string", "string": {"fmt": "%s"}, "variables": [{}]}}),
                "resources[0].patches[0].combine.variables[0].fromFieldPath: Required value: fromFieldPath must be set for each combine variable",
            ),
            (
                json!({"fromFieldPath": "a", "policy": {"toFieldPath": "Nope"}}),
                "resources[0].patches[0].policy.toFieldPathPolicy: Invalid value: \"Nope\": unknown toFieldPathPolicy",
            ),
            (
                json!({"fromFieldPath": "a", "policy": {"fromFieldPath": "Nope"}}),
                "resources[0].patches[0].policy.fromFieldPathPolicy: Invalid value: \"Nope\": unknown fromFieldPathPolicy",
            ),
            (
                json!({"fromFieldPath": "a", "policy": {"toFieldPath": "AppendArray", "fromFieldPath": "Required"}}),
                "ok",
            ),
        ];
        for (p, want) in cases {
            assert_eq!(check(with_patch(p.clone())), want, "{p}");
        }
    }

    #[test]
    fn transforms() {
        let p = "resources[0].patches[0].transforms[0]";
        let cases = [
            (
                json!({"type": "nope"}),
                format!("{p}.type: Invalid value: \"nope\": unknown transform type"),
            ),
            (
                json!({}),
                format!("{p}.type: Invalid value: \"\": unknown transform type"),
            ),
            (
                json!({"type": "math"}),
                format!(
                    "{p}.math: Required value: given transform type math requires configuration"
                ),
            ),
            (
                json!({"type": "math", "math": {}}),
                format!("{p}.math.type: Required value: math transform type is required"),
            ),
            (
                json!({"type": "math", "math": {"type": "Multiply"}}),
                format!(
                    "{p}.math.multiply: Required value: must specify a value if a multiply math transform is specified"
                ),
            ),
            (
                json!({"type": "math", "math": {"type": "ClampMin"}}),
                format!(
                    "{p}.math.clampMin: Required value: must specify a value if a clamp min math transform is specified"
                ),
            ),
            (
                json!({"type": "math", "math": {"type": "ClampMax"}}),
                format!(
                    "{p}.math.clampMax: Required value: must specify a value if a clamp max math transform is specified"
                ),
            ),
            (
                json!({"type": "math", "math": {"type": "Divide"}}),
                format!("{p}.math.type: Invalid value: \"Divide\": unknown math transform type"),
            ),
            (
                json!({"type": "map"}),
                format!("{p}.map: Required value: given transform type map requires configuration"),
            ),
            (
                json!({"type": "map", "map": {}}),
                format!(
                    "{p}.map.pairs: Required value: at least one pair must be specified if a map transform is specified"
                ),
            ),
            (
                json!({"type": "match"}),
                format!(
                    "{p}.match: Required value: given transform type match requires configuration"
                ),
            ),
            (
                json!({"type": "match", "match": {}}),
                format!(
                    "{p}.match.patterns: Required value: at least one pattern must be specified if a match transform is specified"
                ),
            ),
            (
                json!({"type": "match", "match": {"patterns": [{}]}}),
                format!(
                    "{p}.match.patterns[0].literal: Required value: literal pattern type requires a literal"
                ),
            ),
            (
                json!({"type": "match", "match": {"patterns": [{"type": "regexp"}]}}),
                format!(
                    "{p}.match.patterns[0].regexp: Required value: regexp pattern type requires a regexp"
                ),
            ),
            (
                json!({"type": "match", "match": {"patterns": [{"type": "regexp", "regexp": "[a-z"}]}}),
                format!("{p}.match.patterns[0].regexp: Invalid value: \"[a-z\": invalid regexp"),
            ),
            (
                json!({"type": "match", "match": {"patterns": [{"type": "glob", "literal": "x"}]}}),
                format!(
                    "{p}.match.patterns[0].type: Invalid value: \"glob\": unknown pattern type"
                ),
            ),
            (
                json!({"type": "string"}),
                format!(
                    "{p}.string: Required value: given transform type string requires configuration"
                ),
            ),
            (
                json!({"type": "string", "string": {}}),
                format!("{p}.string.type: Required value: string transform type is required"),
            ),
            (
                json!({"type": "string", "string": {"type": "Format"}}),
                format!("{p}.string.fmt: Required value: format transform requires a format"),
            ),
            (
                json!({"type": "string", "string": {"type": "Convert"}}),
                format!(
                    "{p}.string.convert: Required value: convert transform requires a conversion type"
                ),
            ),
            (
                json!({"type": "string", "string": {"type": "TrimSuffix"}}),
                format!("{p}.string.trim: Required value: trim transform requires a trim value"),
            ),
            (
                json!({"type": "string", "string": {"type": "Regexp"}}),
                format!("{p}.string.regexp: Required value: regexp transform requires a regexp"),
            ),
            (
                json!({"type": "string", "string": {"type": "Regexp", "regexp": {}}}),
                format!(
                    "{p}.string.regexp.match: Required value: regexp transform requires a match"
                ),
            ),
            (
                json!({"type": "string", "string": {"type": "Regexp", "regexp": {"match": "(a"}}}),
                format!("{p}.string.regexp.match: Invalid value: \"(a\": invalid regexp"),
            ),
            (
                json!({"type": "string", "string": {"type": "Join"}}),
                format!("{p}.string.join: Required value: join transform requires a join"),
            ),
            (
                json!({"type": "string", "string": {"type": "Replace"}}),
                format!("{p}.string.replace: Required value: replace transform requires a replace"),
            ),
            (
                json!({"type": "string", "string": {"type": "Replace", "replace": {"replace": "x"}}}),
                format!(
                    "{p}.string.replace.search: Required value: replace transform requires a search"
                ),
            ),
            (
                json!({"type": "string", "string": {"type": "Upper"}}),
                format!("{p}.string.type: Invalid value: \"Upper\": unknown string transform type"),
            ),
            (
                json!({"type": "convert"}),
                format!(
                    "{p}.convert: Required value: given transform type convert requires configuration"
                ),
            ),
            (
                json!({"type": "convert", "convert": {"toType": "string", "format": "yaml"}}),
                format!("{p}.convert.format: Invalid value: \"yaml\": invalid format"),
            ),
            (
                json!({"type": "convert", "convert": {"toType": "string", "format": ""}}),
                format!("{p}.convert.format: Invalid value: \"\": invalid format"),
            ),
            (
                json!({"type": "convert", "convert": {"toType": "complex"}}),
                format!("{p}.convert.toType: Invalid value: \"complex\": invalid type"),
            ),
            (
                json!({"type": "convert", "convert": {"toType": "int", "format": "quantity"}}),
                "ok".to_owned(),
            ),
            // Upstream TestValidateTransform/ValidConvert: format none, toType int.
            (
                json!({"type": "convert", "convert": {"toType": "int", "format": "none"}}),
                "ok".to_owned(),
            ),
        ];
        for (t, want) in cases {
            assert_eq!(check(with_transform(t.clone())), want, "{t}");
        }
    }

    #[test]
    fn connection_details_and_readiness_checks() {
        let cd = |c: Value| check(json!({"resources": [{"name": "r", "connectionDetails": [c]}]}));
        let p = "resources[0].connectionDetails[0]";
        assert_eq!(
            cd(json!({})),
            format!("{p}.type: Required value: connection detail type is required")
        );
        assert_eq!(
            cd(json!({"type": "X"})),
            format!("{p}.type: Invalid value: \"X\": unknown connection detail type")
        );
        assert_eq!(
            cd(json!({"type": "FromValue"})),
            format!("{p}.name: Required value: name is required")
        );
        assert_eq!(
            cd(json!({"type": "FromValue", "name": "n"})),
            format!("{p}.value: Required value: value connection detail requires a value")
        );
        assert_eq!(
            cd(json!({"type": "FromConnectionSecretKey", "name": "n"})),
            format!(
                "{p}.fromConnectionSecretKey: Required value: from connection secret key connection detail requires a key"
            )
        );
        assert_eq!(
            cd(json!({"type": "FromFieldPath", "name": "n"})),
            format!(
                "{p}.fromFieldPath: Required value: from field path connection detail requires a field path"
            )
        );
        assert_eq!(
            cd(json!({"type": "FromValue", "name": "n", "value": ""})),
            "ok"
        );

        let rc = |c: Value| check(json!({"resources": [{"name": "r", "readinessChecks": [c]}]}));
        let p = "resources[0].readinessChecks[0]";
        assert_eq!(
            rc(json!({"type": "Olala"})),
            format!("{p}.type: Invalid value: \"Olala\": unknown readiness check type")
        );
        assert_eq!(rc(json!({"type": "None"})), "ok");
        assert_eq!(
            rc(json!({"type": "MatchString", "fieldPath": "a"})),
            format!("{p}.matchString: Required value: cannot be nil for type MatchString")
        );
        assert_eq!(
            rc(json!({"type": "MatchInteger", "fieldPath": "a"})),
            format!("{p}.matchInteger: Required value: cannot be nil for type MatchInteger")
        );
        assert_eq!(
            rc(json!({"type": "NonEmpty"})),
            format!("{p}.fieldPath: Required value: cannot be empty")
        );
        assert_eq!(rc(json!({"type": "MatchCondition"})), "ok");
        assert_eq!(
            rc(json!({"type": "MatchCondition", "matchCondition": {"status": "True"}})),
            format!(
                "{p}.matchCondition.type: Required value: cannot be empty for type MatchCondition"
            )
        );
        assert_eq!(
            rc(json!({"type": "MatchCondition", "matchCondition": {"type": "Ready"}})),
            format!(
                "{p}.matchCondition.status: Required value: cannot be empty for type MatchCondition"
            )
        );
    }
}
