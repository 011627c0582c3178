//! The install manifests in deploy/ agree with what `xfn controller`
//! expects: its pods carry the label the controller's Services select,
//! declare the port named `grpc` those Services target, and are probed
//! where the controller answers. (No API server can run here to apply
//! them; `cluster_replicas.rs` checks the RBAC rules against the requests
//! the controller really makes.)

use std::path::Path;

use serde_json::Value;

fn documents(file: &str) -> Vec<Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../deploy")
        .join(file);
    let text = std::fs::read_to_string(&path).expect("read a manifest");
    text.split("\n---\n")
        .map(|d| serde_yaml_ng::from_str(d).expect("YAML"))
        .collect()
}

#[test]
fn the_deployment_matches_the_controllers_defaults() {
    let deployment = &documents("deployment.yaml")[0];
    assert_eq!(deployment["kind"], "Deployment");
    let pod = &deployment["spec"]["template"];
    assert_eq!(pod["metadata"]["labels"]["app.kubernetes.io/name"], "xfn");
    assert_eq!(
        deployment["spec"]["selector"]["matchLabels"],
        pod["metadata"]["labels"]
    );
    let container = &pod["spec"]["containers"][0];
    let args: Vec<&str> = container["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(
        args,
        ["controller", "--pod-label", "app.kubernetes.io/name=xfn"]
    );
    let port = |name: &str| {
        container["ports"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == name)
            .map(|p| p["containerPort"].as_u64().unwrap())
    };
    // Services target the port by name; Crossplane dials 9443.
    assert_eq!(port("grpc"), Some(9443));
    assert_eq!(port("probes"), Some(8080));
    assert_eq!(container["readinessProbe"]["httpGet"]["path"], "/readyz");
    assert_eq!(container["livenessProbe"]["httpGet"]["path"], "/healthz");
    let env: Vec<&str> = container["env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert!(env.contains(&"POD_NAME") && env.contains(&"POD_NAMESPACE"));
    assert_eq!(pod["spec"]["serviceAccountName"], "xfn");
    // SIGTERM's clean shutdown fits in the grace period, with the
    // controller's default --timeout (30s), before a SIGKILL.
    let bound = xfn_cluster::controller::shutdown_bound(std::time::Duration::from_secs(30));
    let grace = pod["spec"]["terminationGracePeriodSeconds"].as_u64();
    assert!(
        grace.is_some_and(|g| g >= bound.as_secs() + 5),
        "terminationGracePeriodSeconds {grace:?} leaves no margin over {bound:?}"
    );
}

#[test]
fn the_disruption_budget_and_autoscaler_target_the_deployment() {
    let pdb = &documents("pdb.yaml")[0];
    assert_eq!(
        pdb["spec"]["selector"]["matchLabels"]["app.kubernetes.io/name"],
        "xfn"
    );
    let hpa = &documents("hpa.yaml")[0];
    assert_eq!(hpa["spec"]["scaleTargetRef"]["name"], "xfn");
    assert!(hpa["spec"]["minReplicas"].as_u64() >= Some(2));
}

#[test]
fn the_deployment_runs_the_image_make_image_builds_as_its_user() {
    let deployment = &documents("deployment.yaml")[0];
    let pod = &deployment["spec"]["template"]["spec"];
    // `make image` tags the image v<workspace version> (tests/image.rs
    // checks the image itself).
    let image = format!("ghcr.io/xfn-dev/xfn:v{}", env!("CARGO_PKG_VERSION"));
    assert_eq!(pod["containers"][0]["image"], image.as_str());
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    assert_eq!(pod["securityContext"]["runAsUser"], 65532);
    let kustomization = &documents("kustomization.yaml")[0];
    assert_eq!(kustomization["images"][0]["name"], "ghcr.io/xfn-dev/xfn");
}
