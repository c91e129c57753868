//! Svc's domain: the types every surface and store share, their validation, identifiers, scopes,
//! statuses and the rules that decide titles. Nothing here performs I/O.

#![forbid(unsafe_code)]

pub mod account;
pub mod audit;
pub mod block;
pub mod channel;
pub mod context;
pub mod event;
pub mod identity;
pub mod ids;
pub mod ingest;
pub mod key;
pub mod mail;
pub mod markdown;
pub mod media;
pub mod model;
pub mod oauth;
pub mod picture;
pub mod project;
pub mod report;
pub mod reporter;
pub mod reproduction;
pub mod room;
pub mod routing;
pub mod scope;
pub mod search;
pub mod secret;
pub mod status;
pub mod steps;
pub mod time;
pub mod tracker;
pub mod triage;
pub mod webhook;

/// A validation failure: a message meant for the client, naming the field at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Invalid(pub String);

impl Invalid {
    pub fn new(message: impl Into<String>) -> Self {
        Invalid(message.into())
    }
}

/// The ten launcher mascots.
pub const MASCOTS: [&str; 10] =
    ["gecko", "owl", "fox", "cat", "axolotl", "raccoon", "chameleon", "otter", "robot", "blob"];
