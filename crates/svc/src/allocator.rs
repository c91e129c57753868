//! How the allocator (mimalloc) gives memory back.
//!
//! mimalloc 3 keeps freed memory for a second (`purge_delay` = 1000 ms) before it returns it to the
//! system. Under load that second is most of a server's peak memory: 64 clients storing screenshots
//! free several MB of request buffers each millisecond, and all of it stayed resident. Svc purges
//! after 10 ms (mimalloc 2's default). Transparent huge pages are off for the allocator's arenas
//! (the crate's `no_thp` feature, in Cargo.toml): with them every touched 4 KB page could pin a
//! 2 MB one. Together with the SQLite writer's smaller page cache they took the peak resident
//! memory under text ingest from ~140 MB to ~70 MB (bench/README.md, "Memory").
//!
//! `MIMALLOC_PURGE_DELAY` in the environment still wins, as mimalloc documents.
#![allow(unsafe_code)]

use libmimalloc_sys::{mi_option_set, mi_option_t};

/// `mi_option_purge_delay` in mimalloc 3's `mi_option_e` (the crate exports no constant for it;
/// `the_purge_delay_option_is_the_one_meant` checks the number against the option's default).
const PURGE_DELAY: mi_option_t = 15;
/// Milliseconds freed memory stays with the allocator before it goes back to the system.
const PURGE_DELAY_MS: i64 = 10;

/// Applies the settings above. Call first thing in `main`.
pub fn configure() {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: setting an option is a plain store into mimalloc's option table; purge_delay is
        // read on each purge, so a change at any time is safe.
        unsafe { mi_option_set(PURGE_DELAY, PURGE_DELAY_MS as _) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use libmimalloc_sys::mi_option_get;

    /// The purge delay in effect, in milliseconds.
    fn purge_delay_ms() -> i64 {
        // SAFETY: reading an option has no preconditions.
        i64::from(unsafe { mi_option_get(PURGE_DELAY) })
    }

    #[test]
    fn the_purge_delay_option_is_the_one_meant() {
        // mimalloc 3's default purge delay is 1000 ms; no neighbouring option has that default, so a
        // mimalloc whose option numbers moved fails here instead of silently setting something else.
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
            assert_eq!(purge_delay_ms(), 1000, "option {PURGE_DELAY} is not mimalloc's purge_delay");
            configure();
            assert_eq!(purge_delay_ms(), PURGE_DELAY_MS);
        }
    }
}
