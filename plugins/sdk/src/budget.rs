//! Fitting answers to token budgets.
//!
//! Counting tokens is the host's job (one tokenizer for everyone), and rendering and
//! counting a candidate answer is the dearest step of a large answer, so [`fit_prefix`]
//! renders as few candidates as it can: token counts grow about linearly with the items
//! shown, so it guesses the cut from the counts it has (interpolation), and falls back
//! to halving when the guesses stop closing in. A typical answer takes three renderings.

/// The largest `k <= n` such that `count(&render(k)) <= budget`, or 0 if even an empty
/// answer does not fit. `render(k)` must render the answer holding the first `k` items
/// (and, when `k < n`, the fields that say it was cut). Token counts grow with `k`.
pub fn fit_prefix(
    n: usize,
    budget: u32,
    mut render: impl FnMut(usize) -> String,
    mut count: impl FnMut(&str) -> u32,
) -> usize {
    let t_n = count(&render(n));
    if t_n <= budget {
        return n;
    }
    // Invariant: render(lo) fits (or lo == 0), render(hi) does not; t_* are their counts
    // (an empty answer is taken as 0 tokens until measured).
    let (mut lo, mut hi) = (0usize, n);
    let (mut t_lo, mut t_hi) = (0u32, t_n);
    let mut stalls = 0;
    while hi - lo > 1 {
        let width = hi - lo;
        let mid = if stalls < 2 && t_hi > t_lo {
            let share =
                u64::from(budget.saturating_sub(t_lo)) * width as u64 / u64::from(t_hi - t_lo);
            (lo + share as usize).clamp(lo + 1, hi - 1)
        } else {
            lo + width / 2
        };
        let t = count(&render(mid));
        if t <= budget {
            lo = mid;
            t_lo = t;
        } else {
            hi = mid;
            t_hi = t;
        }
        // A guess that did not halve the interval: after two, bisect.
        if (hi - lo) * 2 > width {
            stalls += 1;
        } else {
            stalls = 0;
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
    fn linear_answers_take_a_few_renderings() {
        let mut calls = 0;
        let k = fit_prefix(100, 37, words, |s| {
            calls += 1;
            count(s)
        });
        assert_eq!(k, 37);
        assert!(calls <= 4, "{calls} renderings counted");
    }

    #[test]
    fn uneven_answers_still_find_the_exact_cut() {
        // Item i costs i tokens: growth far from linear.
        let render = |k: usize| (0..k).map(|i| "w ".repeat(i)).collect::<String>();
        for budget in [0, 1, 10, 100, 1000, 4000] {
            let k = fit_prefix(120, budget, render, count);
            assert!(count(&render(k)) <= budget || k == 0);
            if k < 120 {
                assert!(count(&render(k + 1)) > budget, "budget {budget}: {k}");
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
