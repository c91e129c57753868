//! How SQLite allocates memory in this process.
//!
//! Two process-wide settings, made once before the first connection (SQLite refuses them, harmlessly,
//! once it is initialized):
//!
//! - SQLite allocates through Rust's global allocator (the `svc` binary's), not the C library's
//!   `malloc`. Reading a page of 100 reports through sqlx copies every column value, thousands of
//!   allocations per page; with glibc's allocator they were a fifth of a listing's CPU time.
//! - Memory statistics are off: with them on (SQLite's default) every allocation takes a
//!   process-wide mutex. Nothing in Svc reads them.
//!
//! The one module of the crate with `unsafe` code (the crate denies it elsewhere). It stays because it
//! pays: on listings it was the largest single gain of the tuning (1,300 → 2,700 pages/s, see
//! bench/README.md). If SQLite refuses a setting, Svc runs with SQLite's defaults and says so in the log.
#![allow(unsafe_code)]

use libsqlite3_sys as ffi;
use std::alloc::{Layout, alloc, dealloc, realloc};
use std::ffi::{c_int, c_void};

/// Each block starts with its size, so `xSize`, `xFree` and `xRealloc` can rebuild its layout. 16
/// bytes keep the memory handed to SQLite 16-byte aligned (SQLite needs 8).
const HEADER: usize = 16;
const ALIGN: usize = 16;

fn layout(bytes: usize) -> Option<Layout> {
    Layout::from_size_align(bytes.checked_add(HEADER)?, ALIGN).ok()
}

unsafe extern "C" fn x_malloc(bytes: c_int) -> *mut c_void {
    let Some(layout) = usize::try_from(bytes).ok().and_then(layout) else { return std::ptr::null_mut() };
    // SAFETY: the layout has a non-zero size (HEADER > 0).
    let base = unsafe { alloc(layout) };
    if base.is_null() {
        return std::ptr::null_mut();
    }
    // SAFETY: `base` is a fresh block of at least HEADER bytes, aligned for usize.
    unsafe {
        (base as *mut usize).write(layout.size() - HEADER);
        base.add(HEADER) as *mut c_void
    }
}

/// The block's base and the size SQLite asked for.
///
/// # Safety
/// `pointer` must have come from `x_malloc` or `x_realloc` and not been freed.
unsafe fn block(pointer: *mut c_void) -> (*mut u8, usize) {
    // SAFETY: per the contract, HEADER bytes before `pointer` hold the size.
    unsafe {
        let base = (pointer as *mut u8).sub(HEADER);
        (base, (base as *const usize).read())
    }
}

unsafe extern "C" fn x_free(pointer: *mut c_void) {
    if pointer.is_null() {
        return;
    }
    // SAFETY: SQLite frees only what its xMalloc/xRealloc returned, once.
    unsafe {
        let (base, bytes) = block(pointer);
        if let Some(layout) = layout(bytes) {
            dealloc(base, layout);
        }
    }
}

unsafe extern "C" fn x_realloc(pointer: *mut c_void, bytes: c_int) -> *mut c_void {
    if pointer.is_null() {
        // SAFETY: a plain allocation.
        return unsafe { x_malloc(bytes) };
    }
    let Some(new_layout) = usize::try_from(bytes).ok().and_then(layout) else { return std::ptr::null_mut() };
    // SAFETY: `pointer` came from x_malloc/x_realloc; the old layout is rebuilt from its header, and
    // on success the header is rewritten for the new size.
    unsafe {
        let (base, old_bytes) = block(pointer);
        let Some(old_layout) = layout(old_bytes) else { return std::ptr::null_mut() };
        let grown = realloc(base, old_layout, new_layout.size());
        if grown.is_null() {
            return std::ptr::null_mut();
        }
        (grown as *mut usize).write(new_layout.size() - HEADER);
        grown.add(HEADER) as *mut c_void
    }
}

unsafe extern "C" fn x_size(pointer: *mut c_void) -> c_int {
    if pointer.is_null() {
        return 0;
    }
    // SAFETY: SQLite asks only about live blocks it allocated.
    let (_, bytes) = unsafe { block(pointer) };
    c_int::try_from(bytes).unwrap_or(c_int::MAX)
}

unsafe extern "C" fn x_roundup(bytes: c_int) -> c_int {
    bytes.checked_add(7).map_or(bytes, |b| b & !7)
}

unsafe extern "C" fn x_init(_: *mut c_void) -> c_int {
    ffi::SQLITE_OK
}

unsafe extern "C" fn x_shutdown(_: *mut c_void) {}

/// The methods, shareable: never written, and their one pointer is null.
struct Methods(ffi::sqlite3_mem_methods);
// SAFETY: see above; SQLite only reads (copies) the struct.
unsafe impl Sync for Methods {}

static METHODS: Methods = Methods(ffi::sqlite3_mem_methods {
    xMalloc: Some(x_malloc),
    xFree: Some(x_free),
    xRealloc: Some(x_realloc),
    xSize: Some(x_size),
    xRoundup: Some(x_roundup),
    xInit: Some(x_init),
    xShutdown: Some(x_shutdown),
    pAppData: std::ptr::null_mut(),
});

/// Applies the settings above, once, before the first connection; a refused setting is logged.
pub(super) fn configure() {
    if let Err(refused) = configured() {
        tracing::warn!("{refused}; SQLite keeps its own allocator settings (slower listings)");
    }
}

/// The outcome of applying the settings (the first call applies them; later calls repeat it).
fn configured() -> Result<(), String> {
    static OUTCOME: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    OUTCOME
        .get_or_init(|| {
            // SAFETY: both options are documented to take these arguments (a pointer to a methods
            // struct that lives for the whole process; an int), and they run once, before this
            // process opens its first SQLite connection. If SQLite is already initialized they are
            // refused (SQLITE_MISUSE) and nothing changes.
            let (malloc, memstatus) = unsafe {
                (
                    ffi::sqlite3_config(ffi::SQLITE_CONFIG_MALLOC, &METHODS.0 as *const ffi::sqlite3_mem_methods),
                    ffi::sqlite3_config(ffi::SQLITE_CONFIG_MEMSTATUS, 0 as c_int),
                )
            };
            match (malloc, memstatus) {
                (ffi::SQLITE_OK, ffi::SQLITE_OK) => Ok(()),
                (ffi::SQLITE_OK, code) => Err(format!("SQLite refused to turn memory statistics off (code {code})")),
                (code, _) => Err(format!("SQLite refused Rust's allocator (code {code})")),
            }
        })
        .clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_remember_their_size_and_survive_realloc() {
        // SAFETY: the functions are used as SQLite uses them.
        unsafe {
            let p = x_malloc(100);
            assert!(!p.is_null());
            assert_eq!(p as usize % 8, 0);
            assert_eq!(x_size(p), 100);
            std::ptr::write_bytes(p as *mut u8, 7, 100);
            let q = x_realloc(p, 5000);
            assert_eq!(x_size(q), 5000);
            assert_eq!(*(q as *const u8).add(99), 7);
            let r = x_realloc(q, 10);
            assert_eq!(x_size(r), 10);
            x_free(r);
            x_free(std::ptr::null_mut());
            assert_eq!(x_roundup(13), 16);
            assert_eq!(x_roundup(16), 16);
        }
    }

    #[test]
    fn sqlite_takes_the_settings() {
        // Every connection in this crate is opened after `configure`, so SQLite accepts both settings;
        // a connection opened earlier (or a SQLite that refuses them) would make this fail.
        assert_eq!(configured(), Ok(()));
    }
}
