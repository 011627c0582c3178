use std::time::Duration;

use kube_lease_manager::{LeaseManager, LeaseManagerBuilder};
use tokio::sync::watch::Receiver;
use xfn_kube_fake::{FailureRule, FakeApiServer};

use crate::common::{client, within};

const NS: &str = "crossplane-system";

async fn manager(fake: &FakeApiServer, identity: &str) -> LeaseManager {
    within(
        "build lease manager",
        LeaseManagerBuilder::new(client(fake), "xfn-controller")
            .with_namespace(NS)
            .with_identity(identity)
            // The default field manager is random per process, not per identity.
            .with_field_manager(format!("xfn-lease-{identity}"))
            .with_duration(2)
            .with_grace(1)
            .build(),
    )
    .await
    .expect("lease manager")
}

fn holder(fake: &FakeApiServer) -> Option<String> {
    fake.get(
        "coordination.k8s.io/v1",
        "leases",
        Some(NS),
        "xfn-controller",
    )
    .and_then(|l| l["spec"]["holderIdentity"].as_str().map(str::to_string))
}

/// Waits until the candidate at index `who` is the only leader, checking at every step that two never
/// lead at once.
async fn wait_for_leader(rxs: &[&Receiver<bool>], who: usize, what: &str) {
    within(what, async {
        loop {
            let leaders: Vec<usize> = (0..rxs.len()).filter(|i| *rxs[*i].borrow()).collect();
            assert!(leaders.len() <= 1, "two leaders at once: {leaders:?}");
            if leaders == [who] {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_managers_elect_one_leader_and_fail_over() {
    let fake = FakeApiServer::new();
    let a = manager(&fake, "pod-a").await;
    let b = manager(&fake, "pod-b").await;
    // Force the acquisition race: both read the lease as free; pod-a's apply lands first, pod-b's only
    // after pod-a holds the lease. pod-b must lose with 409 Conflict, not steal the lease.
    for (who, ms) in [("pod-a", 300), ("pod-b", 1200)] {
        fake.inject_failure(
            FailureRule::delay("/leases/xfn-controller", Duration::from_millis(ms))
                .method("PATCH")
                .query_contains(format!("fieldManager=xfn-lease-{who}")),
        );
    }
    let ((rx_a, task_a), (rx_b, task_b)) = tokio::join!(a.watch(), b.watch());
    wait_for_leader(&[&rx_a, &rx_b], 0, "pod-a leads").await;
    assert_eq!(holder(&fake).as_deref(), Some("pod-a"));
    // Watch the window in which pod-b's late apply lands and pod-a renews (the lease lasts 2 s).
    within("stable leadership", async {
        for _ in 0..125 {
            assert!(
                *rx_a.borrow() && !*rx_b.borrow(),
                "leadership changed while the lease is renewed"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert_eq!(holder(&fake).as_deref(), Some("pod-a"));
    let late_apply = fake.requests().into_iter().any(|r| {
        r.method == "PATCH"
            && r.content_type.as_deref() == Some("application/apply-patch+yaml")
            && r.query_has("fieldManager=xfn-lease-pod-b")
            && !r.query_has("force=true")
    });
    assert!(
        late_apply,
        "pod-b tried a non-forced apply: {:#?}",
        fake.requests()
    );

    // 1. The leader releases: dropping its receiver makes its task release the lease and end.
    drop(rx_a);
    within("pod-a's task ends", task_a)
        .await
        .expect("join")
        .expect("released cleanly");
    wait_for_leader(&[&rx_b], 0, "pod-b takes over after the release").await;
    assert_eq!(holder(&fake).as_deref(), Some("pod-b"));

    // 2. A new candidate waits while the leader renews, then takes over once it stops renewing.
    let (rx_c, task_c) = manager(&fake, "pod-c").await.watch().await;
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert!(
        !*rx_c.borrow(),
        "pod-c must not lead while the lease is renewed"
    );
    assert_eq!(holder(&fake).as_deref(), Some("pod-b"));
    task_b.abort(); // A crash: no release, no more renewals.
    let _ = task_b.await;
    drop(rx_b);
    wait_for_leader(&[&rx_c], 0, "pod-c takes over the expired lease").await;
    assert_eq!(holder(&fake).as_deref(), Some("pod-c"));

    drop(rx_c);
    within("pod-c releases", task_c)
        .await
        .expect("join")
        .expect("released");
    assert_eq!(holder(&fake), None);
}
