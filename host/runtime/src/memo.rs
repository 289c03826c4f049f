//! A router call's memo: what one host function computed that another asks for again
//! within the same call ([`CallMemo`], carried by `CallScope`).

use std::any::Any;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Results a host function computed for one router call, kept until the call ends, so
/// two host functions that read one computation (the precise unresolved sites of a
/// definition, asked for whole and for their unread part) compute it once.
#[derive(Default)]
pub struct CallMemo {
    entries: Mutex<HashMap<String, Arc<dyn Any + Send + Sync>>>,
}

impl CallMemo {
    /// The value kept under `key`, or `compute`'s, kept for the rest of the call. A
    /// failure is not kept. `key` must name the value's type as well as its inputs.
    pub fn get_or_try<T, E>(
        &self,
        key: String,
        compute: impl FnOnce() -> Result<T, E>,
    ) -> Result<Arc<T>, E>
    where
        T: Send + Sync + 'static,
    {
        let found = self.entries.lock().expect("memo lock").get(&key).cloned();
        if let Some(v) = found.and_then(|v| v.downcast::<T>().ok()) {
            return Ok(v);
        }
        let v = Arc::new(compute()?);
        self.entries
            .lock()
            .expect("memo lock")
            .insert(key, v.clone());
        Ok(v)
    }
}

impl std::fmt::Debug for CallMemo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.entries.lock().map(|e| e.len()).unwrap_or(0);
        write!(f, "CallMemo({n} entries)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_memo_computes_once_and_keeps_no_failure() {
        let memo = CallMemo::default();
        let mut runs = 0;
        let mut get = |fail: bool| {
            memo.get_or_try("k".to_string(), || {
                runs += 1;
                if fail { Err("no") } else { Ok(vec![1, 2]) }
            })
        };
        assert_eq!(get(true), Err("no"));
        assert_eq!(*get(false).unwrap(), vec![1, 2]);
        assert_eq!(*get(true).unwrap(), vec![1, 2], "kept, not computed again");
        assert_eq!(runs, 2);
        // Another type under the same key is computed, not mistaken for the kept one.
        let other: Result<Arc<String>, ()> = memo.get_or_try("k".into(), || Ok("s".into()));
        assert_eq!(*other.unwrap(), "s");
    }
}
