//! What happened, as the event feed records it: written in the same transaction as the change it
//! describes (the transactional outbox), read by every consumer from its own remembered position
//! (live views, mail, webhooks, issue-tracker sync) and by scripts (`GET .../events?after=`).
//!
//! An event's id is monotonic per database and follows commit order: an event with a smaller id was
//! committed before one with a larger id, so a consumer that has read up to an id has seen every
//! event before it.

use serde::{Deserialize, Serialize};

use crate::model::Author;
use crate::status::Status;

/// What an event says happened, with what a consumer needs to act without reading the old state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", content = "data", rename_all_fields = "camelCase")]
pub enum EventKind {
    /// A report was filed (widget, tool endpoint).
    #[serde(rename = "report.created")]
    ReportCreated { channel_key: String },
    #[serde(rename = "report.status_changed")]
    StatusChanged { from: Status, to: Status },
    /// The assignee changed (user ids; `None`: nobody).
    #[serde(rename = "report.assigned")]
    Assigned { from: Option<String>, to: Option<String> },
    #[serde(rename = "report.labels_changed")]
    LabelsChanged { added: Vec<String>, removed: Vec<String>, labels: Vec<String> },
    /// A comment reached the report's thread: written published, or a draft published by a person.
    #[serde(rename = "comment.published")]
    CommentPublished { comment_id: String, was_draft: bool },
    /// The reporter answered "does it work now?".
    #[serde(rename = "report.confirmed")]
    Confirmed { works: bool },
    #[serde(rename = "room.created")]
    RoomCreated { artifact_id: String },
    /// The report went with its project's retention period.
    #[serde(rename = "report.deleted")]
    ReportDeleted,
}

/// The type names, as the feed and webhooks write them.
pub const EVENT_TYPES: [&str; 8] = [
    "report.created",
    "report.status_changed",
    "report.assigned",
    "report.labels_changed",
    "comment.published",
    "report.confirmed",
    "room.created",
    "report.deleted",
];

impl EventKind {
    /// `report.created`, `report.status_changed`, ...
    pub fn type_name(&self) -> &'static str {
        match self {
            EventKind::ReportCreated { .. } => "report.created",
            EventKind::StatusChanged { .. } => "report.status_changed",
            EventKind::Assigned { .. } => "report.assigned",
            EventKind::LabelsChanged { .. } => "report.labels_changed",
            EventKind::CommentPublished { .. } => "comment.published",
            EventKind::Confirmed { .. } => "report.confirmed",
            EventKind::RoomCreated { .. } => "room.created",
            EventKind::ReportDeleted => "report.deleted",
        }
    }

    /// The kind's own fields as JSON (the `data` column and the API's `data`).
    pub fn data(&self) -> serde_json::Value {
        let mut tagged = serde_json::to_value(self).unwrap_or_default();
        tagged.get_mut("data").map(serde_json::Value::take).unwrap_or(serde_json::Value::Null)
    }

    /// The kind of a stored event, from its type name and data.
    pub fn from_parts(type_name: &str, data: serde_json::Value) -> Result<Self, crate::Invalid> {
        let tagged = match data {
            serde_json::Value::Null => serde_json::json!({ "type": type_name }),
            data => serde_json::json!({ "type": type_name, "data": data }),
        };
        serde_json::from_value(tagged).map_err(|error| crate::Invalid::new(format!("event {type_name}: {error}")))
    }
}

/// An event to write with a change.
#[derive(Debug, Clone, PartialEq)]
pub struct NewEvent {
    pub project_id: String,
    /// The report it is about (all but `room.created`).
    pub report_id: Option<String>,
    pub kind: EventKind,
    /// Who did it: a person, an agent, a reporter, Svc itself.
    pub by: Author,
    pub at: i64,
}

impl NewEvent {
    /// `report.created` for a report just filed, by its author.
    pub fn report_created(report: &crate::model::Report) -> Self {
        NewEvent {
            project_id: report.project_id.clone(),
            report_id: Some(report.id.clone()),
            kind: EventKind::ReportCreated { channel_key: report.channel_key.clone() },
            by: report.author.clone(),
            at: report.created_at,
        }
    }
}

/// An event as the feed holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// Monotonic per database, in commit order.
    pub id: i64,
    pub project_id: String,
    pub report_id: Option<String>,
    pub kind: EventKind,
    pub by: Author,
    pub at: i64,
}

/// Consumers of the feed that remember how far they have read.
pub mod consumer {
    /// The team's mail notifications (new reports at once, reporters' replies, "does it work now?").
    pub const MAIL: &str = "mail";
    /// Webhook deliveries (one per event and endpoint).
    pub const WEBHOOKS: &str = "webhooks";
    /// Svc's changes sent to linked issues, and issues made by channel rules.
    pub const TRACKERS: &str = "trackers";
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn kinds_round_trip_through_their_type_and_data() {
        let kinds = [
            EventKind::ReportCreated { channel_key: "bug".into() },
            EventKind::StatusChanged { from: Status::New, to: Status::Fixed },
            EventKind::Assigned { from: None, to: Some("u1".into()) },
            EventKind::LabelsChanged { added: vec!["ui".into()], removed: vec![], labels: vec!["ui".into()] },
            EventKind::CommentPublished { comment_id: "c1".into(), was_draft: true },
            EventKind::Confirmed { works: false },
            EventKind::RoomCreated { artifact_id: "build-7".into() },
            EventKind::ReportDeleted,
        ];
        for kind in kinds {
            assert!(EVENT_TYPES.contains(&kind.type_name()));
            let back = EventKind::from_parts(kind.type_name(), kind.data()).unwrap();
            assert_eq!(back, kind);
        }
        assert_eq!(
            EventKind::StatusChanged { from: Status::New, to: Status::InProgress }.data(),
            json!({"from": "new", "to": "in-progress"})
        );
        assert_eq!(
            EventKind::CommentPublished { comment_id: "c1".into(), was_draft: false }.data(),
            json!({"commentId": "c1", "wasDraft": false})
        );
        assert!(EventKind::from_parts("report.exploded", json!({})).is_err());
    }
}
