//! A project's install tab: the embed snippet for both loading modes, the project's id and public
//! key, where the widget was last seen, a setup token for the agent self-setup flow (with a prompt
//! to paste into a coding agent), and the tool endpoint's configuration for coding agents.

use askama::Template;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde::Deserialize;
use svc_core::time;
use svc_service::permissions::{self, Operation};

use super::assets::{self, Assets};
use super::error::{PageError, PageResult};
use super::projects::{self, ProjectFrame};
use super::session::Person;
use super::view::When;
use super::{Submitted, render};
use crate::state::AppState;
use svc_service::keys;

/// The lifetimes a setup token can be given here (seconds, label); one hour is the default.
pub const SETUP_TOKEN_TTLS: [(i64, &str); 4] =
    [(900, "15 minutes"), (3600, "1 hour"), (14_400, "4 hours"), (86_400, "24 hours")];

/// A code sample with a copy button: its element id, heading and text.
pub struct Snippet {
    pub id: &'static str,
    pub title: &'static str,
    pub note: &'static str,
    pub text: String,
}

/// Where the widget was last seen.
pub struct Seen {
    pub url: Option<String>,
    pub by: &'static str,
    pub when: When,
}

/// A setup token just minted: shown on this one response, never again.
pub struct MintedToken {
    pub token: String,
    pub expires: String,
    pub prompt: String,
}

#[derive(Template)]
#[template(path = "dashboard/install.html")]
struct InstallPage<'a> {
    assets: &'static Assets,
    section: &'static str,
    csrf: &'a str,
    me: &'a str,
    frame: ProjectFrame,
    project_key: String,
    embeds: Vec<Snippet>,
    tools: Vec<Snippet>,
    mcp_url: String,
    seen: Option<Seen>,
    /// Whether the person may mint setup tokens (owners).
    can_mint: bool,
    ttls: &'static [(i64, &'static str)],
    minted: Option<MintedToken>,
}

fn base_url(state: &AppState) -> String {
    state.config.public_url.trim_end_matches('/').to_string()
}

/// The embed snippets of both loading modes.
pub fn embed_snippets(base: &str, project_key: &str) -> Vec<Snippet> {
    vec![
        Snippet {
            id: "snippet-loader",
            title: "Per-project loader",
            note: "The project's settings and channels are baked in; it starts by itself. Put it before </body>.",
            text: format!("<script src=\"{base}/v1/svc/{project_key}.js\"></script>"),
        },
        Snippet {
            id: "snippet-shared",
            title: "Shared bundle",
            note: "You decide when it starts (pass userId, hooks and other options to Svc.init).",
            text: format!(
                "<script src=\"{base}/v1/svc.js\"></script>\n<script>\n  Svc.init({{ projectKey: '{project_key}' }});\n</script>"
            ),
        },
    ]
}

/// The tool endpoint's configuration for coding agents; the key comes from the environment
/// variable `SVC_KEY` (a key with `feedback:read` and `feedback:write`).
pub fn tool_snippets(mcp_url: &str) -> Vec<Snippet> {
    vec![
        Snippet {
            id: "tool-claude",
            title: "Claude Code",
            note: "Run in the project's folder.",
            text: format!("claude mcp add --transport http svc {mcp_url} --header \"Authorization: Bearer $SVC_KEY\""),
        },
        Snippet {
            id: "tool-cursor",
            title: "Cursor: .cursor/mcp.json",
            note: "Cursor reads SVC_KEY from its environment.",
            text: format!(
                "{{\n  \"mcpServers\": {{\n    \"svc\": {{\n      \"url\": \"{mcp_url}\",\n      \"headers\": {{ \"Authorization\": \"Bearer ${{env:SVC_KEY}}\" }}\n    }}\n  }}\n}}"
            ),
        },
        Snippet {
            id: "tool-codex",
            title: "Codex: ~/.codex/config.toml",
            note: "Codex sends the key it finds in SVC_KEY as the bearer token.",
            text: format!("[mcp_servers.svc]\nurl = \"{mcp_url}\"\nbearer_token_env_var = \"SVC_KEY\""),
        },
        Snippet {
            id: "tool-opencode",
            title: "opencode: opencode.json",
            note: "opencode fills in {env:SVC_KEY}; \"oauth\": false because the key is the credential.",
            text: format!(
                "{{\n  \"$schema\": \"https://opencode.ai/config.json\",\n  \"mcp\": {{\n    \"svc\": {{\n      \"type\": \"remote\",\n      \"url\": \"{mcp_url}\",\n      \"headers\": {{ \"Authorization\": \"Bearer {{env:SVC_KEY}}\" }},\n      \"oauth\": false,\n      \"enabled\": true\n    }}\n  }}\n}}"
            ),
        },
    ]
}

/// What a coding agent is told to do with a setup token: the agent self-setup flow, step by step,
/// with this server's addresses and the project's ids filled in.
pub fn agent_prompt(
    base: &str,
    project_id: &str,
    project_key: &str,
    key_id: &str,
    token: &str,
    expires: &str,
) -> String {
    format!(
        r##"Set up Svc (a feedback service) for this web app. Svc runs at {base}.
Use this setup token only for the steps below; it expires at {expires}. Keep it out of files and
commits; set it in the shell you run the steps in:

export SVC_SETUP_TOKEN={token}

Every call below sends it as the header "Authorization: Bearer $SVC_SETUP_TOKEN".

1. Check the token. It should answer projectId {project_id}, projectKey {project_key}, keyId {key_id} and scopes ["*"]:
   curl -s {base}/api/v1/me -H "Authorization: Bearer $SVC_SETUP_TOKEN"

2. Tell the project where the widget runs and how it looks. urlPatterns are globs over the full page URL
   (* matches any run of characters; an empty list means every page); put in this app's own URLs
   (local development and production). widgetConfig fields: mascot, shape, anchor, offsetX, offsetY,
   size, triggerVariant.
   curl -s -X PATCH {base}/api/v1/projects/{project_id} -H "Authorization: Bearer $SVC_SETUP_TOKEN" \
     -H 'content-type: application/json' \
     -d '{{"urlPatterns":["http://localhost:3000/*"],"defaultChannelKey":"bug","widgetConfig":{{"mascot":"fox","anchor":"bottom-right"}}}}'

3. Add channels if the app has areas worth separating (the project already has bug, idea and question):
   curl -s -X POST {base}/api/v1/projects/{project_id}/channels -H "Authorization: Bearer $SVC_SETUP_TOKEN" \
     -H 'content-type: application/json' \
     -d '{{"key":"checkout","name":"Checkout","color":"#12a594","mascot":"fox"}}'

4. Embed the widget in the app's HTML layout, right before </body>, on every page (this is the public
   project key, never the token):
   <script src="{base}/v1/svc/{project_key}.js"></script>

5. Mint the key you keep for reading and triaging feedback. The answer's "key" is shown only once: store
   it as SVC_KEY in the app's local environment file (not committed) and never print it in logs:
   curl -s -X POST {base}/api/v1/projects/{project_id}/keys -H "Authorization: Bearer $SVC_SETUP_TOKEN" \
     -H 'content-type: application/json' \
     -d '{{"name":"coding agent","scopes":["feedback:read","feedback:write"]}}'

6. Revoke the setup token with itself, then check that it is refused (401):
   curl -s -X DELETE {base}/api/v1/projects/{project_id}/keys/{key_id} -H "Authorization: Bearer $SVC_SETUP_TOKEN"
   curl -s -o /dev/null -w '%{{http_code}}\n' {base}/api/v1/me -H "Authorization: Bearer $SVC_SETUP_TOKEN"

Afterwards read reports with SVC_KEY: GET {base}/api/v1/projects/{project_id}/feedback, or connect the
tool endpoint {base}/mcp with the header "Authorization: Bearer $SVC_KEY".
"##
    )
}

async fn page<'a>(
    state: &AppState,
    person: &'a Person,
    project_id: &str,
    minted: Option<MintedToken>,
) -> PageResult<InstallPage<'a>> {
    let opened = projects::open(state, person, project_id, Operation::ReadProject, "install").await?;
    let base = base_url(state);
    let now = time::now_ms();
    let seen = state.sightings.last(&opened.project.id).await?.map(|sighting| Seen {
        by: match sighting.source.as_str() {
            "loader" => "the loader was served",
            "config" => "the widget fetched its settings",
            _ => "a report was filed",
        },
        url: sighting.url,
        when: When::at(sighting.seen_at, now),
    });
    let can_mint = permissions::check(&opened.principal, Operation::ManageKeys, &opened.project).is_ok();
    let mcp_url = format!("{base}/mcp");
    Ok(InstallPage {
        assets: assets::get(),
        section: "projects",
        csrf: &person.csrf,
        me: person.signed_in.user.label(),
        embeds: embed_snippets(&base, &opened.project.project_key),
        tools: tool_snippets(&mcp_url),
        mcp_url,
        project_key: opened.project.project_key,
        frame: opened.frame,
        seen,
        can_mint,
        ttls: &SETUP_TOKEN_TTLS,
        minted,
    })
}

/// `GET /projects/{id}/install`
pub async fn show(
    State(state): State<AppState>,
    Path(project_id): Path<String>,
    person: Person,
) -> PageResult<Response> {
    let page = page(&state, &person, &project_id, None).await?;
    Ok(render(StatusCode::OK, &page))
}

#[derive(Deserialize)]
pub struct SetupTokenForm {
    #[serde(rename = "_csrf")]
    csrf: String,
    #[serde(default)]
    ttl: String,
}
super::csrf_forms!(SetupTokenForm);

/// `POST /projects/{id}/install/setup-token`: mints a setup token (scope `*`) and shows it on
/// this response only, with the prompt for a coding agent. Only its hash is stored; the answer
/// is never cached, and nothing carries the token in a URL.
pub async fn mint_setup_token(
    State(state): State<AppState>,
    Path(project_id): Path<String>,
    Submitted(person, form): Submitted<SetupTokenForm>,
) -> PageResult<Response> {
    let opened = projects::open(&state, &person, &project_id, Operation::ManageKeys, "install").await?;
    let ttl = if form.ttl.is_empty() {
        keys::SETUP_TOKEN_TTL_SECS
    } else {
        form.ttl
            .parse::<i64>()
            .ok()
            .filter(|ttl| SETUP_TOKEN_TTLS.iter().any(|(allowed, _)| allowed == ttl))
            .ok_or_else(|| PageError::BadRequest("Choose one of the offered lifetimes for the setup token.".into()))?
    };
    let by = opened.principal.author();
    let project = &opened.project;
    let (key, secret) = keys::mint_setup_token(&state.service, &project.org_id, &project.id, Some(ttl), &by).await?;
    let expires = key.expires_at.map(time::iso).unwrap_or_default();
    let base = base_url(&state);
    let prompt = agent_prompt(&base, &project.id, &project.project_key, &key.id, secret.expose(), &expires);
    let minted = MintedToken { token: secret.expose().to_string(), expires, prompt };
    let page = page(&state, &person, &project_id, Some(minted)).await?;
    Ok(render(StatusCode::OK, &page))
}
