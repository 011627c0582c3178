#!/usr/bin/env python3
"""Writes the render golden cases: inputs, arguments and expected documents.

Each case directory under tests/render/cases/ holds its inputs, `args` (the
arguments to `xfn render`; ${WASM} is the directory of the test components)
and either `expected.json` (the documents render must print, one JSON object
per line) or `expected-error.txt` (the exact error line on stderr).

`regenerate.sh` runs this script, then turns every expected.json into
expected.yaml with the reference YAML emitter (go-yaml v2, as crossplane
render prints). The tests compare xfn's stdout with expected.yaml byte for
byte and never need Go.
"""
import json
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(HERE, "cases")
T = "2024-01-01T00:00:00Z"
FN = "function-scripted"
WASM_ARG = ["-a", "render.crossplane.io/runtime-wasm-module=${WASM}/xfn_test_scripted.wasm"]


def xr(name="test-render", namespace=None, labels=None, spec=None, api="nop.example.org/v1alpha1", kind="XNopResource"):
    meta = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    if labels:
        meta["labels"] = labels
    return {"apiVersion": api, "kind": kind, "metadata": meta, "spec": spec if spec is not None else {"coolField": "I'm cool!"}}


def composition(steps, mode="Pipeline", labels=None, api="nop.example.org/v1alpha1", kind="XNopResource"):
    meta = {"name": "test-composition"}
    if labels:
        meta["labels"] = labels
    spec = {"compositeTypeRef": {"apiVersion": api, "kind": kind}}
    if mode is not None:
        spec["mode"] = mode
    spec["pipeline"] = steps
    return {"apiVersion": "apiextensions.crossplane.io/v1", "kind": "Composition", "metadata": meta, "spec": spec}


def step(input_, name="test", function=FN, **extra):
    s = {"step": name, "functionRef": {"name": function}, "input": input_}
    s.update(extra)
    return s


def function(name=FN, annotations=None, api="pkg.crossplane.io/v1", kind="Function"):
    meta = {"name": name}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": api, "kind": kind, "metadata": meta, "spec": {"package": "xpkg.xfn.dev/xfn/function-scripted:v0.1.0"}}


def cond(type_, status, reason, message=None, time=T):
    c = {"lastTransitionTime": time, "reason": reason, "status": status, "type": type_}
    if message:
        c["message"] = message
    return c


def composed(api, kind, res_name, spec, xr_name="test-render", namespace=None, labels=None, name=None, xr_api="nop.example.org/v1alpha1", xr_kind="XNopResource", prefix=None):
    meta = {
        "annotations": {"crossplane.io/composition-resource-name": res_name},
        "generateName": (prefix or xr_name) + "-",
        "labels": labels or {"crossplane.io/composite": prefix or xr_name},
        "ownerReferences": [{"apiVersion": xr_api, "blockOwnerDeletion": True, "controller": True, "kind": xr_kind, "name": xr_name, "uid": ""}],
    }
    if namespace:
        meta["namespace"] = namespace
    if name:
        meta["name"] = name
    doc = {"apiVersion": api, "kind": kind, "metadata": meta}
    if spec is not None:
        doc["spec"] = spec
    return doc


def out_xr(status, name="test-render", namespace=None, api="nop.example.org/v1alpha1", kind="XNopResource"):
    meta = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    return {"apiVersion": api, "kind": kind, "metadata": meta, "status": status}


def result(severity, message, step_="test"):
    return {"apiVersion": "render.crossplane.io/v1beta1", "kind": "Result", "message": message, "severity": severity, "step": step_}


def context_doc(fields):
    return {"apiVersion": "render.crossplane.io/v1beta1", "fields": fields, "kind": "Context"}


A_COOL = {"apiVersion": "btest.crossplane.io/v1", "kind": "BComposed", "spec": {"widgets": 9002}}
B_COOL = {"apiVersion": "atest.crossplane.io/v1", "kind": "AComposed", "spec": {"widgets": 9003}}
UNREADY_AB = "Unready resources: a-cool-resource, b-cool-resource"


def two_resources(ready=None):
    a, b = {"resource": A_COOL}, {"resource": B_COOL}
    if ready:
        a["ready"] = ready
        b["ready"] = ready
    return {"a-cool-resource": a, "b-cool-resource": b}


def two_composed(**kw):
    return [
        composed("btest.crossplane.io/v1", "BComposed", "a-cool-resource", {"widgets": 9002}, **kw),
        composed("atest.crossplane.io/v1", "AComposed", "b-cool-resource", {"widgets": 9003}, **kw),
    ]


PROVISIONED = {"type": "ProvisioningSuccess", "status": "STATUS_CONDITION_TRUE", "reason": "Provisioned",
               "message": "Provisioned successfully", "target": "TARGET_COMPOSITE_AND_CLAIM"}

cases = {}


def case(name, files, args=None, expected=None, error=None):
    cases[name] = (files, args or [], expected, error)


def standard(input_, extra_files=None, xr_=None, functions=None, **kw):
    files = {"xr.yaml": [xr_ or xr()], "composition.yaml": [composition([step(input_)])], "functions.yaml": functions or [function()]}
    files.update(extra_files or {})
    return files


# C1: success, unready resources, a custom condition.
case("c1-success", standard({"response": {
    "desired": {"composite": {"resource": {"status": {"widgets": 9001, "conditions": [
        cond("Ready", "False", "Creating", UNREADY_AB)]}}}, "resources": two_resources()},
    "conditions": [PROVISIONED]}}),
    expected=[out_xr({"conditions": [cond("Ready", "False", "Creating", UNREADY_AB),
                                     cond("ProvisioningSuccess", "True", "Provisioned", "Provisioned successfully")],
                      "widgets": 9001})] + two_composed())

# C2: every resource ready; the function's Ready condition is replaced in place.
case("c2-ready", standard({"response": {
    "desired": {"composite": {"resource": {"status": {"widgets": 9001, "conditions": [
        cond("Ready", "False", "Creating", UNREADY_AB)]}}}, "resources": two_resources("READY_TRUE")}}}),
    expected=[out_xr({"conditions": [cond("Ready", "True", "Available")], "widgets": 9001})] + two_composed())

# C3: readiness precedence.
case("c3-composite-false-wins", standard({"response": {
    "desired": {"composite": {"resource": {}, "ready": "READY_FALSE"}, "resources": two_resources()}}}),
    expected=[out_xr({"conditions": [cond("Ready", "False", "Creating")]})] + two_composed())
case("c3-composite-true-wins", standard({"response": {
    "desired": {"composite": {"resource": {}, "ready": "READY_TRUE"}, "resources": two_resources()}}}),
    expected=[out_xr({"conditions": [cond("Ready", "True", "Available")]})] + two_composed())
case("c3-composite-false-alone", standard({"response": {
    "desired": {"composite": {"resource": {}, "ready": "READY_FALSE"}}}}),
    expected=[out_xr({"conditions": [cond("Ready", "False", "Creating")]})])
case("c3-no-resources-available", standard({"response": {"desired": {}}}),
    expected=[out_xr({"conditions": [cond("Ready", "True", "Available")]})])
case("c3-many-unready", standard({"response": {"desired": {"resources": {
    n: {"resource": {"apiVersion": "v1", "kind": "ConfigMap"}} for n in ["e", "d", "c", "b", "a"]}}}}),
    expected=[out_xr({"conditions": [cond("Ready", "False", "Creating", "Unready resources: a, b, c, and 2 more")]})]
    + [composed("v1", "ConfigMap", n, None) for n in ["a", "b", "c", "d", "e"]])

# C4: requirements are resolved from --required-resources; two calls.
REQ = {"extraResources": {"extra-resource-by-name": {"apiVersion": "test.crossplane.io/v1", "kind": "Foo", "matchName": "extra-resource"}}}
FOO = {"apiVersion": "test.crossplane.io/v1", "kind": "Foo", "metadata": {"name": "extra-resource"}, "spec": {"foo": "bar"}}
C4_INPUT = {"count": True, "response": {"requirements": REQ},
            "afterRequirements": {"requirements": REQ, "desired": {"composite": {"resource": {"status": {"widgets": "bar"}}},
                                                                   "resources": two_resources("READY_TRUE")}}}
C4_EXPECTED = [out_xr({"conditions": [cond("Ready", "True", "Available")], "widgets": "bar"})] + two_composed() + [
    context_doc({"xfn.test/calls": 2})]
case("c4-required-resources", standard(C4_INPUT, {"required.yaml": [FOO]}), ["-e", "required.yaml", "-c"], C4_EXPECTED)
case("flag-extra-resources", standard(C4_INPUT, {"extra.yaml": [FOO]}), ["--extra-resources", "extra.yaml", "-c"], C4_EXPECTED)
case("c4-required-resources-missing", standard(C4_INPUT, {"required.yaml": [dict(FOO, metadata={"name": "other"})]}),
     ["-e", "required.yaml", "-c"],
     [out_xr({"conditions": [cond("Ready", "True", "Available")], "widgets": "bar"})] + two_composed() + [
         context_doc({"xfn.test/calls": 2})])

# C5: a namespaced XR composes into its namespace.
case("c5-namespaced", standard({"response": {"desired": {"resources": {"a-cool-resource": {"resource": A_COOL, "ready": "READY_TRUE"}}}}},
                               xr_=xr(namespace="test-namespace")),
     expected=[out_xr({"conditions": [cond("Ready", "True", "Available")]}, namespace="test-namespace"),
               composed("btest.crossplane.io/v1", "BComposed", "a-cool-resource", {"widgets": 9002}, namespace="test-namespace")])

# C7: metadata from a nested XR and claim labels.
case("c7-nested-and-claim", standard({"response": {"desired": {"resources": {"a-cool-resource": {"resource": A_COOL, "ready": "READY_TRUE"}}}}},
                                     xr_=xr(name="root-xr-child", labels={"crossplane.io/composite": "root-xr",
                                                                          "crossplane.io/claim-name": "my-claim",
                                                                          "crossplane.io/claim-namespace": "claim-ns"})),
     expected=[out_xr({"conditions": [cond("Ready", "True", "Available")]}, name="root-xr-child"),
               composed("btest.crossplane.io/v1", "BComposed", "a-cool-resource", {"widgets": 9002}, xr_name="root-xr-child",
                        prefix="root-xr", labels={"crossplane.io/composite": "root-xr", "crossplane.io/claim-name": "my-claim",
                                                  "crossplane.io/claim-namespace": "claim-ns"})])

# Flags.
case("flag-results", standard({"response": {"results": [
    {"severity": "SEVERITY_NORMAL", "message": "normal"},
    {"severity": "SEVERITY_WARNING", "message": "warning: 'quoted' and long enough to fold past the eightieth column of the output"},
    {"severity": "SEVERITY_UNSPECIFIED", "message": "unspecified"}]}}), ["-r"],
    [out_xr({"conditions": [cond("Ready", "True", "Available")]}), result("SEVERITY_NORMAL", "normal"),
     result("SEVERITY_WARNING", "warning: 'quoted' and long enough to fold past the eightieth column of the output"),
     result("SEVERITY_UNSPECIFIED", "unspecified")])
case("flag-full-xr", standard({"response": {"desired": {"composite": {"resource": {"status": {"x": 1}}}}}},
                              xr_=xr(labels={"team": "a"}, spec={"coolField": "yes", "n": 1})), ["-x"],
     [{"apiVersion": "nop.example.org/v1alpha1", "kind": "XNopResource",
       "metadata": {"labels": {"team": "a"}, "name": "test-render"}, "spec": {"coolField": "yes", "n": 1},
       "status": {"conditions": [cond("Ready", "True", "Available")], "x": 1}}])
OBSERVED_A = {"apiVersion": "btest.crossplane.io/v1", "kind": "BComposed",
              "metadata": {"name": "test-render-abc12", "generateName": "test-render-",
                           "annotations": {"crossplane.io/composition-resource-name": "a-cool-resource"}},
              "spec": {"widgets": 1}}
case("flag-observed", standard({"response": {"desired": {"resources": two_resources()}}}, {"observed.yaml": [OBSERVED_A]}),
     ["-o", "observed.yaml"],
     [out_xr({"conditions": [cond("Ready", "False", "Creating", UNREADY_AB)]}),
      composed("btest.crossplane.io/v1", "BComposed", "a-cool-resource", {"widgets": 9002}, name="test-render-abc12"),
      composed("atest.crossplane.io/v1", "AComposed", "b-cool-resource", {"widgets": 9003})])
case("flag-context", standard({}, {"env.yaml": [{"fromFile": True, "overridden": False}]}),
     ["--context-files", "apiextensions.crossplane.io/environment=env.yaml", "--context-files", "other=env.yaml",
      "--context-values", "other={\"fromValue\": [1, 2]}", "--context-values", "plain=text", "-c"],
     [out_xr({"conditions": [cond("Ready", "True", "Available")]}),
      context_doc({"apiextensions.crossplane.io/environment": {"fromFile": True, "overridden": False},
                   "other": {"fromValue": [1, 2]}, "plain": "text"})])
case("flag-context-dropped", standard({"response": {"context": None}}), ["-c"],
     [out_xr({"conditions": [cond("Ready", "True", "Available")]}), None])
SECRET = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "creds", "namespace": "crossplane-system"},
          "data": {"password": "aHVudGVyMg=="}}
CRED_STEP = step({"response": {"desired": {"composite": {"resource": {"status": {"ok": True}}}}}},
                 credentials=[{"name": "db", "source": "Secret", "secretRef": {"name": "creds", "namespace": "crossplane-system"}}])
case("flag-credentials", {"xr.yaml": [xr()], "composition.yaml": [composition([step({"echo": True}, credentials=CRED_STEP["credentials"])])],
                          "functions.yaml": [function()], "secrets.yaml": [SECRET]},
     ["--function-credentials", "secrets.yaml", "-c"], None)
case("flag-credentials-missing", {"xr.yaml": [xr()], "composition.yaml": [composition([CRED_STEP])], "functions.yaml": [function()],
                                  "secrets.yaml": [dict(SECRET, metadata={"name": "creds", "namespace": "other"})]},
     ["--function-credentials", "secrets.yaml"],
     error='xfn: error: cannot render composite resource: cannot get credentials from secret "creds": secret "creds" not found')
SCHEMA_STEP = step({"echo": True}, requirements={"requiredSchemas": [{"requirementName": "xr", "apiVersion": "nop.example.org/v1alpha1", "kind": "XNopResource"}]})
case("flag-schemas", {"xr.yaml": [xr()], "composition.yaml": [composition([SCHEMA_STEP])], "functions.yaml": [function()],
                      "schemas/nop.json": {"openapi": "3.0.0", "components": {"schemas": {"io.example.nop.v1alpha1.XNopResource": {
                          "type": "object", "x-kubernetes-group-version-kind": [{"group": "nop.example.org", "version": "v1alpha1", "kind": "XNopResource"}],
                          "properties": {"spec": {"$ref": "#/components/schemas/Spec"}}}, "Spec": {"type": "object"}}}}},
     ["-s", "schemas", "-c"], None)
case("flag-schemas-empty-dir", standard({}, {"schemas/README.md": "no JSON here\n"}), ["-s", "schemas"],
     error='xfn: error: cannot load required schemas from "schemas": no JSON files found')
XRD = {"apiVersion": "apiextensions.crossplane.io/v2", "kind": "CompositeResourceDefinition", "metadata": {"name": "xnopresources.nop.example.org"},
       "spec": {"group": "nop.example.org", "names": {"kind": "XNopResource", "plural": "xnopresources"},
                "versions": [{"name": "v1alpha1", "served": True, "referenceable": True, "schema": {"openAPIV3Schema": {
                    "type": "object", "properties": {"spec": {"type": "object", "properties": {
                        "coolField": {"type": "string"}, "region": {"type": "string", "default": "us-east-2"}}}}}}}]}}
case("flag-xrd", standard({}, {"xrd.yaml": [XRD]}), ["--xrd", "xrd.yaml", "-x"],
     [{"apiVersion": "nop.example.org/v1alpha1", "kind": "XNopResource", "metadata": {"name": "test-render"},
       "spec": {"coolField": "I'm cool!", "region": "us-east-2"}, "status": {"conditions": [cond("Ready", "True", "Available")]}}])
case("flag-timeout", standard({"fault": "loop"}), ["--timeout", "1s"],
     error='xfn: error: cannot render composite resource: cannot run pipeline step "test": function "function-scripted" timed out after 1s (if it needs longer, raise --timeout)')
case("flag-annotation-docker", standard({}), ["-a", "render.crossplane.io/runtime=Docker"],
     error='xfn: error: cannot render composite resource: cannot start function runtimes: cannot get runtime for Function "function-scripted": '
           'xfn runs functions without Docker: remove the "render.crossplane.io/runtime" annotation (or set it to "Wasm") to run the function as a wasm component, '
           'or set it to "Development" to call a function you run yourself over gRPC')
case("flag-annotation-bad", standard({}), ["-a", "no-equals-sign"],
     error='xfn: error: invalid function annotation "no-equals-sign": want KEY=VALUE')
case("functions-directory", {"xr.yaml": [xr()], "composition.yaml": [composition([step({}, name="one"), step({}, name="two", function="function-other")])],
                             "fns/a.yaml": [function()], "fns/b.yml": [function(name="function-other")], "fns/ignored.txt": "not yaml\n"},
     ["-r"], [out_xr({"conditions": [cond("Ready", "True", "Available")]})])
case("multi-step", {"xr.yaml": [xr()], "composition.yaml": [composition([
    step({"response": {"desired": {"resources": {"first": {"resource": A_COOL}}}, "results": [{"severity": "SEVERITY_NORMAL", "message": "one"}]}}, name="one"),
    step({"response": {"results": [{"severity": "SEVERITY_WARNING", "message": "two"}]}}, name="two")])],
    "functions.yaml": [function()]}, ["-r"],
    [out_xr({"conditions": [cond("Ready", "False", "Creating", "Unready resources: first")]}),
     composed("btest.crossplane.io/v1", "BComposed", "first", {"widgets": 9002}),
     result("SEVERITY_NORMAL", "one", "one"), result("SEVERITY_WARNING", "two", "two")])

# Errors.
case("err-kind", standard({}, xr_=xr(kind="XOther")),
     error="xfn: error: composition's compositeTypeRef.kind (XNopResource) does not match XR's kind (XOther)")
case("err-api-version", standard({}, xr_=xr(api="nop.example.org/v2")),
     error="xfn: error: composition's compositeTypeRef.apiVersion (nop.example.org/v1alpha1) does not match XR's apiVersion (nop.example.org/v2)")
SEL = {"crossplane": {"compositionSelector": {"matchLabels": {"tier": "gold"}}}}
case("err-label-missing", standard({}, xr_=xr(spec=SEL)),
     error='xfn: error: composition "test-composition" is missing required label "tier"')
case("err-label-value", {"xr.yaml": [xr(spec=SEL)], "composition.yaml": [composition([step({})], labels={"tier": "silver"})], "functions.yaml": [function()]},
     error='xfn: error: composition "test-composition" has incorrect value for label "tier": want "gold", got "silver"')
case("err-mode", {"xr.yaml": [xr()], "composition.yaml": [composition([step({})], mode=None)], "functions.yaml": [function()]},
     error='xfn: error: render only supports Composition Function pipelines: Composition "test-composition" must use spec.mode: Pipeline')
case("err-not-a-function", standard({}, functions=[function(kind="Provider")]),
     error='xfn: error: cannot load functions from "functions.yaml": not a function: Provider/function-scripted')
case("err-missing-file", standard({}), ["--observed-resources", "missing.yaml"],
     error='xfn: error: cannot load observed composed resources from "missing.yaml": cannot read missing.yaml: No such file or directory (os error 2)')
case("err-malformed-yaml", {"xr.yaml": "apiVersion: nop.example.org/v1alpha1\nkind: XNopResource\nmetadata:\n  name: [unclosed\n",
                            "composition.yaml": [composition([step({})])], "functions.yaml": [function()]},
     error=None)
case("err-fatal", standard({"response": {"results": [{"severity": "SEVERITY_NORMAL", "message": "fine"},
                                                     {"severity": "SEVERITY_FATAL", "message": "oh no"}]}}), ["-r"],
     error='xfn: error: cannot render composite resource: pipeline step "test" returned a fatal result: oh no')
case("err-unknown-function", {"xr.yaml": [xr()], "composition.yaml": [composition([step({}, function="function-missing")])], "functions.yaml": [function()]},
     error='xfn: error: cannot render composite resource: cannot run pipeline step "test": unknown Function "function-missing" - does it exist in your Functions file?')
case("err-unknown-runtime", standard({}), ["-a", "render.crossplane.io/runtime=Podman"],
     error='xfn: error: cannot render composite resource: cannot start function runtimes: cannot get runtime for Function "function-scripted": '
           'unsupported "render.crossplane.io/runtime" annotation value "Podman" (unknown runtime)')
case("err-bad-context", standard({}), ["--context-values", "k={unclosed"], error=None)
case("err-bad-input", {"xr.yaml": [xr()], "composition.yaml": [composition([step("not an object")])], "functions.yaml": [function()]},
     error='xfn: error: cannot render composite resource: cannot unmarshal input for Composition pipeline step "test": input is not a JSON object')
case("err-guest-trap", standard({"fault": "panic"}), error=None)


def write_yaml_docs(path, docs):
    # Inputs are written as JSON documents separated by ---: JSON is YAML.
    with open(path, "w") as f:
        for d in docs:
            f.write("---\n" + json.dumps(d, indent=2) + "\n")


shutil.rmtree(CASES, ignore_errors=True)
for name, (files, args, expected, error) in cases.items():
    d = os.path.join(CASES, name)
    os.makedirs(d)
    for fname, content in files.items():
        path = os.path.join(d, fname)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if isinstance(content, str):
            open(path, "w").write(content)
        elif isinstance(content, dict):
            json.dump(content, open(path, "w"), indent=2)
        else:
            write_yaml_docs(path, content)
    fns = "fns" if any(k.startswith("fns/") for k in files) else "functions.yaml"
    full_args = ["render", "xr.yaml", "composition.yaml", fns] + WASM_ARG + args
    open(os.path.join(d, "args"), "w").write(json.dumps(full_args) + "\n")
    if expected is not None:
        with open(os.path.join(d, "expected.json"), "w") as f:
            for doc in expected:
                f.write(json.dumps(doc, sort_keys=True) + "\n")
    elif error is not None:
        open(os.path.join(d, "expected-error.txt"), "w").write(error + "\n")
print(f"wrote {len(cases)} cases")
