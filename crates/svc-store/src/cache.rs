//! A short-lived cache of what every ingest request looks up: the project by its public key and
//! the project's active channels. Both change rarely and are read on every report, so each backend
//! keeps them here for [`TTL`].
//!
//! Freshness: a change made through the same store (PATCH of a project or channel, a new channel,
//! `set_identity_secret`) clears the cache once it is committed, so this process sees it at once. A
//! change made by another process (the CLI, another instance on the same PostgreSQL) is seen within
//! [`TTL`]. A lookup that was already running when a change cleared the cache does not put its
//! (possibly old) answer back: every clear bumps a generation, and answers read under an older
//! generation are dropped.
//!
//! Entries are shared (`Arc`): a lookup hands out a pointer, not a copy of the project (its widget
//! configuration a JSON tree) and of every channel with its matchers, as it did for every report.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use svc_core::model::{Channel, Project};

/// How long a cached project or channel list is used.
pub const TTL: Duration = Duration::from_secs(2);
/// Entries kept per map; past this, expired entries go, and if that is not enough, all.
const MAX_ENTRIES: usize = 1024;

#[derive(Default)]
struct Maps {
    /// By public project key.
    projects: HashMap<String, (Instant, Arc<Project>)>,
    /// Active (not archived) channels, by project id.
    channels: HashMap<String, (Instant, Arc<[Channel]>)>,
}

#[derive(Default)]
pub(crate) struct HotCache {
    generation: AtomicU64,
    maps: Mutex<Maps>,
}

impl std::fmt::Debug for HotCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HotCache").field("generation", &self.generation.load(Ordering::Relaxed)).finish()
    }
}

fn fresh<T: Clone>(entry: Option<&(Instant, T)>) -> Option<T> {
    entry.filter(|(at, _)| at.elapsed() < TTL).map(|(_, value)| value.clone())
}

fn insert<T>(map: &mut HashMap<String, (Instant, T)>, key: String, value: T) {
    if map.len() >= MAX_ENTRIES {
        map.retain(|_, (at, _)| at.elapsed() < TTL);
        if map.len() >= MAX_ENTRIES {
            map.clear();
        }
    }
    map.insert(key, (Instant::now(), value));
}

impl HotCache {
    fn maps(&self) -> std::sync::MutexGuard<'_, Maps> {
        self.maps.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Take this before reading the database; pass it back when remembering the answer.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    pub fn project_by_key(&self, project_key: &str) -> Option<Arc<Project>> {
        fresh(self.maps().projects.get(project_key))
    }

    pub fn remember_project(&self, generation: u64, project: &Arc<Project>) {
        let mut maps = self.maps();
        if generation == self.generation() {
            insert(&mut maps.projects, project.project_key.clone(), Arc::clone(project));
        }
    }

    pub fn active_channels(&self, project_id: &str) -> Option<Arc<[Channel]>> {
        fresh(self.maps().channels.get(project_id))
    }

    pub fn remember_channels(&self, generation: u64, project_id: &str, channels: &Arc<[Channel]>) {
        let mut maps = self.maps();
        if generation == self.generation() {
            insert(&mut maps.channels, project_id.to_string(), Arc::clone(channels));
        }
    }

    /// After a committed change to any project or channel.
    pub fn clear(&self) {
        let mut maps = self.maps();
        self.generation.fetch_add(1, Ordering::AcqRel);
        maps.projects.clear();
        maps.channels.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project(key: &str) -> Project {
        Project {
            id: "p1".into(),
            org_id: "o1".into(),
            name: "P".into(),
            slug: "p".into(),
            project_key: key.into(),
            url_patterns: vec![],
            default_channel_key: "bug".into(),
            widget_config: serde_json::json!({}),
            allowed_origins: vec![],
            identity_secret: None,
            created_at: 0,
            retention_days: None,
            reporter_auth: Default::default(),
        }
    }

    #[test]
    fn remembers_until_cleared_and_drops_answers_read_before_a_clear() {
        let cache = HotCache::default();
        let generation = cache.generation();
        cache.remember_project(generation, &Arc::new(project("pr_a")));
        let first = cache.project_by_key("pr_a").expect("remembered");
        assert_eq!(first.project_key, "pr_a");
        // Every lookup shares the one cached project; none copies it.
        assert!(Arc::ptr_eq(&first, &cache.project_by_key("pr_a").expect("remembered")));
        assert!(cache.project_by_key("pr_b").is_none());

        let before = cache.generation();
        cache.clear();
        assert!(cache.project_by_key("pr_a").is_none());
        // A lookup that started before the clear must not repopulate the cache.
        cache.remember_project(before, &Arc::new(project("pr_a")));
        cache.remember_channels(before, "p1", &Arc::from([]));
        assert!(cache.project_by_key("pr_a").is_none());
        assert!(cache.active_channels("p1").is_none());

        cache.remember_channels(cache.generation(), "p1", &Arc::from([]));
        assert_eq!(cache.active_channels("p1").as_deref(), Some(&[][..]));
    }
}
