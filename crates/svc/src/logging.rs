//! Structured logs on stderr: human-readable, or JSON lines with `SVC_LOG_FORMAT=json`. Filter with
//! `RUST_LOG` (default `info`). Nothing logged carries a secret: keys travel in headers, which are
//! never logged, and key types redact themselves.
//!
//! Values often come from requests (a path, a header, a report a browser sent), so each event stays
//! one line whatever they hold: the human-readable format escapes every control character in every
//! field (a line break cannot forge a log line; escape and bell bytes never reach a terminal), and
//! JSON escapes them by its own rules. Colour only when stderr is a terminal.

use std::fmt::Write as _;
use std::io::IsTerminal;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::field::MakeExt;

pub fn init() {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn"));
    let json = std::env::var("SVC_LOG_FORMAT").is_ok_and(|f| f.eq_ignore_ascii_case("json"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    if json {
        builder.json().flatten_event(true).init();
    } else {
        let fields = tracing_subscriber::fmt::format::debug_fn(|writer, field, value| {
            let text = one_line(&format!("{value:?}"));
            match field.name() {
                "message" => write!(writer, "{text}"),
                name => write!(writer, "{name}={text}"),
            }
        })
        .delimited(" ");
        builder.with_ansi(std::io::stderr().is_terminal()).fmt_fields(fields).init();
    }
}

/// `text` with every control character written as an escape (`\n`, `\r`, `\t`, `\u{1b}`).
fn one_line(text: &str) -> String {
    if !text.chars().any(char::is_control) {
        return text.to_string();
    }
    let mut escaped = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => escaped.push_str("\\n"),
            '\r' => escaped.push_str("\\r"),
            '\t' => escaped.push_str("\\t"),
            c if c.is_control() => {
                let _ = write!(escaped, "\\u{{{:x}}}", c as u32);
            }
            c => escaped.push(c),
        }
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::one_line;

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(one_line("plain text"), "plain text");
        assert_eq!(one_line("a\nINFO forged line"), "a\\nINFO forged line");
        assert_eq!(one_line("bell\u{7}esc\u{1b}[31mred\r"), "bell\\u{7}esc\\u{1b}[31mred\\r");
        assert_eq!(one_line("c1\u{85}x"), "c1\\u{85}x");
    }
}
