//! Identifiers (decisions §2).
//!
//! Object ids are 24 lowercase hex characters: 12 hex digits of creation time in milliseconds, then 12
//! that are random but strictly increasing within this process, so ids sort by creation and one id
//! works as a keyset cursor.

use rand::RngExt;
use std::sync::Mutex;

const BASE62: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const TAIL_MASK: u64 = (1 << 48) - 1;

static LAST: Mutex<(u64, u64)> = Mutex::new((0, 0));

/// A new time-ordered object id.
pub fn new_id() -> String {
    new_id_at(crate::time::now_ms())
}

/// A new object id for the given creation time (a clock that steps back keeps the last time used).
pub fn new_id_at(ms: i64) -> String {
    let mut rng = rand::rng();
    let mut last = LAST.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let mut ms = (ms.max(0) as u64) & TAIL_MASK;
    let tail;
    if ms <= last.0 {
        ms = last.0;
        // Step by a random amount so ids stay hard to guess but still increase.
        let next = last.1 + 1 + rng.random_range(0..1u64 << 20);
        if next > TAIL_MASK {
            ms += 1;
            tail = rng.random_range(0..1u64 << 40);
        } else {
            tail = next;
        }
    } else {
        // Leave headroom so many ids can follow within the same millisecond.
        tail = rng.random_range(0..1u64 << 40);
    }
    *last = (ms, tail);
    drop(last);
    hex_id(ms, tail)
}

/// `{ms:012x}{tail:012x}`, without the formatting machinery (ids are minted on every request).
fn hex_id(ms: u64, tail: u64) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = [0u8; 24];
    for (i, byte) in out.iter_mut().enumerate() {
        let (value, shift) = if i < 12 { (ms, 4 * (11 - i)) } else { (tail, 4 * (23 - i)) };
        *byte = HEX[((value >> shift) & 0xf) as usize];
    }
    // Only ASCII hex digits were written.
    String::from_utf8(out.to_vec()).unwrap_or_default()
}

/// Whether `text` is a well-formed object id (24 lowercase hex characters).
pub fn is_object_id(text: &str) -> bool {
    text.len() == 24 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Whether `text` looks like a short id (the last 6 hex characters of an id).
pub fn is_short_id(text: &str) -> bool {
    text.len() == 6 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// The short id of an object id: its last 6 characters.
pub fn short_id(id: &str) -> &str {
    &id[id.len().saturating_sub(6)..]
}

/// The creation time an id carries, in epoch milliseconds.
pub fn id_time_ms(id: &str) -> Option<i64> {
    if !is_object_id(id) {
        return None;
    }
    i64::from_str_radix(&id[..12], 16).ok()
}

fn base62(len: usize) -> String {
    let mut rng = rand::rng();
    (0..len).map(|_| BASE62[rng.random_range(0..62)] as char).collect()
}

/// Public project key: `pr_` + 24 base62 characters.
pub fn new_project_key() -> String {
    format!("pr_{}", base62(24))
}

/// Secret API key: `pr_sk_` + 40 base62 characters.
pub fn new_secret_key() -> String {
    format!("pr_sk_{}", base62(40))
}

/// A random secret of base62 characters (identity secrets, for example).
pub fn new_random_secret(len: usize) -> String {
    base62(len)
}

/// Whether `text` has the shape of a public project key.
pub fn is_project_key(text: &str) -> bool {
    text.starts_with("pr_") && !text.starts_with("pr_sk_")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_ids_match_the_format_macro() {
        for (ms, tail) in
            [(0, 0), (1, 2), (0x0123_4567_89ab, 0xcdef_0123_4567), (TAIL_MASK, TAIL_MASK), (1_795_000_000_123, 99)]
        {
            assert_eq!(hex_id(ms, tail), format!("{ms:012x}{tail:012x}"));
        }
    }

    #[test]
    fn ids_are_well_formed_and_strictly_increasing() {
        let ids: Vec<String> = (0..10_000).map(|_| new_id()).collect();
        for pair in ids.windows(2) {
            assert!(pair[0] < pair[1], "{} !< {}", pair[0], pair[1]);
        }
        assert!(ids.iter().all(|id| is_object_id(id)));
    }

    #[test]
    fn ids_carry_their_time() {
        let id = new_id_at(1_795_000_000_000);
        assert!(id_time_ms(&id).unwrap() >= 1_795_000_000_000);
        assert_eq!(short_id(&id).len(), 6);
    }

    #[test]
    fn keys_have_their_prefixes_and_lengths() {
        let pk = new_project_key();
        assert!(pk.starts_with("pr_") && pk.len() == 27 && is_project_key(&pk));
        let sk = new_secret_key();
        assert!(sk.starts_with("pr_sk_") && sk.len() == 46 && !is_project_key(&sk));
    }

    #[test]
    fn malformed_ids_are_rejected() {
        assert!(!is_object_id("abc"));
        assert!(!is_object_id("ABCDEF0123456789abcdef01"));
        assert!(is_object_id("0123456789abcdef01234567"));
    }
}
