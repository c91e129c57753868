//! Channel routing (decisions §5) exactly as the widget does it (`widget/src/routing.ts`), so the
//! dashboard's tester shows the choice a browser makes, and why: score = `baseWeight` + the weights
//! of the applying matchers + numeric hint weights; the highest positive score wins, ties to the
//! older channel; no positive score means the project's default channel. A `max` hint (or
//! `setChannel` without a weight) wins over any score; a `suggest` hint is used only when nothing
//! scores above 0.
//!
//! Values are compared as the widget compares them: a condition's value and an attribute are turned
//! into text the way JavaScript's `String(...)` does (`5` is `"5"`, an object attribute is its JSON).
//!
//! `regex` conditions differ from a browser's `new RegExp(value).test(actual)` in a few ways, all on
//! patterns or texts few matchers have: the Rust `regex` crate has no lookaround (`(?=`, `(?!`,
//! `(?<=`, `(?<!`) and no backreferences (`\1`), so such a pattern cannot be run here (the check
//! says so and counts the condition as not holding, while a browser runs it); `\d`, `\w`, `\b` are
//! Unicode-aware here and ASCII-only in JavaScript (they differ only on non-ASCII text); and a few
//! JavaScript-only escapes (`\cX`, octal escapes) are refused here.

use crate::Invalid;
use crate::model::{Channel, Hint, HintWeight};
use crate::project::glob_match;
use serde_json::{Map, Value};

/// What conditions are evaluated against: the page, the user and the widget's attributes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RouteEnv {
    /// `location.href`
    pub url: String,
    /// `location.pathname`
    pub path: String,
    /// `location.host` (with the port when it is not the scheme's default)
    pub host: String,
    pub user_id: Option<String>,
    pub locale: Option<String>,
    /// Set by `attributes`, `setAttribute(s)`; read by `attr.<name>` conditions.
    pub attributes: Map<String, Value>,
}

impl RouteEnv {
    /// The environment of a page at `url`, with `url`, `path` and `host` as a browser's `location`
    /// gives them (the URL normalized: `HTTPS://Shop.Test` is `https://shop.test/`).
    pub fn for_url(url: &str) -> Result<Self, Invalid> {
        let parsed = url::Url::parse(url.trim())
            .map_err(|_| Invalid::new("url must be a full address such as https://app.example.com/checkout"))?;
        let host = match (parsed.host_str(), parsed.port()) {
            (Some(host), Some(port)) => format!("{host}:{port}"),
            (Some(host), None) => host.to_string(),
            (None, _) => String::new(),
        };
        Ok(RouteEnv { url: parsed.as_str().to_string(), path: parsed.path().to_string(), host, ..RouteEnv::default() })
    }
}

/// `setChannel(key, {weight})`: weighs like a hint (no weight is `max`) until `clearChannel()`.
#[derive(Debug, Clone, PartialEq)]
pub struct Override {
    pub key: String,
    pub weight: HintWeight,
}

/// How the channel was chosen (the widget's `context.channelSource`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    SetChannel,
    Hint,
    Rules,
    Default,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::SetChannel => "setChannel",
            Source::Hint => "hint",
            Source::Rules => "rules",
            Source::Default => "default",
        }
    }
}

/// The chosen channel (`None` when there is none: no channel scores and the default is not among
/// the channels) and how it was chosen.
#[derive(Debug, Clone, PartialEq)]
pub struct Route {
    pub key: Option<String>,
    pub source: Source,
}

/// One condition, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct ConditionCheck {
    pub field: String,
    pub op: String,
    /// The condition's value as text (`in` lists joined with ", "; empty for `exists`).
    pub value: String,
    /// What the field held (`None`: not set).
    pub actual: Option<String>,
    pub holds: bool,
    /// Why the condition could not be evaluated as a browser would (a regex this side cannot run).
    pub problem: Option<String>,
}

/// One matcher, checked: it applies when every condition holds (a matcher without conditions
/// always applies).
#[derive(Debug, Clone, PartialEq)]
pub struct MatcherCheck {
    pub weight: f64,
    pub note: String,
    pub applies: bool,
    pub conditions: Vec<ConditionCheck>,
}

/// A channel's score and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct ChannelScore {
    pub key: String,
    pub base_weight: f64,
    pub matchers: Vec<MatcherCheck>,
    /// The sum of the numeric hint (and `setChannel`) weights for this channel.
    pub hint_weight: f64,
    pub score: f64,
}

/// A hint or the `setChannel` override, and whether it took part.
#[derive(Debug, Clone, PartialEq)]
pub struct WeightUse {
    pub channel_key: String,
    pub weight: HintWeight,
    pub user_id: Option<String>,
    /// `SetChannel` or `Hint`.
    pub source: Source,
    /// Why it was left out (another user's hint, a channel the widget does not know).
    pub ignored: Option<&'static str>,
}

/// The choice and everything that led to it.
#[derive(Debug, Clone, PartialEq)]
pub struct Explanation {
    pub route: Route,
    /// Every channel's score, in the order given (oldest first).
    pub scores: Vec<ChannelScore>,
    /// The override first, then the hints, in the order given.
    pub weights: Vec<WeightUse>,
    /// One or two sentences saying why this channel.
    pub reason: String,
}

/// Picks the channel as the widget does. `channels` are the widget's: the project's non-archived
/// channels, oldest first. Hints for other users and hints or an override naming a channel not in
/// `channels` are ignored.
pub fn route(
    channels: &[Channel],
    env: &RouteEnv,
    hints: &[Hint],
    override_: Option<&Override>,
    default_key: Option<&str>,
) -> Route {
    explain(channels, env, hints, override_, default_key).route
}

/// [`route`], with each channel's score, each condition's outcome and the reason.
pub fn explain(
    channels: &[Channel],
    env: &RouteEnv,
    hints: &[Hint],
    override_: Option<&Override>,
    default_key: Option<&str>,
) -> Explanation {
    let known = |key: &str| channels.iter().any(|c| c.key == key);
    let unknown = "no active channel has this key";
    let mut weights = Vec::new();
    if let Some(o) = override_ {
        weights.push(WeightUse {
            channel_key: o.key.clone(),
            weight: o.weight.clone(),
            user_id: None,
            source: Source::SetChannel,
            ignored: (!known(&o.key)).then_some(unknown),
        });
    }
    for hint in hints {
        let other_user = hint.user_id.as_deref().is_some_and(|u| !u.is_empty() && Some(u) != env.user_id.as_deref());
        let ignored = if other_user {
            Some("for another user")
        } else if !known(&hint.channel_key) {
            Some(unknown)
        } else {
            None
        };
        weights.push(WeightUse {
            channel_key: hint.channel_key.clone(),
            weight: hint.weight.clone(),
            user_id: hint.user_id.clone(),
            source: Source::Hint,
            ignored,
        });
    }
    let active = || weights.iter().filter(|w| w.ignored.is_none());

    let mut numeric: Vec<(String, f64)> = Vec::new();
    for w in active() {
        if let HintWeight::Number(n) = w.weight
            && n.is_finite()
        {
            match numeric.iter_mut().find(|(key, _)| *key == w.channel_key) {
                Some((_, sum)) => *sum += n,
                None => numeric.push((w.channel_key.clone(), n)),
            }
        }
    }
    let numeric_for = |key: &str| numeric.iter().find(|(k, _)| k == key).map(|(_, n)| *n);
    let scores: Vec<ChannelScore> =
        channels.iter().map(|channel| score_channel(channel, env, numeric_for(&channel.key).unwrap_or(0.0))).collect();

    let (route, reason) = decide(&scores, active().collect(), &numeric_for, default_key, &known);
    Explanation { route, scores, weights, reason }
}

fn decide(
    scores: &[ChannelScore],
    active: Vec<&WeightUse>,
    numeric_for: &dyn Fn(&str) -> Option<f64>,
    default_key: Option<&str>,
    known: &dyn Fn(&str) -> bool,
) -> (Route, String) {
    if let Some(max) = active.iter().find(|w| w.weight == HintWeight::Max) {
        let reason = match max.source {
            Source::SetChannel => {
                format!("setChannel(\"{}\") without a weight (max) wins over every score.", max.channel_key)
            }
            _ => format!("A hint with weight max for {} wins over every score.", max.channel_key),
        };
        return (Route { key: Some(max.channel_key.clone()), source: max.source }, reason);
    }
    let mut best: Option<usize> = None;
    for (i, s) in scores.iter().enumerate() {
        if s.score > 0.0 && best.is_none_or(|b| s.score > scores[b].score) {
            best = Some(i);
        }
    }
    if let Some(best) = best {
        let winner = &scores[best];
        let key = winner.key.clone();
        let by_set_channel = active.iter().any(|w| {
            w.channel_key == key && w.source == Source::SetChannel && matches!(w.weight, HintWeight::Number(_))
        });
        let source = if by_set_channel {
            Source::SetChannel
        } else if numeric_for(&key).is_some() {
            Source::Hint
        } else {
            Source::Rules
        };
        let mut reason = format!("{key} has the highest positive score, {}.", format_number(winner.score));
        let tied: Vec<&str> =
            scores.iter().skip(best + 1).filter(|s| s.score == winner.score).map(|s| s.key.as_str()).collect();
        if !tied.is_empty() {
            reason.push_str(&format!(" {} scores the same; the older channel wins.", tied.join(", ")));
        }
        return (Route { key: Some(key), source }, reason);
    }
    if let Some(suggest) = active.iter().find(|w| w.weight == HintWeight::Suggest) {
        let by = if suggest.source == Source::SetChannel { "setChannel" } else { "a hint" };
        let reason =
            format!("Nothing scores above 0, so the suggestion ({by}, weight suggest) picks {}.", suggest.channel_key);
        return (Route { key: Some(suggest.channel_key.clone()), source: suggest.source }, reason);
    }
    match default_key {
        Some(key) if known(key) => (
            Route { key: Some(key.to_string()), source: Source::Default },
            format!("Nothing scores above 0, so the report goes to the default channel, {key}."),
        ),
        _ => (
            Route { key: None, source: Source::Default },
            format!(
                "Nothing scores above 0 and the default channel{} is not an active channel, so no channel is chosen.",
                default_key.map(|k| format!(" ({k})")).unwrap_or_default()
            ),
        ),
    }
}

fn score_channel(channel: &Channel, env: &RouteEnv, hint_weight: f64) -> ChannelScore {
    let base_weight = if channel.base_weight.is_finite() { channel.base_weight } else { 0.0 };
    let mut score = base_weight;
    let mut matchers = Vec::new();
    for matcher in channel.matchers.as_array().map(Vec::as_slice).unwrap_or_default() {
        let conditions: Vec<ConditionCheck> = matcher
            .get("conditions")
            .and_then(Value::as_array)
            .map(|list| list.iter().map(|c| check_condition(c, env)).collect())
            .unwrap_or_default();
        let applies = conditions.iter().all(|c| c.holds);
        let weight = matcher.get("weight").and_then(Value::as_f64).filter(|w| w.is_finite()).unwrap_or(0.0);
        if applies {
            score += weight;
        }
        let note = matcher.get("note").and_then(Value::as_str).unwrap_or("").to_string();
        matchers.push(MatcherCheck { weight, note, applies, conditions });
    }
    ChannelScore { key: channel.key.clone(), base_weight, matchers, hint_weight, score: score + hint_weight }
}

/// Whether one condition `{field, op, value}` holds in `env`.
pub fn condition_holds(condition: &Value, env: &RouteEnv) -> bool {
    check_condition(condition, env).holds
}

/// One condition, evaluated and explained.
pub fn check_condition(condition: &Value, env: &RouteEnv) -> ConditionCheck {
    let field = condition.get("field").and_then(Value::as_str).unwrap_or("");
    let op = condition.get("op").and_then(Value::as_str).unwrap_or("");
    let value = condition.get("value").filter(|v| !v.is_null());
    let actual = field_value(field, env);
    let shown = match (op, value) {
        ("exists", _) | (_, None) => String::new(),
        ("in", Some(Value::Array(items))) => items.iter().map(js_string).collect::<Vec<_>>().join(", "),
        (_, Some(v)) => js_string(v),
    };
    let mut problem = None;
    let holds = match op {
        "exists" => actual.as_deref().is_some_and(|a| !a.is_empty()),
        "neq" => actual != value.map(js_string),
        _ => match actual.as_deref() {
            None => false,
            Some(actual) => {
                let v = value.map(js_string).unwrap_or_default();
                match op {
                    "in" => match condition.get("value") {
                        Some(Value::Array(items)) => items.iter().any(|item| js_string(item) == actual),
                        // `String(undefined)`: a condition without a value compares with "undefined".
                        None => actual == "undefined",
                        Some(other) => actual == js_string(other),
                    },
                    "eq" => actual == v,
                    "contains" => actual.contains(&v),
                    "prefix" => actual.starts_with(&v),
                    "suffix" => actual.ends_with(&v),
                    "glob" => glob_match(&v, actual),
                    "regex" => match regex::RegexBuilder::new(&v).size_limit(1 << 20).build() {
                        Ok(pattern) => pattern.is_match(actual),
                        Err(error) => {
                            problem = Some(regex_problem(&error));
                            false
                        }
                    },
                    _ => false,
                }
            }
        },
    };
    ConditionCheck { field: field.to_string(), op: op.to_string(), value: shown, actual, holds, problem }
}

fn regex_problem(error: &regex::Error) -> String {
    let first_line = error.to_string().lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim().to_string();
    format!(
        "this pattern cannot be run here ({first_line}); a browser counts it as not holding only when \
         JavaScript cannot compile it either (lookaround and backreferences work there, not here)"
    )
}

fn field_value(field: &str, env: &RouteEnv) -> Option<String> {
    if let Some(name) = field.strip_prefix("attr.") {
        return match env.attributes.get(name) {
            None | Some(Value::Null) => None,
            Some(object @ (Value::Object(_) | Value::Array(_))) => Some(object.to_string()),
            Some(other) => Some(js_string(other)),
        };
    }
    match field {
        "url" => Some(env.url.clone()),
        "path" => Some(env.path.clone()),
        "host" => Some(env.host.clone()),
        "userId" => env.user_id.clone().filter(|u| !u.is_empty()),
        "locale" => env.locale.clone().filter(|l| !l.is_empty()),
        _ => None,
    }
}

/// A JSON value as JavaScript's `String(value)` writes it.
pub fn js_string(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.as_f64().map(format_number).unwrap_or_else(|| n.to_string()),
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .iter()
            .map(|item| if item.is_null() { String::new() } else { js_string(item) })
            .collect::<Vec<_>>()
            .join(","),
        Value::Object(_) => "[object Object]".into(),
    }
}

/// A number as JavaScript writes it: `5`, `2.5`, `-0.125`, `1e-7`, `1e+21`.
pub fn format_number(n: f64) -> String {
    if n == 0.0 {
        return "0".into();
    }
    let magnitude = n.abs();
    if !(1e-6..1e21).contains(&magnitude) {
        let text = format!("{n:e}");
        return match text.split_once('e') {
            Some((mantissa, exponent)) if !exponent.starts_with('-') => format!("{mantissa}e+{exponent}"),
            _ => text,
        };
    }
    if n.fract() == 0.0 { format!("{}", n as i64) } else { format!("{n}") }
}

#[cfg(test)]
mod tests {
    //! The widget's own cases (`widget/test/routing.test.ts`), one for one, plus the explanation.
    use super::*;
    use serde_json::json;

    fn env() -> RouteEnv {
        RouteEnv {
            url: "https://shop.test/checkout/pay?x=1".into(),
            path: "/checkout/pay".into(),
            host: "shop.test".into(),
            user_id: Some("u1".into()),
            locale: Some("en".into()),
            attributes: json!({"plan": "pro", "seats": 5}).as_object().unwrap().clone(),
        }
    }

    fn with_path(path: &str) -> RouteEnv {
        RouteEnv { path: path.into(), ..env() }
    }

    fn channel(key: &str, base_weight: f64, matchers: Value) -> Channel {
        Channel {
            id: String::new(),
            project_id: String::new(),
            key: key.into(),
            name: key.into(),
            color: "#000000".into(),
            mascot: "fox".into(),
            base_weight,
            matchers,
            archived: false,
            created_at: 0,
            updated_at: 0,
        }
    }

    fn channels() -> Vec<Channel> {
        vec![
            channel("bug", 0.0, json!([])),
            channel("idea", 0.0, json!([])),
            channel(
                "checkout",
                0.0,
                json!([{"conditions": [{"field": "path", "op": "prefix", "value": "/checkout"}], "weight": 5, "note": ""}]),
            ),
        ]
    }

    fn hint(channel_key: &str, weight: HintWeight, user_id: Option<&str>) -> Hint {
        Hint {
            id: String::new(),
            project_id: String::new(),
            channel_key: channel_key.into(),
            weight,
            user_id: user_id.map(String::from),
            created_at: 0,
            expires_at: 0,
        }
    }

    fn r(key: Option<&str>, source: Source) -> Route {
        Route { key: key.map(String::from), source }
    }

    #[test]
    fn conditions() {
        let e = env();
        let cases: &[(&str, &str, Option<&str>, bool)] = &[
            ("url", "contains", Some("checkout"), true),
            ("path", "eq", Some("/checkout/pay"), true),
            ("path", "neq", Some("/checkout/pay"), false),
            ("host", "suffix", Some(".test"), true),
            ("host", "prefix", Some("shop"), true),
            ("url", "glob", Some("https://*.test/checkout/*"), true),
            ("url", "glob", Some("https://*.test/cart/*"), false),
            ("path", "regex", Some("^/check(out)?/"), true),
            ("path", "regex", Some("(["), false),
            ("userId", "eq", Some("u1"), true),
            ("locale", "eq", Some("ru"), false),
            ("attr.plan", "eq", Some("pro"), true),
            ("attr.seats", "eq", Some("5"), true),
            ("attr.plan", "exists", None, true),
            ("attr.missing", "exists", None, false),
            ("attr.missing", "neq", Some("x"), true),
            ("attr.missing", "eq", Some("x"), false),
            ("attr.plan", "unknown-op", Some("pro"), false),
        ];
        for (field, op, value, expected) in cases {
            let mut condition = json!({"field": field, "op": op});
            if let Some(value) = value {
                condition["value"] = json!(value);
            }
            assert_eq!(condition_holds(&condition, &e), *expected, "{field} {op} {value:?}");
        }
    }

    #[test]
    fn in_takes_a_list() {
        let e = env();
        assert!(condition_holds(&json!({"field": "attr.plan", "op": "in", "value": ["free", "pro"]}), &e));
        assert!(!condition_holds(&json!({"field": "attr.plan", "op": "in", "value": ["free"]}), &e));
    }

    #[test]
    fn falls_back_to_the_default_channel_when_nothing_scores_above_0() {
        assert_eq!(route(&channels(), &with_path("/home"), &[], None, Some("bug")), r(Some("bug"), Source::Default));
    }

    #[test]
    fn picks_the_highest_positive_score_from_matchers() {
        assert_eq!(route(&channels(), &env(), &[], None, Some("bug")), r(Some("checkout"), Source::Rules));
    }

    #[test]
    fn needs_every_condition_of_a_matcher() {
        let mut list = channels();
        list[2].matchers[0]["conditions"]
            .as_array_mut()
            .unwrap()
            .push(json!({"field": "attr.plan", "op": "eq", "value": "free"}));
        assert_eq!(route(&list, &env(), &[], None, Some("bug")).key.as_deref(), Some("bug"));
    }

    #[test]
    fn adds_base_weight_and_breaks_ties_to_the_older_channel() {
        let mut list = vec![channel("bug", 1.0, json!([])), channel("idea", 1.0, json!([]))];
        assert_eq!(route(&list, &env(), &[], None, Some("idea")).key.as_deref(), Some("bug"));
        list[1].base_weight = 2.0;
        assert_eq!(route(&list, &env(), &[], None, Some("bug")).key.as_deref(), Some("idea"));
    }

    #[test]
    fn never_picks_a_negative_or_zero_score() {
        let list = vec![channel("bug", -3.0, json!([])), channel("idea", 0.0, json!([]))];
        assert_eq!(route(&list, &env(), &[], None, Some("idea")), r(Some("idea"), Source::Default));
    }

    #[test]
    fn a_max_hint_wins_over_any_score_suggest_only_when_nothing_scores() {
        let max = [hint("idea", HintWeight::Max, None)];
        assert_eq!(route(&channels(), &env(), &max, None, Some("bug")), r(Some("idea"), Source::Hint));
        let suggest = [hint("idea", HintWeight::Suggest, None)];
        assert_eq!(route(&channels(), &env(), &suggest, None, Some("bug")).key.as_deref(), Some("checkout"));
        assert_eq!(route(&channels(), &with_path("/"), &suggest, None, Some("bug")), r(Some("idea"), Source::Hint));
    }

    #[test]
    fn numeric_hints_add_to_the_score() {
        let six = [hint("idea", HintWeight::Number(6.0), None)];
        assert_eq!(route(&channels(), &env(), &six, None, Some("bug")), r(Some("idea"), Source::Hint));
        let four = [hint("idea", HintWeight::Number(4.0), None)];
        assert_eq!(route(&channels(), &env(), &four, None, Some("bug")).key.as_deref(), Some("checkout"));
    }

    #[test]
    fn hints_for_another_user_are_ignored() {
        let theirs = [hint("idea", HintWeight::Max, Some("u2"))];
        assert_eq!(route(&channels(), &env(), &theirs, None, Some("bug")).key.as_deref(), Some("checkout"));
        let mine = [hint("idea", HintWeight::Max, Some("u1"))];
        assert_eq!(route(&channels(), &env(), &mine, None, Some("bug")).key.as_deref(), Some("idea"));
    }

    #[test]
    fn set_channel_overrides_like_a_hint_and_beats_a_max_hint() {
        let hints = [hint("idea", HintWeight::Max, None)];
        let over = |key: &str, weight| Override { key: key.into(), weight };
        assert_eq!(
            route(&channels(), &env(), &hints, Some(&over("bug", HintWeight::Max)), Some("idea")),
            r(Some("bug"), Source::SetChannel)
        );
        assert_eq!(
            route(&channels(), &env(), &[], Some(&over("idea", HintWeight::Number(10.0))), Some("bug")),
            r(Some("idea"), Source::SetChannel)
        );
        assert_eq!(
            route(&channels(), &env(), &[], Some(&over("idea", HintWeight::Suggest)), Some("bug")).key.as_deref(),
            Some("checkout")
        );
        assert_eq!(
            route(&channels(), &with_path("/"), &[], Some(&over("idea", HintWeight::Suggest)), Some("bug")),
            r(Some("idea"), Source::SetChannel)
        );
    }

    #[test]
    fn unknown_channels_are_ignored_and_no_channel_at_all_is_none() {
        let gone = [hint("gone", HintWeight::Max, None)];
        let nope = Override { key: "nope".into(), weight: HintWeight::Max };
        assert_eq!(route(&channels(), &with_path("/"), &gone, Some(&nope), Some("bug")).key.as_deref(), Some("bug"));
        assert_eq!(route(&[], &env(), &[], None, Some("bug")), r(None, Source::Default));
        assert_eq!(route(&channels(), &with_path("/"), &[], None, Some("archived")), r(None, Source::Default));
    }

    #[test]
    fn the_explanation_says_which_conditions_held_and_why_the_channel_won() {
        let mut list = channels();
        list.push(channel(
            "pro",
            1.0,
            json!([{"conditions": [{"field": "attr.plan", "op": "in", "value": ["pro", "team"]},
                                   {"field": "locale", "op": "eq", "value": "ru"}], "weight": 50, "note": "Russian pros"}]),
        ));
        let hints = [hint("idea", HintWeight::Number(2.0), None), hint("bug", HintWeight::Max, Some("u9"))];
        let explained = explain(&list, &env(), &hints, None, Some("bug"));
        assert_eq!(explained.route, r(Some("checkout"), Source::Rules));
        assert_eq!(explained.reason, "checkout has the highest positive score, 5.");
        let scores: Vec<(&str, f64)> = explained.scores.iter().map(|s| (s.key.as_str(), s.score)).collect();
        assert_eq!(scores, [("bug", 0.0), ("idea", 2.0), ("checkout", 5.0), ("pro", 1.0)]);
        let pro = &explained.scores[3].matchers[0];
        assert!(!pro.applies);
        assert_eq!(pro.note, "Russian pros");
        assert_eq!((pro.conditions[0].holds, pro.conditions[0].value.as_str()), (true, "pro, team"));
        assert_eq!((pro.conditions[1].holds, pro.conditions[1].actual.as_deref()), (false, Some("en")));
        assert_eq!(explained.weights[1].ignored, Some("for another user"));

        let tie = vec![channel("bug", 1.0, json!([])), channel("idea", 1.0, json!([]))];
        let explained = explain(&tie, &env(), &[], None, Some("idea"));
        assert_eq!(
            explained.reason,
            "bug has the highest positive score, 1. idea scores the same; the older channel wins."
        );
        let none = explain(&channels(), &with_path("/"), &[], None, Some("bug"));
        assert_eq!(none.reason, "Nothing scores above 0, so the report goes to the default channel, bug.");
    }

    #[test]
    fn a_matcher_without_conditions_always_applies() {
        let list = vec![channel("bug", 0.0, json!([])), channel("idea", 0.0, json!([{"conditions": [], "weight": 1}]))];
        assert_eq!(route(&list, &env(), &[], None, Some("bug")), r(Some("idea"), Source::Rules));
    }

    #[test]
    fn a_pattern_javascript_can_run_and_this_side_cannot_is_named() {
        let check = check_condition(&json!({"field": "path", "op": "regex", "value": "^/(?!cart)"}), &env());
        assert!(!check.holds);
        assert!(check.problem.unwrap().contains("lookaround"));
        assert!(check_condition(&json!({"field": "path", "op": "regex", "value": "pay$"}), &env()).problem.is_none());
    }

    #[test]
    fn values_are_text_as_javascript_writes_them() {
        assert_eq!(js_string(&json!(5)), "5");
        assert_eq!(js_string(&json!(5.0)), "5");
        assert_eq!(js_string(&json!(2.5)), "2.5");
        assert_eq!(js_string(&json!(true)), "true");
        assert_eq!(js_string(&json!(["a", null, 1])), "a,,1");
        assert_eq!(format_number(1e21), "1e+21");
        assert_eq!(format_number(1e-7), "1e-7");
        assert_eq!(format_number(-0.0), "0");
        let e = RouteEnv { attributes: json!({"tags": ["a", "b"], "on": true}).as_object().unwrap().clone(), ..env() };
        assert!(condition_holds(&json!({"field": "attr.tags", "op": "eq", "value": "[\"a\",\"b\"]"}), &e));
        assert!(condition_holds(&json!({"field": "attr.on", "op": "eq", "value": "true"}), &e));
    }

    /// `widget/test/routing-cases.json`: cases the widget's own tests run through `route` too.
    #[test]
    fn the_cases_shared_with_the_widget() {
        let shared: Value = serde_json::from_str(include_str!("../../../widget/test/routing-cases.json")).unwrap();
        let weight = |w: &Value| HintWeight::from_json(w).expect("a hint weight");
        let text = |v: &Value| v.as_str().map(String::from);
        for case in shared["cases"].as_array().unwrap() {
            let name = case["name"].as_str().unwrap();
            let channels: Vec<Channel> = case["channels"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| {
                    let matchers = c.get("matchers").cloned().unwrap_or(json!([]));
                    channel(c["key"].as_str().unwrap(), c["baseWeight"].as_f64().unwrap(), matchers)
                })
                .collect();
            let e = &case["env"];
            let env = RouteEnv {
                url: text(&e["url"]).unwrap(),
                path: text(&e["path"]).unwrap(),
                host: text(&e["host"]).unwrap(),
                user_id: text(&e["userId"]),
                locale: text(&e["locale"]),
                attributes: e["attributes"].as_object().unwrap().clone(),
            };
            let hints: Vec<Hint> = case["hints"]
                .as_array()
                .unwrap()
                .iter()
                .map(|h| hint(h["channelKey"].as_str().unwrap(), weight(&h["weight"]), h["userId"].as_str()))
                .collect();
            let over = case["override"]
                .as_object()
                .map(|o| Override { key: o["key"].as_str().unwrap().into(), weight: weight(&o["weight"]) });
            let got = route(&channels, &env, &hints, over.as_ref(), case["defaultKey"].as_str());
            let expected = &case["expected"];
            assert_eq!(
                (got.key.as_deref(), got.source.as_str()),
                (expected["key"].as_str(), expected["source"].as_str().unwrap()),
                "{name}"
            );
        }
    }

    #[test]
    fn a_url_gives_the_path_and_host_a_browser_would() {
        let e = RouteEnv::for_url("HTTPS://Shop.Test:8443/checkout/pay?x=1#top").unwrap();
        assert_eq!(e.url, "https://shop.test:8443/checkout/pay?x=1#top");
        assert_eq!(e.path, "/checkout/pay");
        assert_eq!(e.host, "shop.test:8443");
        assert_eq!(RouteEnv::for_url("https://shop.test").unwrap().path, "/");
        assert_eq!(RouteEnv::for_url("https://shop.test:443/").unwrap().host, "shop.test");
        assert!(RouteEnv::for_url("/checkout").is_err());
    }
}
