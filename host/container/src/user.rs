//! The user an image runs as: its config's `User` (`name`, `uid`,
//! `uid:gid`, `name:group`), looked up in the root's `/etc/passwd` and
//! `/etc/group` as Docker does.

use std::path::Path;

use crate::rootfs::read_in_root;

/// The user and group a function runs as, and its home directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunAs {
    /// The uid inside the sandbox.
    pub uid: u32,
    /// The gid inside the sandbox.
    pub gid: u32,
    /// `$HOME`: the passwd entry's, else `/`.
    pub home: String,
}

/// The largest `/etc/passwd` or `/etc/group` read.
const MAX_DB: u64 = 1 << 20;

/// Resolves `user` against the root at `root`.
pub fn resolve(root: &Path, user: &str) -> Result<RunAs, String> {
    let (user_part, group_part) = match user.split_once(':') {
        Some((u, g)) => (u, Some(g)),
        None => (user, None),
    };
    let passwd = read_db(root, "etc/passwd");
    let entry = |matches: &dyn Fn(&[&str]) -> bool| {
        passwd
            .lines()
            .map(|line| line.split(':').collect::<Vec<_>>())
            .find(|fields| fields.len() >= 7 && matches(fields))
    };
    let (uid, mut gid, home) = if user_part.is_empty() {
        let root_entry = entry(&|f| f[2] == "0");
        (0, 0, root_entry.map(|f| f[5].to_owned()))
    } else if let Ok(uid) = user_part.parse::<u32>() {
        let found = entry(&|f| f[2] == user_part);
        let gid = found.as_ref().and_then(|f| f[3].parse().ok()).unwrap_or(0);
        (uid, gid, found.map(|f| f[5].to_owned()))
    } else {
        let found = entry(&|f| f[0] == user_part)
            .ok_or_else(|| format!("the image's user {user_part:?} is not in its /etc/passwd"))?;
        let uid = found[2].parse().map_err(|_| {
            format!(
                "the image's /etc/passwd gives {user_part:?} the uid {:?}",
                found[2]
            )
        })?;
        let gid = found[3].parse().unwrap_or(0);
        (uid, gid, Some(found[5].to_owned()))
    };
    if let Some(group) = group_part.filter(|g| !g.is_empty()) {
        gid = match group.parse::<u32>() {
            Ok(gid) => gid,
            Err(_) => {
                let groups = read_db(root, "etc/group");
                groups
                    .lines()
                    .map(|line| line.split(':').collect::<Vec<_>>())
                    .find(|f| f.len() >= 3 && f[0] == group)
                    .and_then(|f| f[2].parse().ok())
                    .ok_or_else(|| {
                        format!("the image's group {group:?} is not in its /etc/group")
                    })?
            }
        };
    }
    if uid == u32::MAX || gid == u32::MAX {
        return Err(format!("the image's user {user:?} is not a valid id"));
    }
    Ok(RunAs {
        uid,
        gid,
        home: home
            .filter(|h| h.starts_with('/'))
            .unwrap_or_else(|| "/".to_owned()),
    })
}

fn read_db(root: &Path, path: &str) -> String {
    read_in_root(root, path, MAX_DB)
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root_with(passwd: &str, group: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("etc")).unwrap();
        std::fs::write(dir.path().join("etc/passwd"), passwd).unwrap();
        std::fs::write(dir.path().join("etc/group"), group).unwrap();
        dir
    }

    const PASSWD: &str = "root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n";
    const GROUP: &str = "root:x:0:\nnonroot:x:65532:\nstaff:x:50:\n";

    #[test]
    fn users_resolve_as_docker_resolves_them() {
        let root = root_with(PASSWD, GROUP);
        let r = |user| resolve(root.path(), user);
        assert_eq!(
            r("").unwrap(),
            RunAs {
                uid: 0,
                gid: 0,
                home: "/root".into()
            }
        );
        assert_eq!(
            r("nonroot").unwrap(),
            RunAs {
                uid: 65532,
                gid: 65532,
                home: "/home/nonroot".into()
            }
        );
        assert_eq!(
            r("65532:65532").unwrap(),
            RunAs {
                uid: 65532,
                gid: 65532,
                home: "/home/nonroot".into()
            }
        );
        assert_eq!(
            r("1000").unwrap(),
            RunAs {
                uid: 1000,
                gid: 0,
                home: "/".into()
            }
        );
        assert_eq!(r("nonroot:staff").unwrap().gid, 50);
        assert!(
            r("nobody")
                .unwrap_err()
                .contains("\"nobody\" is not in its /etc/passwd")
        );
        assert!(
            r("0:wheel")
                .unwrap_err()
                .contains("\"wheel\" is not in its /etc/group")
        );
    }

    #[test]
    fn an_image_without_passwd_runs_numeric_users() {
        let root = tempfile::tempdir().unwrap();
        assert_eq!(
            resolve(root.path(), "65532:65532").unwrap(),
            RunAs {
                uid: 65532,
                gid: 65532,
                home: "/".into()
            }
        );
    }
}
