//! Report statuses (decisions §3): any transition between the six values is allowed.

pub const STATUSES: [&str; 6] = ["new", "triaged", "in-progress", "fixed", "verified", "canceled"];

/// The status of a newly filed report.
pub const INITIAL: &str = "new";

pub fn is_valid(status: &str) -> bool {
    STATUSES.contains(&status)
}

/// Comment kinds (decisions §8).
pub const COMMENT_KINDS: [&str; 5] = ["fix", "question", "options", "deferral", "techdebt"];

/// One of the six statuses, parsed once at the edge so every surface refuses the same values with
/// the same message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Deserialize, serde::Serialize)]
#[serde(try_from = "String", into = "&'static str")]
pub enum Status {
    New,
    Triaged,
    InProgress,
    Fixed,
    Verified,
    Canceled,
}

impl Status {
    const ALL: [Status; 6] =
        [Status::New, Status::Triaged, Status::InProgress, Status::Fixed, Status::Verified, Status::Canceled];

    pub fn as_str(self) -> &'static str {
        STATUSES[Self::ALL.iter().position(|s| *s == self).unwrap_or(0)]
    }

    /// The message every surface gives for a value that is not a status.
    pub fn expected() -> String {
        format!("status must be one of {}", STATUSES.join(", "))
    }
}

impl std::str::FromStr for Status {
    type Err = crate::Invalid;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match STATUSES.iter().position(|s| *s == text) {
            Some(i) => Ok(Self::ALL[i]),
            None => Err(crate::Invalid::new(Self::expected())),
        }
    }
}

impl From<Status> for &'static str {
    fn from(status: Status) -> Self {
        status.as_str()
    }
}

impl TryFrom<String> for Status {
    type Error = crate::Invalid;

    fn try_from(text: String) -> Result<Self, Self::Error> {
        text.parse()
    }
}

/// A status compares with its name, so templates and tests can write `status == "fixed"`.
impl PartialEq<&str> for Status {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<Status> for &str {
    fn eq(&self, other: &Status) -> bool {
        *self == other.as_str()
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A comment to add: text, kind, and whether it waits as a draft (decisions §8).
#[derive(Debug, Clone, PartialEq)]
pub struct NewComment {
    pub text: String,
    pub kind: Option<String>,
    pub draft: bool,
}

pub const COMMENT_MAX_CHARS: usize = 20_000;

impl NewComment {
    /// Drafts are the default: a human publishes them.
    pub fn parse(text: &str, kind: Option<&str>, draft: Option<bool>) -> Result<Self, crate::Invalid> {
        let text = validate_comment_text(text)?;
        let kind = match kind {
            Some(kind) if COMMENT_KINDS.contains(&kind) => Some(kind.to_string()),
            Some(kind) => {
                return Err(crate::Invalid::new(format!(
                    "kind must be one of {}, not {kind:?}",
                    COMMENT_KINDS.join(", ")
                )));
            }
            None => None,
        };
        Ok(NewComment { text, kind, draft: draft.unwrap_or(true) })
    }
}

/// A comment's text: not blank, at most [`COMMENT_MAX_CHARS`].
pub fn validate_comment_text(text: &str) -> Result<String, crate::Invalid> {
    if text.trim().is_empty() {
        return Err(crate::Invalid::new("text is required"));
    }
    if text.chars().count() > COMMENT_MAX_CHARS {
        return Err(crate::Invalid::new(format!("text is longer than {COMMENT_MAX_CHARS} characters")));
    }
    Ok(text.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_parse_exactly() {
        for text in STATUSES {
            assert_eq!(text.parse::<Status>().unwrap().as_str(), text);
        }
        for bad in ["done", "Fixed", "", "in progress"] {
            let error = bad.parse::<Status>().unwrap_err();
            assert!(error.0.contains("in-progress, fixed"), "{error}");
        }
    }

    #[test]
    fn comments_default_to_drafts_and_check_their_kind() {
        assert!(NewComment::parse("hi", None, None).unwrap().draft);
        assert!(!NewComment::parse("hi", Some("fix"), Some(false)).unwrap().draft);
        assert!(NewComment::parse("hi", Some("praise"), None).unwrap_err().0.contains("kind"));
        assert!(NewComment::parse("  ", None, None).is_err());
    }
}
