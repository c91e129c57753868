//! Report statuses (decisions §3): any transition between the six values is allowed.

pub const STATUSES: [&str; 6] = ["new", "triaged", "in-progress", "fixed", "verified", "canceled"];

/// The status of a newly filed report.
pub const INITIAL: &str = "new";

pub fn is_valid(status: &str) -> bool {
    STATUSES.contains(&status)
}

/// Comment kinds (decisions §8).
pub const COMMENT_KINDS: [&str; 5] = ["fix", "question", "options", "deferral", "techdebt"];
