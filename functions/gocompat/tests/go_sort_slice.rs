//! Differential test of `sort::slice` against Go's `sort.Slice`: the
//! permutations in `go_sort_slice.json` were produced by Go 1.19.8 running
//! `go_sort_slice.go` (key lists with many ties, where an unstable sort's
//! result depends on its exact steps).

use xfn_gocompat::sort::{LessSwap, slice};

struct Tagged(Vec<(i64, u64)>);

impl LessSwap for Tagged {
    fn less(&mut self, i: usize, j: usize) -> bool {
        self.0[i].0 < self.0[j].0
    }
    fn swap(&mut self, i: usize, j: usize) {
        self.0.swap(i, j);
    }
}

#[test]
fn ties_end_where_go_leaves_them() {
    let text = include_str!("go_sort_slice.json");
    let cases: Vec<serde_json::Value> = serde_json::from_str(text).unwrap();
    assert!(cases.len() > 50);
    let mut different = Vec::new();
    for c in &cases {
        let keys: Vec<i64> = c["keys"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| k.as_i64().unwrap())
            .collect();
        let want: Vec<u64> = c["order"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| k.as_u64().unwrap())
            .collect();
        let mut t = Tagged(keys.iter().copied().zip(0..).collect());
        slice(&mut t, keys.len());
        let got: Vec<u64> = t.0.into_iter().map(|(_, tag)| tag).collect();
        if got != want {
            different.push(format!("keys {keys:?}\n want {want:?}\n got  {got:?}"));
        }
    }
    eprintln!(
        "{} cases compared, {} different",
        cases.len(),
        different.len()
    );
    assert!(different.is_empty(), "{}", different.join("\n"));
}
