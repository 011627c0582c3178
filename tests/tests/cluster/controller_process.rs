//! `xfn controller` as a process: real processes of the `xfn` binary
//! against the fake API server on loopback.
//!
//! It stops cleanly on SIGTERM, as a rollout or a scale-down asks it to: a
//! follower exits at once; a leader stops reconciling, releases the Lease
//! (so the next replica leads within seconds, though the Lease would hold
//! another 15 s) and exits with status 0. A second signal ends a shutdown
//! that hangs, at once. And what objects say reaches its log escaped and
//! bounded.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use xfn_kube_fake::{FailureRule, FakeApiServer};
use xfn_tests::{free_port, xfn_bin};

const NS: &str = "crossplane-system";

/// Longest a replica may take to exit after SIGTERM when nothing is in
/// flight and the API answers.
const PROMPT_EXIT: Duration = Duration::from_secs(5);

/// Longest the hand-over of leadership may take after the leader gets
/// SIGTERM (the Lease itself lasts 15 s).
const HAND_OVER: Duration = Duration::from_secs(10);

/// One `xfn controller` process, killed if still running when dropped.
struct Controller {
    identity: &'static str,
    child: Child,
    log: PathBuf,
}

impl Controller {
    fn start(identity: &'static str, api: &str, work: &Path) -> Controller {
        let log = work.join(format!("{identity}.log"));
        let child = Command::new(xfn_bin())
            .args(["controller", "--identity", identity, "--kube-api", api])
            .args(["--address", &format!("127.0.0.1:{}", free_port())])
            .args(["--probe-address", &format!("127.0.0.1:{}", free_port())])
            // The default Lease: a hand-over that waited for it to expire
            // would take up to 15 s.
            .args(["--lease-duration", "15s", "--namespace", NS])
            .arg("--cache-dir")
            .arg(work.join(identity))
            .env("XFN_LOG", "info")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("start xfn controller");
        Controller {
            identity,
            child,
            log,
        }
    }

    fn signal(&self, name: &str) {
        let status = Command::new("kill")
            .args([&format!("-{name}"), &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success(), "kill -{name} {}", self.identity);
    }

    /// Waits up to `limit` for the process to exit: its status and how
    /// long it took.
    fn exit_within(&mut self, limit: Duration) -> (ExitStatus, Duration) {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return (status, start.elapsed());
            }
            assert!(
                start.elapsed() < limit,
                "{} still runs {limit:?} after the signal; its log:\n{}",
                self.identity,
                self.log_text()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Controller {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn holder(fake: &FakeApiServer) -> Option<String> {
    let lease = fake.get(
        "coordination.k8s.io/v1",
        "leases",
        Some(NS),
        "xfn-controller",
    )?;
    lease["spec"]["holderIdentity"]
        .as_str()
        .filter(|h| !h.is_empty())
        .map(str::to_owned)
}

fn wait_for(what: &str, limit: Duration, mut check: impl FnMut() -> bool) -> Duration {
    let start = Instant::now();
    while !check() {
        assert!(start.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
    start.elapsed()
}

async fn fake_api() -> (FakeApiServer, String, xfn_kube_fake::ServeHandle) {
    let fake = FakeApiServer::new();
    let (addr, handle) = fake.serve("127.0.0.1:0".parse().unwrap()).await.unwrap();
    (fake, format!("http://{addr}"), handle)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_stops_a_follower_and_a_leader_who_hands_over_within_seconds() {
    let (fake, api, _server) = fake_api().await;
    let work = tempfile::tempdir().unwrap();
    let mut replicas: Vec<Controller> = ["xfn-a", "xfn-b", "xfn-c"]
        .into_iter()
        .map(|identity| Controller::start(identity, &api, work.path()))
        .collect();
    let find = tokio::task::spawn_blocking({
        let fake = fake.clone();
        move || {
            wait_for("a leader", Duration::from_secs(60), || {
                holder(&fake).is_some()
            });
        }
    });
    find.await.unwrap();
    let leader = holder(&fake).unwrap();
    // Let every replica settle into its role.
    tokio::time::sleep(Duration::from_millis(500)).await;

    // A follower: it exits at once, cleanly, and the leader keeps leading.
    let at = replicas.iter().position(|r| r.identity != leader).unwrap();
    let mut follower = replicas.remove(at);
    follower.signal("TERM");
    let (status, took) = follower.exit_within(PROMPT_EXIT);
    assert!(
        status.success(),
        "follower {status}; log:\n{}",
        follower.log_text()
    );
    println!("follower {} exited in {took:?}", follower.identity);
    assert!(follower.log_text().contains("xfn controller: stopped"));
    assert_eq!(holder(&fake).as_deref(), Some(leader.as_str()));

    // The leader: it releases the Lease, the other replica takes it well
    // before the 15 s Lease would have expired, and the leader exits 0.
    let at = replicas.iter().position(|r| r.identity == leader).unwrap();
    let mut old = replicas.remove(at);
    let successor = replicas[0].identity;
    let signalled = Instant::now();
    old.signal("TERM");
    // Both measured from the signal: when the other replica holds the
    // Lease, and when the old leader has exited.
    let (mut hand_over, mut exited) = (None, None);
    while hand_over.is_none() || exited.is_none() {
        let now = signalled.elapsed();
        assert!(
            now < HAND_OVER,
            "after {now:?}: hand-over {hand_over:?}, exit {exited:?}; the leader's log:\n{}",
            old.log_text()
        );
        if hand_over.is_none() && holder(&fake).as_deref() == Some(successor) {
            hand_over = Some(now);
        }
        if exited.is_none()
            && let Some(status) = old.child.try_wait().unwrap()
        {
            exited = Some((status, now));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let (hand_over, (status, took)) = (hand_over.unwrap(), exited.unwrap());
    assert!(
        status.success(),
        "leader {status}; log:\n{}",
        old.log_text()
    );
    println!("leader {} exited {took:?} after SIGTERM", old.identity);
    println!("hand-over from {leader} to {successor} took {hand_over:?} after SIGTERM");
    assert!(took < PROMPT_EXIT, "{took:?}");
    assert!(old.log_text().contains("xfn controller: stopped"));

    // The last replica, now leader, leaves the Lease free behind it.
    let mut last = replicas.remove(0);
    last.signal("INT");
    let (status, took) = last.exit_within(PROMPT_EXIT);
    assert!(status.success(), "last {status}; log:\n{}", last.log_text());
    println!("last leader {} exited in {took:?}", last.identity);
    assert_eq!(holder(&fake), None, "the Lease is released");

    // Watching the Lease is allowed by deploy/rbac.yaml, as is all else.
    let requests = fake.requests();
    assert!(
        requests
            .iter()
            .any(|r| r.path.ends_with("/leases") && r.query_has("watch=true")),
        "followers watch the Lease"
    );
    xfn_tests::rbac::assert_deploy_rbac_allows(
        requests
            .iter()
            .map(|r| (r.method.as_str(), r.path.as_str(), r.query.as_str())),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_signal_ends_a_hanging_shutdown_at_once() {
    let (fake, api, _server) = fake_api().await;
    let work = tempfile::tempdir().unwrap();
    let mut controller = Controller::start("xfn-a", &api, work.path());
    let leads = tokio::task::spawn_blocking({
        let fake = fake.clone();
        move || {
            wait_for("a leader", Duration::from_secs(60), || {
                holder(&fake).is_some()
            })
        }
    });
    leads.await.unwrap();
    // The API server stops answering about the Lease: releasing it hangs.
    fake.inject_failure(
        FailureRule::delay("leases/xfn-controller", Duration::from_secs(60)).times(1000),
    );
    controller.signal("TERM");
    std::thread::sleep(Duration::from_secs(1));
    assert!(
        controller.child.try_wait().unwrap().is_none(),
        "the first signal waits for the Lease's release; log:\n{}",
        controller.log_text()
    );
    controller.signal("TERM");
    let (status, took) = controller.exit_within(Duration::from_secs(1));
    println!("exited {took:?} after the second signal: {status}");
    assert_eq!(status.code(), Some(128 + 15), "{}", controller.log_text());
    assert!(
        controller
            .log_text()
            .contains("xfn controller: SIGTERM again: exiting at once")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_image_cannot_forge_or_flood_log_lines() {
    use xfn_kube_fake::crossplane::{function, function_revision};
    let (fake, api, _server) = fake_api().await;
    let work = tempfile::tempdir().unwrap();
    let image = format!(
        "reg.example/fns/hello:v1\nFORGED 2026-01-01T00:00:00Z ERROR xfn: pwned\r{}",
        "a".repeat(300_000)
    );
    fake.insert(function("fn-a", &image)).unwrap();
    fake.insert(function_revision("fn-a-1", "fn-a", &image, "Active"))
        .unwrap();
    let mut controller = Controller::start("xfn-a", &api, work.path());
    let log = controller.log.clone();
    tokio::task::spawn_blocking(move || {
        wait_for("the revision's warning", Duration::from_secs(60), || {
            std::fs::read_to_string(&log).is_ok_and(|l| l.contains("cannot use package"))
        })
    })
    .await
    .unwrap();
    controller.signal("TERM");
    let (status, _) = controller.exit_within(PROMPT_EXIT);
    assert!(status.success());

    let text = controller.log_text();
    for line in text.lines() {
        assert!(
            !line.starts_with("FORGED") && !line.contains("ERROR xfn: pwned\raaa"),
            "a forged log line: {line:.200}"
        );
        assert!(
            line.len() <= 2048,
            "a log line of {} bytes: {line:.200}",
            line.len()
        );
    }
    let warning = text
        .lines()
        .find(|l| l.contains("cannot use package"))
        .unwrap();
    assert!(
        warning.contains(r"reg.example/fns/hello:v1\nFORGED"),
        "{warning:.300}"
    );
    assert!(warning.contains(" bytes more)"), "{warning:.300}");
}
