//! The host's last word on answer size.
//!
//! Routers fit their answers to the budget with the host's own token counter, so an
//! answer over budget is a router bug. The host still never sends it whole: it cuts at
//! the last line (or, in one-line JSON, the last comma) that fits and says so, and what
//! it keeps claims no `complete` (ADR 0027).

use crate::call::tokens;

/// The answer within `budget` tokens, cut and marked if it was over. Returns the text,
/// whether it was cut, and its token count when it was counted whole (within budget).
pub fn enforce(body: String, budget: Option<u32>) -> (String, bool, Option<u32>) {
    let Some(budget) = budget else {
        return (body, false, None);
    };
    let whole = tokens::count(&body);
    if whole <= budget {
        return (body, false, Some(whole));
    }
    // What is left after the cut is not the whole answer: it claims no `complete`.
    let body = scryer_plugin_sdk::answer::withdraw_complete(body);
    let note = format!(
        "\n…[cut by scryer: the answer exceeded max_tokens={budget}; call again with max_tokens={} or no_truncate=true]",
        budget.saturating_mul(2)
    );
    let room = budget.saturating_sub(tokens::count(&note));
    // Binary search on a byte prefix ending at a boundary.
    let boundaries: Vec<usize> = body
        .char_indices()
        .filter(|(_, c)| *c == '\n' || *c == ',')
        .map(|(i, _)| i)
        .collect();
    let (mut lo, mut hi) = (0usize, boundaries.len());
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if tokens::count(&body[..boundaries[mid - 1]]) <= room {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let cut_at = if lo == 0 { 0 } else { boundaries[lo - 1] };
    (format!("{}{note}", &body[..cut_at]), true, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_within_budget_pass_untouched() {
        let (s, cut, tokens) = enforce("a,b,c".into(), Some(100));
        assert_eq!((s.as_str(), cut), ("a,b,c", false));
        assert_eq!(tokens, Some(tokens::count("a,b,c")));
        let (_, cut, tokens) = enforce("x ".repeat(5000), None);
        assert!(!cut);
        assert_eq!(tokens, None);
    }

    #[test]
    fn answers_over_budget_are_cut_at_a_boundary_and_say_so() {
        let body = (0..500)
            .map(|i| format!("line number {i}"))
            .collect::<Vec<_>>()
            .join("\n");
        let (s, cut, tokens) = enforce(body, Some(100));
        assert!(cut);
        assert_eq!(
            tokens, None,
            "the cut answer is counted by whoever needs it"
        );
        assert!(tokens::count(&s) <= 100, "{} tokens", tokens::count(&s));
        assert!(s.contains("max_tokens=200"));
        assert!(s.starts_with("line number 0\n"));
    }

    #[test]
    fn a_cut_answer_claims_no_complete() {
        let items: Vec<String> = (0..400).map(|i| format!("\"item number {i}\"")).collect();
        let body = format!("{{\"complete\":true,\"items\":[{}]}}", items.join(","));
        let (s, cut, _) = enforce(body, Some(60));
        assert!(cut);
        assert!(
            s.starts_with("{\"complete\":false,\"items\":[\"item number 0\""),
            "{s}"
        );
        assert!(!s.contains("\"complete\":true"), "{s}");
        let (s, cut, _) = enforce("{\"complete\":true}".into(), Some(60));
        assert!(
            !cut && s == "{\"complete\":true}",
            "a whole answer is untouched: {s}"
        );
    }
}
