//! A plan that serde cannot read, said on one line with the field it stopped at and the values
//! that field takes: serde's own "expected value at line 1 column 230" names neither.

/// The values each numeric field of a plan takes, as a fix a user can act on.
fn allowed(field: &str) -> Option<&'static str> {
    Some(match field {
        "connections" | "threads" | "calls_per_connection" | "users" => "a whole number from 1 to 18446744073709551615",
        "requests" => "a whole number of requests from 1 to 18446744073709551615",
        "duration_us" | "timeout_us" | "rampdown_us" | "mean_us" | "min_us" | "max_us" | "good_us" | "tolerable_us" => {
            "whole microseconds from 1 to 18446744073709551615"
        }
        "warmup_us" => "whole microseconds from 0 to 18446744073709551615",
        "start_at_unix_us" => "whole microseconds since 1970, at most 60 s ahead",
        "rate_per_s" => "a finite number of requests per second above 0",
        "users_per_s" => "a finite number of users per second above 0",
        "weight" => "a finite number above 0",
        "if_modified_since_share" => "a number from 0 to 1",
        "seed" => "a whole number from 0 to 18446744073709551615",
        _ => return None,
    })
}

/// What serde expected, as a range, for fields not in the table.
fn allowed_by_type(message: &str) -> &'static str {
    if message.contains("expected u64") || message.contains("expected usize") {
        "a whole number from 0 to 18446744073709551615"
    } else if message.contains("expected f64") {
        "a finite number (JSON has no Infinity or NaN)"
    } else {
        "a value of the type the plan reference gives (docs/load-models.md)"
    }
}

/// The key whose value the parser was reading at byte `at`: the last `"key":` before it.
fn field_before(text: &str, at: usize) -> Option<&str> {
    let mut end = at.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let mut search = &text[..end];
    while let Some(colon) = search.rfind(':') {
        let key_end = search[..colon].trim_end();
        if let Some(quoted) = key_end.strip_suffix('"') {
            let start = quoted.rfind('"')?;
            return Some(&quoted[start + 1..]);
        }
        search = &search[..colon];
    }
    None
}

/// Byte offset of serde's 1-based line and column in `text`.
fn offset_of(text: &str, line: usize, column: usize) -> usize {
    let line_start: usize = text.split_inclusive('\n').take(line.saturating_sub(1)).map(str::len).sum();
    line_start + column
}

/// One line: the field, what was wrong in serde's words, and the values it takes.
pub fn describe(text: &str, err: &serde_json::Error) -> String {
    let message = err.to_string();
    // An unknown key is named by serde itself, and the last key before it is another field.
    let field = if message.starts_with("unknown field") {
        None
    } else {
        field_before(text, offset_of(text, err.line(), err.column()))
    };
    match (err.classify(), field) {
        (serde_json::error::Category::Syntax, Some(field)) => format!(
            "the plan's {field} is not valid JSON ({message}): give {} (JSON has no Infinity or NaN)",
            allowed(field).unwrap_or("a JSON value")
        ),
        (serde_json::error::Category::Data, Some(field)) => format!(
            "the plan's {field} is not valid ({message}): give {}",
            allowed(field).unwrap_or_else(|| allowed_by_type(&message))
        ),
        _ => format!("the plan is not valid: {message}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Plan;

    #[test]
    fn numbers_out_of_range_are_refused_by_name() {
        let cases = [
            (
                r#""requests": 99999999999999999999999"#,
                "the plan's requests is not valid",
                "from 1 to 18446744073709551615",
            ),
            (r#""requests": -3"#, "the plan's requests is not valid", "from 1 to"),
            (r#""rate_per_s": Infinity, "duration_us": 1"#, "the plan's rate_per_s is not valid JSON", "above 0"),
            (r#""rate_per_s": NaN, "duration_us": 1"#, "the plan's rate_per_s", "above 0"),
            (r#""duration_us": 1.5"#, "the plan's duration_us is not valid", "whole microseconds"),
            (r#""requests": 1, "timeline_histograms": 3"#, "the plan's timeline_histograms", "a value of the type"),
        ];
        for (fields, cause, fix) in cases {
            let text = format!(r#"{{"url": "http://127.0.0.1:8080/", "connections": 2, {fields}}}"#);
            let message = Plan::from_json(&text).unwrap_err().0;
            assert!(message.contains(cause) && message.contains(fix), "{fields}: {message}");
            assert!(!message.contains('\n'), "{message}");
        }
    }

    #[test]
    fn the_field_is_the_last_key_before_the_error() {
        let text = r#"{"url": "http://h:80/", "headers": [["a", "b:c"]], "threads": x}"#;
        assert_eq!(field_before(text, text.find('x').unwrap()), Some("threads"));
        assert_eq!(field_before("{", 1), None);
        assert_eq!(offset_of("ab\ncd", 2, 1), 4);
    }

    #[test]
    fn an_unknown_field_is_named_as_itself_not_as_the_field_before_it() {
        let text = r#"{"url": "http://127.0.0.1:8080/", "connections": 2, "bogus": 1}"#;
        let message = Plan::from_json(text).unwrap_err().0;
        assert!(message.starts_with("the plan is not valid: unknown field `bogus`"), "{message}");
        assert!(!message.contains("connections is not valid"), "{message}");
    }
}
