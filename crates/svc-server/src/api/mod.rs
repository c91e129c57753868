//! The REST API under `/api/v1`, and its OpenAPI document generated from the handlers.

pub mod blobs;
pub mod channels;
pub mod extract;
pub mod feedback;
pub mod flags;
pub mod keys;
pub mod me;
pub mod projects;
pub mod rooms;
pub mod views;

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
}

/// The OpenAPI 3.1 document of the REST API (paths relative to the server root).
pub fn openapi() -> utoipa::openapi::OpenApi {
    OpenApiRouter::<AppState>::new().nest("/api/v1", documented_routes()).split_for_parts().1
}

/// The `/api/v1` router, `GET /api/v1/openapi.json` included (it needs no key).
pub fn router() -> axum::Router<AppState> {
    let (router, openapi) = OpenApiRouter::new().nest("/api/v1", documented_routes()).split_for_parts();
    let document = std::sync::Arc::new(openapi);
    router
        .route("/api/v1/openapi.json", get(move || async move { Json(document.as_ref().clone()) }))
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
