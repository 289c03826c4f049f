//! Answers kept between calls until the index or the precise data moves: a bounded map
//! from a key to the answer worked out at a pair of generations (index, precise).
//!
//! Past its bound the map drops older generations' answers and, if still full,
//! everything: a new start is cheaper than tracking use, and every answer it holds can
//! be worked out again.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex};

/// The generations an answer was worked out at: (the project's index, precise data).
pub type At = (u64, u64);

/// Answers by key, each with its generations and its weight (what the bound counts).
pub struct Memo<K, V> {
    kept: Mutex<Kept<K, V>>,
    /// Most total weight kept.
    bound: usize,
}

struct Kept<K, V> {
    answers: HashMap<K, (At, Arc<V>, usize)>,
    weight: usize,
}

impl<K: Eq + Hash, V> Memo<K, V> {
    pub fn new(bound: usize) -> Self {
        Memo {
            kept: Mutex::new(Kept {
                answers: HashMap::new(),
                weight: 0,
            }),
            bound,
        }
    }

    /// The answer kept for `key`, if it was worked out at `at`.
    pub fn get(&self, key: &K, at: At) -> Option<Arc<V>> {
        let kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        kept.answers
            .get(key)
            .filter(|(g, ..)| *g == at)
            .map(|(_, v, _)| v.clone())
    }

    /// Keeps `value` for `key` at `at`; `weight` counts against the bound (an answer
    /// heavier than the bound is not kept).
    pub fn keep(&self, key: K, at: At, value: Arc<V>, weight: usize) {
        if weight > self.bound {
            return;
        }
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        if kept.weight + weight > self.bound {
            kept.answers.retain(|_, (g, ..)| *g == at);
            kept.weight = kept.answers.values().map(|(.., w)| w).sum();
            if kept.weight + weight > self.bound {
                kept.answers.clear();
                kept.weight = 0;
            }
        }
        if let Some((.., old)) = kept.answers.insert(key, (at, value, weight)) {
            kept.weight -= old;
        }
        kept.weight += weight;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_kept_per_generation_within_the_bound() {
        let memo: Memo<&str, u32> = Memo::new(10);
        memo.keep("a", (1, 1), Arc::new(1), 4);
        memo.keep("b", (1, 1), Arc::new(2), 4);
        assert_eq!(memo.get(&"a", (1, 1)).as_deref(), Some(&1));
        // Another generation's answer is not this one.
        assert_eq!(memo.get(&"a", (2, 1)), None);
        // Past the bound, older generations go first; what is left of this one stays.
        memo.keep("c", (2, 1), Arc::new(3), 4);
        assert_eq!(memo.get(&"c", (2, 1)).as_deref(), Some(&3));
        assert_eq!(memo.get(&"a", (1, 1)), None);
        memo.keep("d", (2, 1), Arc::new(4), 4);
        memo.keep("e", (2, 1), Arc::new(5), 4);
        // Full of this generation: a new start.
        assert_eq!(memo.get(&"c", (2, 1)), None);
        assert_eq!(memo.get(&"e", (2, 1)).as_deref(), Some(&5));
        // Replacing an answer replaces its weight; one heavier than the bound is not kept.
        memo.keep("e", (2, 1), Arc::new(6), 1);
        assert_eq!(memo.get(&"e", (2, 1)).as_deref(), Some(&6));
        memo.keep("big", (2, 1), Arc::new(7), 11);
        assert_eq!(memo.get(&"big", (2, 1)), None);
        assert_eq!(memo.get(&"e", (2, 1)).as_deref(), Some(&6));
        assert_eq!(memo.get(&"d", (2, 1)), None);
    }
}
