#!/usr/bin/env python3
"""Writes the golden cases of `xfn operation render`, as cases.py does for
`xfn render`: each directory under tests/render/operation-cases/ holds its
inputs, `args` and `expected.json` (or `expected-error.txt`).

The expected documents follow what the reference says each upstream shape
prints:
* engine (`crossplane operation render`, CLI >= v2.3): the Operation as the
  operation reconciler last wrote it (crossplane
  internal/controller/ops/operation/reconciler.go, internal/render/client.go
  mergeStatus), then the applied resources, then `Result` documents built
  from its events (internal/render/recorder.go, cli render/convert.go);
* classic (`crossplane alpha render op`, CLI v2.2.4
  cmd/crank/alpha/render/op/render.go).
Applied resources are sorted by their desired-state name (upstream prints
them in Go map order).
"""
import json
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(HERE, "operation-cases")
T = "2024-01-01T00:00:00Z"
OPS = "ops.crossplane.io/v1alpha1"
FN = "function-scripted"
SCRIPTED = ["-a", "render.crossplane.io/runtime-wasm-module=${GUESTS}/xfn_test_scripted.wasm"]
ANNOTATE = ["-a", "render.crossplane.io/runtime-wasm-module=${WASM}/function_annotate.wasm"]


def function(name=FN):
    return {"apiVersion": "pkg.crossplane.io/v1", "kind": "Function", "metadata": {"name": name},
            "spec": {"package": "xpkg.xfn.dev/xfn/%s:v0.1.0" % name}}


def step(input_, name="check", function=FN, **extra):
    s = {"step": name, "functionRef": {"name": function}, "input": input_}
    s.update(extra)
    return s


def operation(steps, name="test-op", metadata=None):
    meta = {"name": name}
    meta.update(metadata or {})
    return {"apiVersion": OPS, "kind": "Operation", "metadata": meta, "spec": {"mode": "Pipeline", "pipeline": steps}}


def config_map(name, namespace="default", **fields):
    doc = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace}}
    doc.update(fields)
    return doc


def ref(obj):
    r = {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "name": obj["metadata"]["name"]}
    if obj["metadata"].get("namespace"):
        r["namespace"] = obj["metadata"]["namespace"]
    return r


def cond(type_, reason):
    return {"lastTransitionTime": T, "reason": reason, "status": "True", "type": type_}


ENGINE_CONDITIONS = [cond("Succeeded", "PipelineSuccess"), cond("ValidPipeline", "ValidPipeline"),
                     cond("Synced", "ReconcileSuccess")]


def engine_op(op, pipeline=None, applied=None, spec=None):
    status = {"conditions": ENGINE_CONDITIONS}
    if pipeline:
        status["pipeline"] = pipeline
    if applied:
        status["appliedResourceRefs"] = applied
    meta = dict(op["metadata"], resourceVersion="999")
    return {"apiVersion": OPS, "kind": "Operation", "metadata": meta, "spec": spec or op["spec"], "status": status}


def classic_op(op, pipeline, applied, spec=None):
    doc = {"apiVersion": op["apiVersion"], "kind": op["kind"], "metadata": op["metadata"],
           "status": {"appliedResourceRefs": applied, "pipeline": pipeline}}
    if spec is not None:
        doc["spec"] = spec
    return doc


def engine_result(severity, step_, message):
    return {"apiVersion": "render.crossplane.io/v1beta1", "kind": "Result", "message": 'Pipeline step "%s": %s' % (step_, message),
            "reason": "RunPipelineStep", "severity": severity}


def classic_result(severity, step_, message):
    return {"apiVersion": "render.crossplane.io/v1beta1", "kind": "Result", "message": message, "severity": severity, "step": step_}


def context_doc(fields):
    return {"apiVersion": "render.crossplane.io/v1beta1", "fields": fields, "kind": "Context"}


cases = {}


def case(name, files, args, expected=None, error=None):
    # Engine cases say so: classic is the default, as for `xfn render`.
    if name.startswith("engine-"):
        args = args + ["--compat", "engine"]
    cases[name] = (files, args, expected, error)


# One step that applies two resources, outputs a summary and says so.
B, A = config_map("b"), config_map("a", data={"k": "v"})
CHECK = step({"response": {
    "desired": {"resources": {"b-res": {"resource": B}, "a-res": {"resource": A}}},
    "output": {"checked": 2, "healthy": True},
    "results": [{"severity": "SEVERITY_NORMAL", "message": "all good"},
                {"severity": "SEVERITY_WARNING", "message": "one is 'old'"}]}})
OP = operation([CHECK])
BASE = {"operation.yaml": [OP], "functions.yaml": [function()]}
PIPELINE = [{"output": {"checked": 2, "healthy": True}, "step": "check"}]

case("engine-success", BASE, ["operation", "render", "operation.yaml", "functions.yaml", "-r"] + SCRIPTED,
     [engine_op(OP, PIPELINE, [ref(A), ref(B)]), A, B,
      engine_result("Normal", "check", "all good"), engine_result("Warning", "check", "one is 'old'")])
case("engine-results-off", BASE, ["operation", "render", "operation.yaml", "functions.yaml"] + SCRIPTED,
     [engine_op(OP, PIPELINE, [ref(A), ref(B)]), A, B])
case("classic-success", BASE, ["operation", "render", "operation.yaml", "functions.yaml", "-r", "--compat", "classic"] + SCRIPTED,
     [classic_op(OP, PIPELINE, [ref(A), ref(B)]), A, B,
      classic_result("SEVERITY_NORMAL", "check", "all good"), classic_result("SEVERITY_WARNING", "check", "one is 'old'")])
case("classic-full-operation", BASE, ["operation", "render", "operation.yaml", "functions.yaml", "-o", "--compat", "classic"] + SCRIPTED,
     [classic_op(OP, PIPELINE, [ref(A), ref(B)], spec=OP["spec"]), A, B])

# Nothing applied, no output: the engine omits empty lists; classic keeps them.
QUIET = operation([step({})])
case("engine-nothing-applied", {"operation.yaml": [QUIET], "functions.yaml": [function()]},
     ["operation", "render", "operation.yaml", "functions.yaml"] + SCRIPTED, [engine_op(QUIET)])
case("classic-nothing-applied", {"operation.yaml": [QUIET], "functions.yaml": [function()]},
     ["operation", "render", "operation.yaml", "functions.yaml", "--compat", "classic"] + SCRIPTED,
     [classic_op(QUIET, [], [])])

# Two steps: desired state and outputs flow; a later step replaces the resources.
TWO = operation([step({"response": {"desired": {"resources": {"a-res": {"resource": A}}}, "output": {"n": 1}}}, name="one"),
                 step({"response": {"output": {"n": 2}}}, name="two")])
case("engine-two-steps", {"operation.yaml": [TWO], "functions.yaml": [function()]},
     ["operation", "render", "operation.yaml", "functions.yaml"] + SCRIPTED,
     [engine_op(TWO, [{"output": {"n": 1}, "step": "one"}, {"output": {"n": 2}, "step": "two"}], [ref(A)]), A])

# Context: the engine seeds and captures through steps of its own, which show in the spec.
COUNT = operation([step({"count": True})])
SEED = {"step": "crossplane-render-inject-context", "functionRef": {"name": "crossplane-render-context"}, "input": {"mode": "Seed"}}
CAPTURE = {"step": "crossplane-render-extract-context", "functionRef": {"name": "crossplane-render-context"}, "input": {"mode": "Capture"}}
case("engine-context", {"operation.yaml": [COUNT], "functions.yaml": [function()]},
     ["operation", "render", "operation.yaml", "functions.yaml", "-c", "--context-values", "example.org/env={\"tier\": \"gold\"}"] + SCRIPTED,
     [engine_op(COUNT, spec={"mode": "Pipeline", "pipeline": [SEED] + COUNT["spec"]["pipeline"] + [CAPTURE]}),
      context_doc({"example.org/env": {"tier": "gold"}, "xfn.test/calls": 1})])
case("classic-context", {"operation.yaml": [COUNT], "functions.yaml": [function()]},
     ["operation", "render", "operation.yaml", "functions.yaml", "-c", "--compat", "classic", "--context-values", "example.org/env={\"tier\": \"gold\"}"] + SCRIPTED,
     [classic_op(COUNT, [], []), context_doc({"example.org/env": {"tier": "gold"}, "xfn.test/calls": 1})])
DROP = operation([step({"response": {"context": None}})])
case("engine-context-dropped", {"operation.yaml": [DROP], "functions.yaml": [function()]},
     ["operation", "render", "operation.yaml", "functions.yaml", "-c"] + SCRIPTED,
     [engine_op(DROP, spec={"mode": "Pipeline", "pipeline": DROP["spec"]["pipeline"] + [CAPTURE]})])

# A CronOperation renders as the Operation its template makes, named after it.
CRON = {"apiVersion": OPS, "kind": "CronOperation", "metadata": {"name": "nightly", "labels": {"not": "copied"}},
        "spec": {"schedule": "0 3 * * *", "operationTemplate": {"metadata": {"labels": {"team": "platform"}},
                                                                "spec": {"mode": "Pipeline", "pipeline": [CHECK]}}}}
CRON_OP = {"apiVersion": OPS, "kind": "Operation", "metadata": {"labels": {"team": "platform"}, "name": "nightly"},
           "spec": {"mode": "Pipeline", "pipeline": [CHECK]}}
case("engine-cron", {"cron.yaml": [CRON], "functions.yaml": [function()]},
     ["operation", "render", "cron.yaml", "functions.yaml"] + SCRIPTED,
     [engine_op(CRON_OP, PIPELINE, [ref(A), ref(B)]), A, B])

# A WatchOperation with the first-party function-annotate and -w: the
# watched resource is required by every step, and stamped.
WATCHED = {
    "apiVersion": "v1", "kind": "ConfigMap",
    "metadata": {"name": "app-config", "namespace": "default", "labels": {"example.org/stamp": "true"}},
    "data": {"mode": "blue"}}
STAMP = {"step": "stamp", "functionRef": {"name": "function-annotate"},
         "input": {"apiVersion": "annotate.fn.xfn.dev/v1alpha1", "kind": "Input",
                   "annotations": {"example.org/reviewed": "true"},
                   "fromFieldPaths": {"example.org/seen-mode": "data.mode"}}}
WATCH = {"apiVersion": OPS, "kind": "WatchOperation", "metadata": {"name": "stamp-config"},
         "spec": {"watch": {"apiVersion": "v1", "kind": "ConfigMap", "matchLabels": {"example.org/stamp": "true"}},
                  "operationTemplate": {"spec": {"mode": "Pipeline", "pipeline": [STAMP]}}}}
SELECTOR = {"requirementName": "ops.crossplane.io/watched-resource", "apiVersion": "v1", "kind": "ConfigMap",
            "name": "app-config", "namespace": "default"}
WATCH_OP = {"apiVersion": OPS, "kind": "Operation", "metadata": {"name": "stamp-config"},
            "spec": {"mode": "Pipeline", "pipeline": [dict(STAMP, requirements={"requiredResources": [SELECTOR]})]}}
STAMPED = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
    "name": "app-config", "namespace": "default",
    "annotations": {"example.org/reviewed": "true", "example.org/seen-mode": "blue"}}}
STAMP_OUTPUT = [{"output": {"annotated": ["ConfigMap default/app-config"], "count": 1}, "step": "stamp"}]
ANNOTATE_FILES = {"watch.yaml": [WATCH], "functions.yaml": [function("function-annotate")], "watched.yaml": [WATCHED]}
case("engine-watch-annotate", ANNOTATE_FILES,
     ["operation", "render", "watch.yaml", "functions.yaml", "-w", "watched.yaml", "-r"] + ANNOTATE,
     [engine_op(WATCH_OP, STAMP_OUTPUT, [ref(STAMPED)]), STAMPED,
      engine_result("Normal", "stamp", "annotated 1 resource")])
case("classic-watch-annotate", ANNOTATE_FILES,
     ["operation", "render", "watch.yaml", "functions.yaml", "-w", "watched.yaml", "-o", "--compat", "classic"] + ANNOTATE,
     [classic_op(WATCH_OP, STAMP_OUTPUT, [ref(STAMPED)], spec=WATCH_OP["spec"]), STAMPED])

# Errors.
case("err-fatal", {"operation.yaml": [operation([step({"response": {"results": [
    {"severity": "SEVERITY_FATAL", "message": "cannot reach the database"}]}})])], "functions.yaml": [function()]},
     ["operation", "render", "operation.yaml", "functions.yaml", "-r"] + SCRIPTED,
     error='xfn: error: cannot render operation: pipeline step "check" returned a fatal result: cannot reach the database')
case("err-not-an-operation", {"operation.yaml": [{"apiVersion": "apiextensions.crossplane.io/v1", "kind": "Composition",
                                                  "metadata": {"name": "c"}}], "functions.yaml": [function()]},
     ["operation", "render", "operation.yaml", "functions.yaml"] + SCRIPTED,
     error="xfn: error: not an operation type: Composition/apiextensions.crossplane.io/v1 "
           "(want an Operation, CronOperation or WatchOperation of ops.crossplane.io/v1alpha1)")
case("err-watched-two", {"operation.yaml": [OP], "functions.yaml": [function()], "watched.yaml": [A, B]},
     ["operation", "render", "operation.yaml", "functions.yaml", "-w", "watched.yaml"] + SCRIPTED,
     error="xfn: error: --watched-resource must contain exactly one resource, got 2")
case("err-bad-input", {"operation.yaml": [operation([step("not an object")])], "functions.yaml": [function()]},
     ["operation", "render", "operation.yaml", "functions.yaml"] + SCRIPTED,
     error='xfn: error: cannot unmarshal input for operation pipeline step "check": input is not a JSON object')
case("err-annotate-no-requirement", {"operation.yaml": [operation([dict(STAMP, step="stamp")])],
                                     "functions.yaml": [function("function-annotate")]},
     ["operation", "render", "operation.yaml", "functions.yaml"] + ANNOTATE,
     error='xfn: error: cannot render operation: pipeline step "stamp" returned a fatal result: this step was given no '
           'resources under the requirement "ops.crossplane.io/watched-resource": add a requiredResources entry with '
           'that requirementName to the step\'s requirements (a WatchOperation adds '
           '"ops.crossplane.io/watched-resource" itself), or set the input\'s `requirement`')

# A built-in function whose package declares only `composition`.
case("err-missing-capability", {"operation.yaml": [operation([step({}, function="function-hello")])],
                                "functions.yaml": [function("function-hello")]},
     ["operation", "render", "operation.yaml", "functions.yaml"],
     error='xfn: running package xpkg.xfn.dev/xfn/function-hello:v0.1.0 as the built-in wasm function function-hello\n'
           'xfn: error: cannot render operation: cannot start function runtimes: cannot get runtime for Function '
           '"function-hello": its package "xpkg.xfn.dev/xfn/function-hello:v0.1.0" declares the capabilities '
           '[composition], not "operation", and Crossplane refuses to run it there (MissingCapabilities); add '
           '"operation" to spec.capabilities in the function\'s crossplane.yaml and push it again')


def write_yaml_docs(path, docs):
    with open(path, "w") as f:
        for d in docs:
            f.write("---\n" + json.dumps(d, indent=2) + "\n")


shutil.rmtree(CASES, ignore_errors=True)
for name, (files, args, expected, error) in cases.items():
    d = os.path.join(CASES, name)
    os.makedirs(d)
    for fname, docs in files.items():
        write_yaml_docs(os.path.join(d, fname), docs)
    open(os.path.join(d, "args"), "w").write(json.dumps(args) + "\n")
    if expected is not None:
        with open(os.path.join(d, "expected.json"), "w") as f:
            for doc in expected:
                f.write(json.dumps(doc, sort_keys=True) + "\n")
    else:
        open(os.path.join(d, "expected-error.txt"), "w").write(error + "\n")
print(f"wrote {len(cases)} operation cases")
