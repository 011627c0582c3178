//! Wire compatibility with Crossplane's own protocol definition.
//!
//! Compiles the `run_function.proto` files shipped in the PyPI package
//! `crossplane-function-sdk-python` (installed by `make venv`) with protox and
//! compares them, field by field, with the descriptors this crate was built
//! from ([`xfn_proto::FILE_DESCRIPTOR_SET`]).
//!
//! The Python package is found through `XFN_PYTHON` (a python interpreter that
//! has it installed) or else in `<workspace>/.venv`. If it cannot be found the
//! test fails: run `make venv` at the workspace root.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Debug;
use std::path::{Path, PathBuf};
use std::process::Command;

use prost::Message as _;
use prost_types::{
    DescriptorProto, EnumDescriptorProto, FieldDescriptorProto, FileDescriptorProto,
    FileDescriptorSet, ServiceDescriptorProto,
};

const V1: &str = "apiextensions.fn.proto.v1";
const V1BETA1: &str = "apiextensions.fn.proto.v1beta1";

// ---------------------------------------------------------------------------
// Locating and compiling the Python SDK's protos
// ---------------------------------------------------------------------------

const HINT: &str = "run `make venv` at the workspace root (it installs \
    crossplane-function-sdk-python into .venv), or set XFN_PYTHON to a python \
    interpreter that has crossplane-function-sdk-python installed";

/// The SDK's `crossplane/function/proto` directory (holding `v1/`, maybe `v1beta1/`).
fn python_proto_dir() -> PathBuf {
    if let Some(python) = std::env::var_os("XFN_PYTHON").filter(|p| !p.is_empty()) {
        let script = "import importlib.util as u; \
            print(u.find_spec('crossplane.function.proto.v1.run_function_pb2').origin)";
        let out = Command::new(&python)
            .args(["-c", script])
            .output()
            .unwrap_or_else(|e| panic!("XFN_PYTHON={python:?} could not be run: {e}; {HINT}"));
        assert!(
            out.status.success(),
            "XFN_PYTHON={python:?} cannot import crossplane.function.proto.v1: {}; {HINT}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
        let origin = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        let dir = origin
            .parent()
            .and_then(Path::parent)
            .unwrap_or_else(|| panic!("unexpected module path {origin:?}"))
            .to_owned();
        assert!(
            dir.join("v1/run_function.proto").is_file(),
            "XFN_PYTHON={python:?}: no v1/run_function.proto in {dir:?}; {HINT}"
        );
        return dir;
    }

    // <workspace>/.venv/lib/python3*/site-packages/crossplane/function/proto
    let lib = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.venv/lib");
    let mut found: Vec<PathBuf> = std::fs::read_dir(&lib)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("python3"))
        .map(|e| e.path().join("site-packages/crossplane/function/proto"))
        .filter(|d| d.join("v1/run_function.proto").is_file())
        .collect();
    found.sort();
    found.pop().unwrap_or_else(|| {
        panic!(
            "crossplane-function-sdk-python's run_function.proto not found: XFN_PYTHON is unset \
             and {}/python3*/site-packages/crossplane/function/proto/v1/run_function.proto \
             does not exist; {HINT}",
            lib.display()
        )
    })
}

/// Compiles one `.proto` file (importing only google well-known types).
fn compile(dir: &Path, file: &str) -> FileDescriptorProto {
    let mut compiler = protox::Compiler::new([dir])
        .unwrap_or_else(|e| panic!("protox: bad include dir {dir:?}: {e}"));
    compiler
        .open_file(file)
        .unwrap_or_else(|e| panic!("protox could not compile {:?}: {e:?}", dir.join(file)));
    let mut fds = compiler.file_descriptor_set();
    let idx = fds
        .file
        .iter()
        .position(|f| f.name() == file)
        .expect("compiled file in its own descriptor set");
    fds.file.swap_remove(idx)
}

/// The Python SDK's descriptor for `package` (v1, or v1beta1).
///
/// Uses the SDK's v1beta1 file if it ships one; otherwise derives v1beta1 from its
/// v1 file by rewriting the package line, as Crossplane does.
fn python_file(package: &str) -> FileDescriptorProto {
    python_file_in(&python_proto_dir(), package)
}

/// [`python_file`] for the SDK's proto directory `dir`.
fn python_file_in(dir: &Path, package: &str) -> FileDescriptorProto {
    if package == V1 {
        return compile(&dir.join("v1"), "run_function.proto");
    }
    assert_eq!(package, V1BETA1);
    if dir.join("v1beta1/run_function.proto").is_file() {
        return compile(&dir.join("v1beta1"), "run_function.proto");
    }
    let v1 = std::fs::read_to_string(dir.join("v1/run_function.proto")).expect("read v1 proto");
    let from = format!("package {V1};");
    assert_eq!(
        v1.matches(&from).count(),
        1,
        "one package line in python v1"
    );
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("python-v1beta1-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).expect("create tmp dir");
    std::fs::write(
        tmp.join("run_function.proto"),
        v1.replace(&from, &format!("package {V1BETA1};")),
    )
    .expect("write derived v1beta1 proto");
    compile(&tmp, "run_function.proto")
}

/// This crate's descriptor for `package`.
fn our_file(package: &str) -> FileDescriptorProto {
    let fds = FileDescriptorSet::decode(xfn_proto::FILE_DESCRIPTOR_SET)
        .expect("FILE_DESCRIPTOR_SET decodes");
    fds.file
        .into_iter()
        .find(|f| f.package() == package)
        .unwrap_or_else(|| panic!("no file for package {package} in FILE_DESCRIPTOR_SET"))
}

// ---------------------------------------------------------------------------
// Descriptor comparison
// ---------------------------------------------------------------------------

/// Collects human-readable differences between two file descriptors.
///
/// Compares everything that defines the wire format and the JSON mapping:
/// package, syntax, imports, every (nested) message with its fields, oneofs,
/// map entries, reserved ranges and options, every enum and value, and every
/// service and method. Comments, source info, declaration order and file-level
/// options (e.g. `go_package`) are not compared.
struct Differ {
    diffs: Vec<String>,
}

impl Differ {
    fn check<T: PartialEq + Debug>(&mut self, ctx: &str, what: &str, ours: T, theirs: T) {
        if ours != theirs {
            self.diffs
                .push(format!("{ctx}: {what}: ours={ours:?} python={theirs:?}"));
        }
    }

    /// Pairs items by name, reporting those present on one side only.
    fn pair<'a, T>(
        &mut self,
        ctx: &str,
        kind: &str,
        ours: &'a [T],
        theirs: &'a [T],
        name: impl Fn(&T) -> &str,
    ) -> Vec<(&'a T, &'a T)> {
        let ours: BTreeMap<&str, &T> = ours.iter().map(|x| (name(x), x)).collect();
        let theirs: BTreeMap<&str, &T> = theirs.iter().map(|x| (name(x), x)).collect();
        for n in ours.keys().filter(|n| !theirs.contains_key(*n)) {
            self.diffs.push(format!("{ctx}: {kind} {n} only in ours"));
        }
        for n in theirs.keys().filter(|n| !ours.contains_key(*n)) {
            self.diffs.push(format!("{ctx}: {kind} {n} only in python"));
        }
        ours.iter()
            .filter_map(|(n, o)| theirs.get(n).map(|t| (*o, *t)))
            .collect()
    }

    fn file(&mut self, ours: &FileDescriptorProto, theirs: &FileDescriptorProto) {
        let ctx = "file";
        self.check(ctx, "package", ours.package(), theirs.package());
        self.check(ctx, "syntax", ours.syntax(), theirs.syntax());
        let deps = |f: &FileDescriptorProto| f.dependency.iter().cloned().collect::<BTreeSet<_>>();
        self.check(ctx, "imports", deps(ours), deps(theirs));
        self.check(ctx, "extensions", &ours.extension, &theirs.extension);

        let scope = format!(".{}", ours.package());
        self.messages(&scope, &ours.message_type, &theirs.message_type);
        self.enums(&scope, &ours.enum_type, &theirs.enum_type);
        for (o, t) in self.pair(ctx, "service", &ours.service, &theirs.service, |s| s.name()) {
            self.service(&scope, o, t);
        }
    }

    fn messages(&mut self, scope: &str, ours: &[DescriptorProto], theirs: &[DescriptorProto]) {
        let ctx = format!("scope {scope}");
        for (o, t) in self.pair(&ctx, "message", ours, theirs, |m| m.name()) {
            self.message(&format!("{scope}.{}", o.name()), o, t);
        }
    }

    fn message(&mut self, name: &str, ours: &DescriptorProto, theirs: &DescriptorProto) {
        let ctx = format!("message {name}");
        // Options carry map_entry (map fields) and deprecated.
        self.check(&ctx, "options", &ours.options, &theirs.options);
        let oneofs = |m: &DescriptorProto| {
            m.oneof_decl
                .iter()
                .map(|o| o.name().to_owned())
                .collect::<Vec<_>>()
        };
        self.check(&ctx, "oneofs", oneofs(ours), oneofs(theirs));
        self.check(
            &ctx,
            "reserved ranges",
            &ours.reserved_range,
            &theirs.reserved_range,
        );
        self.check(
            &ctx,
            "reserved names",
            &ours.reserved_name,
            &theirs.reserved_name,
        );
        self.check(
            &ctx,
            "extension ranges",
            &ours.extension_range,
            &theirs.extension_range,
        );
        self.check(&ctx, "extensions", &ours.extension, &theirs.extension);

        let numbers = |m: &DescriptorProto| {
            m.field
                .iter()
                .map(|f| (f.number(), f.name().to_owned()))
                .collect::<BTreeMap<_, _>>()
        };
        self.check(&ctx, "field numbers", numbers(ours), numbers(theirs));
        for (o, t) in self.pair(&ctx, "field", &ours.field, &theirs.field, |f| f.name()) {
            self.field(&ctx, ours, theirs, o, t);
        }

        self.messages(name, &ours.nested_type, &theirs.nested_type);
        self.enums(name, &ours.enum_type, &theirs.enum_type);
    }

    fn field(
        &mut self,
        msg_ctx: &str,
        our_msg: &DescriptorProto,
        their_msg: &DescriptorProto,
        ours: &FieldDescriptorProto,
        theirs: &FieldDescriptorProto,
    ) {
        let ctx = format!("{msg_ctx}: field {}", ours.name());
        self.check(&ctx, "number", ours.number, theirs.number);
        self.check(&ctx, "label", ours.label(), theirs.label());
        self.check(&ctx, "type", ours.r#type(), theirs.r#type());
        self.check(&ctx, "type_name", &ours.type_name, &theirs.type_name);
        self.check(&ctx, "extendee", &ours.extendee, &theirs.extendee);
        self.check(
            &ctx,
            "default_value",
            &ours.default_value,
            &theirs.default_value,
        );
        self.check(&ctx, "json_name", &ours.json_name, &theirs.json_name);
        self.check(
            &ctx,
            "proto3_optional",
            ours.proto3_optional,
            theirs.proto3_optional,
        );
        self.check(&ctx, "oneof_index", ours.oneof_index, theirs.oneof_index);
        let oneof = |m: &DescriptorProto, f: &FieldDescriptorProto| {
            f.oneof_index.map(|i| {
                usize::try_from(i)
                    .ok()
                    .and_then(|i| m.oneof_decl.get(i))
                    .map_or("<bad oneof_index>", |o| o.name())
                    .to_owned()
            })
        };
        self.check(
            &ctx,
            "oneof",
            oneof(our_msg, ours),
            oneof(their_msg, theirs),
        );
        // Options carry deprecated and packed.
        self.check(&ctx, "options", &ours.options, &theirs.options);
    }

    fn enums(&mut self, scope: &str, ours: &[EnumDescriptorProto], theirs: &[EnumDescriptorProto]) {
        let ctx = format!("scope {scope}");
        for (o, t) in self.pair(&ctx, "enum", ours, theirs, |e| e.name()) {
            let ctx = format!("enum {scope}.{}", o.name());
            self.check(&ctx, "options", &o.options, &t.options);
            self.check(
                &ctx,
                "reserved ranges",
                &o.reserved_range,
                &t.reserved_range,
            );
            self.check(&ctx, "reserved names", &o.reserved_name, &t.reserved_name);
            for (ov, tv) in self.pair(&ctx, "value", &o.value, &t.value, |v| v.name()) {
                let vctx = format!("{ctx}: value {}", ov.name());
                self.check(&vctx, "number", ov.number, tv.number);
                self.check(&vctx, "options", &ov.options, &tv.options);
            }
        }
    }

    fn service(
        &mut self,
        scope: &str,
        ours: &ServiceDescriptorProto,
        theirs: &ServiceDescriptorProto,
    ) {
        let ctx = format!("service {scope}.{}", ours.name());
        self.check(&ctx, "options", &ours.options, &theirs.options);
        for (o, t) in self.pair(&ctx, "method", &ours.method, &theirs.method, |m| m.name()) {
            let mctx = format!("{ctx}: method {}", o.name());
            self.check(&mctx, "input_type", &o.input_type, &t.input_type);
            self.check(&mctx, "output_type", &o.output_type, &t.output_type);
            self.check(
                &mctx,
                "client_streaming",
                o.client_streaming(),
                t.client_streaming(),
            );
            self.check(
                &mctx,
                "server_streaming",
                o.server_streaming(),
                t.server_streaming(),
            );
            self.check(&mctx, "options", &o.options, &t.options);
        }
    }
}

/// All differences between `ours` and `theirs`; empty when wire-identical.
fn diff(ours: &FileDescriptorProto, theirs: &FileDescriptorProto) -> Vec<String> {
    let mut d = Differ { diffs: Vec::new() };
    d.file(ours, theirs);
    d.diffs
}

fn assert_same(package: &str) {
    let ours = our_file(package);
    let theirs = python_file(package);
    assert!(
        !ours.message_type.is_empty(),
        "our {package} file has messages"
    );
    let diffs = diff(&ours, &theirs);
    assert!(
        diffs.is_empty(),
        "{package}: {} difference(s) from crossplane-function-sdk-python:\n  {}",
        diffs.len(),
        diffs.join("\n  ")
    );
}

// ---------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------

#[test]
fn v1_matches_python_sdk() {
    assert_same(V1);
}

#[test]
fn v1beta1_matches_python_sdk() {
    assert_same(V1BETA1);
}

fn message_mut<'a>(file: &'a mut FileDescriptorProto, name: &str) -> &'a mut DescriptorProto {
    file.message_type
        .iter_mut()
        .find(|m| m.name() == name)
        .unwrap_or_else(|| panic!("message {name}"))
}

fn field_mut<'a>(msg: &'a mut DescriptorProto, name: &str) -> &'a mut FieldDescriptorProto {
    msg.field
        .iter_mut()
        .find(|f| f.name() == name)
        .unwrap_or_else(|| panic!("field {name}"))
}

#[test]
fn identical_descriptors_have_no_differences() {
    let ours = our_file(V1);
    assert_eq!(diff(&ours, &ours.clone()), Vec::<String>::new());
}

/// The comparison is a real check: each deliberate change is reported precisely.
#[test]
fn altered_descriptor_is_reported() {
    let ours = our_file(V1);
    let mut bad = ours.clone();

    let req = message_mut(&mut bad, "RunFunctionRequest");
    field_mut(req, "required_schemas").number = Some(10);
    field_mut(req, "context").json_name = Some("ctx".to_owned());
    field_mut(req, "extra_resources").options = Some(prost_types::FieldOptions {
        deprecated: Some(false),
        ..Default::default()
    });
    // A nested map entry: make the value type of `credentials` a string.
    let entry = req
        .nested_type
        .iter_mut()
        .find(|m| m.name() == "CredentialsEntry")
        .expect("map entry");
    let value = field_mut(entry, "value");
    value.r#type = Some(prost_types::field_descriptor_proto::Type::String as i32);
    value.type_name = None;

    let result = message_mut(&mut bad, "Result");
    field_mut(result, "reason").proto3_optional = None;
    result.field.retain(|f| f.name() != "message");

    let sel = message_mut(&mut bad, "ResourceSelector");
    sel.oneof_decl[0].name = Some("matcher".to_owned());

    let ready = bad
        .enum_type
        .iter_mut()
        .find(|e| e.name() == "Ready")
        .expect("enum Ready");
    ready.value[2].number = Some(7);
    let target = bad
        .enum_type
        .iter_mut()
        .find(|e| e.name() == "Target")
        .expect("enum Target");
    target.value.pop();

    bad.service[0].method[0].server_streaming = Some(true);

    let diffs = diff(&bad, &ours);
    let expect = [
        "message .apiextensions.fn.proto.v1.RunFunctionRequest: field required_schemas: number: ours=Some(10) python=Some(9)",
        "message .apiextensions.fn.proto.v1.RunFunctionRequest: field numbers:",
        "message .apiextensions.fn.proto.v1.RunFunctionRequest: field context: json_name: ours=Some(\"ctx\") python=Some(\"context\")",
        "message .apiextensions.fn.proto.v1.RunFunctionRequest: field extra_resources: options:",
        "message .apiextensions.fn.proto.v1.RunFunctionRequest.CredentialsEntry: field value: type: ours=String python=Message",
        "message .apiextensions.fn.proto.v1.RunFunctionRequest.CredentialsEntry: field value: type_name: ours=None python=Some(\".apiextensions.fn.proto.v1.Credentials\")",
        "message .apiextensions.fn.proto.v1.Result: field reason: proto3_optional: ours=None python=Some(true)",
        "message .apiextensions.fn.proto.v1.Result: field message only in python",
        "message .apiextensions.fn.proto.v1.ResourceSelector: oneofs:",
        "message .apiextensions.fn.proto.v1.ResourceSelector: field match_name: oneof: ours=Some(\"matcher\") python=Some(\"match\")",
        "enum .apiextensions.fn.proto.v1.Ready: value READY_FALSE: number: ours=Some(7) python=Some(2)",
        "enum .apiextensions.fn.proto.v1.Target: value TARGET_COMPOSITE_AND_CLAIM only in python",
        "service .apiextensions.fn.proto.v1.FunctionRunnerService: method RunFunction: server_streaming: ours=true python=false",
    ];
    for e in expect {
        assert!(
            diffs.iter().any(|d| d.starts_with(e)),
            "expected a difference starting with {e:?}; got:\n  {}",
            diffs.join("\n  ")
        );
    }
    // Field numbers of RunFunctionRequest and Result differ, and ResourceSelector's
    // match_labels is reported for its oneof too.
    assert_eq!(diffs.len(), expect.len() + 2, "{}", diffs.join("\n"));
}

/// Our v1 and v1beta1 descriptors differ only in their package.
#[test]
fn our_v1beta1_is_v1_with_another_package() {
    let v1 = our_file(V1);
    let mut beta = our_file(V1BETA1);
    // Rewrite the package and every type reference back to v1.
    fn rename(m: &mut DescriptorProto) {
        for f in &mut m.field {
            if let Some(t) = f.type_name.as_mut() {
                *t = t.replacen(&format!(".{V1BETA1}."), &format!(".{V1}."), 1);
            }
        }
        m.nested_type.iter_mut().for_each(rename);
    }
    assert_ne!(diff(&beta, &v1), Vec::<String>::new());
    beta.package = Some(V1.to_owned());
    beta.message_type.iter_mut().for_each(rename);
    for m in &mut beta.service[0].method {
        for t in [&mut m.input_type, &mut m.output_type]
            .into_iter()
            .flatten()
        {
            *t = t.replacen(&format!(".{V1BETA1}."), &format!(".{V1}."), 1);
        }
    }
    assert_eq!(diff(&beta, &v1), Vec::<String>::new());
}

/// Deriving v1beta1 from the SDK's v1 file (used when no v1beta1 file is shipped)
/// gives the same descriptor as the v1beta1 file the SDK does ship.
#[test]
fn derived_python_v1beta1_matches_shipped() {
    let dir = python_proto_dir();
    let shipped = compile(&dir.join("v1beta1"), "run_function.proto");
    let only_v1 = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("python-only-v1-{}", std::process::id()));
    std::fs::create_dir_all(only_v1.join("v1")).expect("create tmp dir");
    std::fs::copy(
        dir.join("v1/run_function.proto"),
        only_v1.join("v1/run_function.proto"),
    )
    .expect("copy v1 proto");
    let derived = python_file_in(&only_v1, V1BETA1);
    assert_eq!(diff(&derived, &shipped), Vec::<String>::new());
}
