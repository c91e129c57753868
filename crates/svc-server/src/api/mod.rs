//! The REST API under `/api/v1`, and its OpenAPI document generated from the handlers.

pub mod blobs;
pub mod channels;
pub mod events;
pub mod extract;
pub mod feedback;
pub mod flags;
pub mod integrations;
pub mod keys;
pub mod me;
pub mod projects;
pub mod query;
mod request_schemas;
pub mod rooms;
pub mod views;
pub mod webhooks;

use axum::Json;
use axum::routing::get;
use utoipa::OpenApi;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::state::AppState;

#[derive(OpenApi)]
#[openapi(
    info(title = "Svc REST API", description = "Feedback reports, rooms, channels, keys and flags of one project. \
        Authenticate with `Authorization: Bearer pr_sk_...`; errors are `{error, code}`."),
    modifiers(&BearerAuth),
    components(schemas(crate::error::ErrorBody))
)]
struct ApiDoc;

struct BearerAuth;

impl utoipa::Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).bearer_format("pr_sk_...").build()),
        );
    }
}

/// Every REST route with its OpenAPI description, so the document cannot miss a route.
fn documented_routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .routes(routes!(me::me))
        .routes(routes!(projects::get_project, projects::patch_project))
        .routes(routes!(feedback::list_feedback))
        .routes(routes!(feedback::get_feedback, feedback::patch_feedback))
        .routes(routes!(feedback::list_comments))
        .routes(routes!(events::list_events))
        .routes(routes!(rooms::list_rooms, rooms::create_room))
        .routes(routes!(rooms::patch_room))
        .routes(routes!(channels::list_channels, channels::create_channel))
        .routes(routes!(channels::patch_channel))
        .routes(routes!(channels::create_hint))
        .routes(routes!(keys::mint_key))
        .routes(routes!(keys::revoke_key))
        .routes(routes!(flags::list_flags))
        .routes(routes!(flags::set_flag))
        .routes(routes!(blobs::get_blob))
        .routes(routes!(webhooks::list_webhooks, webhooks::create_webhook))
        .routes(routes!(webhooks::get_webhook, webhooks::patch_webhook, webhooks::delete_webhook))
        .routes(routes!(webhooks::rotate_secret))
        .routes(routes!(webhooks::test_webhook))
        .routes(routes!(webhooks::list_deliveries))
        .routes(routes!(webhooks::resend_delivery))
        .routes(routes!(integrations::get_github, integrations::put_github, integrations::delete_github))
        .routes(routes!(integrations::check_github))
        .routes(routes!(integrations::push_issue))
        .routes(routes!(integrations::github_webhook))
}

/// The OpenAPI 3.1 document of the REST API (paths relative to the server root).
pub fn openapi() -> utoipa::openapi::OpenApi {
    router_and_document().1
}

fn router_and_document() -> (axum::Router<AppState>, utoipa::openapi::OpenApi) {
    let (router, mut openapi) = OpenApiRouter::new().nest("/api/v1", documented_routes()).split_for_parts();
    document_common_answers(&mut openapi);
    (router, openapi)
}

/// Adds the answers every route shares, where its own description does not list them: the error
/// shapes of authentication, rate limiting, malformed input and internal failure. Written once
/// here, so no route can forget one.
fn document_common_answers(openapi: &mut utoipa::openapi::OpenApi) {
    use utoipa::openapi::path::{Operation, ParameterIn};
    use utoipa::openapi::{ContentBuilder, Ref, RefOr, ResponseBuilder};

    let error = |description: &str| {
        let content = ContentBuilder::new().schema(Some(Ref::from_schema_name("ErrorBody"))).build();
        RefOr::T(ResponseBuilder::new().description(description).content("application/json", content).build())
    };
    for (path, item) in openapi.paths.paths.iter_mut() {
        let operations: [&mut Option<Operation>; 5] =
            [&mut item.get, &mut item.put, &mut item.post, &mut item.delete, &mut item.patch];
        for operation in operations.into_iter().flatten() {
            let has_body = operation.request_body.is_some();
            let has_query = operation
                .parameters
                .iter()
                .flatten()
                .any(|parameter| matches!(parameter, RefOr::T(p) if matches!(p.parameter_in, ParameterIn::Query)));
            let secured = operation.security.is_some();
            let mut answers: Vec<(&str, &str)> = Vec::new();
            if has_body || has_query {
                answers.push(("400", "malformed input: a body or query the route does not accept (BAD_REQUEST)"));
            }
            if secured {
                answers.push(("401", "missing, invalid, expired or revoked key (UNAUTHORIZED)"));
                answers.push(("403", "the key lacks the scope, or belongs to another project (FORBIDDEN)"));
                answers.push(("429", "over the per-key rate limit (RATE_LIMITED); Retry-After says when to retry"));
            }
            if path.contains("{projectId}") {
                answers.push(("404", "no such project, or a malformed id (NOT_FOUND)"));
            }
            if has_body {
                answers.push(("413", "body over 1 MB (PAYLOAD_TOO_LARGE)"));
            }
            answers.push(("500", "internal error; the message names the request id (INTERNAL)"));
            for (status, description) in answers {
                operation.responses.responses.entry(status.to_string()).or_insert_with(|| error(description));
            }
        }
    }
}

/// The `/api/v1` router, `GET /api/v1/openapi.json` included (it needs no key).
pub fn router() -> axum::Router<AppState> {
    let (router, openapi) = router_and_document();
    let document = std::sync::Arc::new(openapi);
    let router = router.route("/api/v1/openapi.json", get(move || async move { Json(document.as_ref().clone()) }));
    crate::catch_panics(router, crate::error::internal_response)
        .layer(axum::middleware::map_response(method_not_allowed_body))
}

/// A known path with a method it does not take answers 405 in the REST error shape (axum's own 405
/// has an empty body), keeping the `Allow` header.
async fn method_not_allowed_body(response: axum::response::Response) -> axum::response::Response {
    use axum::http::{StatusCode, header};
    use axum::response::IntoResponse;
    if response.status() != StatusCode::METHOD_NOT_ALLOWED {
        return response;
    }
    let body =
        crate::error::ErrorBody { error: "method not allowed on this path".into(), code: "METHOD_NOT_ALLOWED".into() };
    let mut answer = (StatusCode::METHOD_NOT_ALLOWED, Json(body)).into_response();
    if let Some(allow) = response.headers().get(header::ALLOW) {
        answer.headers_mut().insert(header::ALLOW, allow.clone());
    }
    answer
}
