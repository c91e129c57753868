//! A report's reproduction: a Playwright test (TypeScript) that replays the steps the reporter
//! took (`context.steps`) and then asserts the *correct* behaviour where the report's evidence went
//! wrong: the failed request answers under 400, no console error like the captured one, the
//! pinpointed element visible and enabled. While the bug is there it fails at that assertion; once
//! it is fixed it passes. Every value from the report reaches the script as a JSON string literal
//! (never as code), and typed values were never recorded: fields are filled from environment
//! variables with clearly named placeholders.

use std::fmt::Write as _;

use crate::block::{Block, number};
use crate::model::Report;
use crate::steps::{Step, StepKind};

/// A JavaScript string literal of `text` (JSON's escaping is valid JavaScript).
fn literal(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| "\"\"".into())
}

/// `text` on one line, short enough for a comment (reporter text never ends a comment early: line
/// comments end only at a line break, which is removed).
fn comment_text(text: &str) -> String {
    let line: String =
        text.chars().map(|c| if c.is_control() || c == '\u{2028}' || c == '\u{2029}' { ' ' } else { c }).collect();
    let line = crate::report::fold_whitespace(&line);
    if line.chars().count() > 100 { format!("{}…", line.chars().take(99).collect::<String>()) } else { line }
}

/// The origin and the path (with query) of a URL; `None` for anything but http(s).
fn split_url(url: &str) -> Option<(String, String)> {
    let parsed = url::Url::parse(url).ok()?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return None;
    }
    let mut path = parsed.path().to_string();
    // Query values the widget redacted are not the page's: the parameter is left out.
    let kept: Vec<&str> = parsed
        .query()
        .unwrap_or_default()
        .split('&')
        .filter(|pair| !pair.is_empty() && !pair.ends_with("=[redacted]") && !pair.ends_with("=%5Bredacted%5D"))
        .collect();
    if !kept.is_empty() {
        path.push('?');
        path.push_str(&kept.join("&"));
    }
    Some((parsed.origin().ascii_serialization(), path))
}

/// The line that sizes the page's viewport.
fn set_viewport(spec: &mut String, width: &serde_json::Number, height: &serde_json::Number) {
    let _ = writeln!(
        spec,
        "  await page.setViewportSize({{ width: {:.0}, height: {:.0} }});",
        number(width),
        number(height)
    );
}

/// The locator call of a step's element: its selector, else its test ids, else its text.
fn locator(step: &Step) -> Option<String> {
    let target = step.target.as_ref()?;
    let test_ids: Vec<String> = target.test_ids.iter().flatten().map(|id| literal(id)).collect();
    let text = target.accessible_name.as_deref().or(target.text.as_deref()).filter(|t| !t.trim().is_empty());
    Some(format!(
        "find(page, {}, [{}], {})",
        literal(&target.css),
        test_ids.join(", "),
        text.map_or("null".to_string(), literal)
    ))
}

/// What the test asserts at its end, from the report's evidence.
struct Expectations {
    /// (method, the address without its query, as recorded) of failed requests.
    requests: Vec<(String, String)>,
    /// The start of each console error.
    console: Vec<String>,
    /// The pinpointed elements: (css, text or accessible name).
    elements: Vec<(String, Option<String>)>,
}

fn expectations(report: &Report) -> Expectations {
    let context = &report.context;
    let mut requests: Vec<(String, String)> = Vec::new();
    for entry in context.network() {
        let path = entry.url.split('?').next().unwrap_or_default().to_string();
        if !requests.iter().any(|(m, p)| m == &entry.method && p == &path) {
            requests.push((entry.method.clone(), path));
        }
    }
    let console = context
        .console_errors()
        .iter()
        .map(|error| error.lines().next().unwrap_or_default().chars().take(80).collect::<String>())
        .filter(|start| !start.trim().is_empty())
        .collect();
    let elements = report
        .blocks
        .iter()
        .filter_map(|block| match block {
            Block::Pinpoint(pin) => {
                let target = &pin.target;
                let name = target.accessible_name.clone().or(target.text.clone()).filter(|n| !n.trim().is_empty());
                Some((target.css.clone(), name))
            }
            _ => None,
        })
        .collect();
    Expectations { requests, console, elements }
}

/// The reproduction of `report`, a Playwright test file. `None` when the report has nothing to
/// replay from: no http(s) page address.
pub fn playwright_spec(report: &Report) -> Option<String> {
    let context = &report.context;
    let steps = context.steps();
    let first_url = steps
        .iter()
        .find(|s| s.kind == StepKind::Navigate)
        .and_then(|s| s.url.as_deref())
        .or(context.url.as_deref())
        .and_then(split_url)?;
    let (origin, first_path) = first_url;
    let expect = expectations(report);
    let short = crate::ids::short_id(&report.id);
    let mut spec = String::new();
    let _ = writeln!(spec, "// Reproduction of Svc report {short} ({}), generated by Svc from the steps", report.id);
    let _ = writeln!(spec, "// the reporter took before filing it: {}", comment_text(&report.title));
    let _ = writeln!(spec, "//");
    let _ =
        writeln!(spec, "// It replays the steps, then asserts what should have happened where the report's evidence");
    let _ = writeln!(spec, "// went wrong:");
    for (method, path) in &expect.requests {
        let _ = writeln!(spec, "//   - {method} {} answers with a status under 400;", comment_text(path));
    }
    for start in &expect.console {
        let _ = writeln!(spec, "//   - no console error starting {};", comment_text(start));
    }
    for (css, _) in &expect.elements {
        let _ = writeln!(spec, "//   - the element {} is visible and enabled;", comment_text(css));
    }
    if expect.requests.is_empty() && expect.console.is_empty() && expect.elements.is_empty() {
        let _ = writeln!(
            spec,
            "//   - (the report has no failed request, console error or pinpoint: only the steps replay)"
        );
    }
    let _ = writeln!(spec, "// So it fails while the bug is there and passes once it is fixed.");
    let _ = writeln!(spec, "//");
    let _ =
        writeln!(spec, "// You may need to change: BASE_URL (where the app runs: defaults to the reporter's page's");
    let _ = writeln!(spec, "// origin), and the values typed into fields, which Svc never records: each field reads");
    let _ = writeln!(spec, "// SVC_FIELD_<n> from the environment, else a placeholder of the recorded length.");
    let _ = writeln!(spec, "import {{ test, expect, type Page, type Locator }} from '@playwright/test';\n");
    let _ = writeln!(spec, "const BASE_URL = process.env.BASE_URL ?? {};\n", literal(&origin));
    let _ = writeln!(spec, "/** The step's element: its CSS selector, else one of its test ids, else its text. */");
    let _ =
        writeln!(spec, "function find(page: Page, css: string, testIds: string[], text: string | null): Locator {{");
    let _ = writeln!(spec, "  let found = page.locator(css);");
    let _ = writeln!(spec, "  for (const id of testIds) found = found.or(page.getByTestId(id));");
    let _ = writeln!(spec, "  if (text) found = found.or(page.getByText(text, {{ exact: true }}));");
    let _ = writeln!(spec, "  return found.first();");
    let _ = writeln!(spec, "}}\n");
    let _ = writeln!(
        spec,
        "test({}, async ({{ page }}) => {{",
        literal(&format!("report {short}: {}", comment_text(&report.title)))
    );
    if let Some(viewport) = &context.viewport
        && let (Some(w), Some(h)) = (&viewport.width, &viewport.height)
    {
        set_viewport(&mut spec, w, h);
    }
    let _ = writeln!(spec, "  const consoleErrors: string[] = [];");
    let _ = writeln!(
        spec,
        "  page.on('console', (message) => {{ if (message.type() === 'error') consoleErrors.push(message.text()); }});"
    );
    let _ = writeln!(spec, "  const answers: {{ method: string; url: string; status: number }}[] = [];");
    let _ = writeln!(
        spec,
        "  page.on('response', (response) => answers.push({{ method: response.request().method(), url: response.url(), status: response.status() }}));"
    );
    let _ = writeln!(spec, "  await page.goto(new URL({}, BASE_URL).href);", literal(&first_path));
    let mut first_navigation_done = false;
    let mut last_path = first_path.clone();
    for (n, step) in steps.iter().enumerate() {
        let step_number = n + 1;
        match step.kind {
            StepKind::Navigate => {
                let Some((_, path)) = step.url.as_deref().and_then(split_url) else { continue };
                // The first navigation is where the test starts.
                if !first_navigation_done && path == first_path {
                    first_navigation_done = true;
                    continue;
                }
                first_navigation_done = true;
                let pathname = path.split('?').next().unwrap_or_default().to_string();
                if step.via.as_deref() == Some("load") && path == last_path {
                    let _ = writeln!(spec, "  // {step_number}. the reporter reloaded the page");
                    let _ = writeln!(spec, "  await page.reload();");
                } else {
                    // Navigations the page made itself (links, history) follow from the steps
                    // before; the path is enough (query values were redacted).
                    let _ = writeln!(spec, "  // {step_number}. the page went to {}", comment_text(&path));
                    let _ = writeln!(
                        spec,
                        "  await page.waitForURL((url) => url.pathname === {}, {{ timeout: 10_000 }}).catch(() => {{}});",
                        literal(&pathname)
                    );
                }
                last_path = path;
            }
            StepKind::Click => {
                if let Some(find) = locator(step) {
                    let _ = writeln!(spec, "  // {step_number}. click");
                    let _ = writeln!(spec, "  await {find}.click();");
                }
            }
            StepKind::Input => {
                if let Some(find) = locator(step)
                    && let Some(value) = &step.value
                {
                    // A field the site lets the widget record (`data-svc-record`): its value is known.
                    let _ = writeln!(spec, "  // {step_number}. type into a field");
                    let _ = writeln!(spec, "  await {find}.fill({});", literal(value));
                } else if let Some(find) = locator(step) {
                    let length = step.length.unwrap_or(8) as usize;
                    let placeholder =
                        if step.input_type.as_deref() == Some("number") || step.input_type.as_deref() == Some("tel") {
                            "4".repeat(length.max(1))
                        } else {
                            "x".repeat(length.max(1))
                        };
                    let _ = writeln!(
                        spec,
                        "  // {step_number}. type into a {} field ({length} characters; the value was not recorded)",
                        comment_text(step.input_type.as_deref().unwrap_or("text"))
                    );
                    let _ = writeln!(
                        spec,
                        "  await {find}.fill(process.env.SVC_FIELD_{step_number} ?? {});",
                        literal(&placeholder)
                    );
                }
            }
            StepKind::Change => {
                if let Some(find) = locator(step) {
                    let value = step.value.as_deref().unwrap_or_default();
                    let _ = writeln!(spec, "  // {step_number}. set");
                    match value {
                        "checked" => {
                            let _ = writeln!(spec, "  await {find}.check();");
                        }
                        "unchecked" => {
                            let _ = writeln!(spec, "  await {find}.uncheck();");
                        }
                        option => {
                            let _ = writeln!(spec, "  await {find}.selectOption({{ label: {} }});", literal(option));
                        }
                    }
                }
            }
            StepKind::Key => {
                let key = step.key.as_deref().unwrap_or("Enter");
                if matches!(key, "Enter" | "Escape" | "Tab") {
                    let _ = writeln!(spec, "  // {step_number}. press {key}");
                    let _ = writeln!(spec, "  await page.keyboard.press({});", literal(key));
                }
            }
            StepKind::Scroll => {
                let x = step.x.as_ref().map_or(0.0, crate::block::number);
                let y = step.y.as_ref().map_or(0.0, crate::block::number);
                let _ = writeln!(spec, "  // {step_number}. scroll");
                let _ = writeln!(spec, "  await page.evaluate(() => window.scrollTo({x:.0}, {y:.0}));");
            }
            StepKind::Resize => {
                if let (Some(w), Some(h)) = (&step.width, &step.height) {
                    let _ = writeln!(spec, "  // {step_number}. resize the window");
                    set_viewport(&mut spec, w, h);
                }
            }
            StepKind::Request | StepKind::Console => {
                let _ = writeln!(
                    spec,
                    "  // {step_number}. here the report's evidence went wrong ({})",
                    step.kind.as_str()
                );
            }
            StepKind::Private => {
                let _ = writeln!(
                    spec,
                    "  // {step_number}. an action inside an area the site marks private (not recorded)"
                );
            }
        }
    }
    let _ = writeln!(spec, "  await page.waitForLoadState('networkidle').catch(() => {{}});\n");
    let _ = writeln!(spec, "  // What should have happened:");
    for (method, path) in &expect.requests {
        let _ = writeln!(spec, "  {{");
        let _ = writeln!(
            spec,
            "    const wanted = {{ method: {}, path: new URL({}, BASE_URL).pathname }};",
            literal(method),
            literal(path)
        );
        let _ = writeln!(
            spec,
            "    const answered = answers.filter((a) => a.method === wanted.method && new URL(a.url).pathname === wanted.path);"
        );
        let _ = writeln!(
            spec,
            "    expect(answered.length, `${{wanted.method}} ${{wanted.path}} is requested`).toBeGreaterThan(0);"
        );
        let _ = writeln!(
            spec,
            "    for (const answer of answered) expect(answer.status, `${{wanted.method}} ${{wanted.path}} answers`).toBeLessThan(400);"
        );
        let _ = writeln!(spec, "  }}");
    }
    for start in &expect.console {
        let _ = writeln!(
            spec,
            "  expect(consoleErrors.filter((error) => error.startsWith({}))).toEqual([]);",
            literal(start)
        );
    }
    for (css, name) in &expect.elements {
        let find = format!("find(page, {}, [], {})", literal(css), name.as_deref().map_or("null".to_string(), literal));
        let _ = writeln!(spec, "  await expect({find}).toBeVisible();");
        let _ = writeln!(spec, "  await expect({find}).toBeEnabled();");
    }
    let _ = writeln!(spec, "}});");
    Some(spec)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Author, AuthorKind};
    use crate::status::Status;
    use serde_json::json;

    fn report(context: serde_json::Value, blocks: serde_json::Value) -> Report {
        Report {
            id: "01a1fdda5efe00b5d80f3ce3".into(),
            project_id: "p".into(),
            channel_key: "bug".into(),
            status: Status::New,
            title: "Pay fails\n*/ on the cart".into(),
            blocks: serde_json::from_value(blocks).unwrap(),
            context: serde_json::from_value(context).unwrap(),
            identity: None,
            identity_error: None,
            author: Author { kind: AuthorKind::Reporter, id: None, label: None },
            artifact_id: None,
            url: None,
            created_at: 0,
            updated_at: 0,
            assignee: None,
            labels: vec![],
        }
    }

    #[test]
    fn reporter_values_stay_string_literals_and_comments_stay_one_line() {
        let hostile = r##"#a"); require('child_process').exec('rm -rf /'); ("##;
        let spec = playwright_spec(&report(
            json!({"url": "https://shop.example/cart", "consoleErrors": ["TypeError: total is undefined\n    at pay (cart.js:3)"],
                   "steps": [{"kind": "click", "beforeMs": 1, "target": {"css": hostile}},
                             {"kind": "change", "beforeMs": 1, "target": {"css": "select#size"}, "value": "Large \"XL\""}]}),
            json!([{"type": "pinpoint", "selector": "#pay", "target": {"css": "#pay", "text": "Pay"}}]),
        ))
        .unwrap();
        assert!(
            spec.contains(&format!("await find(page, {}, [], null).click();", serde_json::to_string(hostile).unwrap()))
        );
        assert!(spec.contains(r#"selectOption({ label: "Large \"XL\"" })"#), "{spec}");
        assert!(spec.contains("// the reporter took before filing it: Pay fails */ on the cart"), "{spec}");
        // The captured console error's first line, and the pinpointed element, are the assertions.
        assert!(spec.contains(r#"error.startsWith("TypeError: total is undefined")"#), "{spec}");
        assert!(spec.contains(r##"await expect(find(page, "#pay", [], "Pay")).toBeVisible();"##), "{spec}");
        assert!(spec.contains(r##"await expect(find(page, "#pay", [], "Pay")).toBeEnabled();"##), "{spec}");
        // Without steps it starts at the report's page.
        assert!(spec.contains(r#"await page.goto(new URL("/cart", BASE_URL).href);"#), "{spec}");
    }

    #[test]
    fn no_reproduction_without_an_http_page() {
        assert!(playwright_spec(&report(json!({"url": "javascript:alert(1)"}), json!([]))).is_none());
        assert!(playwright_spec(&report(json!({}), json!([]))).is_none());
    }
}
