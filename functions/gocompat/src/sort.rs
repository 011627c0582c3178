//! Go's `sort.Slice`: pattern-defeating quicksort (Go 1.19's `pdqsort_func`,
//! checked against Go 1.19.8), which is not stable, so that elements that
//! compare equal end in the order Go leaves them in.
//!
//! Up to 12 elements it is an insertion sort (stable); beyond, the order of
//! equal elements follows from the algorithm's deterministic steps (its
//! pattern breaking uses an xorshift seeded with the length), reproduced
//! here step by step.

/// What `sort.Slice` sorts: `less` and `swap` by index (Go's `lessSwap`).
pub trait LessSwap {
    /// Whether element `i` sorts before element `j`.
    fn less(&mut self, i: usize, j: usize) -> bool;
    /// Swaps elements `i` and `j`.
    fn swap(&mut self, i: usize, j: usize);
}

/// Sorts `n` elements as Go's `sort.Slice` does.
///
/// ```
/// use xfn_gocompat::sort::{LessSwap, slice};
/// struct V(Vec<i32>);
/// impl LessSwap for V {
///     fn less(&mut self, i: usize, j: usize) -> bool { self.0[i] < self.0[j] }
///     fn swap(&mut self, i: usize, j: usize) { self.0.swap(i, j) }
/// }
/// let mut v = V(vec![3, 1, 2]);
/// slice(&mut v, 3);
/// assert_eq!(v.0, [1, 2, 3]);
/// ```
pub fn slice(data: &mut impl LessSwap, n: usize) {
    let limit = usize::BITS - n.leading_zeros();
    pdqsort(data, 0, n, limit);
}

#[derive(PartialEq, Eq, Clone, Copy)]
enum Hint {
    Unknown,
    Increasing,
    Decreasing,
}

fn insertion_sort(d: &mut impl LessSwap, a: usize, b: usize) {
    for i in a + 1..b {
        let mut j = i;
        while j > a && d.less(j, j - 1) {
            d.swap(j, j - 1);
            j -= 1;
        }
    }
}

fn sift_down(d: &mut impl LessSwap, lo: usize, hi: usize, first: usize) {
    let mut root = lo;
    loop {
        let mut child = 2 * root + 1;
        if child >= hi {
            return;
        }
        if child + 1 < hi && d.less(first + child, first + child + 1) {
            child += 1;
        }
        if !d.less(first + root, first + child) {
            return;
        }
        d.swap(first + root, first + child);
        root = child;
    }
}

fn heap_sort(d: &mut impl LessSwap, a: usize, b: usize) {
    let first = a;
    let hi = b - a;
    for i in (0..=(hi - 1) / 2).rev() {
        sift_down(d, i, hi, first);
    }
    for i in (0..hi).rev() {
        d.swap(first, first + i);
        sift_down(d, 0, i, first);
    }
}

fn pdqsort(d: &mut impl LessSwap, mut a: usize, mut b: usize, mut limit: u32) {
    const MAX_INSERTION: usize = 12;
    let mut was_balanced = true;
    let mut was_partitioned = true;
    loop {
        let length = b - a;
        if length <= MAX_INSERTION {
            insertion_sort(d, a, b);
            return;
        }
        if limit == 0 {
            heap_sort(d, a, b);
            return;
        }
        if !was_balanced {
            break_patterns(d, a, b);
            limit -= 1;
        }
        let (mut pivot, mut hint) = choose_pivot(d, a, b);
        if hint == Hint::Decreasing {
            reverse_range(d, a, b);
            pivot = (b - 1) - (pivot - a);
            hint = Hint::Increasing;
        }
        if was_balanced
            && was_partitioned
            && hint == Hint::Increasing
            && partial_insertion_sort(d, a, b)
        {
            return;
        }
        if a > 0 && !d.less(a - 1, pivot) {
            a = partition_equal(d, a, b, pivot);
            continue;
        }
        let (mid, already) = partition(d, a, b, pivot);
        was_partitioned = already;
        let (left, right) = (mid - a, b - mid);
        let threshold = length / 8;
        if left < right {
            was_balanced = left >= threshold;
            pdqsort(d, a, mid, limit);
            a = mid + 1;
        } else {
            was_balanced = right >= threshold;
            pdqsort(d, mid + 1, b, limit);
            b = mid;
        }
    }
}

fn partition(d: &mut impl LessSwap, a: usize, b: usize, pivot: usize) -> (usize, bool) {
    d.swap(a, pivot);
    // i and j are inclusive; j may go one below a + 1, so use signed.
    let (mut i, mut j) = (a as isize + 1, b as isize - 1);
    while i <= j && d.less(i as usize, a) {
        i += 1;
    }
    while i <= j && !d.less(j as usize, a) {
        j -= 1;
    }
    if i > j {
        d.swap(j as usize, a);
        return (j as usize, true);
    }
    d.swap(i as usize, j as usize);
    i += 1;
    j -= 1;
    loop {
        while i <= j && d.less(i as usize, a) {
            i += 1;
        }
        while i <= j && !d.less(j as usize, a) {
            j -= 1;
        }
        if i > j {
            break;
        }
        d.swap(i as usize, j as usize);
        i += 1;
        j -= 1;
    }
    d.swap(j as usize, a);
    (j as usize, false)
}

fn partition_equal(d: &mut impl LessSwap, a: usize, b: usize, pivot: usize) -> usize {
    d.swap(a, pivot);
    let (mut i, mut j) = (a as isize + 1, b as isize - 1);
    loop {
        while i <= j && !d.less(a, i as usize) {
            i += 1;
        }
        while i <= j && d.less(a, j as usize) {
            j -= 1;
        }
        if i > j {
            break;
        }
        d.swap(i as usize, j as usize);
        i += 1;
        j -= 1;
    }
    i as usize
}

fn partial_insertion_sort(d: &mut impl LessSwap, a: usize, b: usize) -> bool {
    const MAX_STEPS: usize = 5;
    const SHORTEST_SHIFTING: usize = 50;
    let mut i = a + 1;
    for _ in 0..MAX_STEPS {
        while i < b && !d.less(i, i - 1) {
            i += 1;
        }
        if i == b {
            return true;
        }
        if b - a < SHORTEST_SHIFTING {
            return false;
        }
        d.swap(i, i - 1);
        if i - a >= 2 {
            let mut j = i - 1;
            while j >= 1 {
                if !d.less(j, j - 1) {
                    break;
                }
                d.swap(j, j - 1);
                j -= 1;
            }
        }
        if b - i >= 2 {
            for j in i + 1..b {
                if !d.less(j, j - 1) {
                    break;
                }
                d.swap(j, j - 1);
            }
        }
    }
    false
}

fn break_patterns(d: &mut impl LessSwap, a: usize, b: usize) {
    let length = b - a;
    if length >= 8 {
        let mut random = length as u64;
        let modulus = 1usize << (usize::BITS - length.leading_zeros());
        let start = a + (length / 4) * 2 - 1;
        for idx in start..=start + 2 {
            random ^= random << 13;
            random ^= random >> 17;
            random ^= random << 5;
            let mut other = (random as usize) & (modulus - 1);
            if other >= length {
                other -= length;
            }
            d.swap(idx, a + other);
        }
    }
}

fn choose_pivot(d: &mut impl LessSwap, a: usize, b: usize) -> (usize, Hint) {
    const SHORTEST_NINTHER: usize = 50;
    const MAX_SWAPS: usize = 4 * 3;
    let l = b - a;
    let mut swaps = 0;
    let mut i = a + l / 4;
    let mut j = a + l / 4 * 2;
    let mut k = a + l / 4 * 3;
    if l >= 8 {
        if l >= SHORTEST_NINTHER {
            i = median_adjacent(d, i, &mut swaps);
            j = median_adjacent(d, j, &mut swaps);
            k = median_adjacent(d, k, &mut swaps);
        }
        j = median(d, i, j, k, &mut swaps);
    }
    match swaps {
        0 => (j, Hint::Increasing),
        MAX_SWAPS => (j, Hint::Decreasing),
        _ => (j, Hint::Unknown),
    }
}

fn order2(d: &mut impl LessSwap, a: usize, b: usize, swaps: &mut usize) -> (usize, usize) {
    if d.less(b, a) {
        *swaps += 1;
        (b, a)
    } else {
        (a, b)
    }
}

fn median(d: &mut impl LessSwap, a: usize, b: usize, c: usize, swaps: &mut usize) -> usize {
    let (a, b) = order2(d, a, b, swaps);
    let (b, c) = order2(d, b, c, swaps);
    let _ = c;
    let (_, b) = order2(d, a, b, swaps);
    b
}

fn median_adjacent(d: &mut impl LessSwap, a: usize, swaps: &mut usize) -> usize {
    median(d, a - 1, a, a + 1, swaps)
}

fn reverse_range(d: &mut impl LessSwap, a: usize, b: usize) {
    let (mut i, mut j) = (a, b - 1);
    while i < j {
        d.swap(i, j);
        i += 1;
        j -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Elements sorted by key; the tag shows where equal keys end up.
    struct Tagged(Vec<(i64, usize)>);

    impl LessSwap for Tagged {
        fn less(&mut self, i: usize, j: usize) -> bool {
            self.0[i].0 < self.0[j].0
        }
        fn swap(&mut self, i: usize, j: usize) {
            self.0.swap(i, j);
        }
    }

    fn sorted_tags(keys: &[i64]) -> Vec<usize> {
        let mut t = Tagged(keys.iter().copied().zip(0..).collect());
        slice(&mut t, keys.len());
        assert!(
            t.0.windows(2).all(|w| w[0].0 <= w[1].0),
            "not sorted: {:?}",
            t.0
        );
        t.0.into_iter().map(|(_, tag)| tag).collect()
    }

    #[test]
    fn sorts_every_size_and_shape() {
        for n in 0..300usize {
            let keys: Vec<i64> = (0..n).map(|i| ((i * 7919) % 13) as i64).collect();
            sorted_tags(&keys);
            let rev: Vec<i64> = (0..n as i64).rev().collect();
            sorted_tags(&rev);
        }
    }

    #[test]
    fn up_to_twelve_elements_keep_ties_in_order() {
        assert_eq!(sorted_tags(&[1, 0, 1, 0, 1]), [1, 3, 0, 2, 4]);
    }
}
