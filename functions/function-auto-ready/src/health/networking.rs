//! `networking.k8s.io/v1`: Ingress.

use xfn_sdk::Object;

use crate::unstructured::slice;

/// An Ingress is healthy once `status.loadBalancer.ingress` lists at least
/// one entry.
pub fn ingress(o: &Object) -> bool {
    slice(o, &["status", "loadBalancer", "ingress"]).is_some_and(|entries| !entries.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::health::tests::object;
    use serde_json::{Value, json};

    fn with_status(status: Value) -> Object {
        object(json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "status": status}))
    }

    #[test]
    fn ingress_health() {
        assert!(ingress(&with_status(
            json!({"loadBalancer": {"ingress": [{"ip": "10.0.0.1"}]}})
        )));
        assert!(ingress(&with_status(
            json!({"loadBalancer": {"ingress": [{"hostname": "lb.example.com"}]}})
        )));
        assert!(ingress(&with_status(
            json!({"loadBalancer": {"ingress": [{}]}})
        )));
        for status in [
            json!({"loadBalancer": {"ingress": []}}),
            json!({"loadBalancer": {"ingress": null}}),
            json!({"loadBalancer": {"ingress": {"ip": "10.0.0.1"}}}),
            json!({"loadBalancer": {}}),
            json!({"loadBalancer": null}),
            json!({}),
            json!(null),
            json!("ready"),
        ] {
            assert!(!ingress(&with_status(status.clone())), "{status}");
        }
        assert!(!ingress(&object(
            json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress"})
        )));
    }
}
