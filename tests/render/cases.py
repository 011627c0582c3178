#!/usr/bin/env python3
"""Writes the render golden cases: inputs, arguments and expected documents.

Each case directory under tests/render/cases/ holds its inputs, `args` (the
arguments to `xfn render`; ${WASM} is the directory of the first-party functions, ${GUESTS} that of the test guests)
and either `expected.json` (the documents render must print, one JSON object
per line) or `expected-error.txt` (the exact error line on stderr).

`regenerate.sh` runs this script, then turns every expected.json into
expected.yaml with the reference YAML emitter (go-yaml v2, as crossplane
render prints). The tests compare xfn's stdout with expected.yaml byte for
byte and never need Go.
"""
import hashlib
import json
import os
import shutil
import struct
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(HERE, "cases")
T = "2024-01-01T00:00:00Z"
FN = "function-scripted"
WASM_ARG = ["-a", "render.crossplane.io/runtime-wasm-module=${GUESTS}/xfn_test_scripted.wasm"]


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


def case(name, files, args=None, expected=None, error=None, command=("render",), scripted=True):
    """scripted=False runs the Functions as their packages say (built-ins)
    instead of annotating every one to run the scripted test guest."""
    cases[name] = (files, args or [], expected, error, list(command), scripted)


class Link(str):
    """A file of a case that is a symbolic link to this target."""


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
# Docker is Crossplane's default runtime: xfn runs the Function as it would
# without the annotation (here its local wasm module wins).
case("flag-annotation-docker", standard({}), ["-a", "render.crossplane.io/runtime=Docker"],
     [out_xr({"conditions": [cond("Ready", "True", "Available")]})])
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


# ---------------------------------------------------------------------------
# Engine mode (--compat engine): `crossplane composition render` (CLI >= v2.3)
# with the core engine at 2d040d2. Expected content follows the engine's code
# as crossplane-protocol.md §2.4, §3.5, §3.6 and §3.8 (E1-E5) quote it.
ENGINE = ["--compat", "engine"]


def fake_uid(api, kind, name, namespace=""):
    # internal/render/composite: UUIDv5(nil, "<group/version, Kind=Kind>\\0<ns>\\0<name>").
    return str(uuid.uuid5(uuid.UUID(int=0), f"{api}, Kind={kind}\x00{namespace}\x00{name}"))


def child_name(generate_name, owner_uid, resource_name):
    # internal/names ChildName: generateName + sha256(uid + name)[:12], at most 63 characters.
    digest = hashlib.sha256((owner_uid + resource_name).encode()).hexdigest()[:12]
    return generate_name.rstrip("-")[:63 - 13] + "-" + digest


def engine_composed(api, kind, res_name, spec, uid, xr_name="test-render", namespace=None, xr_api="nop.example.org/v1alpha1", xr_kind="XNopResource"):
    doc = composed(api, kind, res_name, spec, xr_name=xr_name, namespace=namespace, xr_api=xr_api, xr_kind=xr_kind)
    doc["metadata"]["ownerReferences"][0]["uid"] = uid
    doc["metadata"]["name"] = child_name(doc["metadata"]["generateName"], uid, res_name)
    return doc


def engine_xr(refs, status, name="test-render", namespace=None, api="nop.example.org/v1alpha1", kind="XNopResource", legacy=False):
    meta = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    spec = {"resourceRefs": refs} if legacy else {"crossplane": {"resourceRefs": refs}}
    return {"apiVersion": api, "kind": kind, "metadata": meta, "spec": spec, "status": status}


def engine_conditions(custom=(), ready=None):
    return ([cond("Responsive", "True", "WatchCircuitClosed")] + list(custom)
            + [cond("Synced", "True", "ReconcileSuccess"), ready or cond("Ready", "True", "Available")])


def event(severity, reason, message):
    return {"apiVersion": "render.crossplane.io/v1beta1", "kind": "Result", "message": message, "reason": reason, "severity": severity}


def selected(composition_name="test-composition"):
    return event("Normal", "SelectComposition", f"Successfully selected composition: {composition_name}")


def not_ready(res_name):
    return event("Normal", "ComposeResources", f'Composed resource "{res_name}" is not yet ready')


def ref(doc, namespace=False):
    r = {"apiVersion": doc["apiVersion"], "kind": doc["kind"], "name": doc["metadata"]["name"]}
    if namespace and doc["metadata"].get("namespace"):
        r["namespace"] = doc["metadata"]["namespace"]
    return r


C1_UID = fake_uid("nop.example.org/v1alpha1", "XNopResource", "test-render")
# E5: the computed engine version of C1 (crossplane-protocol.md §3.8).
assert C1_UID == "60aa46dc-5505-53e4-a362-4d602bb8f73e"
assert child_name("test-render-", C1_UID, "a-cool-resource") == "test-render-938725372794"
assert child_name("test-render-", C1_UID, "b-cool-resource") == "test-render-c59170cd0135"
E5_A = engine_composed("btest.crossplane.io/v1", "BComposed", "a-cool-resource", {"widgets": 9002}, C1_UID)
E5_B = engine_composed("atest.crossplane.io/v1", "AComposed", "b-cool-resource", {"widgets": 9003}, C1_UID)
case("engine-e5-c1", standard({"response": {
    "desired": {"composite": {"resource": {"status": {"widgets": 9001}}}, "resources": two_resources()},
    "conditions": [PROVISIONED]}}), ENGINE + ["-r"],
    [engine_xr([ref(E5_B), ref(E5_A)], {"widgets": 9001, "conditions": engine_conditions(
        [cond("ProvisioningSuccess", "True", "Provisioned", "Provisioned successfully")],
        cond("Ready", "False", "Creating", UNREADY_AB))}),
     E5_A, E5_B, selected(), not_ready("a-cool-resource"), not_ready("b-cool-resource")])
# Ready: an explicit READY_TRUE on the XR wins over unready resources; all ready -> Available, no events.
case("engine-ready-true-wins", standard({"response": {
    "desired": {"composite": {"resource": {}, "ready": "READY_TRUE"}, "resources": two_resources()}}}), ENGINE,
    [engine_xr([ref(E5_B), ref(E5_A)], {"conditions": engine_conditions()}), E5_A, E5_B])
case("engine-ready-false", standard({"response": {
    "desired": {"composite": {"resource": {}, "ready": "READY_FALSE"}, "resources": two_resources("READY_TRUE")}}}), ENGINE + ["-r"],
    [engine_xr([ref(E5_B), ref(E5_A)], {"conditions": engine_conditions(ready=cond("Ready", "False", "Creating"))}), E5_A, E5_B, selected()])
case("engine-many-unready", standard({"response": {"desired": {"resources": {
    n: {"resource": {"apiVersion": "v1", "kind": "ConfigMap"}} for n in ["e", "d", "c", "b", "a"]}}}}), ENGINE,
    [engine_xr(sorted([ref(engine_composed("v1", "ConfigMap", n, None, C1_UID)) for n in "abcde"], key=lambda r: r["name"]),
               {"conditions": engine_conditions(ready=cond("Ready", "False", "Creating", "Unready resources: a, b, c, and 2 more"))})]
    + [engine_composed("v1", "ConfigMap", n, None, C1_UID) for n in "abcde"])

# E1: an empty pipeline.
BUCKET = {"apiVersion": "example.org/v1alpha1", "kind": "XBucket", "metadata": {"name": "my-bucket"}, "spec": {}}
BUCKET_COMPOSITION = {"apiVersion": "apiextensions.crossplane.io/v1", "kind": "Composition", "metadata": {"name": "bucket-composition"},
                      "spec": {"compositeTypeRef": {"apiVersion": "example.org/v1alpha1", "kind": "XBucket"}, "mode": "Pipeline", "pipeline": []}}


def bucket_xrd(api="apiextensions.crossplane.io/v1", scope=None):
    spec = {"group": "example.org", "names": {"kind": "XBucket", "plural": "xbuckets"},
            "versions": [{"name": "v1alpha1", "served": True, "referenceable": True,
                          "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object"}}}}}]}
    if scope:
        spec["scope"] = scope
    return {"apiVersion": api, "kind": "CompositeResourceDefinition", "metadata": {"name": "xbuckets.example.org"}, "spec": spec}


def bucket_files(xr_=None, xrd=None, extra=None):
    files = {"xr.yaml": [xr_ or BUCKET], "composition.yaml": [BUCKET_COMPOSITION], "functions.yaml": [function()]}
    if xrd:
        files["xrd.yaml"] = [xrd]
    files.update(extra or {})
    return files


E1_STATUS = {"conditions": engine_conditions()}
case("engine-e1-empty-pipeline", bucket_files(), ENGINE + ["-r"],
     [engine_xr([], E1_STATUS, name="my-bucket", api="example.org/v1alpha1", kind="XBucket"), selected("bucket-composition")])
# E2: the XRD's scope picks Legacy (spec.resourceRefs) or Modern paths.
case("engine-e2-legacy-v1-xrd", bucket_files(xrd=bucket_xrd()), ENGINE + ["--xrd", "xrd.yaml"],
     [engine_xr([], E1_STATUS, name="my-bucket", api="example.org/v1alpha1", kind="XBucket", legacy=True)])
case("engine-e2-legacy-scope", bucket_files(xrd=bucket_xrd("apiextensions.crossplane.io/v2", "LegacyCluster")), ENGINE + ["--xrd", "xrd.yaml"],
     [engine_xr([], E1_STATUS, name="my-bucket", api="example.org/v1alpha1", kind="XBucket", legacy=True)])
case("engine-e2-modern-v2-xrd", bucket_files(xrd=bucket_xrd("apiextensions.crossplane.io/v2")), ENGINE + ["--xrd", "xrd.yaml"],
     [engine_xr([], E1_STATUS, name="my-bucket", api="example.org/v1alpha1", kind="XBucket")])
case("engine-e2-xrd-of-another-kind", bucket_files(xrd=dict(bucket_xrd(), spec=dict(bucket_xrd()["spec"], names={"kind": "XOther", "plural": "xothers"}))),
     ENGINE + ["--xrd", "xrd.yaml"],
     error='xfn: error: XRD "xbuckets.example.org" defines XOther.example.org, not the XR\'s kind XBucket.example.org')
# E2/C5: a namespaced XR keeps its namespace; its refs carry none; composed resources are forced into it.
NS_UID = fake_uid("nop.example.org/v1alpha1", "XNopResource", "test-render", "test-namespace")
NS_A = engine_composed("btest.crossplane.io/v1", "BComposed", "a-cool-resource", {"widgets": 9002}, NS_UID, namespace="test-namespace")
case("engine-e2-namespaced", standard({"response": {"desired": {"resources": {"a-cool-resource": {
    "resource": dict(A_COOL, metadata={"namespace": "elsewhere"}), "ready": "READY_TRUE"}}}}}, xr_=xr(namespace="test-namespace")), ENGINE,
     [engine_xr([ref(NS_A)], {"conditions": engine_conditions()}, namespace="test-namespace"), NS_A])
# Refs of a cluster-scoped XR carry the composed resource's namespace (core e1c698028).
CM = engine_composed("v1", "ConfigMap", "cm", None, C1_UID)
CM["metadata"]["namespace"] = "default"
case("engine-cluster-xr-namespaced-ref", standard({"response": {"desired": {"resources": {"cm": {
    "resource": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"namespace": "default"}}, "ready": "READY_TRUE"}}}}}), ENGINE,
     [engine_xr([ref(CM, namespace=True)], {"conditions": engine_conditions()}), CM])

# E3: observed resources the pipeline doesn't desire are garbage-collected and not printed.
OBS = {"apiVersion": "example.org/v1alpha1", "kind": "XComposed", "metadata": {
    "name": "obs-1", "annotations": {"crossplane.io/composition-resource-name": "obs-1"},
    "ownerReferences": [{"apiVersion": "example.org/v1alpha1", "kind": "XBucket", "name": "my-bucket", "uid": "xr-uid", "controller": True}]}}
BUCKET_UID = dict(BUCKET, metadata={"name": "my-bucket", "uid": "xr-uid"})
case("engine-e3-gc-not-printed", bucket_files(BUCKET_UID, bucket_xrd(), {"observed.yaml": [OBS]}),
     ENGINE + ["--xrd", "xrd.yaml", "-o", "observed.yaml"],
     [engine_xr([], E1_STATUS, name="my-bucket", api="example.org/v1alpha1", kind="XBucket", legacy=True)])
FOREIGN = json.loads(json.dumps(OBS))
FOREIGN["metadata"]["ownerReferences"][0]["uid"] = "other-uid"
case("engine-e3-foreign-controller", bucket_files(BUCKET_UID, extra={"observed.yaml": [FOREIGN]}), ENGINE + ["-o", "observed.yaml"],
     error='xfn: error: observed resource "obs-1" is controlled by XBucket my-bucket (UID other-uid), not by the XR (UID xr-uid)')
OTHER_NS = json.loads(json.dumps(OBS))
OTHER_NS["metadata"]["namespace"] = "other"
case("engine-e3-other-namespace", bucket_files(dict(BUCKET_UID, metadata={"name": "my-bucket", "namespace": "mine", "uid": "xr-uid"}),
                                               extra={"observed.yaml": [OTHER_NS]}), ENGINE + ["-o", "observed.yaml"],
     error='xfn: error: observed resource "obs-1" is in namespace "other", not in the XR\'s namespace "mine"')
# An observed resource the pipeline still desires keeps its name; the XR's UID is the input's.
KEPT = engine_composed("btest.crossplane.io/v1", "BComposed", "a-cool-resource", {"widgets": 9002}, "xr-uid")
KEPT["metadata"]["name"] = "test-render-abc12"
case("engine-observed-kept", standard({"response": {"desired": {"resources": {"a-cool-resource": {"resource": A_COOL, "ready": "READY_TRUE"}}}}},
                                      {"observed.yaml": [OBSERVED_A]}, xr_=dict(xr(), metadata={"name": "test-render", "uid": "xr-uid"})),
     ENGINE + ["-o", "observed.yaml"],
     [engine_xr([ref(KEPT)], {"conditions": engine_conditions()}), KEPT])

# E4: a fatal result: nothing on stdout, exit 1, the step's message in the error.
case("engine-e4-fatal", standard({"response": {
    "requirements": {"resources": {"namedClusterRole": {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "matchName": "some-cluster-role"}}},
    "results": [{"severity": "SEVERITY_FATAL", "message": 'Required extra resource "namedClusterRole" not found'}]}}), ENGINE + ["-r"],
     error='xfn: error: cannot render composite resource: pipeline step "test" returned a fatal result: Required extra resource "namedClusterRole" not found')

# Results become events: reason from the result (else ComposeResources), "Pipeline step" messages, UNSPECIFIED as a Warning.
case("engine-results", {"xr.yaml": [xr()], "composition.yaml": [composition([
    step({"response": {"results": [{"severity": "SEVERITY_NORMAL", "message": "one", "reason": "CustomReason"},
                                   {"severity": "SEVERITY_WARNING", "message": "warning: 'quoted' and long enough to fold past the eightieth column"}]}}, name="one"),
    step({"response": {"results": [{"severity": "SEVERITY_UNSPECIFIED", "message": "unspecified"}]}}, name="two")])],
    "functions.yaml": [function()]}, ENGINE + ["-r"],
    [engine_xr([], {"conditions": engine_conditions()}), selected(),
     event("Normal", "CustomReason", 'Pipeline step "one": one'),
     event("Warning", "ComposeResources", "Pipeline step \"one\": warning: 'quoted' and long enough to fold past the eightieth column"),
     event("Warning", "ComposeResources", 'Pipeline step "two" returned a result of unknown severity (assuming warning): unspecified')])

# -x: the input XR with the output merged over it (mergo.WithOverride).
case("engine-full-xr", standard({"response": {"desired": {"composite": {"resource": {"status": {"x": 1}}}}}},
                                xr_=xr(labels={"team": "a"}, spec={"coolField": "yes", "n": 1, "crossplane": {"compositionUpdatePolicy": "Manual"}})),
     ENGINE + ["-x"],
     [{"apiVersion": "nop.example.org/v1alpha1", "kind": "XNopResource",
       "metadata": {"labels": {"team": "a"}, "name": "test-render"},
       "spec": {"coolField": "yes", "n": 1, "crossplane": {"compositionUpdatePolicy": "Manual", "resourceRefs": []}},
       "status": {"conditions": engine_conditions(), "x": 1}}])

# Required resources match by exact namespace: a by-name selector without a
# namespace finds only a cluster-scoped object (classic ignores the namespace).
FOO_NS = dict(FOO, metadata={"name": "extra-resource", "namespace": "ns-a"})
NS_REQ = {"resources": {"no-namespace": {"apiVersion": "test.crossplane.io/v1", "kind": "Foo", "matchName": "extra-resource"},
                        "in-ns-a": {"apiVersion": "test.crossplane.io/v1", "kind": "Foo", "matchName": "extra-resource", "namespace": "ns-a"}}}
NS_INPUT = {"response": {"requirements": NS_REQ},
            "afterRequirements": {"requirements": NS_REQ, "desired": {"composite": {"resource": {"status": {"seen": True}}}}}, "echo": True}


case("engine-required-namespace-exact", standard(NS_INPUT, {"required.yaml": [FOO_NS]}), ENGINE + ["-e", "required.yaml", "-c"], None)
case("classic-required-namespace-ignored", standard(NS_INPUT, {"required.yaml": [FOO_NS]}), ["-e", "required.yaml", "-c"], None)


# The observed XR functions see, and meta.tag: the scripted function echoes its request.
def pb_varint(n):
    out = b""
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out += bytes([byte | 0x80])
        else:
            return out + bytes([byte])


def pb_bytes(field, body):
    return pb_varint(field << 3 | 2) + pb_varint(len(body)) + body


def pb_value(v):
    # google.protobuf.Value: null=1, number=2 (double), string=3, bool=4, struct=5, list=6.
    if v is None:
        return pb_varint(1 << 3) + pb_varint(0)
    if isinstance(v, bool):
        return pb_varint(4 << 3) + pb_varint(int(v))
    if isinstance(v, (int, float)):
        return pb_varint(2 << 3 | 1) + struct.pack("<d", float(v))
    if isinstance(v, str):
        return pb_bytes(3, v.encode())
    if isinstance(v, dict):
        return pb_bytes(5, pb_struct(v))
    return pb_bytes(6, b"".join(pb_bytes(1, pb_value(x)) for x in v))


def pb_struct(d):
    # Go's Deterministic marshalling: map entries sorted by key, key and value always written.
    return b"".join(pb_bytes(1, pb_bytes(1, k.encode()) + pb_bytes(2, pb_value(d[k]))) for k in sorted(d))


def pb_state(composite, resources):
    out = pb_bytes(1, pb_bytes(1, pb_struct(composite))) if composite is not None else b""
    for k in sorted(resources):
        out += pb_bytes(2, pb_bytes(1, k.encode()) + pb_bytes(2, pb_bytes(1, pb_struct(resources[k]))))
    return out


def engine_tag(observed_xr, observed, input_, context):
    # Tag(): hex sha256 of the request before meta is set: observed=2, desired=3 (empty), input=4, context=5.
    body = pb_bytes(2, pb_state(observed_xr, observed)) + pb_bytes(3, b"") + pb_bytes(4, pb_struct(input_)) + pb_bytes(5, pb_struct(context))
    return hashlib.sha256(body).hexdigest()


ECHO_OBSERVED = {"apiVersion": "btest.crossplane.io/v1", "kind": "BComposed", "metadata": {
    "name": "test-render-abc12", "annotations": {"crossplane.io/composition-resource-name": "a-cool-resource"},
    "ownerReferences": [{"apiVersion": "nop.example.org/v1alpha1", "kind": "XNopResource", "name": "test-render", "uid": C1_UID, "controller": True}]},
    "spec": {"widgets": 1}}
ECHO_XR_IN = xr(labels={"team": "a"})
# What the engine's reconciler holds when it calls the functions (§3.5, §3.6):
# label crossplane.io/composite, the fake uid, resourceVersion "999",
# compositionRef, the observed resources as resourceRefs, and Responsive.
ECHO_XR_SEEN = {"apiVersion": "nop.example.org/v1alpha1", "kind": "XNopResource",
                "metadata": {"name": "test-render", "labels": {"team": "a", "crossplane.io/composite": "test-render"},
                             "uid": C1_UID, "resourceVersion": "999"},
                "spec": {"coolField": "I'm cool!", "crossplane": {"compositionRef": {"name": "test-composition"},
                                                                   "resourceRefs": [ref(ECHO_OBSERVED)]}},
                "status": {"conditions": [cond("Responsive", "True", "WatchCircuitClosed")]}}
ECHO_INPUT = {"echo": True}
ECHO_CONTEXT = {"seeded": "yes"}
ECHO_TAG = engine_tag(ECHO_XR_SEEN, {"a-cool-resource": ECHO_OBSERVED}, ECHO_INPUT, ECHO_CONTEXT)
ECHO_REQUEST = {
    "context": ECHO_CONTEXT, "desired": {}, "input": ECHO_INPUT,
    "meta": {"capabilities": ["CAPABILITY_CAPABILITIES", "CAPABILITY_REQUIRED_RESOURCES", "CAPABILITY_CREDENTIALS",
                              "CAPABILITY_CONDITIONS", "CAPABILITY_REQUIRED_SCHEMAS"], "tag": ECHO_TAG},
    "observed": {"composite": {"resource": ECHO_XR_SEEN}, "resources": {"a-cool-resource": {"resource": ECHO_OBSERVED}}}}
# The scripted function passes the observed resource on as desired (Response::to copies desired: empty), so it is GC'd.
case("engine-observed-xr-and-tag", {"xr.yaml": [ECHO_XR_IN], "composition.yaml": [composition([step(ECHO_INPUT)])],
                                    "functions.yaml": [function()], "observed.yaml": [ECHO_OBSERVED]},
     ENGINE + ["-o", "observed.yaml", "--context-values", "seeded=yes", "-c"],
     [engine_xr([], {"conditions": engine_conditions()}),
      context_doc({"seeded": "yes", "xfn.test/request": ECHO_REQUEST})])
# Without -c the engine CLI captures no context and prints no Context document.
case("engine-no-context-doc", standard({}), ENGINE + ["--context-values", "k=v"],
     [engine_xr([], {"conditions": engine_conditions()})])
case("engine-context-dropped", standard({"response": {"context": None}}), ENGINE + ["-c"],
     [engine_xr([], {"conditions": engine_conditions()}), context_doc({})])


# ---------------------------------------------------------------------------
# The command surface of the current CLI (crossplane/cli v2.5).
NO_RESOURCES = [out_xr({"conditions": [cond("Ready", "True", "Available")]})]
case("cmd-composition-render", standard({}), [], NO_RESOURCES, command=("composition", "render"))
case("cmd-composition-render-engine", standard({}), ENGINE, [engine_xr([], {"conditions": engine_conditions()})],
     command=("composition", "render"))
# -e and --extra-resources are repeatable; each path is read in turn.
OTHER = dict(FOO, metadata={"name": "unrelated"})
case("flag-required-resources-repeated", standard(C4_INPUT, {"other.yaml": [OTHER], "required.yaml": [FOO]}),
     ["-e", "other.yaml", "--required-resources", "required.yaml", "-c"], C4_EXPECTED)
case("flag-extra-resources-repeated", standard(C4_INPUT, {"other.yaml": [OTHER], "extra.yaml": [FOO]}),
     ["--extra-resources", "other.yaml", "--extra-resources", "extra.yaml", "-c"], C4_EXPECTED)
case("flag-required-resources-second-missing", standard(C4_INPUT, {"required.yaml": [FOO]}),
     ["-e", "required.yaml", "-e", "missing.yaml"],
     error='xfn: error: cannot load required resources from "missing.yaml": cannot read missing.yaml: No such file or directory (os error 2)')
# Engine flags are accepted (each notes on stderr that xfn needs no engine).
case("flag-engine-flags", standard({}), ["--crossplane-version", "v2.3.0", "--crossplane-image", "xpkg.crossplane.io/crossplane/crossplane:stable",
                                         "--crossplane-binary", "/usr/bin/crossplane", "--crossplane-docker-network", "bridge"], NO_RESOURCES,
     command=("composition", "render"))
# Project flags: --max-concurrency is kept (functions start one at a time); --project-file is refused.
case("flag-max-concurrency", standard({}), ["--max-concurrency", "2"], NO_RESOURCES)
case("flag-project-file", standard({}, {"crossplane-project.yaml": "apiVersion: meta.dev.upbound.io/v1alpha1\nkind: Project\n"}),
     ["-f", "crossplane-project.yaml"],
     error='xfn: error: --project-file "crossplane-project.yaml": xfn does not read Crossplane projects (crossplane-project.yaml) or build their '
           'embedded functions; pass the Functions file or directory as an argument instead')
# Global flags of the current CLI.
case("flag-verbose-and-config", standard({}, {"config.json": "{}\n"}), ["-v", "--config", "config.json"], NO_RESOURCES)

# Claims are refused with how to convert them (crossplane/crossplane#6649).
CLAIM = {"apiVersion": "nop.example.org/v1alpha1", "kind": "NopResource", "metadata": {"name": "my-claim", "namespace": "team-a"},
         "spec": {"coolField": "I'm cool!"}}
CLAIM_ERROR = ('xfn: error: NopResource team-a/my-claim is a claim, and render takes the composite resource (XR) itself, as Crossplane v2 does. '
               'Convert the claim to its XR: set apiVersion: nop.example.org/v1alpha1 and kind: XNopResource (the Composition\'s compositeTypeRef), '
               'remove metadata.namespace (a claim\'s XR is cluster-scoped), keep metadata.name and spec, '
               'and add the labels crossplane.io/claim-name: my-claim and crossplane.io/claim-namespace: team-a, '
               'which Crossplane sets on a claim\'s XR and copies to its composed resources')
case("claim-refused", standard({}, xr_=CLAIM), [], error=CLAIM_ERROR)
case("claim-refused-engine", standard({}, xr_=CLAIM), ENGINE, error=CLAIM_ERROR, command=("composition", "render"))
CLAIM_XRD = {"apiVersion": "apiextensions.crossplane.io/v1", "kind": "CompositeResourceDefinition", "metadata": {"name": "xnopresources.nop.example.org"},
             "spec": {"group": "nop.example.org", "names": {"kind": "XNopResource", "plural": "xnopresources"},
                      "claimNames": {"kind": "NopResource", "plural": "nopresources"},
                      "versions": [{"name": "v1alpha1", "served": True, "referenceable": True,
                                    "schema": {"openAPIV3Schema": {"type": "object"}}}]}}
# With an --xrd that offers the claim's kind, the claim becomes the XR
# Crossplane's claim controller (syncer_ssa.go) would create: the XRD's
# referenceable version and kind; generateName "<claim>-"; the claim's labels
# and annotations less *kubernetes.io/*k8s.io ones, plus claim-name and
# claim-namespace; spec less claim-only and XR-machinery fields; spec.claimRef.
# Crossplane's 5-character suffix is random; xfn's stand-in hashes the claim
# (host/render/src/claim.rs generated_name).
def xfn_generated_name(prefix, namespace):
    digest = hashlib.sha256(f"{namespace}/{prefix}".encode()).digest()
    return prefix[:58] + "".join("bcdfghjklmnpqrstvwxz2456789"[b % 27] for b in digest[:5])


CLAIM_FULL = {"apiVersion": "nop.example.org/v1alpha1", "kind": "NopResource",
              "metadata": {"name": "my-claim", "namespace": "team-a", "uid": "claim-uid",
                           "labels": {"team": "a", "app.kubernetes.io/managed-by": "kubectl"},
                           "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"}},
              "spec": {"coolField": "I'm cool!", "compositeDeletePolicy": "Foreground",
                       "writeConnectionSecretToRef": {"name": "my-claim-secret"},
                       "compositionUpdatePolicy": "Automatic"},
              "status": {"fromClaim": True}}
CLAIM_XR_NAME = xfn_generated_name("my-claim-", "team-a")
CLAIM_XR_META = {"name": CLAIM_XR_NAME, "generateName": "my-claim-",
                 "labels": {"team": "a", "crossplane.io/claim-name": "my-claim", "crossplane.io/claim-namespace": "team-a"}}
CLAIM_XR_SPEC = {"coolField": "I'm cool!", "compositionUpdatePolicy": "Automatic",
                 "claimRef": {"apiVersion": "nop.example.org/v1alpha1", "kind": "NopResource", "name": "my-claim", "namespace": "team-a"}}
CLAIM_LABELS = {"crossplane.io/composite": CLAIM_XR_NAME, "crossplane.io/claim-name": "my-claim", "crossplane.io/claim-namespace": "team-a"}
CLAIM_RESPONSE = {"response": {"desired": {"resources": {"a-cool-resource": {"resource": A_COOL, "ready": "READY_TRUE"}}}}}
# Classic, with -x: the printed XR has the converted XR's metadata and spec;
# the composed resource carries the claim labels.
case("claim-converted", standard(CLAIM_RESPONSE, {"xrd.yaml": [CLAIM_XRD]}, xr_=CLAIM_FULL), ["--xrd", "xrd.yaml", "-x"],
     [{"apiVersion": "nop.example.org/v1alpha1", "kind": "XNopResource", "metadata": CLAIM_XR_META, "spec": CLAIM_XR_SPEC,
       "status": {"conditions": [cond("Ready", "True", "Available")]}},
      composed("btest.crossplane.io/v1", "BComposed", "a-cool-resource", {"widgets": 9002}, xr_name=CLAIM_XR_NAME, labels=CLAIM_LABELS)])
# Engine, with -x: a v1 XRD is LegacyCluster, so the refs are spec.resourceRefs;
# the owner UID is the fake one of the converted XR's identity.
CLAIM_XR_UID = fake_uid("nop.example.org/v1alpha1", "XNopResource", CLAIM_XR_NAME)
CLAIM_COMPOSED = engine_composed("btest.crossplane.io/v1", "BComposed", "a-cool-resource", {"widgets": 9002}, CLAIM_XR_UID,
                                 xr_name=CLAIM_XR_NAME)
CLAIM_COMPOSED["metadata"]["labels"] = CLAIM_LABELS
case("claim-converted-engine", standard(CLAIM_RESPONSE, {"xrd.yaml": [CLAIM_XRD]}, xr_=CLAIM_FULL), ENGINE + ["--xrd", "xrd.yaml", "-x"],
     [{"apiVersion": "nop.example.org/v1alpha1", "kind": "XNopResource", "metadata": CLAIM_XR_META,
       "spec": dict(CLAIM_XR_SPEC, resourceRefs=[ref(CLAIM_COMPOSED)]), "status": {"conditions": engine_conditions()}},
      CLAIM_COMPOSED], command=("composition", "render"))
# An XRD that offers no claim of that kind changes nothing: today's refusal.
case("claim-refused-other-xrd", standard({}, {"xrd.yaml": [dict(CLAIM_XRD, spec={k: v for k, v in CLAIM_XRD["spec"].items() if k != "claimNames"})]},
                                         xr_=CLAIM), ["--xrd", "xrd.yaml"], error=CLAIM_ERROR)


# Engine resourceRefs are ordered as core's UpdateResourceRefs sorts them:
# by the string apiVersion+kind+name+namespace (composition_functions.go), so
# BucketACL and BucketPolicy ("BucketA…", "BucketP…") come before Bucket
# ("Buckett…": the names start with the XR's name). Exactly three unready
# names read "a, b, and c" (crossplane-runtime FirstNAndSomeMore).
def core_sorted(refs):
    return sorted(refs, key=lambda r: r["apiVersion"] + r["kind"] + r["name"] + r.get("namespace", ""))


S3 = "s3.aws.upbound.io/v1beta1"
PT_FUNCTION = {"apiVersion": "pkg.crossplane.io/v1", "kind": "Function", "metadata": {"name": "function-patch-and-transform"},
               "spec": {"package": "xpkg.crossplane.io/crossplane-contrib/function-patch-and-transform:v0.8.2"}}


def pt_function(tag):
    return dict(PT_FUNCTION, spec={"package": "xpkg.crossplane.io/crossplane-contrib/function-patch-and-transform:" + tag})


def pt_input(resources):
    return {"apiVersion": "pt.fn.crossplane.io/v1beta1", "kind": "Resources", "resources": resources}


PT_BUCKET = {"name": "bucket", "base": {"apiVersion": S3, "kind": "Bucket", "spec": {"forProvider": {"region": "us-east-2"}}},
             "patches": [{"type": "FromCompositeFieldPath", "fromFieldPath": "spec.region", "toFieldPath": "spec.forProvider.region"}]}
PT_BUCKETS = [PT_BUCKET,
              {"name": "bucket-acl", "base": {"apiVersion": S3, "kind": "BucketACL", "spec": {"forProvider": {"acl": "private"}}}},
              {"name": "bucket-policy", "base": {"apiVersion": S3, "kind": "BucketPolicy", "spec": {"forProvider": {"policy": "{}"}}}}]
REGION_XR = xr(spec={"region": "eu-west-1"})


def pt_files(input_, function=PT_FUNCTION):
    return {"xr.yaml": [REGION_XR], "composition.yaml": [composition([step(input_, name="patch-and-transform", function="function-patch-and-transform")])],
            "functions.yaml": [function]}


ENGINE_BUCKETS = [engine_composed(S3, "Bucket", "bucket", {"forProvider": {"region": "eu-west-1"}}, C1_UID),
                  engine_composed(S3, "BucketACL", "bucket-acl", {"forProvider": {"acl": "private"}}, C1_UID),
                  engine_composed(S3, "BucketPolicy", "bucket-policy", {"forProvider": {"policy": "{}"}}, C1_UID)]
assert [r["kind"] for r in core_sorted([ref(b) for b in ENGINE_BUCKETS])] == ["BucketACL", "BucketPolicy", "Bucket"]
case("engine-refs-core-order", pt_files(pt_input(PT_BUCKETS)), ENGINE,
     [engine_xr(core_sorted([ref(b) for b in ENGINE_BUCKETS]), {"conditions": engine_conditions(
         ready=cond("Ready", "False", "Creating", "Unready resources: bucket, bucket-acl, and bucket-policy"))})] + ENGINE_BUCKETS,
     scripted=False)

# function-patch-and-transform up to v0.3.0 ignored input fields it didn't
# know (function-sdk-go v0.1.0 decoded without RejectUnknownMembers); v0.4.0
# and later refuse them, as xfn's port does. Pinned at v0.3.0, xfn drops them.
PT_TYPO = [dict(PT_BUCKET, readinessCheck=[{"type": "None"}])]
PT_TYPO_INPUT = dict(pt_input(PT_TYPO), extra={"ignored": True})
case("pt-v0.3.0-unknown-fields-dropped", pt_files(PT_TYPO_INPUT, pt_function("v0.3.0")), [],
     [out_xr({"conditions": [cond("Ready", "False", "Creating", "Unready resources: bucket")]}),
      composed(S3, "Bucket", "bucket", {"forProvider": {"region": "eu-west-1"}})], scripted=False)
case("pt-v0.4.0-unknown-fields-refused", pt_files(PT_TYPO_INPUT, pt_function("v0.4.0")), [],
     error='xfn: running package xpkg.crossplane.io/crossplane-contrib/function-patch-and-transform:v0.4.0 as the built-in wasm function '
           'function-patch-and-transform\n'
           'xfn: error: cannot render composite resource: pipeline step "patch-and-transform" returned a fatal result: '
           'cannot get Function input: cannot get function input *v1beta1.Resources from *v1.RunFunctionRequest: '
           'cannot unmarshal JSON from *structpb.Struct into *v1beta1.Resources: json: cannot unmarshal JSON string into Go '
           'v1beta1.Resources: unknown object member name "extra"', scripted=False)


# Requirements already met by a step's bootstrap requirements: the engine
# (core after v2.2) stops after the first call; classic v2.2.4 calls again.
BOOT_SEL = {"apiVersion": "test.crossplane.io/v1", "kind": "Foo", "matchName": "extra-resource"}
BOOT_STEP = step({"count": True, "response": {"requirements": {"resources": {"foo": BOOT_SEL}}}},
                 requirements={"requiredResources": [{"requirementName": "foo", "apiVersion": "test.crossplane.io/v1", "kind": "Foo",
                                                      "name": "extra-resource"}]})
BOOT_FILES = {"xr.yaml": [xr()], "composition.yaml": [composition([BOOT_STEP])], "functions.yaml": [function()], "required.yaml": [FOO]}
case("engine-requirements-already-met", BOOT_FILES, ENGINE + ["-e", "required.yaml", "-c"],
     [engine_xr([], {"conditions": engine_conditions()}), context_doc({"xfn.test/calls": 1})])
case("classic-requirements-already-met", BOOT_FILES, ["-e", "required.yaml", "-c"],
     [out_xr({"conditions": [cond("Ready", "True", "Available")]}), context_doc({"xfn.test/calls": 2})])


# function-go-templating's FileSystem source, run as the built-in: render
# reads the directory (relative to where it runs) on the host. The layout is
# a ConfigMap volume's: the keys' files in a hidden, timestamped directory,
# a hidden ..data link to it, and a link per key through ..data; plus a
# plain subdirectory and hidden files, which upstream's walk skips (their
# text would not parse). The expected documents follow from upstream's
# readTemplates (template.go): files in byte order of their names, depth
# first, hidden directories and files skipped, links read as files, each
# file's text followed by "\n---\n"; the joined text is rendered as one
# template and each document becomes a resource (fn.go).
GT_FN = "function-go-templating"
GT_DATA = "templates/..2026_01_01_00_00_00.000000001"
GT_HELPERS = """{{- define "owner-labels" -}}
example.org/owner: {{ .observed.composite.resource.metadata.name }}
example.org/team: {{ .observed.composite.resource.spec.team | quote }}
{{- end }}
"""
GT_BUCKETS = """{{- range $i, $region := .observed.composite.resource.spec.regions }}
---
apiVersion: s3.aws.upbound.io/v1beta1
kind: Bucket
metadata:
  annotations:
    gotemplating.fn.crossplane.io/composition-resource-name: bucket-{{ $region }}
  labels:
    {{- include "owner-labels" $ | nindent 4 }}
spec:
  forProvider:
    region: {{ $region }}
    tags: {{- $.observed.composite.resource.spec.tags | toYaml | nindent 6 }}
{{- end }}
"""
GT_USER = """apiVersion: iam.aws.upbound.io/v1beta1
kind: User
metadata:
  annotations:
    gotemplating.fn.crossplane.io/composition-resource-name: user
  labels:
    {{- include "owner-labels" . | nindent 4 }}
spec:
  forProvider:
    path: /{{ .observed.composite.resource.spec.team }}/
---
apiVersion: nop.example.org/v1alpha1
kind: XNopResource
status:
  buckets: {{ len .observed.composite.resource.spec.regions }}
"""
GT_SPEC = {"team": "platform", "regions": ["us-east-1", "eu-west-1"], "tags": {"env": "dev", "cost-center": "42"}}
GT_LABELS = {"crossplane.io/composite": "test-render", "example.org/owner": "test-render", "example.org/team": "platform"}
GT_FILES = {
    "xr.yaml": [xr(spec=GT_SPEC)],
    "composition.yaml": [composition([step({"apiVersion": "gotemplating.fn.crossplane.io/v1beta1", "kind": "GoTemplate",
                                            "source": "FileSystem", "fileSystem": {"dirPath": "templates"}},
                                           name="render-templates", function=GT_FN)])],
    "functions.yaml": [{"apiVersion": "pkg.crossplane.io/v1", "kind": "Function", "metadata": {"name": GT_FN},
                        "spec": {"package": "xpkg.crossplane.io/crossplane-contrib/function-go-templating:v0.12.2"}}],
    GT_DATA + "/00-helpers.tpl": GT_HELPERS,
    GT_DATA + "/buckets.yaml": GT_BUCKETS,
    GT_DATA + "/unlinked.yaml": "{{ not read: the data directory is hidden\n",
    "templates/..data": Link("..2026_01_01_00_00_00.000000001"),
    "templates/00-helpers.tpl": Link("..data/00-helpers.tpl"),
    "templates/buckets.yaml": Link("..data/buckets.yaml"),
    "templates/.notes": "{{ not read: a hidden file\n",
    "templates/users/user.yaml": GT_USER,
    "templates/users/.hidden/x.yaml": "{{ not read: a hidden directory\n",
}
GT_BUCKET = lambda region: composed("s3.aws.upbound.io/v1beta1", "Bucket", "bucket-" + region,
                                    {"forProvider": {"region": region, "tags": {"cost-center": "42", "env": "dev"}}},
                                    labels=GT_LABELS)
case("gotemplating-filesystem", GT_FILES, [],
     [out_xr({"buckets": 2, "conditions": [cond("Ready", "False", "Creating",
                                                "Unready resources: bucket-eu-west-1, bucket-us-east-1, and user")]}),
      GT_BUCKET("eu-west-1"), GT_BUCKET("us-east-1"),
      composed("iam.aws.upbound.io/v1beta1", "User", "user", {"forProvider": {"path": "/platform/"}}, labels=GT_LABELS)],
     scripted=False)
# A directory that isn't there: the function's fatal result, worded as
# upstream's (the os error of opening the cleaned path). Render says on
# stderr first that the package runs as the built-in.
case("gotemplating-filesystem-missing", {
    "xr.yaml": [xr()],
    "composition.yaml": [composition([step({"apiVersion": "gotemplating.fn.crossplane.io/v1beta1", "kind": "GoTemplate",
                                            "source": "FileSystem", "fileSystem": {"dirPath": "./no-templates/"}},
                                           name="render-templates", function=GT_FN)])],
    "functions.yaml": GT_FILES["functions.yaml"]}, [],
     error='xfn: running package xpkg.crossplane.io/crossplane-contrib/function-go-templating:v0.12.2 as the built-in wasm '
           'function function-go-templating\n'
           'xfn: error: cannot render composite resource: pipeline step "render-templates" returned a fatal result: '
           'invalid function input: cannot read tmpl from the folder {./no-templates/}: '
           'open no-templates: no such file or directory',
     scripted=False)


def write_yaml_docs(path, docs):
    # Inputs are written as JSON documents separated by ---: JSON is YAML.
    with open(path, "w") as f:
        for d in docs:
            f.write("---\n" + json.dumps(d, indent=2) + "\n")


# Case directories written by hand, with no generator here (a test reads
# them itself); every other one is rewritten.
HAND_MADE = {"flag-timeout-long"}
os.makedirs(CASES, exist_ok=True)
for entry in os.listdir(CASES):
    if entry not in HAND_MADE:
        shutil.rmtree(os.path.join(CASES, entry))
for name, (files, args, expected, error, command, scripted) in cases.items():
    d = os.path.join(CASES, name)
    os.makedirs(d)
    for fname, content in files.items():
        path = os.path.join(d, fname)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if isinstance(content, Link):
            os.symlink(content, path)
        elif isinstance(content, str):
            open(path, "w").write(content)
        elif isinstance(content, dict):
            json.dump(content, open(path, "w"), indent=2)
        else:
            write_yaml_docs(path, content)
    fns = "fns" if any(k.startswith("fns/") for k in files) else "functions.yaml"
    full_args = command + ["xr.yaml", "composition.yaml", fns] + (WASM_ARG if scripted else []) + args
    open(os.path.join(d, "args"), "w").write(json.dumps(full_args) + "\n")
    if expected is not None:
        with open(os.path.join(d, "expected.json"), "w") as f:
            for doc in expected:
                f.write(json.dumps(doc, sort_keys=True) + "\n")
    elif error is not None:
        open(os.path.join(d, "expected-error.txt"), "w").write(error + "\n")
print(f"wrote {len(cases)} cases")
