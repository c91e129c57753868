//! SQLite backend (in progress).
