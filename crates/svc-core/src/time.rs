//! Timestamps are epoch milliseconds inside Svc and ISO 8601 (UTC, millisecond precision) at its edges.

use chrono::{DateTime, SecondsFormat, Utc};

/// Milliseconds since the Unix epoch, now.
pub fn now_ms() -> i64 {
    Utc::now().timestamp_millis()
}

/// `2026-11-21T11:02:14.123Z`
pub fn iso(ms: i64) -> String {
    DateTime::<Utc>::from_timestamp_millis(ms).unwrap_or_default().to_rfc3339_opts(SecondsFormat::Millis, true)
}

pub fn iso_opt(ms: Option<i64>) -> Option<String> {
    ms.map(iso)
}

/// Parses an ISO 8601 / RFC 3339 timestamp into epoch milliseconds.
pub fn parse_iso(text: &str) -> Option<i64> {
    DateTime::parse_from_rfc3339(text).ok().map(|t| t.timestamp_millis())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_round_trips() {
        let ms = 1_795_000_000_123;
        assert_eq!(parse_iso(&iso(ms)), Some(ms));
        assert!(iso(ms).ends_with('Z'));
    }
}
