//! How busy the server is filing reports, for the background work that can wait.
//!
//! Work in the idle scheduling class (the service's webhook delivery) gives a core up as soon as a
//! request's thread wants it, but while reports arrive as fast as the server can file them it
//! still costs them: on the two-core machines the bench runs on, two idle-class busy loops took
//! nearly a quarter off full-rate ingest, and two that ran a quarter of the time an eighth
//! (bench/README.md, "Webhooks at full rate: delivery waits out bursts"). So work that can wait
//! (webhook delivery, search indexing) also waits while a burst of reports is being filed, a few
//! seconds at a time at most, and goes on as soon as the burst is over. The service counts the
//! reports it files; the store keeps the count, since its own background tasks read it too.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// Reports being filed at once from which the server is in a burst. A site's reporters file one at a
/// time and each takes a few milliseconds, so at a steady 1,000 reports a second about two are in
/// flight; when clients send faster than the disk syncs, the rest queue (at full rate, 64 clients
/// keep about 50 in flight: 15,000 reports a second, 3.5 ms each).
pub const BURST: usize = 16;

/// How long background work waits out a burst, at most, before it goes on for one batch anyway:
/// under a load that never lets up it still makes progress.
pub const LONGEST_WAIT: Duration = Duration::from_secs(5);

/// How often a wait looks again.
const STEP: Duration = Duration::from_millis(50);

/// The count of reports being filed now (held by the service's `reports::file`).
#[derive(Debug, Default)]
pub struct Load {
    filing: AtomicUsize,
}

/// One report being filed; counted until dropped.
pub struct Filing<'a>(&'a AtomicUsize);

impl Drop for Filing<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Load {
    /// Counts a report being filed until the result is dropped.
    pub fn filing(&self) -> Filing<'_> {
        self.filing.fetch_add(1, Ordering::Relaxed);
        Filing(&self.filing)
    }

    /// Reports being filed now.
    pub fn filings(&self) -> usize {
        self.filing.load(Ordering::Relaxed)
    }

    /// Whether a burst of reports is being filed now.
    pub fn in_burst(&self) -> bool {
        self.filings() >= BURST
    }

    /// Waits while a burst of reports is being filed, `longest` at most; says whether the burst was
    /// over (`false`: it went on the whole time, and the caller goes ahead anyway, so work that waits
    /// still makes progress under a load that never lets up).
    pub async fn wait_out_burst(&self, longest: Duration) -> bool {
        let mut waited = Duration::ZERO;
        while self.in_burst() {
            if waited >= longest {
                return false;
            }
            tokio::time::sleep(STEP).await;
            waited += STEP;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_filing_counts_until_it_is_dropped() {
        let load = Load::default();
        let filings: Vec<Filing> = (0..BURST).map(|_| load.filing()).collect();
        assert_eq!(load.filings(), BURST);
        assert!(load.in_burst());
        drop(filings);
        assert_eq!(load.filings(), 0);
        assert!(!load.in_burst());
    }

    /// Virtual time: the waits below take no real time.
    #[tokio::test(start_paused = true)]
    async fn a_wait_ends_with_the_burst_or_after_the_longest_wait() {
        let load = std::sync::Arc::new(Load::default());
        let longest = Duration::from_secs(5);

        let started = tokio::time::Instant::now();
        assert!(load.wait_out_burst(longest).await, "no burst: no wait");
        assert_eq!(started.elapsed(), Duration::ZERO);

        // A burst that never ends: the wait gives up after `longest`, so the work goes on.
        let burst: Vec<Filing> = (0..BURST).map(|_| load.filing()).collect();
        let started = tokio::time::Instant::now();
        assert!(!load.wait_out_burst(longest).await);
        assert!(started.elapsed() >= longest && started.elapsed() < longest + STEP * 2);
        drop(burst);

        // A burst that ends after a second: the wait ends with it.
        let waiting = {
            let load = load.clone();
            tokio::spawn(async move {
                let started = tokio::time::Instant::now();
                (load.wait_out_burst(longest).await, started.elapsed())
            })
        };
        let burst: Vec<Filing> = (0..BURST).map(|_| load.filing()).collect();
        tokio::time::sleep(Duration::from_secs(1)).await;
        drop(burst);
        let (ended, waited) = waiting.await.unwrap();
        assert!(ended, "the burst ended before the longest wait");
        assert!(waited >= Duration::from_secs(1) - STEP && waited < Duration::from_secs(1) + STEP * 2, "{waited:?}");
    }
}
