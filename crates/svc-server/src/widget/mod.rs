//! The browser widget's files, embedded in the binary (built from `widget/` into `widget/dist/`):
//!
//! - `GET /v1/svc/<project_key>.js`: the per-project loader, the project's configuration and
//!   channels baked in; it initializes itself. Always 200 JavaScript: an unknown key gets a script
//!   that logs `[Svc] unknown project key: <key>` once and does nothing.
//! - `GET /v1/svc.js`: the shared bundle (`Svc.init({projectKey})`, or `data-project-key`).
//! - `GET /v1/parts/<name>.<hash>.js`: lazy parts, content-hashed, cached for a year.
//! - `GET /v1/svc.d.ts`: TypeScript declarations of `Svc`.
//! - `GET /demo`: a page embedding the widget for the bootstrap project.

pub mod assets;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::http::header::{self, HeaderMap, HeaderValue};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};
use std::sync::OnceLock;

use crate::ingest::widget_config::channel_json;
use crate::state::AppState;
use svc_core::time;
use svc_service::sightings::{PageKnown, Source};
use svc_service::{ServiceError, channels, projects};

const JS: &str = "text/javascript; charset=utf-8";
/// Loaders change when the project's configuration does: cached briefly, revalidated by ETag.
const LOADER_CACHE: &str = "public, max-age=60";
const SHARED_CACHE: &str = "public, max-age=300";
const PART_CACHE: &str = "public, max-age=31536000, immutable";

pub fn router() -> axum::Router<AppState> {
    axum::Router::new()
        .route("/v1/svc.js", get(shared_bundle))
        .route("/v1/svc.d.ts", get(types))
        .route("/v1/svc/{file}", get(project_loader))
        .route("/v1/parts/{file}", get(part))
        .route("/demo", get(demo))
}

/// The per-project loader: the shared bundle wrapped so that it sees the baked-in configuration
/// (widget/build.mjs measures its size budget on the same wrapping).
pub fn per_project_loader(preset: &Value) -> String {
    format!("(function(__svcPreset){{{}}})({});\n", assets::LOADER, preset)
}

/// The script an unknown (or malformed) key gets: one console message, nothing else.
pub fn unknown_key_script(key: &str) -> String {
    let key = json!(key);
    format!(
        "(function(){{var k={key},w=window,f=\"__svcUnknownKey\";w[f]=w[f]||{{}};if(!w[f][k]){{w[f][k]=1;console.error(\"[Svc] unknown project key: \"+k)}}}})();\n"
    )
}

/// The configuration baked into a project's loader: the widget settings with defaults, where the
/// widget runs, its channels in ingest form, and the configured mascot's SVG (the loader carries
/// only that one; the others come with the panel).
pub async fn preset(state: &AppState, project: &svc_core::model::Project) -> Result<Value, ServiceError> {
    let channels = channels::list(&state.service, &project.id, false).await?;
    let widget_config = svc_core::project::widget_config_with_defaults(&project.widget_config);
    let mut preset = json!({
        "projectKey": project.project_key,
        "apiUrl": state.config.public_url.trim_end_matches('/'),
        "widgetConfig": widget_config,
        "urlPatterns": project.url_patterns,
        "defaultChannelKey": project.default_channel_key,
        "channels": channels.iter().map(channel_json).collect::<Vec<_>>(),
    });
    if let Some(svg) = widget_config.get("mascot").and_then(Value::as_str).and_then(mascot_svg) {
        preset["mascotSvg"] = json!(svg);
    }
    Ok(preset)
}

/// One of the ten mascots' SVG (as built into widget/dist/mascots), without its trailing newline.
pub fn mascot_svg(name: &str) -> Option<&'static str> {
    assets::MASCOTS.iter().find(|(n, _)| *n == name).map(|(_, svg)| svg.trim_end())
}

async fn project_loader(State(state): State<AppState>, Path(file): Path<String>, headers: HeaderMap) -> Response {
    let key = file.strip_suffix(".js").unwrap_or(&file);
    let key: String = key.chars().take(100).collect();
    let project = projects::by_public_key(&state.service, &key).await;
    match project {
        Ok(Some(project)) => match preset(&state, &project).await {
            Ok(preset) => {
                let page = crate::ingest::access::page_from_headers(&headers);
                state.sightings.record(&project.id, Source::Loader, page, PageKnown::FromHeaders, time::now_ms());
                cached(&headers, JS, LOADER_CACHE, per_project_loader(&preset))
            }
            Err(error) => unavailable(error),
        },
        Ok(None) => cached(&headers, JS, LOADER_CACHE, unknown_key_script(&key)),
        Err(error) => unavailable(error),
    }
}

/// A store failure still answers 200 JavaScript (a browser ignores scripts with an error status),
/// never cached, saying what happened.
fn unavailable(error: ServiceError) -> Response {
    tracing::error!(%error, "widget loader: store failure");
    let body = "console.error(\"[Svc] the feedback service is unavailable; try again later\");\n";
    let mut response = (StatusCode::OK, body).into_response();
    set(&mut response, header::CONTENT_TYPE, JS);
    set(&mut response, header::CACHE_CONTROL, "no-store");
    response
}

async fn shared_bundle(headers: HeaderMap) -> Response {
    static TAG: OnceLock<String> = OnceLock::new();
    cached_static(&headers, JS, SHARED_CACHE, assets::LOADER, TAG.get_or_init(|| etag(assets::LOADER)))
}

async fn types(headers: HeaderMap) -> Response {
    static TAG: OnceLock<String> = OnceLock::new();
    let tag = TAG.get_or_init(|| etag(assets::TYPES));
    cached_static(&headers, "application/typescript; charset=utf-8", SHARED_CACHE, assets::TYPES, tag)
}

async fn part(Path(file): Path<String>, headers: HeaderMap) -> Response {
    match assets::PARTS.iter().find(|(name, _)| *name == file) {
        Some((name, body)) => {
            // The name carries the content hash, so the name is as good an ETag as any.
            let tag = format!("\"{}\"", name.trim_end_matches(".js"));
            cached_static(&headers, JS, PART_CACHE, body, &tag)
        }
        None => {
            let mut response = (StatusCode::NOT_FOUND, "no such widget part\n").into_response();
            set(&mut response, header::CONTENT_TYPE, "text/plain; charset=utf-8");
            set(&mut response, header::CACHE_CONTROL, "no-store");
            response
        }
    }
}

/// A strong ETag over the body.
fn etag(body: &str) -> String {
    format!("\"{}\"", &svc_core::secret::hash_secret(body)[..20])
}

fn cached(headers: &HeaderMap, content_type: &str, cache: &str, body: String) -> Response {
    let tag = etag(&body);
    respond(headers, content_type, cache, body, &tag)
}

fn cached_static(headers: &HeaderMap, content_type: &str, cache: &str, body: &'static str, tag: &str) -> Response {
    respond(headers, content_type, cache, body, tag)
}

fn respond(
    headers: &HeaderMap,
    content_type: &str,
    cache: &str,
    body: impl Into<axum::body::Body>,
    tag: &str,
) -> Response {
    let matches = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|value| value.split(',').map(|t| t.trim().trim_start_matches("W/")).any(|t| t == tag || t == "*"));
    let mut response =
        if matches { StatusCode::NOT_MODIFIED.into_response() } else { (StatusCode::OK, body.into()).into_response() };
    if !matches {
        set(&mut response, header::CONTENT_TYPE, content_type);
    }
    set(&mut response, header::CACHE_CONTROL, cache);
    set(&mut response, header::ETAG, tag);
    set(&mut response, header::X_CONTENT_TYPE_OPTIONS, "nosniff");
    // Lets pages load the scripts with `crossorigin` (for subresource integrity or error details).
    set(&mut response, header::ACCESS_CONTROL_ALLOW_ORIGIN, "*");
    response
}

fn set(response: &mut Response, name: header::HeaderName, value: &str) {
    if let Ok(value) = HeaderValue::from_str(value) {
        response.headers_mut().insert(name, value);
    }
}

/// The bootstrap project: the first project of the organization `svc serve` creates on first start.
async fn bootstrap_project(state: &AppState) -> Result<Option<svc_core::model::Project>, ServiceError> {
    projects::default_project(&state.service).await
}

async fn demo(State(state): State<AppState>) -> Response {
    let project = match bootstrap_project(&state).await {
        Ok(Some(project)) => project,
        Ok(None) => {
            let page = "<!doctype html><meta charset=utf-8><title>Svc demo</title><p>There is no project yet: \
                        start <code>svc serve</code> on an empty data folder to create one.</p>";
            return (StatusCode::NOT_FOUND, Html(page)).into_response();
        }
        Err(error) => {
            tracing::error!(%error, "demo page: store failure");
            return (StatusCode::SERVICE_UNAVAILABLE, Html("<!doctype html><p>The service is unavailable.</p>"))
                .into_response();
        }
    };
    let page_url = format!("{}/demo", state.config.public_url.trim_end_matches('/'));
    let hidden_elsewhere = !project.url_patterns.is_empty()
        && !project.url_patterns.iter().any(|pattern| svc_core::project::glob_match(pattern, &page_url));
    let notice = hidden_elsewhere.then(|| patterns_notice(&project, &page_url));
    let mut response = Html(demo_page(&project.name, &project.project_key, notice.as_deref())).into_response();
    set(&mut response, header::CACHE_CONTROL, "no-store");
    response
}

/// What the demo page says when the project's `urlPatterns` do not match it: its launcher shows
/// anyway (it is the service's own page), but on the site's own pages it would be hidden here.
fn patterns_notice(project: &svc_core::model::Project, page_url: &str) -> String {
    let patterns = project
        .url_patterns
        .iter()
        .map(|p| format!("<code>{}</code>", crate::escape_html(p)))
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        r#"<p class="notice" role="status" data-testid="url-patterns-notice">Your <code>urlPatterns</code> ({patterns}) do
not match this page (<code>{url}</code>): on your own pages the launcher would be hidden here. This demo page shows
it anyway, because it is the service's own page (<code>data-ignore-url-patterns</code> on its script tag). Change the
patterns on the project's <a href="/projects/{id}/widget">Widget</a> tab in the dashboard, or with
<code>PATCH /api/v1/projects/{id}</code>.</p>"#,
        url = crate::escape_html(page_url),
        id = crate::escape_html(&project.id),
    )
}

/// The demo page: the per-project loader of the project (its launcher shown whatever the
/// project's `urlPatterns` say, with `notice` when they would hide it), and a few buttons that
/// call `Svc`.
pub fn demo_page(project_name: &str, project_key: &str, notice: Option<&str>) -> String {
    let name = crate::escape_html(project_name);
    let key = crate::escape_html(project_key);
    let notice = notice.unwrap_or_default();
    format!(
        r#"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Svc demo: {name}</title>
<link rel="icon" href="data:,">
<style>
body {{ font: 16px/1.5 system-ui, sans-serif; max-width: 720px; margin: 40px auto; padding: 0 16px; color: #1d1d1f; overflow-wrap: anywhere; }}
input {{ max-width: 100%; box-sizing: border-box; }}
button {{ font: inherit; padding: 6px 14px; margin: 4px 4px 4px 0; border-radius: 8px; border: 1px solid #ccc; background: #fff; cursor: pointer; }}
pre {{ background: #f5f5f7; padding: 12px; border-radius: 8px; white-space: pre-wrap; word-break: break-all; }}
.card {{ border: 1px solid #e5e5ea; border-radius: 12px; padding: 16px; margin: 16px 0; }}
.notice {{ border: 1px solid #f5c26b; background: #fff8e6; border-radius: 12px; padding: 12px 16px; }}
</style>
</head>
<body>
<h1>Svc demo</h1>
{notice}
<p>This page embeds the feedback widget of project <strong>{name}</strong> with its per-project loader:</p>
<pre>&lt;script src="/v1/svc/{key}.js"&gt;&lt;/script&gt;</pre>
<p>Use the launcher at the edge of the page, or the buttons below. Reports show up in the REST API
(<code>GET /api/v1/projects/&lt;id&gt;/feedback</code>) and in the tool endpoint.</p>
<div class="card" data-testid="demo-actions">
  <button type="button" id="open" data-testid="open-form">Open the report panel</button>
  <button type="button" id="send" data-testid="send-report">Send a test report</button>
  <button type="button" id="log" data-testid="log-error">Log a console error</button>
  <button type="button" id="attach" data-testid="attach-file">Attach a note to the draft</button>
</div>
<div class="card">
  <h2>A checkout form</h2>
  <label for="email">Email</label> <input id="email" name="email" type="email" placeholder="you@example.com">
  <button type="button" data-testid="pay" aria-label="Pay now">Pay</button>
</div>
<pre id="out" data-testid="output" aria-live="polite"></pre>
<script src="/v1/svc/{key}.js" data-ignore-url-patterns></script>
<script>
const out = document.getElementById('out');
const show = (value) => {{ out.textContent = typeof value === 'string' ? value : JSON.stringify(value, null, 2); }};
document.getElementById('open').onclick = () => Svc.openForm();
document.getElementById('send').onclick = () => Svc.report({{ message: 'Hello from the demo page', extra: {{ demo: true }} }}).then(show, (e) => show(String(e)));
document.getElementById('log').onclick = () => {{ console.error('demo: something went wrong'); show('logged a console error; it will travel with the next report'); }};
document.getElementById('attach').onclick = () => Svc.attachFile({{ name: 'note.txt', content: 'A note from the demo page' }}).then(show, (e) => show(String(e)));
</script>
</body>
</html>
"#
    )
}
