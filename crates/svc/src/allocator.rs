//! The global allocator (mimalloc): how it is called, and how it gives memory back.
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
//!
//! [`Allocator`] calls mimalloc itself rather than through the `mimalloc` crate's `MiMalloc`, which
//! asks for every block with `mi_malloc_aligned`, even at Rust's usual alignment of 8. mimalloc 3
//! answers an aligned request from its fast path only while the page of that size has a free block;
//! after that, for a size whose class is not a power of two, it over-allocates in a larger size
//! class. The size's own page is then never refilled (only the plain path collects its freed
//! blocks), so every later block of that size goes the slow way again. Under text ingest that cost
//! the runtime's workers about 4% of their CPU, and mimalloc's own functions fell from 8.7% to 4.4%
//! of their samples with the plain calls (bench/README.md, "The allocator's slow path"). Plain
//! `mi_malloc` returns blocks aligned to 8, and to 16 for a size that is a multiple of 16, as C's
//! malloc must (mimalloc 2 skipped the aligned path for these alignments, as Rust's own `System`
//! allocator does for malloc); only larger alignments take the aligned calls.
//!
//! `svc-bench` compiles this file too, so its ceiling server allocates the same way.
#![allow(unsafe_code)]

use libmimalloc_sys::{
    mi_free, mi_malloc, mi_malloc_aligned, mi_option_set, mi_option_t, mi_realloc, mi_realloc_aligned, mi_zalloc,
    mi_zalloc_aligned,
};
use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

/// The global allocator: mimalloc, called as [the module notes](self) say.
pub struct Allocator;

/// Whether a plain `mi_malloc` block of `size` bytes is aligned to `align`: every block is aligned
/// to 8, and one whose size is a multiple of 16 to 16 (such a size falls in a size class that is a
/// multiple of 16, and pages start 16-aligned).
fn plain_block_fits(align: usize, size: usize) -> bool {
    align <= 8 || (align == 16 && size.is_multiple_of(16))
}

/// A block for `layout` from `plain` when a plain block fits it, else from `aligned`.
///
/// # Safety
///
/// `plain` and `aligned` are mimalloc's allocation functions of one family (zeroed or not).
#[inline]
unsafe fn allocate(
    layout: Layout,
    plain: unsafe extern "C" fn(usize) -> *mut c_void,
    aligned: unsafe extern "C" fn(usize, usize) -> *mut c_void,
) -> *mut u8 {
    // SAFETY: the caller passes mimalloc's functions; any size and power-of-two alignment is valid.
    unsafe {
        if plain_block_fits(layout.align(), layout.size()) {
            plain(layout.size()).cast()
        } else {
            aligned(layout.size(), layout.align()).cast()
        }
    }
}

// SAFETY: each method passes the caller's pointer and sizes to the mimalloc function made for
// them; blocks from either family (plain or aligned) may be freed with `mi_free` and resized with
// either realloc, which keep the alignment the new call asks for.
unsafe impl GlobalAlloc for Allocator {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: see the impl's note.
        unsafe { allocate(layout, mi_malloc, mi_malloc_aligned) }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: see the impl's note.
        unsafe { allocate(layout, mi_zalloc, mi_zalloc_aligned) }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        // SAFETY: see the impl's note.
        unsafe { mi_free(ptr.cast::<c_void>()) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: see the impl's note.
        unsafe {
            if plain_block_fits(layout.align(), new_size) {
                mi_realloc(ptr.cast::<c_void>(), new_size).cast()
            } else {
                mi_realloc_aligned(ptr.cast::<c_void>(), new_size, layout.align()).cast()
            }
        }
    }
}

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

    /// Every block comes back aligned as its layout asks, through allocation, zeroed allocation
    /// and growing and shrinking, for the alignments that take the plain calls and those that do
    /// not; zeroed blocks are zero and a resized block keeps its bytes.
    #[test]
    fn blocks_are_aligned_as_asked_and_keep_their_bytes() {
        let sizes = (1..=300usize).chain([1000, 1024, 1500, 4096, 5000, 70_000, 1 << 20]);
        for align in [1, 2, 4, 8, 16, 32, 64, 128, 4096] {
            for size in sizes.clone() {
                let size = size.next_multiple_of(align);
                let layout = Layout::from_size_align(size, align).unwrap();
                // SAFETY: the layouts are valid and non-zero; every block is freed once, with its layout.
                unsafe {
                    let zeroed = Allocator.alloc_zeroed(layout);
                    assert_eq!(zeroed as usize % align, 0, "zeroed {size} bytes at {align}");
                    assert!(std::slice::from_raw_parts(zeroed, size).iter().all(|&b| b == 0));
                    Allocator.dealloc(zeroed, layout);

                    for new_size in [size * 3, (size / 2).next_multiple_of(align).max(align)] {
                        let block = Allocator.alloc(layout);
                        assert_eq!(block as usize % align, 0, "{size} bytes at {align}");
                        block.write_bytes(0xA5, size);
                        let resized = Allocator.realloc(block, layout, new_size);
                        assert_eq!(resized as usize % align, 0, "{size} -> {new_size} bytes at {align}");
                        let kept = size.min(new_size);
                        assert!(std::slice::from_raw_parts(resized, kept).iter().all(|&b| b == 0xA5));
                        Allocator.dealloc(resized, Layout::from_size_align(new_size, align).unwrap());
                    }
                }
            }
        }
    }

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
