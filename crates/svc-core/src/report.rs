//! Report rules that do not depend on storage: titles.

use crate::block::Block;

const TITLE_MAX_CHARS: usize = 80;

/// The page address a report links to: `context.url` when it is an absolute `http` or `https` URL
/// with a host and nothing a browser would strip or reinterpret (white space, control characters).
/// Anything else (`javascript:`, `file:`, text) stays in `context.url` as the reporter's text but is
/// never the report's `url`.
pub fn link_url(text: &str) -> Option<&str> {
    if text.is_empty() || text.len() > 8_192 || text.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return None;
    }
    let parsed = url::Url::parse(text).ok()?;
    let web = matches!(parsed.scheme(), "http" | "https") && parsed.host_str().is_some_and(|h| !h.is_empty());
    web.then_some(text)
}

/// The title of a report (decisions §3), from the reporter's own words where there are any: the
/// first non-empty line of the first text block; else of the first comment on a pinpoint or
/// quote, transcript of a voice note or description of a file, in block order; Markdown stripped,
/// cut to 80 characters. Without any, a name for the first block: `Screenshot`, `Voice note`,
/// `Pinpoint on “<element text>”` (its accessible name, else its selector, when it shows no text),
/// `File <name>`, or a selection's or quote's first line.
pub fn derive_title(blocks: &[Block]) -> String {
    let first_line =
        |text: &str| text.lines().map(|line| strip_markdown(line, TITLE_MAX_CHARS)).find(|l| !l.is_empty());
    let written = blocks.iter().find_map(|b| match b {
        Block::Text(text) => first_line(&text.text),
        _ => None,
    });
    let words = written.or_else(|| {
        blocks.iter().filter(|b| !matches!(b, Block::Text(_))).find_map(|b| b.own_words().and_then(first_line))
    });
    if let Some(line) = words {
        return cut(line, TITLE_MAX_CHARS);
    }
    let Some(first) = blocks.first() else {
        return "Report".into();
    };
    let title = match first {
        Block::Screenshot(_) => "Screenshot".to_string(),
        Block::Audio(_) => "Voice note".to_string(),
        Block::Pinpoint(pinpoint) => {
            let target = &pinpoint.target;
            let shown =
                [target.text.as_deref(), target.accessible_name.as_deref()].into_iter().flatten().find_map(first_line);
            match shown {
                Some(text) => format!("Pinpoint on “{text}”"),
                None => format!("Pinpoint on {}", pinpoint.selector),
            }
        }
        Block::File(file) => format!("File {}", file.name),
        Block::Selection(selection) => {
            strip_markdown(selection.text.lines().next().unwrap_or_default(), TITLE_MAX_CHARS)
        }
        Block::Quote(quote) => strip_markdown(quote.text.lines().next().unwrap_or_default(), TITLE_MAX_CHARS),
        Block::Text(_) => "Report".to_string(),
    };
    cut(title, TITLE_MAX_CHARS)
}

/// `text` with every run of white space (line breaks included) made one space, and none at either
/// end; written into one string, as titles, headings and snippets are for every listed report.
pub fn fold_whitespace(text: &str) -> String {
    let mut folded = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        if !folded.is_empty() {
            folded.push(' ');
        }
        folded.push_str(word);
    }
    folded
}

/// `text` cut to `max` characters, without white space at the end of a cut.
fn cut(mut text: String, max: usize) -> String {
    if let Some((at, _)) = text.char_indices().nth(max) {
        text.truncate(at);
        text.truncate(text.trim_end().len());
    }
    text
}

/// Strips the Markdown that decorates a line: heading marks, list and quote markers, emphasis,
/// inline code, and link syntax (keeping the link text); white space folded as by
/// [`fold_whitespace`].
///
/// Only the first `max_chars` characters of the result are wanted (the caller cuts there), so the
/// line is read only until more than that many non-space characters are out: the output so far is
/// then, after whitespace is collapsed, a prefix of the whole line's longer than `max_chars`, and
/// cutting either gives the same title.
fn strip_markdown(line: &str, max_chars: usize) -> String {
    let mut text = line.trim();
    text = text.trim_start_matches('#').trim_start();
    loop {
        let before = text;
        for marker in ["> ", ">", "- [ ] ", "- [x] ", "- ", "* ", "+ "] {
            text = text.strip_prefix(marker).unwrap_or(text).trim_start();
        }
        // A numbered item (`12. `): digits, then the marker, at the very start.
        let digits = text.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && text[digits..].starts_with(". ") {
            text = &text[digits + 2..];
        }
        if text == before {
            break;
        }
    }
    let capacity = text.len().min(max_chars.saturating_mul(4).saturating_add(16));
    let mut out = Folded { text: String::with_capacity(capacity), ..Folded::default() };
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if out.visible > max_chars {
            break;
        }
        match c {
            // Inside a word (`my_var`, `2*3`) these are text, not emphasis.
            '*' | '_' if out.after_alphanumeric && chars.peek().is_some_and(|n| n.is_alphanumeric()) => out.push(c),
            '*' | '_' | '`' | '~' => {}
            '!' if chars.peek() == Some(&'[') => {}
            '[' => {
                for c in chars.by_ref().take_while(|c| *c != ']') {
                    out.push(c);
                }
                if chars.peek() == Some(&'(') {
                    for c in chars.by_ref() {
                        if c == ')' {
                            break;
                        }
                    }
                }
            }
            _ => out.push(c),
        }
    }
    out.text
}

/// Text written with its white space folded as it is written (see [`fold_whitespace`]).
#[derive(Default)]
struct Folded {
    text: String,
    /// Non-space characters written.
    visible: usize,
    /// White space read since the last character written (written as one space before the next).
    space: bool,
    /// Whether the last character written was a letter or digit (white space counts as written).
    after_alphanumeric: bool,
}

impl Folded {
    fn push(&mut self, c: char) {
        if c.is_whitespace() {
            self.space = !self.text.is_empty();
            self.after_alphanumeric = false;
            return;
        }
        if std::mem::take(&mut self.space) {
            self.text.push(' ');
        }
        self.text.push(c);
        self.visible += 1;
        self.after_alphanumeric = c.is_alphanumeric();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_web_addresses_become_the_report_link() {
        assert_eq!(link_url("https://app.example.com/a?b=1#c"), Some("https://app.example.com/a?b=1#c"));
        assert_eq!(link_url("http://localhost:3000/"), Some("http://localhost:3000/"));
        for bad in [
            "javascript:alert(1)",
            "JavaScript:alert(1)",
            "data:text/html,<script>",
            "file:///etc/passwd",
            "https://a.example/\n## Comments",
            "https://a.example/ x",
            "/relative/path",
            "http://",
            "",
        ] {
            assert_eq!(link_url(bad), None, "{bad:?}");
        }
    }
    use serde_json::{Value, json};

    /// The title of blocks written as JSON, with the fields each type requires filled in where a
    /// case leaves them out (they play no part in the title).
    fn title_of(blocks: &Value) -> String {
        let mut blocks = blocks.clone();
        for block in blocks.as_array_mut().unwrap() {
            let object = block.as_object_mut().unwrap();
            let selector = object.get("selector").cloned().unwrap_or(json!("#x"));
            match object["type"].as_str().unwrap() {
                "screenshot" | "audio" => {
                    object.entry("blobId").or_insert(json!("x"));
                }
                "file" => {
                    object.entry("blobId").or_insert(json!("x"));
                    object.entry("name").or_insert(json!("f"));
                }
                "pinpoint" | "quote" => {
                    object.entry("target").or_insert(json!({"css": selector}));
                }
                _ => {}
            }
        }
        derive_title(&serde_json::from_value::<Vec<Block>>(blocks).unwrap())
    }

    #[test]
    fn title_from_first_text_line_without_markdown() {
        let blocks = json!([{"type": "screenshot", "blobId": "x"}, {"type": "text", "text": "\n\n## The **Save** button [fails](http://x)\nmore"}]);
        assert_eq!(title_of(&blocks), "The Save button fails");
    }

    #[test]
    fn underscores_inside_words_stay() {
        let blocks = json!([{"type": "text", "text": "`my_var` is _undefined_ in __init__"}]);
        assert_eq!(title_of(&blocks), "my_var is undefined in init");
    }

    #[test]
    fn reading_only_the_start_of_a_line_gives_the_same_title() {
        let lines = [
            "A **long** line with [a link](http://example.com/x) and `code`, ".repeat(6),
            format!("{}{}", "x".repeat(79), "   y ".repeat(40)),
            format!("{} [{}](u) tail", "w ".repeat(39), "label with  spaces ".repeat(4)),
            format!("{}_{}", "a".repeat(80), "b".repeat(10)),
            "é ".repeat(120),
        ];
        for line in lines {
            let whole = cut(strip_markdown(&line, usize::MAX), TITLE_MAX_CHARS);
            assert_eq!(cut(strip_markdown(&line, TITLE_MAX_CHARS), TITLE_MAX_CHARS), whole, "{line}");
        }
    }

    #[test]
    fn list_quote_and_number_markers_are_not_part_of_the_title() {
        for (line, title) in [
            ("12. Checkout fails. Again.", "Checkout fails. Again."),
            ("> - [x] 3. Done", "Done"),
            ("1.5. Version", "1.5. Version"),
            ("2024 was fine. Now it fails", "2024 was fine. Now it fails"),
            ("7.", "7."),
            ("* _Cart_   is\tempty ", "Cart is empty"),
            ("See [the  docs](http://x) and ![a picture](p.png)", "See the docs and a picture"),
        ] {
            assert_eq!(title_of(&json!([{"type": "text", "text": line}])), title, "{line:?}");
        }
    }

    #[test]
    fn title_is_cut_to_80_characters() {
        let blocks = json!([{"type": "text", "text": "é".repeat(200)}]);
        assert_eq!(title_of(&blocks).chars().count(), 80);
    }

    #[test]
    fn title_falls_back_to_block_type() {
        assert_eq!(title_of(&json!([{"type": "screenshot"}])), "Screenshot");
        assert_eq!(title_of(&json!([{"type": "audio"}])), "Voice note");
        assert_eq!(title_of(&json!([{"type": "pinpoint", "selector": "#buy"}])), "Pinpoint on #buy");
        assert_eq!(title_of(&json!([{"type": "file", "name": "log.txt"}])), "File log.txt");
        assert_eq!(
            title_of(
                &json!([{"type": "pinpoint", "selector": "#buy", "target": {"css": "#buy", "text": " Pay\n now"}}])
            ),
            "Pinpoint on “Pay”"
        );
        assert_eq!(
            title_of(
                &json!([{"type": "pinpoint", "selector": "#x", "target": {"css": "#x", "text": "", "accessibleName": "Close"}}])
            ),
            "Pinpoint on “Close”"
        );
    }

    #[test]
    fn title_comes_from_the_reporters_words_before_the_block_type() {
        let pin = json!({"type": "pinpoint", "selector": "#buy", "target": {"css": "#buy", "text": "Pay"}});
        let shot = json!({"type": "screenshot", "blobId": "x"});
        let commented = json!({"type": "pinpoint", "selector": "#buy", "comment": "\n**Make** it green\nplease"});
        assert_eq!(title_of(&json!([shot, pin, commented])), "Make it green");
        let quote = json!({"type": "quote", "text": "Free shipping", "selector": ".promo", "comment": "Not true"});
        assert_eq!(title_of(&json!([quote])), "Not true");
        let voice = json!({"type": "audio", "blobId": "x", "transcript": "The menu jumps"});
        assert_eq!(title_of(&json!([shot, voice])), "The menu jumps");
        let file = json!({"type": "file", "blobId": "x", "name": "a.har", "description": "HAR of the failure"});
        assert_eq!(title_of(&json!([file])), "HAR of the failure");
        // A text block still comes first, wherever it is.
        let text = json!({"type": "text", "text": "Checkout is broken"});
        assert_eq!(title_of(&json!([quote, text])), "Checkout is broken");
    }
}
