//! Tool arguments: forgiving about spelling, strict about everything else.
//!
//! Each tool takes the argument names `tools/list` shows (the specification's: `artifact_id`,
//! `report_id`, `agentName`, `channelKey`, ...). Agents guess the other spelling, so each name is
//! also accepted in its other case (`artifactId` for `artifact_id`, `channel_key` for
//! `channelKey`), and a report reference under any of `id`, `report_id` and `reportId`. Any other
//! name is an `isError` result naming it and the closest valid name: an argument that is silently
//! ignored (`list_reports {"channel": "bug"}`) answers a question nobody asked.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use svc_core::markdown::one_line;

use super::definitions;
use super::tools::ToolResult;

/// The names of one report reference: whichever a tool's schema uses, the others are aliases.
const REPORT_REFERENCE: [&str; 3] = ["id", "report_id", "reportId"];

/// `artifact_id` → `artifactId`.
fn camel(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut upper = false;
    for c in name.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// `channelKey` → `channel_key`.
fn snake(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for c in name.chars() {
        if c.is_uppercase() {
            out.push('_');
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Every name accepted for the argument `name` (itself first).
pub fn spellings(name: &str) -> Vec<String> {
    let mut all = vec![name.to_string()];
    let mut add = |n: String| {
        if !all.contains(&n) {
            all.push(n);
        }
    };
    if REPORT_REFERENCE.contains(&name) {
        REPORT_REFERENCE.iter().for_each(|n| add(n.to_string()));
    }
    add(camel(name));
    add(snake(name));
    all
}

/// Edit distance (insertions, deletions, substitutions).
fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (row[j + 1] + 1).min(row[j] + 1).min(diagonal + usize::from(ca != *cb));
            diagonal = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

/// How far a given name is from a valid one: spelling and case aside, a name inside the other
/// (`channel` in `channelKey`) is near, anything else by edit distance.
fn distance(given: &str, valid: &str) -> usize {
    let norm = |s: &str| s.chars().filter(|c| c.is_alphanumeric()).flat_map(char::to_lowercase).collect::<String>();
    let (g, v) = (norm(given), norm(valid));
    if g.is_empty() || v.is_empty() {
        return usize::MAX;
    }
    if g.contains(&v) || v.contains(&g) {
        return g.len().abs_diff(v.len()).div_ceil(2);
    }
    levenshtein(&g, &v)
}

/// The valid name closest to `given` (the first of the nearest, in the schema's order).
pub fn closest<'a>(given: &str, names: &'a [String]) -> Option<&'a str> {
    names
        .iter()
        .map(|name| (spellings(name).iter().map(|s| distance(given, s)).min().unwrap_or(usize::MAX), name))
        .min_by_key(|(d, _)| *d)
        .map(|(_, name)| name.as_str())
}

/// A tool's arguments under their schema names, before they are read as the tool's type.
pub struct Args {
    tool: String,
    given: Map<String, Value>,
}

impl Args {
    /// Reads `given` for `tool`: each name mapped to its schema name; an unknown name, or one
    /// argument given twice under two names with different values, is an `isError` result.
    pub fn parse(tool: &str, given: &Map<String, Value>) -> Result<Args, ToolResult> {
        let names = definitions::argument_names(tool);
        let mut out = Map::new();
        let mut given_as: Map<String, Value> = Map::new();
        for (key, value) in given {
            let Some(name) = names.iter().find(|n| spellings(n).iter().any(|s| s == key)) else {
                let shown = one_line(key, 100);
                let hint = closest(key, &names).map(|c| format!("; did you mean {c}?")).unwrap_or_default();
                return Err(ToolResult::error(format!(
                    "unknown argument {shown:?} for {tool}{hint} ({tool} takes {})",
                    if names.is_empty() { "no arguments".to_string() } else { names.join(", ") }
                )));
            };
            if let Some(earlier) = out.get(name.as_str())
                && earlier != value
            {
                let first = given_as.get(name.as_str()).and_then(Value::as_str).unwrap_or(name);
                return Err(ToolResult::error(format!(
                    "arguments {first} and {key} both give {name} (they are two spellings of it), with different values; give it once"
                )));
            }
            out.insert(name.clone(), value.clone());
            given_as.insert(name.clone(), Value::String(key.clone()));
        }
        Ok(Args { tool: tool.to_string(), given: out })
    }

    /// The arguments as the tool's argument type (see `super::inputs`); a wrong one is an
    /// `isError` result naming it ("argument title is longer than 200 characters").
    pub fn typed<T: DeserializeOwned>(self) -> Result<T, ToolResult> {
        // An argument left out is read at the top, not under its name: name it from the schema.
        let missing =
            definitions::required_arguments(&self.tool).into_iter().find(|name| !self.given.contains_key(name));
        serde_path_to_error::deserialize(Value::Object(self.given)).map_err(|error| {
            let path = error.path().to_string();
            let message = error.into_inner().to_string();
            ToolResult::error(match missing {
                Some(name) if path == "." => format!("argument {name} is required"),
                _ if path == "." => message,
                _ => format!("argument {path} {message}"),
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_name_has_its_other_case_and_report_references_their_three_names() {
        assert_eq!(spellings("artifact_id"), ["artifact_id", "artifactId"]);
        assert_eq!(spellings("channelKey"), ["channelKey", "channel_key"]);
        assert_eq!(spellings("agentName"), ["agentName", "agent_name"]);
        assert_eq!(spellings("status"), ["status"]);
        assert_eq!(spellings("id"), ["id", "report_id", "reportId"]);
        assert_eq!(spellings("report_id"), ["report_id", "id", "reportId"]);
    }

    #[test]
    fn the_closest_name_is_suggested() {
        let names = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let list = names(&["status", "channelKey", "artifactId", "limit"]);
        assert_eq!(closest("channel", &list), Some("channelKey"));
        assert_eq!(closest("stats", &list), Some("status"));
        assert_eq!(closest("artifact", &list), Some("artifactId"));
        assert!(closest("max", &list).is_some());
        let comment = names(&["report_id", "text", "draft", "kind"]);
        assert!(closest("body", &comment).is_some());
        assert_eq!(closest("txt", &comment), Some("text"));
        assert_eq!(closest("reportID", &comment), Some("report_id"));
        assert_eq!(closest("x", &[]), None);
    }
}
