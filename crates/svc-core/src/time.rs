//! Timestamps are epoch milliseconds inside Svc and ISO 8601 (UTC, millisecond precision) at its edges.

use chrono::{DateTime, SecondsFormat, Utc};

/// Milliseconds since the Unix epoch, now.
pub fn now_ms() -> i64 {
    Utc::now().timestamp_millis()
}

/// `2026-11-21T11:02:14.123Z`
pub fn iso(ms: i64) -> String {
    // Years 1970 to 9999 (every time Svc makes) are written directly: listings format two per
    // report, and chrono's general formatter was a visible share of a page's CPU time.
    const MAX_MS: i64 = 253_402_300_800_000; // 10000-01-01T00:00:00Z
    if (0..MAX_MS).contains(&ms) {
        return iso_fast(ms);
    }
    DateTime::<Utc>::from_timestamp_millis(ms).unwrap_or_default().to_rfc3339_opts(SecondsFormat::Millis, true)
}

fn iso_fast(ms: i64) -> String {
    let days = ms.div_euclid(86_400_000);
    let in_day = ms.rem_euclid(86_400_000);
    // Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let (hour, minute, second, milli) = (in_day / 3_600_000, in_day / 60_000 % 60, in_day / 1_000 % 60, in_day % 1_000);
    let mut out = [0u8; 24];
    let mut put = |at: usize, value: i64, digits: usize| {
        let mut value = value;
        for i in (0..digits).rev() {
            out[at + i] = b'0' + (value % 10) as u8;
            value /= 10;
        }
    };
    put(0, year, 4);
    put(5, month, 2);
    put(8, day, 2);
    put(11, hour, 2);
    put(14, minute, 2);
    put(17, second, 2);
    put(20, milli, 3);
    for (at, separator) in [(4, b'-'), (7, b'-'), (10, b'T'), (13, b':'), (16, b':'), (19, b'.'), (23, b'Z')] {
        out[at] = separator;
    }
    // Only ASCII digits and separators were written.
    String::from_utf8(out.to_vec()).unwrap_or_default()
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
    fn iso_is_what_chrono_writes() {
        let chrono =
            |ms: i64| DateTime::<Utc>::from_timestamp_millis(ms).unwrap().to_rfc3339_opts(SecondsFormat::Millis, true);
        let mut samples = vec![0, 1, 999, 86_399_999, 86_400_000, 951_782_400_000, 951_868_799_999, 4_107_542_399_999];
        samples.extend([1_795_000_000_123, 253_402_300_799_999, 1_709_164_800_000, 946_684_800_000]);
        // A walk over 400 years in steps that hit every month and many leap days.
        let mut ms = 0;
        while ms < 253_402_300_800_000 {
            samples.push(ms);
            ms += 2_629_743_831 + 86_399_997;
        }
        for ms in samples {
            assert_eq!(iso(ms), chrono(ms), "{ms}");
        }
        assert_eq!(iso(-1), chrono(-1));
        assert_eq!(iso(253_402_300_800_000), chrono(253_402_300_800_000));
    }

    #[test]
    fn iso_round_trips() {
        let ms = 1_795_000_000_123;
        assert_eq!(parse_iso(&iso(ms)), Some(ms));
        assert!(iso(ms).ends_with('Z'));
    }
}
