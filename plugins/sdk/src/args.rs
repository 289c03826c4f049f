//! Typed, forgiving access to a tool's JSON arguments.
//!
//! Agents send `"12"` for 12, `"true"` for true, a bare string where a list is expected,
//! and `null` for "not given". All of those mean what the agent intended. What cannot
//! be read is an error naming the argument, what arrived and what is accepted.

use serde_json::{Map, Value};

use crate::{ToolError, ToolResult};

pub struct Args {
    map: Map<String, Value>,
}

fn describe(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 40 {
        format!("{}…", s.chars().take(40).collect::<String>())
    } else {
        s
    }
}

impl Args {
    /// Parses the arguments object (`""` and `null` are an empty object).
    pub fn parse(json: &str) -> ToolResult<Args> {
        if json.trim().is_empty() {
            return Ok(Args { map: Map::new() });
        }
        match serde_json::from_str::<Value>(json) {
            Ok(Value::Object(map)) => Ok(Args { map }),
            Ok(Value::Null) => Ok(Args { map: Map::new() }),
            Ok(other) => Err(ToolError::invalid(format!(
                "arguments must be a JSON object, got {}",
                describe(&other)
            ))),
            Err(e) => Err(ToolError::invalid(format!(
                "arguments are not valid JSON: {e}"
            ))),
        }
    }

    pub fn from_value(value: Value) -> ToolResult<Args> {
        match value {
            Value::Object(map) => Ok(Args { map }),
            Value::Null => Ok(Args { map: Map::new() }),
            other => Err(ToolError::invalid(format!(
                "arguments must be a JSON object, got {}",
                describe(&other)
            ))),
        }
    }

    fn get(&self, name: &str) -> Option<&Value> {
        self.map.get(name).filter(|v| !v.is_null())
    }

    /// A string argument, trimmed; `None` when absent, null or empty.
    pub fn opt_str(&self, name: &str) -> ToolResult<Option<String>> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::String(s)) => {
                let t = s.trim();
                Ok((!t.is_empty()).then(|| t.to_string()))
            }
            Some(other) => Err(ToolError::invalid(format!(
                "`{name}` must be a string, got {}",
                describe(other)
            ))),
        }
    }

    pub fn required_str(&self, name: &str, what: &str) -> ToolResult<String> {
        self.opt_str(name)?
            .ok_or_else(|| ToolError::invalid(format!("`{name}` is required: {what}")))
    }

    /// A whole number within `min..=max`; numeric strings are accepted.
    pub fn opt_int(&self, name: &str, min: i64, max: i64) -> ToolResult<Option<i64>> {
        let n = match self.get(name) {
            None => return Ok(None),
            Some(Value::Number(n)) => n.as_i64().or_else(|| {
                n.as_f64()
                    .filter(|f| f.fract() == 0.0 && f.abs() < 9e15)
                    .map(|f| f as i64)
            }),
            Some(Value::String(s)) if s.trim().is_empty() => return Ok(None),
            Some(Value::String(s)) => s.trim().parse::<i64>().ok(),
            Some(_) => None,
        };
        match n {
            Some(n) if n >= min && n <= max => Ok(Some(n)),
            Some(n) => Err(ToolError::invalid(format!(
                "`{name}` is {n}; accepted: a whole number from {min} to {max}"
            ))),
            None => Err(ToolError::invalid(format!(
                "`{name}` must be a whole number from {min} to {max}, got {}",
                describe(self.get(name).unwrap_or(&Value::Null))
            ))),
        }
    }

    pub fn opt_bool(&self, name: &str) -> ToolResult<Option<bool>> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(Value::String(s)) => match s.trim().to_ascii_lowercase().as_str() {
                "true" | "1" | "yes" => Ok(Some(true)),
                "false" | "0" | "no" => Ok(Some(false)),
                "" => Ok(None),
                _ => Err(ToolError::invalid(format!(
                    "`{name}` must be true or false, got {}",
                    shown(s)
                ))),
            },
            Some(Value::Number(n)) if n.as_i64() == Some(0) || n.as_i64() == Some(1) => {
                Ok(Some(n.as_i64() == Some(1)))
            }
            Some(other) => Err(ToolError::invalid(format!(
                "`{name}` must be true or false, got {}",
                describe(other)
            ))),
        }
    }

    /// One of a closed set of values (case-insensitive). `aliases` map extra spellings
    /// onto choices. The error lists the choices.
    pub fn opt_choice(
        &self,
        name: &str,
        choices: &[&'static str],
        aliases: &[(&str, &'static str)],
    ) -> ToolResult<Option<&'static str>> {
        let Some(raw) = self.opt_str(name)? else {
            return Ok(None);
        };
        let lower = raw.to_ascii_lowercase();
        if let Some(c) = choices.iter().find(|c| **c == lower) {
            return Ok(Some(c));
        }
        if let Some((_, c)) = aliases.iter().find(|(a, _)| *a == lower) {
            return Ok(Some(c));
        }
        Err(ToolError::invalid(format!(
            "`{name}` is {}; accepted: {}",
            shown(&raw),
            choices.join(", ")
        )))
    }

    /// The paging argument `offset` (from a previous answer's `next_offset`): 0 when
    /// absent.
    pub fn offset(&self) -> ToolResult<usize> {
        Ok(self.opt_int("offset", 0, i64::from(u32::MAX))?.unwrap_or(0) as usize)
    }

    /// A list of strings; a bare string is a list of one.
    pub fn opt_str_list(&self, name: &str) -> ToolResult<Option<Vec<String>>> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(
                s.split(',')
                    .map(|p| p.trim().to_string())
                    .filter(|p| !p.is_empty())
                    .collect(),
            )),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| match v {
                    Value::String(s) => Ok(s.trim().to_string()),
                    other => Err(ToolError::invalid(format!(
                        "`{name}` must be a list of strings, found {}",
                        describe(other)
                    ))),
                })
                .collect::<ToolResult<Vec<_>>>()
                .map(Some),
            Some(other) => Err(ToolError::invalid(format!(
                "`{name}` must be a list of strings, got {}",
                describe(other)
            ))),
        }
    }
}

/// Longest part of a wrong value an error repeats: a 1 MB value echoed whole would bury
/// (and, past the answer cap, cut off) what the error says is accepted.
const SHOWN_CHARS: usize = 80;

/// `value` quoted for an error, cut to [`SHOWN_CHARS`] with its length when longer.
pub fn shown(value: &str) -> String {
    let n = value.chars().count();
    if n <= SHOWN_CHARS {
        return format!("{value:?}");
    }
    let head: String = value.chars().take(SHOWN_CHARS).collect();
    format!("{head:?}… ({n} characters)")
}

/// Checks a symbol or path argument for things no identifier or path contains.
pub fn check_text(name: &str, value: &str, max_chars: usize) -> ToolResult<()> {
    let n = value.chars().count();
    if n > max_chars {
        return Err(ToolError::invalid(format!(
            "`{name}` is {n} characters long; accepted: at most {max_chars}"
        )));
    }
    if let Some(c) = value.chars().find(|c| {
        c.is_control()
            || matches!(*c, '\u{feff}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    }) {
        return Err(ToolError::invalid(format!(
            "`{name}` contains the invisible or control character U+{:04X}; remove it",
            c as u32
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_huge_wrong_value_is_shown_cut_and_the_choices_stay() {
        let huge = "x".repeat(1 << 20);
        let a = Args::from_value(serde_json::json!({"view": huge})).unwrap();
        let e = a.opt_choice("view", &["files", "sites"], &[]).unwrap_err();
        let text = e.message;
        assert!(text.contains("accepted: files, sites"), "{}", &text[..200]);
        assert!(text.contains("(1048576 characters)"));
        assert!(text.len() < 400, "{}", text.len());
    }

    #[test]
    fn coerces_what_agents_send() {
        let a =
            Args::parse(r#"{"n":"12","b":"true","s":"x","l":"a, b","z":null,"f":3.0}"#).unwrap();
        assert_eq!(a.opt_int("n", 0, 100).unwrap(), Some(12));
        assert_eq!(a.opt_int("f", 0, 100).unwrap(), Some(3));
        assert_eq!(a.opt_bool("b").unwrap(), Some(true));
        assert_eq!(
            a.opt_str_list("l").unwrap(),
            Some(vec!["a".into(), "b".into()])
        );
        assert_eq!(a.opt_int("z", 0, 1).unwrap(), None);
        assert_eq!(a.opt_str("missing").unwrap(), None);
    }

    #[test]
    fn errors_name_the_argument_and_what_is_accepted() {
        let a = Args::parse(r#"{"n":"abc","m":-5,"v":"everything","o":{"a":1}}"#).unwrap();
        let e = a.opt_int("n", 0, 100).unwrap_err().message;
        assert!(e.contains("`n`") && e.contains("whole number"), "{e}");
        let e = a.opt_int("m", 1, 100).unwrap_err().message;
        assert!(e.contains("-5") && e.contains("from 1 to 100"), "{e}");
        let e = a
            .opt_choice("v", &["callers", "files", "sites"], &[])
            .unwrap_err()
            .message;
        assert!(e.contains("callers, files, sites"), "{e}");
        let e = a.opt_str("o").unwrap_err().message;
        assert!(e.contains("must be a string"), "{e}");
        assert!(Args::parse("[1]").is_err());
        let e = a
            .required_str("symbol", "the name to look up")
            .unwrap_err()
            .message;
        assert!(e.contains("`symbol` is required"), "{e}");
    }

    #[test]
    fn offset_defaults_to_zero_and_refuses_negatives() {
        assert_eq!(Args::parse("{}").unwrap().offset().unwrap(), 0);
        assert_eq!(
            Args::parse(r#"{"offset":"40"}"#).unwrap().offset().unwrap(),
            40
        );
        let e = Args::parse(r#"{"offset":-1}"#)
            .unwrap()
            .offset()
            .unwrap_err();
        assert!(e.message.contains("`offset` is -1"), "{e}");
    }

    #[test]
    fn text_checks_refuse_invisible_characters_and_huge_values() {
        assert!(check_text("symbol", "Foo::bar", 512).is_ok());
        assert!(
            check_text("symbol", "a\u{0}b", 512)
                .unwrap_err()
                .message
                .contains("U+0000")
        );
        assert!(check_text("symbol", "\u{feff}x", 512).is_err());
        assert!(check_text("symbol", "x\u{202e}", 512).is_err());
        assert!(
            check_text("symbol", &"x".repeat(600), 512)
                .unwrap_err()
                .message
                .contains("600")
        );
    }
}
