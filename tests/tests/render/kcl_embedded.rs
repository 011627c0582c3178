//! An Upbound `up` project's embedded KCL function rendered from its
//! source directory (`render.xfn.dev/kcl-function-dir`): a small project
//! written here in the shape of upbound's configurations
//! (`functions/<name>/main.k`, a `kcl.mod` with `models = { path =
//! "./model" }`, and a `model/` of schemas as `up` generates them).

use std::path::Path;

use xfn_tests::run_xfn;

const XR: &str = "apiVersion: platform.example.org/v1alpha1
kind: XApp
metadata:
  name: shop
spec:
  parameters:
    image: nginx:1.25
    replicas: 2
";

/// The step names the function `up project build` would build; it has no
/// input.
const COMPOSITION: &str = "apiVersion: apiextensions.crossplane.io/v1
kind: Composition
metadata:
  name: xapps
spec:
  compositeTypeRef:
    apiVersion: platform.example.org/v1alpha1
    kind: XApp
  mode: Pipeline
  pipeline:
  - step: xapp
    functionRef:
      name: example-configuration-appxapp
";

const FUNCTIONS: &str = "apiVersion: pkg.crossplane.io/v1
kind: Function
metadata:
  name: example-configuration-appxapp
  annotations:
    render.xfn.dev/kcl-function-dir: functions/xapp
spec:
  package: xpkg.example.org/example/configuration-app_xapp:v0.1.0
";

const KCL_MOD: &str = "[package]
name = \"xapp\"
version = \"0.0.1\"

[dependencies]
models = { path = \"./model\" }
";

const MAIN: &str = "import models.org.example.platform.v1alpha1 as platformv1alpha1
import models.io.k8s.apps.v1 as appsv1

oxr = platformv1alpha1.XApp {**option(\"params\").oxr}

_name = oxr.metadata.name

items = [
    appsv1.Deployment {
        metadata.name = _name
        metadata.annotations = {\"krm.kcl.dev/composition-resource-name\" = \"deployment\"}
        spec.replicas = oxr.spec.parameters.replicas
        spec.template.spec.containers = [{name = \"app\", image = oxr.spec.parameters.image}]
    }
]
";

const XAPP_MODEL: &str = "schema XApp:
    apiVersion: \"platform.example.org/v1alpha1\" = \"platform.example.org/v1alpha1\"
    kind: \"XApp\" = \"XApp\"
    metadata?: {str:any}
    spec: XAppSpec

schema XAppSpec:
    parameters: XAppParameters

schema XAppParameters:
    image: str
    replicas?: int = 1

    check:
        replicas >= 1, \"replicas must be at least 1\"
";

const DEPLOYMENT_MODEL: &str = "schema Deployment:
    apiVersion: \"apps/v1\" = \"apps/v1\"
    kind: \"Deployment\" = \"Deployment\"
    metadata?: {str:any}
    spec?: {str:any}
";

fn write(root: &Path, path: &str, text: &str) {
    let path = root.join(path);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

fn project(with_model: bool) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    write(root, "xr.yaml", XR);
    write(root, "composition.yaml", COMPOSITION);
    write(root, "functions.yaml", FUNCTIONS);
    write(root, "functions/xapp/kcl.mod", KCL_MOD);
    write(root, "functions/xapp/main.k", MAIN);
    if with_model {
        write(
            root,
            "functions/xapp/model/kcl.mod",
            "[package]\nname = \"models\"\nversion = \"0.0.1\"\n",
        );
        write(
            root,
            "functions/xapp/model/org/example/platform/v1alpha1/platform_example_org_v1alpha1_xapp.k",
            XAPP_MODEL,
        );
        write(
            root,
            "functions/xapp/model/io/k8s/apps/v1/apps_v1_deployment.k",
            DEPLOYMENT_MODEL,
        );
    }
    dir
}

fn render(dir: &Path) -> xfn_tests::Run {
    let args: Vec<String> = ["render", "xr.yaml", "composition.yaml", "functions.yaml"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    run_xfn(dir, &args)
}

#[test]
fn an_embedded_kcl_function_renders_from_its_source_directory() {
    let dir = project(true);
    let run = render(dir.path());
    assert_eq!(run.code, 0, "{}", run.stderr);
    for want in [
        "kind: Deployment",
        "crossplane.io/composition-resource-name: deployment",
        "replicas: 2",
        "image: nginx:1.25",
    ] {
        assert!(run.stdout.contains(want), "{want}: {}", run.stdout);
    }
}

#[test]
fn an_embedded_kcl_function_without_its_generated_model_is_refused_clearly() {
    let dir = project(false);
    let run = render(dir.path());
    assert_ne!(run.code, 0, "{}", run.stdout);
    assert!(
        run.stderr.contains("the KCL dependency \"models\"")
            && run.stderr.contains("up project build"),
        "{}",
        run.stderr
    );
}
