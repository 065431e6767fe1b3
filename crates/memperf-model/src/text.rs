//! The one sanitiser for text a document brings. A document read from disk
//! is data someone else may have written: every string in it passes
//! [`defang`] before it is parsed, so no output (terminal, text file,
//! HTML, CSV, OpenMetrics, JSON) can carry a control character, a forged
//! line or, in a name, markup from it. memperf's terminal helpers use the
//! same functions.

use serde_json::Value;

/// Text safe as one line of a terminal or a line-based file: every
/// control character, line breaks included, becomes `?`, so a crafted name
/// can neither drive the terminal nor forge a line of its own.
pub fn one_line(text: &str) -> String {
    text.chars().map(|c| if c.is_control() { '?' } else { c }).collect()
}

/// A name (a host, a CPU, a run, a kernel release): one line, and none of
/// the characters markup is made of (`<`, `>`, `&`, quotes), which no such
/// name has, so a crafted one reads as text in every format.
pub fn name(text: &str) -> String {
    one_line(text).chars().map(|c| if matches!(c, '<' | '>' | '&' | '"' | '\'' | '`') { '?' } else { c }).collect()
}

/// The keys whose values are names, wherever they appear in a document or
/// a journal line.
const NAME_KEYS: &[&str] = &["hostname", "run_id", "started_utc", "vendor", "model_name", "kernel", "hypervisor"];

/// Every string of a parsed document made safe in place: names by
/// [`name`], the rest by [`one_line`] (no document string holds a line
/// break of its own).
pub fn defang(value: &mut Value) {
    match value {
        Value::String(s) if s.chars().any(char::is_control) => *s = one_line(s),
        Value::Array(items) => items.iter_mut().for_each(defang),
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                match v {
                    Value::String(s) if NAME_KEYS.contains(&key.as_str()) => *s = name(s),
                    _ => defang(v),
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_lose_markup_and_every_string_its_control_characters() {
        let mut v: Value = serde_json::json!({
            "origin": { "hostname": "evil\n# EOF <script>\u{1b}]0;x\u{7}", "run_id": "r&1" },
            "warnings": [{ "fix": "echo 1024 > /proc/sys/vm/nr_hugepages\u{1b}[31m" }],
            "n": 3
        });
        defang(&mut v);
        assert_eq!(v["origin"]["hostname"], "evil?# EOF ?script??]0;x?");
        assert_eq!(v["origin"]["run_id"], "r?1");
        // Free text keeps its `>`; only the escape goes.
        assert_eq!(v["warnings"][0]["fix"], "echo 1024 > /proc/sys/vm/nr_hugepages?[31m");
        assert_eq!(v["n"], 3);
    }
}
