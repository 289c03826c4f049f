//! Answers that are lists: paging, fitting to the budget, and the text format.
//!
//! Every list tool answers the same way: the items from `offset`, as many as the budget
//! holds; when some are left, `"complete": false`, `"next_offset"` and a `see_also`
//! naming the call that gets the rest. [`paginate`] does the fitting (with the host's
//! token counter, through [`fit_prefix`]) and hands each candidate rendering a
//! [`PageInfo`] that writes those fields the same way in JSON ([`PageInfo::mark`]) and
//! in text ([`PageInfo::header`]). [`table`] lays out text rows in aligned columns.
//!
//! ```
//! use scryer_plugin_sdk::listing::{paginate, PageInfo};
//! use serde_json::json;
//!
//! let words = ["alpha", "beta", "gamma"];
//! let answer = paginate(&words, 1, Some(1000), |shown: &[&str], page: &PageInfo| {
//!     let mut body = json!({"words": shown});
//!     page.mark(&mut body, &page.see_also("list_words", "prefix: \"a\""), true);
//!     body.to_string()
//! }, |s| s.len() as u32 / 4);
//! assert!(answer.contains("\"complete\":true") && answer.contains("gamma"));
//! ```

use serde_json::{Value, json};

use crate::budget::fit_prefix;
use crate::{Ctx, Host};

/// Where a page of a list starts and ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageInfo {
    /// Index of the first item shown (0-based; what the caller passed as `offset`,
    /// capped at `total`).
    pub offset: usize,
    /// How many items are shown.
    pub returned: usize,
    /// How many items the whole list has.
    pub total: usize,
    /// The caller's `offset`, when it was past the end.
    pub past_end: Option<usize>,
}

impl PageInfo {
    /// Whether items after this page were left out.
    pub fn is_cut(&self) -> bool {
        self.offset + self.returned < self.total
    }

    /// The `offset` that gets the next page, when there is one.
    pub fn next_offset(&self) -> Option<usize> {
        self.is_cut().then_some(self.offset + self.returned)
    }

    /// The call that gets the rest: `tool(arguments, offset: N) for the rest`.
    /// `arguments` is the call as the agent should repeat it, without `offset` (may be
    /// empty). Empty when nothing was cut.
    pub fn see_also(&self, tool: &str, arguments: &str) -> String {
        match self.next_offset() {
            None => String::new(),
            Some(n) if arguments.trim().is_empty() => format!("{tool}(offset: {n}) for the rest"),
            Some(n) => format!("{tool}({arguments}, offset: {n}) for the rest"),
        }
    }

    /// Why the page is empty when it is, for the answer's `notes` (`what` names the
    /// items, e.g. "matching words"). None when items are shown.
    pub fn empty_note(&self, what: &str) -> Option<String> {
        if self.returned > 0 {
            None
        } else if let Some(asked) = self.past_end {
            Some(format!(
                "offset {asked} is past the last of the {} {what}: nothing left to show",
                self.total
            ))
        } else if self.total == 0 {
            Some(format!("no {what}"))
        } else {
            Some(format!(
                "the budget holds none of the {} {what}; raise max_tokens",
                self.total
            ))
        }
    }

    /// Adds the paging fields to a JSON answer object: `total`, `offset` (when not 0),
    /// `returned`, `complete` (false when cut or when `whole` says the list itself is
    /// partial), and when cut `next_offset` and `see_also`. A non-object is left as is.
    pub fn mark(&self, body: &mut Value, see_also: &str, whole: bool) {
        let Value::Object(map) = body else {
            return;
        };
        map.insert("total".into(), json!(self.total));
        if self.offset > 0 {
            map.insert("offset".into(), json!(self.offset));
        }
        map.insert("returned".into(), json!(self.returned));
        map.insert("complete".into(), json!(whole && !self.is_cut()));
        if let Some(n) = self.next_offset() {
            map.insert("next_offset".into(), json!(n));
            if !see_also.is_empty() {
                map.insert("see_also".into(), json!(see_also));
            }
        }
    }

    /// The 1-based range shown: `items 3-5 of 9`, `none of 9`.
    pub fn range(&self) -> String {
        if self.returned == 0 {
            format!("none of {}", self.total)
        } else {
            format!(
                "{}-{} of {}",
                self.offset + 1,
                self.offset + self.returned,
                self.total
            )
        }
    }

    /// The text format's status: `complete`, `partial` (the list itself is incomplete:
    /// `whole` false), or `TRUNCATED: call again with offset=N`.
    pub fn status(&self, whole: bool) -> String {
        match self.next_offset() {
            Some(n) => format!("TRUNCATED: call again with offset={n}"),
            None if whole => "complete".into(),
            None => "partial".into(),
        }
    }

    /// The text format's header line: `tool subject: summary | range | status`.
    pub fn header(&self, tool: &str, subject: &str, summary: &str, whole: bool) -> String {
        let head = if subject.is_empty() {
            tool.to_string()
        } else {
            format!("{tool} {subject}")
        };
        format!(
            "{head}: {summary} | {} | {}",
            self.range(),
            self.status(whole)
        )
    }
}

/// Renders the page of `items` starting at `offset` that fits `budget` tokens (all of
/// them when `budget` is None: the caller asked for no truncation).
///
/// `render(shown, page)` renders the answer holding `shown` (the first
/// `page.returned` items from `offset`), including the fields a cut adds (use
/// [`PageInfo::mark`] or [`PageInfo::header`]); it is called O(log n) times. `count` is
/// the host's token counter (`|s| host.count_tokens(s)`). When not even an empty page
/// fits, the empty page is returned: the host cuts it and says so.
pub fn paginate<T>(
    items: &[T],
    offset: usize,
    budget: Option<u32>,
    mut render: impl FnMut(&[T], &PageInfo) -> String,
    count: impl FnMut(&str) -> u32,
) -> String {
    let total = items.len();
    let past_end = (offset > total).then_some(offset);
    let offset = offset.min(total);
    let rest = &items[offset..];
    let mut at = |k: usize| {
        let page = PageInfo {
            offset,
            returned: k,
            total,
            past_end,
        };
        render(&rest[..k], &page)
    };
    let k = match budget {
        None => rest.len(),
        Some(budget) => fit_prefix(rest.len(), budget, &mut at, count),
    };
    at(k)
}

/// [`paginate`] with the call's budget and the host's token counter: what a router's
/// list tool calls.
pub fn paginate_for<H: Host + ?Sized, T>(
    host: &H,
    ctx: &Ctx,
    items: &[T],
    offset: usize,
    render: impl FnMut(&[T], &PageInfo) -> String,
) -> String {
    paginate(items, offset, ctx.budget, render, |s| host.count_tokens(s))
}

/// Lays out rows as aligned columns separated by two spaces (the last column is not
/// padded), one line per row. Column widths count characters, not bytes.
pub fn table(rows: &[Vec<String>]) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let mut widths = vec![0usize; columns];
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            widths[i] = widths[i].max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for (r, row) in rows.iter().enumerate() {
        if r > 0 {
            out.push('\n');
        }
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            if i > 0 {
                line.push_str("  ");
            }
            line.push_str(cell);
            if i + 1 < row.len() {
                let pad = widths[i] - cell.chars().count();
                line.extend(std::iter::repeat_n(' ', pad));
            }
        }
        out.push_str(line.trim_end());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("w{i}")).collect()
    }

    /// A JSON list answer, counted as one token per 4 bytes.
    fn answer(items: &[String], offset: usize, budget: Option<u32>) -> Value {
        let text = paginate(
            items,
            offset,
            budget,
            |shown, page| {
                let notes: Vec<String> = page.empty_note("words").into_iter().collect();
                let mut body = json!({"words": shown, "notes": notes});
                page.mark(&mut body, &page.see_also("list_words", "q: \"w\""), true);
                crate::to_compact_json(&body)
            },
            |s| s.len().div_ceil(4) as u32,
        );
        serde_json::from_str(&text).unwrap()
    }

    #[test]
    fn a_cut_page_says_where_the_rest_starts_and_how_to_get_it() {
        let items = words(200);
        let v = answer(&items, 0, Some(100));
        let k = v["returned"].as_u64().unwrap() as usize;
        assert!(k > 0 && k < 200, "{v}");
        assert_eq!(v["complete"], false);
        assert_eq!(v["next_offset"], k);
        assert_eq!(
            v["see_also"],
            format!("list_words(q: \"w\", offset: {k}) for the rest")
        );
        assert_eq!(v["total"], 200);
        assert!(v.get("offset").is_none());
        // The answer fits the budget it was given.
        assert!(crate::to_compact_json(&v).len().div_ceil(4) <= 100);
    }

    #[test]
    fn following_next_offset_visits_every_item_once() {
        let items = words(150);
        let mut seen = Vec::new();
        let mut offset = 0;
        loop {
            let v = answer(&items, offset, Some(80));
            for w in v["words"].as_array().unwrap() {
                seen.push(w.as_str().unwrap().to_string());
            }
            match v["next_offset"].as_u64() {
                Some(n) => offset = n as usize,
                None => break,
            }
        }
        assert_eq!(seen, items);
    }

    #[test]
    fn no_budget_shows_everything_and_a_whole_list_is_complete() {
        let v = answer(&words(500), 0, None);
        assert_eq!(v["returned"], 500);
        assert_eq!(v["complete"], true);
        assert!(v.get("next_offset").is_none() && v.get("see_also").is_none());
    }

    #[test]
    fn empty_pages_say_why() {
        let v = answer(&words(3), 7, Some(1000));
        assert_eq!(
            v["notes"][0],
            "offset 7 is past the last of the 3 words: nothing left to show"
        );
        assert_eq!(v["offset"], 3);
        let v = answer(&[], 0, Some(1000));
        assert_eq!(v["notes"][0], "no words");
        let page = PageInfo {
            offset: 0,
            returned: 0,
            total: 4,
            past_end: None,
        };
        assert!(
            page.empty_note("words")
                .unwrap()
                .contains("raise max_tokens")
        );
    }

    #[test]
    fn a_partial_list_is_never_complete() {
        let page = PageInfo {
            offset: 0,
            returned: 2,
            total: 2,
            past_end: None,
        };
        let mut body = json!({});
        page.mark(&mut body, "", false);
        assert_eq!(body["complete"], false);
        assert_eq!(page.status(false), "partial");
        assert_eq!(page.status(true), "complete");
    }

    #[test]
    fn the_text_header_follows_the_convention() {
        let page = PageInfo {
            offset: 2,
            returned: 3,
            total: 9,
            past_end: None,
        };
        assert_eq!(
            page.header("list_words", "\"w\"", "9 words", true),
            "list_words \"w\": 9 words | 3-5 of 9 | TRUNCATED: call again with offset=5"
        );
        let all = PageInfo {
            offset: 0,
            returned: 9,
            total: 9,
            past_end: None,
        };
        assert_eq!(
            all.header("pulse", "", "9 projects", true),
            "pulse: 9 projects | 1-9 of 9 | complete"
        );
        assert_eq!(all.see_also("pulse", ""), "");
    }

    /// Counts one token per item, so the budget is a number of items (plus the
    /// answer's other fields).
    fn words_host() -> crate::testing::MemHost {
        crate::testing::MemHost {
            token_counter: Some(|text| text.matches('w').count() as u32),
            ..Default::default()
        }
    }

    #[test]
    fn paginate_for_fits_with_the_hosts_counter_and_the_calls_budget() {
        let items = words(50);
        let render = |shown: &[String], _: &PageInfo| shown.join(" ");
        let ctx = Ctx {
            budget: Some(10),
            ..Ctx::default()
        };
        assert_eq!(
            paginate_for(&words_host(), &ctx, &items, 5, render),
            items[5..15].join(" ")
        );
        let unlimited = Ctx {
            budget: None,
            ..Ctx::default()
        };
        assert_eq!(
            paginate_for(&words_host(), &unlimited, &items, 0, render),
            items.join(" ")
        );
    }

    #[test]
    fn table_aligns_columns_by_characters() {
        let rows = vec![
            vec!["größe".to_string(), "1".into(), "x".into()],
            vec!["a".to_string(), "200".into(), "y".into()],
            vec!["bb".to_string()],
        ];
        assert_eq!(table(&rows), "größe  1    x\na      200  y\nbb");
        assert_eq!(table(&[]), "");
    }
}
