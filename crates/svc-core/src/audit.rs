//! The audit log: who did what to a project's settings, keys, members and reports, and when.

use crate::model::Author;
use serde_json::Value;

/// One recorded act. `project_id` is `None` for acts on the organization itself (members,
/// projects created or deleted).
#[derive(Debug, Clone, PartialEq)]
pub struct AuditEvent {
    pub id: String,
    pub org_id: String,
    pub project_id: Option<String>,
    pub at: i64,
    pub actor: Author,
    /// One of the [`action`] names.
    pub action: String,
    /// What changed, as a small JSON object (names and values, never secrets).
    pub detail: Value,
}

/// The acts the log records, as stored.
pub mod action {
    pub const PROJECT_CREATED: &str = "project.created";
    pub const PROJECT_RENAMED: &str = "project.renamed";
    pub const PROJECT_DELETED: &str = "project.deleted";
    pub const SETTINGS_CHANGED: &str = "settings.changed";
    pub const RETENTION_CHANGED: &str = "retention.changed";
    pub const IDENTITY_SECRET_SET: &str = "identity_secret.set";
    pub const IDENTITY_SECRET_CLEARED: &str = "identity_secret.cleared";
    pub const KEY_MINTED: &str = "key.minted";
    pub const KEY_REVOKED: &str = "key.revoked";
    pub const CHANNEL_CREATED: &str = "channel.created";
    pub const CHANNEL_CHANGED: &str = "channel.changed";
    pub const FLAG_SET: &str = "flag.set";
    pub const MEMBER_INVITED: &str = "member.invited";
    pub const MEMBER_ADDED: &str = "member.added";
    pub const MEMBER_ROLE_CHANGED: &str = "member.role_changed";
    pub const MEMBER_REMOVED: &str = "member.removed";
    pub const MEMBER_INVITE_WITHDRAWN: &str = "member.invite_withdrawn";
    pub const STATUS_CHANGED: &str = "report.status_changed";
    pub const DRAFT_PUBLISHED: &str = "comment.published";
    pub const REPORTS_EXPIRED: &str = "reports.expired";
    pub const WEBHOOK_CREATED: &str = "webhook.created";
    pub const WEBHOOK_UPDATED: &str = "webhook.updated";
    pub const WEBHOOK_DELETED: &str = "webhook.deleted";
    pub const WEBHOOK_SECRET_ROTATED: &str = "webhook.secret_rotated";
    pub const TRACKER_CONNECTED: &str = "tracker.connected";
    pub const TRACKER_UPDATED: &str = "tracker.updated";
    pub const TRACKER_DISCONNECTED: &str = "tracker.disconnected";
    pub const ISSUE_CREATED: &str = "issue.created";
}

/// A sentence for one act, for people reading the log ("minted key Deploy bot").
pub fn describe(action: &str, detail: &Value) -> String {
    let text = |name: &str| detail.get(name).and_then(Value::as_str).unwrap_or("").to_string();
    match action {
        action::PROJECT_CREATED => format!("created the project {}", text("name")),
        action::PROJECT_RENAMED => format!("renamed the project from {} to {}", text("from"), text("to")),
        action::PROJECT_DELETED => format!("deleted the project {}", text("name")),
        action::SETTINGS_CHANGED => {
            let fields = detail
                .get("fields")
                .and_then(Value::as_array)
                .map(|fields| fields.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(", "))
                .unwrap_or_default();
            format!("changed the settings {fields}")
        }
        action::RETENTION_CHANGED => match detail.get("days").and_then(Value::as_i64) {
            Some(days) => format!("set retention to {days} days"),
            None => "turned retention off".to_string(),
        },
        action::IDENTITY_SECRET_SET => "set the identity secret".to_string(),
        action::IDENTITY_SECRET_CLEARED => "cleared the identity secret".to_string(),
        action::KEY_MINTED => format!("minted the key {} ({})", text("name"), text("scopes")),
        action::KEY_REVOKED => format!("revoked the key {}", text("name")),
        action::CHANNEL_CREATED => format!("created the channel {}", text("key")),
        action::CHANNEL_CHANGED => format!("changed the channel {}", text("key")),
        action::FLAG_SET => format!(
            "turned the flag {} {}",
            text("key"),
            if detail.get("enabled").and_then(Value::as_bool) == Some(true) { "on" } else { "off" }
        ),
        action::MEMBER_INVITED => match text("role").as_str() {
            "owner" => "invited an owner".to_string(),
            role => format!("invited a {role}"),
        },
        action::MEMBER_ADDED => format!("added {} as {}", text("member"), text("role")),
        action::MEMBER_ROLE_CHANGED => format!("made {} {}", text("member"), text("role")),
        action::MEMBER_REMOVED => format!("removed {}", text("member")),
        action::MEMBER_INVITE_WITHDRAWN => "withdrew an invitation".to_string(),
        action::STATUS_CHANGED => {
            format!("moved report {} from {} to {}", text("shortId"), text("from"), text("to"))
        }
        action::DRAFT_PUBLISHED => format!("published a draft on report {}", text("shortId")),
        action::REPORTS_EXPIRED => format!(
            "deleted {} reports older than {} days",
            detail.get("count").and_then(Value::as_u64).unwrap_or(0),
            detail.get("days").and_then(Value::as_i64).unwrap_or(0)
        ),
        // `url` is stored as scheme://host/… (a chat webhook's path is its secret).
        action::WEBHOOK_CREATED => format!("added the webhook {} ({})", text("url"), text("format")),
        action::WEBHOOK_UPDATED => format!("changed the webhook {}", text("url")),
        action::WEBHOOK_DELETED => format!("deleted the webhook {}", text("url")),
        action::WEBHOOK_SECRET_ROTATED => format!("rotated the signing secret of the webhook {}", text("url")),
        action::TRACKER_CONNECTED => format!("connected the {} repository {}", text("tracker"), text("repository")),
        action::TRACKER_UPDATED => format!("changed the {} connection to {}", text("tracker"), text("repository")),
        action::TRACKER_DISCONNECTED => {
            format!("disconnected the {} repository {}", text("tracker"), text("repository"))
        }
        action::ISSUE_CREATED => format!("made the issue {} for report {}", text("issue"), text("shortId")),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn acts_read_as_sentences() {
        assert_eq!(
            describe(action::KEY_MINTED, &json!({"name": "CI", "scopes": "feedback:read"})),
            "minted the key CI (feedback:read)"
        );
        assert_eq!(describe(action::RETENTION_CHANGED, &json!({"days": null})), "turned retention off");
        assert_eq!(
            describe(action::STATUS_CHANGED, &json!({"shortId": "a1b2c3", "from": "new", "to": "fixed"})),
            "moved report a1b2c3 from new to fixed"
        );
        let hook =
            json!({"webhookId": "6650f0c2a1b2c3d4e5f60718", "url": "https://hooks.slack.com/…", "format": "slack"});
        assert_eq!(describe(action::WEBHOOK_CREATED, &hook), "added the webhook https://hooks.slack.com/… (slack)");
        assert_eq!(describe(action::WEBHOOK_UPDATED, &hook), "changed the webhook https://hooks.slack.com/…");
        assert_eq!(describe(action::WEBHOOK_DELETED, &hook), "deleted the webhook https://hooks.slack.com/…");
        assert_eq!(
            describe("webhook.secret_rotated", &json!({"url": "https://ops.example.com:8443/…", "format": "standard"})),
            "rotated the signing secret of the webhook https://ops.example.com:8443/…"
        );
    }
}
