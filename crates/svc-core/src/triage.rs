//! Triage of reports: labels and the choice of reports a change applies to.
//!
//! A label is free text of its project: 1 to 50 characters once trimmed, its case kept as written.
//! Two labels that differ only in case are the same label ([`key`] compares them): a report holds
//! it once, the `label` filter finds either spelling, and the project's label list counts them as
//! one. A label keeps the spelling it first had in its project (the store applies that when it
//! writes one), so `Bug` added to a project that already uses `bug` is stored as `bug`.

use crate::Invalid;

/// Most characters in a label (after trimming).
pub const MAX_LABEL_CHARS: usize = 50;
/// Most labels on one report.
pub const MAX_LABELS_PER_REPORT: usize = 20;
/// Most reports one triage change applies to.
pub const MAX_REPORTS_PER_CHANGE: usize = 500;

/// How labels are compared: the trimmed text in lower case (Unicode, not only ASCII).
pub fn key(label: &str) -> String {
    label.trim().to_lowercase()
}

/// A valid label: trimmed, 1 to [`MAX_LABEL_CHARS`] characters, no control characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Label(String);

impl Label {
    pub fn parse(text: &str) -> Result<Label, Invalid> {
        let text = text.trim();
        if text.is_empty() {
            return Err(Invalid::new("label must not be empty"));
        }
        if text.chars().count() > MAX_LABEL_CHARS {
            return Err(Invalid::new(format!("label {text:?} is longer than {MAX_LABEL_CHARS} characters")));
        }
        if text.chars().any(char::is_control) {
            return Err(Invalid::new(format!("label {text:?} holds a control character")));
        }
        Ok(Label(text.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// See [`key`].
    pub fn key(&self) -> String {
        key(&self.0)
    }
}

/// The whole set of a report's labels, as a PATCH replaces it: each a [`Label`], at most
/// [`MAX_LABELS_PER_REPORT`]. A label given twice (in any case) counts once, as first written.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LabelSet(Vec<Label>);

impl LabelSet {
    pub fn parse(texts: &[String]) -> Result<LabelSet, Invalid> {
        let mut labels: Vec<Label> = Vec::with_capacity(texts.len().min(MAX_LABELS_PER_REPORT));
        for text in texts {
            let label = Label::parse(text).map_err(|error| Invalid::new(format!("labels: {error}")))?;
            if !labels.iter().any(|kept| kept.key() == label.key()) {
                labels.push(label);
            }
        }
        if labels.len() > MAX_LABELS_PER_REPORT {
            return Err(Invalid::new(format!("labels: at most {MAX_LABELS_PER_REPORT} per report")));
        }
        Ok(LabelSet(labels))
    }

    pub fn labels(&self) -> &[Label] {
        &self.0
    }
}

/// A change to the labels of one or more reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LabelChange {
    /// Each report ends with exactly these labels.
    Replace(LabelSet),
    /// Each report gains these labels (those it has already stay as they are).
    Add(Vec<Label>),
    /// Each report loses these labels (those it does not have are ignored).
    Remove(Vec<Label>),
}

impl LabelChange {
    /// The labels this change may write to a report (the store looks up their project spelling).
    pub fn written(&self) -> &[Label] {
        match self {
            LabelChange::Replace(set) => set.labels(),
            LabelChange::Add(labels) => labels,
            LabelChange::Remove(_) => &[],
        }
    }

    /// The labels a report holding `current` ends with. A label the report already has keeps its
    /// spelling; a new one takes `project_spelling(key)` when the project uses it already, else its
    /// own. The result may hold more than [`MAX_LABELS_PER_REPORT`] labels: the caller refuses that.
    pub fn apply(&self, current: &[String], project_spelling: impl Fn(&str) -> Option<String>) -> Vec<String> {
        let spelled = |label: &Label| {
            let wanted = label.key();
            current
                .iter()
                .find(|have| key(have) == wanted)
                .cloned()
                .or_else(|| project_spelling(&wanted))
                .unwrap_or_else(|| label.as_str().to_string())
        };
        match self {
            LabelChange::Replace(set) => set.labels().iter().map(spelled).collect(),
            LabelChange::Add(labels) => {
                let mut out = current.to_vec();
                for label in labels {
                    if !out.iter().any(|have| key(have) == label.key()) {
                        out.push(spelled(label));
                    }
                }
                out
            }
            LabelChange::Remove(labels) => {
                let gone: Vec<String> = labels.iter().map(Label::key).collect();
                current.iter().filter(|have| !gone.contains(&key(have))).cloned().collect()
            }
        }
    }
}

/// The reports a triage change applies to: 1 to [`MAX_REPORTS_PER_CHANGE`] report ids, each named
/// once (in the order first given).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportIds(Vec<String>);

impl ReportIds {
    pub fn parse(ids: &[String]) -> Result<ReportIds, Invalid> {
        if ids.is_empty() {
            return Err(Invalid::new("reportIds must name at least one report"));
        }
        let mut unique: Vec<String> = Vec::with_capacity(ids.len());
        for id in ids {
            if !crate::ids::is_object_id(id) {
                return Err(Invalid::new(format!("reportIds: {id:?} is not a report id")));
            }
            if !unique.contains(id) {
                unique.push(id.clone());
            }
        }
        if unique.len() > MAX_REPORTS_PER_CHANGE {
            return Err(Invalid::new(format!("reportIds: at most {MAX_REPORTS_PER_CHANGE} reports at a time")));
        }
        Ok(ReportIds(unique))
    }

    /// One report, by an id already known to be a report's.
    pub fn one(id: &str) -> ReportIds {
        ReportIds(vec![id.to_string()])
    }

    pub fn as_slice(&self) -> &[String] {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(labels: &[&str]) -> Vec<String> {
        labels.iter().map(|l| l.to_string()).collect()
    }

    #[test]
    fn labels_are_trimmed_and_bounded() {
        assert_eq!(Label::parse("  Needs design ").unwrap().as_str(), "Needs design");
        assert_eq!(Label::parse(&"é".repeat(50)).unwrap().as_str().chars().count(), 50);
        assert!(Label::parse(&"é".repeat(51)).unwrap_err().0.contains("longer than 50"));
        assert!(Label::parse("   ").is_err());
        assert!(Label::parse("a\nb").is_err());
    }

    #[test]
    fn a_set_keeps_the_first_spelling_of_each_label_and_holds_at_most_twenty() {
        let set = LabelSet::parse(&texts(&["Bug", "ui", "BUG", " bug "])).unwrap();
        assert_eq!(set.labels().iter().map(Label::as_str).collect::<Vec<_>>(), vec!["Bug", "ui"]);
        let many: Vec<String> = (0..21).map(|n| format!("l{n}")).collect();
        assert!(LabelSet::parse(&many).unwrap_err().0.contains("at most 20"));
        // Twenty-one texts that are twenty labels are fine.
        let mut twenty: Vec<String> = (0..20).map(|n| format!("l{n}")).collect();
        twenty.push("L3".into());
        assert_eq!(LabelSet::parse(&twenty).unwrap().labels().len(), 20);
        assert!(LabelSet::parse(&texts(&["ok", ""])).unwrap_err().0.starts_with("labels: "));
    }

    #[test]
    fn keys_fold_case_beyond_ascii() {
        assert_eq!(key(" ÉTÉ "), "été");
        assert_eq!(Label::parse("Straße").unwrap().key(), "straße");
    }

    #[test]
    fn changes_keep_existing_and_project_spellings() {
        let current = texts(&["bug", "UI"]);
        let project = |key: &str| (key == "later").then(|| "Later".to_string());
        let add = LabelChange::Add(vec![Label::parse("ui").unwrap(), Label::parse("LATER").unwrap()]);
        assert_eq!(add.apply(&current, project), texts(&["bug", "UI", "Later"]));
        let remove = LabelChange::Remove(vec![Label::parse("BUG").unwrap(), Label::parse("absent").unwrap()]);
        assert_eq!(remove.apply(&current, project), texts(&["UI"]));
        let replace = LabelChange::Replace(LabelSet::parse(&texts(&["ui", "new one", "later"])).unwrap());
        assert_eq!(replace.apply(&current, project), texts(&["UI", "new one", "Later"]));
        assert!(remove.written().is_empty());
    }

    #[test]
    fn report_ids_are_checked_and_deduplicated() {
        let a = crate::ids::new_id();
        let b = crate::ids::new_id();
        let ids = ReportIds::parse(&[a.clone(), b.clone(), a.clone()]).unwrap();
        assert_eq!(ids.as_slice(), &[a.clone(), b]);
        assert!(ReportIds::parse(&[]).is_err());
        assert!(ReportIds::parse(&["abc".to_string()]).unwrap_err().0.contains("not a report id"));
        let too_many: Vec<String> = (0..501).map(|_| crate::ids::new_id()).collect();
        assert!(ReportIds::parse(&too_many).is_err());
    }
}
