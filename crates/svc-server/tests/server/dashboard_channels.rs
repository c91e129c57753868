//! The Channels tab, driven as a browser would (session cookie, forms with the CSRF token) and
//! checked where the change must show: the REST API, the ingest API the widget reads, the audit
//! log. Also the people who may not change anything (members, forms without the token).
//! `Tab` (a signed-in person) is shared with the Identity and Flags tab tests.

use axum::http::StatusCode;
use serde_json::{Value, json};
use svc_core::account::Role;
use svc_core::secret::Secret;
use svc_service::accounts::{self, NewUser};

use super::common::*;

/// A signed-in person of the default organization and the project's settings pages.
pub struct Tab {
    pub cookie: String,
    pub csrf: String,
    pub base: String,
}

impl Tab {
    pub async fn sign_in(app: &TestApp, email: &str, role: Role) -> Tab {
        let new = NewUser::parse(email, "Olivia Owner", Secret::new(PASSWORD)).unwrap();
        accounts::create_user(app.service(), new, Some((&app.project.org_id, role))).await.unwrap();
        let cookie = app.sign_in(email, PASSWORD).await;
        let csrf = csrf_of(&cookie);
        Tab { cookie, csrf, base: format!("/projects/{}", app.pid()) }
    }

    pub async fn owner(app: &TestApp) -> Tab {
        Tab::sign_in(app, "owner@example.com", Role::Owner).await
    }

    pub async fn member(app: &TestApp) -> Tab {
        Tab::sign_in(app, "member@example.com", Role::Member).await
    }

    /// `GET <project>/<rest>`.
    pub async fn get(&self, app: &TestApp, rest: &str) -> Resp {
        app.get_page(&format!("{}{rest}", self.base), Some(&self.cookie)).await
    }

    /// A form POST to `<project>/<rest>` with the session's CSRF token.
    pub async fn post(&self, app: &TestApp, rest: &str, fields: &[(&str, &str)]) -> Resp {
        let mut all = vec![("_csrf", self.csrf.as_str())];
        all.extend_from_slice(fields);
        app.post_form(&format!("{}{rest}", self.base), &all, Some(&self.cookie)).await
    }

    /// A form POST without adding the CSRF token.
    pub async fn post_bare(&self, app: &TestApp, rest: &str, fields: &[(&str, &str)]) -> Resp {
        app.post_form(&format!("{}{rest}", self.base), fields, Some(&self.cookie)).await
    }
}

/// Asserts a redirect (303) and returns where it leads.
#[track_caller]
pub fn redirected(resp: &Resp) -> String {
    assert_eq!(resp.status, StatusCode::SEE_OTHER, "{}", resp.text);
    resp.location().expect("a Location").to_string()
}

/// The audit log's acts by people and keys (newest first; not the bootstrap's) as (action, actor
/// kind, detail).
pub async fn audit(app: &TestApp) -> Vec<(String, String, Value)> {
    let events = app.store.list_audit(app.pid(), None, 100).await.unwrap();
    events
        .into_iter()
        .filter(|e| e.actor.kind != svc_core::model::AuthorKind::System)
        .map(|e| (e.action, e.actor.kind.to_string(), e.detail))
        .collect()
}

async fn rest_channel(app: &TestApp, key: &str) -> Option<Value> {
    let list = app.rest("GET", &app.p("/channels?archived=true"), None).await;
    list.ok(200)["items"].as_array().unwrap().iter().find(|c| c["key"] == key).cloned()
}

async fn ingest_channels(app: &TestApp) -> Vec<Value> {
    app.ingest_get("/ingest/channels").await.ok(200)["channels"].as_array().unwrap().clone()
}

/// How many times `needle` occurs in `text`.
fn count(text: &str, needle: &str) -> usize {
    text.matches(needle).count()
}

#[tokio::test]
async fn an_owner_creates_edits_archives_and_unarchives_a_channel() {
    let app = TestApp::new().await;
    let owner = Tab::owner(&app).await;
    let page = owner.get(&app, "/channels").await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.text);
    for key in ["<code>bug</code>", "<code>idea</code>", "<code>question</code>", "New channel"] {
        assert!(page.text.contains(key), "the page lists {key}");
    }
    // The colour is drawn with an SVG attribute: the page has no inline style at all.
    assert!(page.text.contains(r##"fill="#e5484d""##));
    assert!(!page.text.contains("style="));

    let created = owner
        .post(
            &app,
            "/channels",
            &[
                ("key", "checkout"),
                ("name", "Checkout"),
                ("color", "#0F766E"),
                ("mascot", "otter"),
                ("base_weight", "0.5"),
            ],
        )
        .await;
    assert!(redirected(&created).contains("edit=checkout"), "the new channel's editor opens");
    let channel = rest_channel(&app, "checkout").await.expect("the channel is in the REST list");
    assert_eq!(
        (channel["name"].clone(), channel["color"].clone(), channel["mascot"].clone(), channel["baseWeight"].clone()),
        (json!("Checkout"), json!("#0f766e"), json!("otter"), json!(0.5))
    );
    assert!(ingest_channels(&app).await.iter().any(|c| c["key"] == "checkout"), "the widget is offered it");

    let editor = owner.get(&app, "/channels?edit=checkout&done=created&key=checkout").await;
    assert!(editor.text.contains("Created the channel checkout."));
    assert!(editor.text.contains(r#"id="edit-name""#) && editor.text.contains(r#"value="Checkout""#));

    let saved = owner
        .post(
            &app,
            "/channels/checkout",
            &[
                ("action", "save"),
                ("name", "Checkout & pay"),
                ("color", "#112233"),
                ("mascot", "robot"),
                ("base_weight", "-2"),
            ],
        )
        .await;
    redirected(&saved);
    let channel = rest_channel(&app, "checkout").await.unwrap();
    assert_eq!(
        (channel["name"].clone(), channel["color"].clone(), channel["mascot"].clone(), channel["baseWeight"].clone()),
        (json!("Checkout & pay"), json!("#112233"), json!("robot"), json!(-2.0))
    );
    // The page escapes the name.
    assert!(owner.get(&app, "/channels").await.text.contains("Checkout &#38; pay"));

    redirected(&owner.post(&app, "/channels/checkout", &[("action", "archive")]).await);
    assert_eq!(rest_channel(&app, "checkout").await.unwrap()["archived"], json!(true));
    let listed = app.rest("GET", &app.p("/channels"), None).await;
    assert!(!listed.ok(200)["items"].as_array().unwrap().iter().any(|c| c["key"] == "checkout"));
    assert!(!ingest_channels(&app).await.iter().any(|c| c["key"] == "checkout"), "archived: not offered");
    let page = owner.get(&app, "/channels").await.text;
    let row = &page[page.find(r#"id="channel-checkout""#).expect("archived channels are listed")..];
    let row = &row[..row.find("</tr>").unwrap()];
    assert!(row.contains(r#"class="badge">archived"#) && row.contains("Unarchive"), "{row}");

    redirected(&owner.post(&app, "/channels/checkout", &[("action", "unarchive")]).await);
    assert_eq!(rest_channel(&app, "checkout").await.unwrap()["archived"], json!(false));
    assert!(ingest_channels(&app).await.iter().any(|c| c["key"] == "checkout"));

    let log = audit(&app).await;
    let acts: Vec<(&str, &str)> = log.iter().map(|(a, kind, _)| (a.as_str(), kind.as_str())).collect();
    assert_eq!(
        acts[..4],
        [
            ("channel.changed", "user"),
            ("channel.changed", "user"),
            ("channel.changed", "user"),
            ("channel.created", "user")
        ]
    );
    assert_eq!(log[0].2["archived"], json!(false));
    assert_eq!(log[2].2["fields"], json!(["name", "color", "mascot", "baseWeight"]));
}

#[tokio::test]
async fn a_refused_channel_keeps_what_was_typed_and_says_why() {
    let app = TestApp::new().await;
    let owner = Tab::owner(&app).await;
    let taken = owner
        .post(
            &app,
            "/channels",
            &[("key", "bug"), ("name", "Another <b>bug</b>"), ("color", "#000000"), ("mascot", "fox")],
        )
        .await;
    assert_eq!(taken.status, StatusCode::CONFLICT);
    assert!(taken.text.contains("a channel with key bug already exists"), "{}", taken.text);
    assert!(taken.text.contains("Another &#60;b&#62;bug&#60;/b&#62;"), "the name typed is kept, as text");

    let bad = owner
        .post(&app, "/channels", &[("key", "Bad Key"), ("name", "x"), ("color", "#000000"), ("mascot", "fox")])
        .await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert!(bad.text.contains("key must be 1 to 40 characters"));
    let bad = owner
        .post(&app, "/channels/idea", &[("action", "save"), ("name", "Ideas"), ("color", "red"), ("mascot", "owl")])
        .await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert!(bad.text.contains("color must be a hex colour"));
    assert_eq!(rest_channel(&app, "idea").await.unwrap()["color"], json!("#f5a524"), "nothing changed");
    assert!(audit(&app).await.iter().all(|(action, _, _)| !action.starts_with("channel.")));
}

#[tokio::test]
async fn the_matcher_editor_adds_rows_saves_them_and_the_tester_explains_the_choice() {
    let app = TestApp::new().await;
    let owner = Tab::owner(&app).await;
    redirected(
        &owner
            .post(
                &app,
                "/channels",
                &[("key", "checkout"), ("name", "Checkout"), ("color", "#0f766e"), ("mascot", "otter")],
            )
            .await,
    );

    // Adding a matcher shows the editor with one row, not saved yet.
    let added = owner.post(&app, "/channels/checkout/matchers", &[("action", "add-matcher")]).await;
    assert_eq!(added.status, StatusCode::OK, "{}", added.text);
    assert!(added.text.contains("Matcher 1") && added.text.contains("not saved yet"));
    assert_eq!(count(&added.text, r#"name="c_of""#), 1);
    assert_eq!(rest_channel(&app, "checkout").await.unwrap()["matchers"], json!([]));

    // Another condition, then that one removed again: the rows follow.
    let row = |extra: &[(&'static str, &'static str)]| {
        let mut fields = vec![
            ("m_weight", "10"),
            ("m_note", "checkout pages"),
            ("c_of", "0"),
            ("c_field", "url"),
            ("c_attr", ""),
            ("c_op", "contains"),
            ("c_value", "/checkout"),
        ];
        fields.extend_from_slice(extra);
        fields
    };
    let two = owner.post(&app, "/channels/checkout/matchers", &row(&[("action", "add-condition-0")])).await;
    assert_eq!(count(&two.text, r#"name="c_of""#), 2);
    assert!(two.text.contains(r#"value="/checkout""#), "typed values are kept");
    let second = [("c_of", "0"), ("c_field", "attr"), ("c_attr", ""), ("c_op", "eq"), ("c_value", "pro")];
    let one = owner
        .post(
            &app,
            "/channels/checkout/matchers",
            &[row(&second).as_slice(), &[("action", "remove-condition-0-1")]].concat(),
        )
        .await;
    assert_eq!(count(&one.text, r#"name="c_of""#), 1);

    // An attribute condition needs a name: refused, nothing saved, the rows kept.
    let refused =
        owner.post(&app, "/channels/checkout/matchers", &row(&[&second[..], &[("action", "save")]].concat())).await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    assert!(refused.text.contains("Matcher 1, condition 2: name the attribute."), "{}", refused.text);
    assert_eq!(count(&refused.text, r#"name="c_of""#), 2);
    assert_eq!(rest_channel(&app, "checkout").await.unwrap()["matchers"], json!([]));

    let saved = owner.post(&app, "/channels/checkout/matchers", &row(&[("action", "save")])).await;
    assert!(redirected(&saved).contains("done=matchers"));
    let expected = json!([{"conditions": [{"field": "url", "op": "contains", "value": "/checkout"}], "weight": 10.0, "note": "checkout pages"}]);
    assert_eq!(rest_channel(&app, "checkout").await.unwrap()["matchers"], expected);
    let offered = ingest_channels(&app).await;
    assert_eq!(offered.iter().find(|c| c["key"] == "checkout").unwrap()["matchers"], expected, "the widget gets them");
    let listed = owner.get(&app, "/channels").await.text;
    assert!(listed.contains("<strong>+10</strong> when <code>url</code> contains <q>/checkout</q>"), "{listed}");

    // The tester: a checkout page goes to the channel, with the reason and the condition that held.
    let tested = owner.get(&app, "/channels?url=https%3A%2F%2Fshop.example%2Fcheckout%2Fpay").await.text;
    assert!(
        tested.contains("Reports from this page go to <strong>Checkout</strong> (<code>checkout</code>)"),
        "{tested}"
    );
    assert!(tested.contains("checkout has the highest positive score, 10."));
    assert!(tested.contains("✓ <code>url</code> contains <q>/checkout</q>"));
    assert!(tested.contains("path <code>/checkout/pay</code>, host <code>shop.example</code>"));
    // Any other page goes to the default channel.
    let home = owner.get(&app, "/channels?url=https%3A%2F%2Fshop.example%2Fhome").await.text;
    assert!(home.contains("Nothing scores above 0, so the report goes to the default channel, bug."), "{home}");
    assert!(home.contains("✗ does not apply"));
    // A URL that is not one is said so.
    let bad = owner.get(&app, "/channels?url=checkout").await.text;
    assert!(bad.contains("The URL: url must be a full address"));

    // The JSON form: a mistake is named, a good list saved whole (a comma inside an `in` value).
    let broken = owner.post(&app, "/channels/checkout/matchers", &[("action", "save-json"), ("json", "[{")]).await;
    assert_eq!(broken.status, StatusCode::BAD_REQUEST);
    assert!(broken.text.contains("This is not JSON"));
    let wrong = r#"[{"conditions": [{"field": "cookie", "op": "eq", "value": "x"}], "weight": 1}]"#;
    let refused = owner.post(&app, "/channels/checkout/matchers", &[("action", "save-json"), ("json", wrong)]).await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    assert!(refused.text.contains("Matcher 1, condition 1: field must be one of"), "{}", refused.text);
    let good = json!([{"conditions": [{"field": "attr.plan", "op": "in", "value": ["pro, yearly", "team"]}], "weight": 3, "note": ""}]);
    let saved =
        owner.post(&app, "/channels/checkout/matchers", &[("action", "save-json"), ("json", &good.to_string())]).await;
    redirected(&saved);
    assert_eq!(
        rest_channel(&app, "checkout").await.unwrap()["matchers"][0]["conditions"][0]["value"][0],
        "pro, yearly"
    );
    let tested = owner.get(&app, "/channels?url=https%3A%2F%2Fshop.example%2F&attrs=plan%3Dpro%2C+yearly").await.text;
    assert!(tested.contains("checkout has the highest positive score, 3."), "{tested}");

    let changes: Vec<Value> =
        audit(&app).await.into_iter().filter(|(a, _, _)| a == "channel.changed").map(|(_, _, d)| d).collect();
    assert_eq!(changes.len(), 2);
    assert_eq!(changes[0]["fields"], json!(["matchers"]));
}

#[tokio::test]
async fn live_hints_are_listed_and_weigh_in_the_tester() {
    let app = TestApp::new().await;
    let owner = Tab::owner(&app).await;
    app.rest("POST", &app.p("/hints"), Some(json!({"channelKey": "idea", "weight": "max"}))).await.ok(200);
    app.rest("POST", &app.p("/hints"), Some(json!({"channelKey": "question", "weight": 4, "userId": "u-7"})))
        .await
        .ok(200);
    let page = owner.get(&app, "/channels").await.text;
    let hints = &page[page.find("Live hints").unwrap()..];
    assert!(
        hints.contains(
            "<td><code>idea</code></td><td data-label=\"Weight\">max</td><td data-label=\"User\">everyone</td>"
        )
    );
    assert!(hints.contains("<code>u-7</code>") && hints.contains("in 5 min"), "{hints}");

    let tested = owner.get(&app, "/channels?url=https%3A%2F%2Fshop.example%2F&userId=u-1").await.text;
    assert!(tested.contains("A hint with weight max for idea wins over every score."), "{tested}");
    assert!(tested.contains("left out, for another user"));
    let without = owner.get(&app, "/channels?url=https%3A%2F%2Fshop.example%2F&nohints=1").await.text;
    assert!(without.contains("the default channel, bug."), "{without}");
}

#[tokio::test]
async fn a_member_reads_the_tabs_but_changes_nothing() {
    let app = TestApp::new().await;
    let member = Tab::member(&app).await;
    for tab in ["/channels", "/identity", "/flags"] {
        let page = member.get(&app, tab).await;
        assert_eq!(page.status, StatusCode::OK, "{tab}: {}", page.text);
        assert!(!page.text.contains(r#"method="post" action="/projects/"#), "{tab} has no forms for a member");
    }
    let attempts: [(&str, Vec<(&str, &str)>); 6] = [
        ("/channels", vec![("key", "sneaky"), ("name", "Sneaky"), ("color", "#000000"), ("mascot", "fox")]),
        ("/channels/bug", vec![("action", "archive")]),
        ("/channels/bug/matchers", vec![("action", "save-json"), ("json", "[]")]),
        ("/identity", vec![("action", "generate")]),
        ("/flags", vec![("key", "beta"), ("enabled", "on")]),
        ("/flags/beta", vec![("enabled", "on")]),
    ];
    for (path, fields) in &attempts {
        let resp = member.post(&app, path, fields).await;
        assert_eq!(resp.status, StatusCode::FORBIDDEN, "{path}: {}", resp.text);
    }
    assert!(rest_channel(&app, "sneaky").await.is_none());
    assert_eq!(rest_channel(&app, "bug").await.unwrap()["archived"], json!(false));
    assert!(app.store.list_flags(app.pid()).await.unwrap().is_empty());
    assert!(app.rest("GET", &app.p(""), None).await.ok(200)["identitySecretSet"] == json!(false));
    assert!(audit(&app).await.is_empty());
}

#[tokio::test]
async fn forms_without_the_csrf_token_or_from_another_site_are_refused() {
    let app = TestApp::new().await;
    let owner = Tab::owner(&app).await;
    let fields = [("key", "sneaky"), ("name", "Sneaky"), ("color", "#000000"), ("mascot", "fox")];
    let missing = owner.post_bare(&app, "/channels", &fields).await;
    assert_eq!(missing.status, StatusCode::FORBIDDEN, "{}", missing.text);
    let wrong = owner.post_bare(&app, "/channels", &[&[("_csrf", "0123456789abcdef")][..], &fields].concat()).await;
    assert_eq!(wrong.status, StatusCode::FORBIDDEN);
    for (path, fields) in [
        ("/identity", vec![("action", "generate")]),
        ("/flags", vec![("key", "beta"), ("enabled", "on")]),
        ("/channels/bug", vec![("action", "archive")]),
    ] {
        let resp = owner.post_bare(&app, path, &fields).await;
        assert_eq!(resp.status, StatusCode::FORBIDDEN, "{path}");
    }
    // The right token from another site's page.
    let path = format!("{}/channels", owner.base);
    let with_token = [&[("_csrf", owner.csrf.as_str())][..], &fields].concat();
    let cross =
        app.post_form_with(&path, &with_token, Some(&owner.cookie), &[("origin", "https://evil.example")]).await;
    assert_eq!(cross.status, StatusCode::FORBIDDEN);
    assert!(rest_channel(&app, "sneaky").await.is_none());
    assert_eq!(rest_channel(&app, "bug").await.unwrap()["archived"], json!(false));
    assert!(app.store.list_flags(app.pid()).await.unwrap().is_empty());
    assert!(audit(&app).await.is_empty());
}

#[tokio::test]
async fn channels_created_and_changed_through_rest_are_in_the_audit_log_too() {
    let app = TestApp::new().await;
    let body = json!({"key": "billing", "name": "Billing", "color": "#123456", "mascot": "owl"});
    app.rest("POST", &app.p("/channels"), Some(body)).await.ok(201);
    app.rest("PATCH", &app.p("/channels/billing"), Some(json!({"baseWeight": 1}))).await.ok(200);
    // A PATCH that changes nothing records nothing.
    app.rest("PATCH", &app.p("/channels/billing"), Some(json!({"baseWeight": 1}))).await.ok(200);
    let log = audit(&app).await;
    let acts: Vec<(&str, &str)> = log.iter().map(|(a, kind, _)| (a.as_str(), kind.as_str())).collect();
    assert_eq!(acts, [("channel.changed", "agent"), ("channel.created", "agent")]);
    assert_eq!(log[0].2, json!({"key": "billing", "fields": ["baseWeight"]}));
}

#[tokio::test]
async fn another_organizations_project_is_not_found() {
    let app = TestApp::new().await;
    let owner = Tab::owner(&app).await;
    use svc_service::projects;
    let org = projects::create_organization(app.service(), "Elsewhere").await.unwrap();
    let other =
        projects::create_project(app.service(), &svc_service::principal::Principal::Operator, &org.id, "Theirs")
            .await
            .unwrap();
    for tab in ["channels", "identity", "flags"] {
        let page = app.get_page(&format!("/projects/{}/{tab}", other.id), Some(&owner.cookie)).await;
        assert_eq!(page.status, StatusCode::NOT_FOUND, "{tab}");
    }
}
