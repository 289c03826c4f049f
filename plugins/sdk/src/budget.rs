//! Fitting answers to token budgets.
//!
//! Counting tokens is the host's job (one tokenizer for everyone), and a host call per
//! candidate prefix would be slow, so [`fit_prefix`] binary-searches: it renders and
//! counts O(log n) candidate answers, each complete with every field a cut adds.

/// The largest `k <= n` such that `count(&render(k)) <= budget`, or 0 if even an empty
/// answer does not fit. `render(k)` must render the answer holding the first `k` items
/// (and, when `k < n`, the fields that say it was cut). Token counts grow with `k`.
pub fn fit_prefix(
    n: usize,
    budget: u32,
    mut render: impl FnMut(usize) -> String,
    mut count: impl FnMut(&str) -> u32,
) -> usize {
    if count(&render(n)) <= budget {
        return n;
    }
    // Invariant: render(lo) fits (or lo == 0), render(hi) does not.
    let (mut lo, mut hi) = (0usize, n);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if count(&render(mid)) <= budget {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(k: usize) -> String {
        (0..k).map(|i| format!("item{i} ")).collect()
    }

    fn count(s: &str) -> u32 {
        s.split_whitespace().count() as u32
    }

    #[test]
    fn finds_the_largest_prefix_that_fits() {
        assert_eq!(fit_prefix(100, 10, words, count), 10);
        assert_eq!(fit_prefix(5, 10, words, count), 5);
        assert_eq!(fit_prefix(100, 0, words, count), 0);
        for budget in 0..40 {
            let k = fit_prefix(30, budget, words, count);
            assert!(count(&words(k)) <= budget || k == 0);
            if k < 30 {
                assert!(count(&words(k + 1)) > budget);
            }
        }
    }

    #[test]
    fn counts_only_logarithmically_many_renderings() {
        let mut calls = 0;
        fit_prefix(10_000, 500, words, |s| {
            calls += 1;
            count(s)
        });
        assert!(calls <= 16, "{calls} renderings counted");
    }
}
