//! Full-text search of reports: what a report's search text holds, and how a query is read.
//!
//! The stores index [`document`] (SQLite FTS5, PostgreSQL `tsvector`) and match a [`Query`] against
//! it. Query syntax, the same as PostgreSQL's `websearch_to_tsquery`: words must all appear (in any
//! order, any case); `"several words"` must appear together in that order; `-word` or `-"words"`
//! must not appear; `or` between two of them means either. Nothing a user types is an error: other
//! punctuation separates words, and a query without a single word matches nothing.

use serde_json::Value;

use crate::Invalid;
use crate::block::Block;
use crate::model::Report;

/// Most characters in a search.
pub const MAX_QUERY_CHARS: usize = 500;
/// Most words and phrases of a search that are used (the rest are ignored).
pub const MAX_TERMS: usize = 32;
/// Most characters of a report's search text (its comments included); the rest is not indexed.
pub const MAX_DOCUMENT_CHARS: usize = 100_000;

/// A search as typed: trimmed, `None` when blank (no search), refused when over
/// [`MAX_QUERY_CHARS`].
pub fn normalize(text: &str) -> Result<Option<String>, Invalid> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    if text.chars().count() > MAX_QUERY_CHARS {
        return Err(Invalid::new(format!("search is longer than {MAX_QUERY_CHARS} characters")));
    }
    Ok(Some(text.to_string()))
}

/// A parsed search: every group of `all` must match (a group matches when any of its terms does),
/// and no term of `none` may. A term is a word or a phrase as typed, without the quotes; a store
/// matches it as a phrase of the words its own tokenizer finds in it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Query {
    pub all: Vec<Vec<String>>,
    pub none: Vec<String>,
}

impl Query {
    /// A query without terms matches nothing.
    pub fn is_empty(&self) -> bool {
        self.all.is_empty() && self.none.is_empty()
    }
}

/// One item of the query text.
enum Item {
    Term { text: String, negated: bool },
    Or,
}

/// Reads a search (see the module notes). Terms without a letter or digit are dropped.
pub fn parse(text: &str) -> Query {
    let mut items = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
            continue;
        }
        let mut negated = false;
        if c == '-' {
            chars.next();
            match chars.peek() {
                Some(next) if !next.is_whitespace() => negated = true,
                _ => continue,
            }
        }
        let (term, quoted) = if chars.peek() == Some(&'"') {
            chars.next();
            let phrase: String = chars.by_ref().take_while(|c| *c != '"').collect();
            (phrase, true)
        } else {
            let mut word = String::new();
            while let Some(&c) = chars.peek() {
                if c.is_whitespace() {
                    break;
                }
                word.push(c);
                chars.next();
            }
            (word, false)
        };
        if !quoted && !negated && term.eq_ignore_ascii_case("or") {
            items.push(Item::Or);
        } else if term.chars().any(char::is_alphanumeric) {
            items.push(Item::Term { text: term.trim().to_string(), negated });
        }
    }

    let mut query = Query::default();
    let mut terms = 0;
    let mut or_pending = false;
    let mut last_was_positive = false;
    for item in items {
        match item {
            Item::Or => or_pending = last_was_positive,
            Item::Term { text, negated } => {
                if terms == MAX_TERMS {
                    break;
                }
                terms += 1;
                if negated {
                    query.none.push(text);
                    last_was_positive = false;
                    or_pending = false;
                    continue;
                }
                match query.all.last_mut() {
                    Some(group) if or_pending => group.push(text),
                    _ => query.all.push(vec![text]),
                }
                last_was_positive = true;
                or_pending = false;
            }
        }
    }
    query
}

/// The text a report is found by: its title; the words of its blocks (text, selections and quotes
/// with their comments, pinpoint comments, voice transcripts, file names and descriptions); its
/// URL; who filed it (the verified identity's email and name, the unverified reporter profile's,
/// the author's label); and the text of its comments, drafts included (the team sees them).
/// URLs and email addresses are added once more split into their words, so `settings` finds
/// `https://app.example.com/settings` whatever the store's tokenizer makes of the address. Cut at
/// [`MAX_DOCUMENT_CHARS`].
pub fn document(report: &Report, comments: &[&str]) -> String {
    let mut doc = Document::default();
    doc.push(&report.title);
    for block in &report.blocks {
        match block {
            Block::Text(b) => doc.push(&b.text),
            Block::Selection(b) => doc.push(&b.text),
            Block::Quote(b) => {
                doc.push(&b.text);
                doc.push(&b.comment);
            }
            Block::Pinpoint(b) => doc.push(b.comment.as_deref().unwrap_or_default()),
            Block::Audio(b) => doc.push(b.transcript.as_deref().unwrap_or_default()),
            Block::File(b) => {
                doc.push(&b.name);
                doc.push(b.description.as_deref().unwrap_or_default());
            }
            Block::Screenshot(_) => {}
        }
    }
    if let Some(url) = report.url.as_deref().or(report.context.url.as_deref()) {
        doc.push_with_words(url);
    }
    let verified = report.identity.as_ref().map(|i| (i.email.as_deref(), i.name.as_deref()));
    let profile = report.context.reporter.as_ref().map(|profile| {
        let text = |name: &str| profile.get(name).and_then(Value::as_str);
        (text("email"), text("name"))
    });
    for (email, name) in [verified, profile].into_iter().flatten() {
        if let Some(email) = email {
            doc.push_with_words(email);
        }
        if let Some(name) = name {
            doc.push(name);
        }
    }
    if let Some(label) = &report.author.label {
        doc.push_with_words(label);
    }
    for comment in comments {
        doc.push(comment);
    }
    doc.text
}

#[derive(Default)]
struct Document {
    text: String,
    chars: usize,
}

impl Document {
    fn push(&mut self, part: &str) {
        let room = MAX_DOCUMENT_CHARS.saturating_sub(self.chars);
        if room == 0 || part.trim().is_empty() {
            return;
        }
        if !self.text.is_empty() {
            self.text.push('\n');
        }
        // No NUL characters (a JSON string may hold one; PostgreSQL text cannot).
        let taken: String = part.chars().take(room).map(|c| if c == '\0' { ' ' } else { c }).collect();
        self.chars += taken.chars().count() + 1;
        self.text.push_str(&taken);
    }

    /// The text, and its letters and digits as separate words when it holds anything else.
    fn push_with_words(&mut self, part: &str) {
        self.push(part);
        if part.chars().any(|c| !c.is_alphanumeric() && !c.is_whitespace()) {
            let words: String = part.chars().map(|c| if c.is_alphanumeric() { c } else { ' ' }).collect();
            self.push(&words);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Author, AuthorKind};
    use serde_json::json;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn blank_searches_are_no_search_and_long_ones_are_refused() {
        assert_eq!(normalize("  \n ").unwrap(), None);
        assert_eq!(normalize(" save button ").unwrap(), Some("save button".into()));
        assert!(normalize(&"x".repeat(501)).is_err());
    }

    #[test]
    fn words_phrases_negations_and_or() {
        let query = parse(r#"save "the button" -crash or -"slow page" checkout OR cart"#);
        assert_eq!(query.all, vec![strings(&["save"]), strings(&["the button"]), strings(&["checkout", "cart"])]);
        assert_eq!(query.none, strings(&["crash", "slow page"]));
    }

    #[test]
    fn anything_typed_parses() {
        for text in [r#"""#, r#"a"b"#, "-", "- -", "or", "a or", "or b", "NEAR(a b)", "col:x", "*", "(((", "'", "\\"] {
            let _ = parse(text);
        }
        assert!(parse("!!! ... ---").is_empty());
        assert_eq!(parse(r#"ab"cd"#).all, vec![strings(&[r#"ab"cd"#])]);
        assert_eq!(parse(r#""unclosed phrase"#).all, vec![strings(&["unclosed phrase"])]);
        assert_eq!(parse("x ".repeat(40).as_str()).all.len(), MAX_TERMS);
    }

    #[test]
    fn the_document_holds_what_a_report_is_found_by() {
        let report = Report {
            id: "01a1fdda5efe00b5d80f3ce3".into(),
            project_id: "p".into(),
            channel_key: "bug".into(),
            status: crate::status::Status::New,
            title: "Checkout fails".into(),
            blocks: serde_json::from_value(json!([
                {"type": "text", "text": "Total is wrong"},
                {"type": "quote", "text": "Pay now", "comment": "button label", "selector": "#pay", "target": {"css": "#pay"}},
                {"type": "audio", "blobId": "b", "transcript": "spoken words"},
                {"type": "file", "blobId": "f", "name": "trace.log", "description": "server trace"}
            ]))
            .unwrap(),
            context: serde_json::from_value(json!({"reporter": {"email": "eve@example.org", "name": "Eve"}})).unwrap(),
            identity: Some(
                serde_json::from_value(json!({"userId": "u-1", "email": "ann@example.com", "name": "Ann", "verified": true}))
                    .unwrap(),
            ),
            identity_error: None,
            author: Author { kind: AuthorKind::Reporter, id: Some("u-1".into()), label: Some("Ann".into()) },
            artifact_id: None,
            url: Some("https://app.example.com/settings".into()),
            created_at: 0,
            updated_at: 0,
            assignee: None,
            labels: Vec::new(),
        };
        let doc = document(&report, &["a comment word"]);
        for expected in [
            "Checkout fails",
            "Total is wrong",
            "Pay now",
            "button label",
            "spoken words",
            "trace.log",
            "server trace",
            "https://app.example.com/settings",
            "app example com settings",
            "ann@example.com",
            "ann example com",
            "eve@example.org",
            "Eve",
            "a comment word",
        ] {
            assert!(doc.contains(expected), "{expected:?} missing from {doc:?}");
        }
        assert!(!doc.contains("#pay"));
        let long = Report { title: "y".repeat(MAX_DOCUMENT_CHARS + 10), ..report };
        assert_eq!(document(&long, &["z"]).chars().count(), MAX_DOCUMENT_CHARS);
    }
}
