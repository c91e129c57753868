//! Small measuring helpers: latency lists, medians, CPU time, resident set size.

use std::time::Duration;

/// Recorded latencies in microseconds.
#[derive(Default)]
pub struct Latencies(Vec<u32>);

impl Latencies {
    pub fn record(&mut self, latency: Duration) {
        self.0.push(latency.as_micros().min(u32::MAX as u128) as u32);
    }
    pub fn extend(&mut self, other: Latencies) {
        self.0.extend(other.0);
    }
    pub fn count(&self) -> usize {
        self.0.len()
    }
    /// Nearest-rank percentile in milliseconds (`None` without samples).
    pub fn percentile_ms(&mut self, p: f64) -> Option<f64> {
        if self.0.is_empty() {
            return None;
        }
        self.0.sort_unstable();
        let rank = ((p / 100.0) * self.0.len() as f64).ceil() as usize;
        Some(f64::from(self.0[rank.clamp(1, self.0.len()) - 1]) / 1000.0)
    }
}

/// Median, min and max of a list (`None` when empty). The median of an even count is the mean of
/// the middle two.
pub fn summary(values: &[f64]) -> Option<(f64, f64, f64)> {
    if values.is_empty() {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(|a, b| a.total_cmp(b));
    let mid = sorted.len() / 2;
    let median = if sorted.len() % 2 == 0 { (sorted[mid - 1] + sorted[mid]) / 2.0 } else { sorted[mid] };
    Some((median, sorted[0], sorted[sorted.len() - 1]))
}

/// Whether `after` differs from `before` beyond the noise, pair by pair (each pair measured side by
/// side): the two-sided p-value of Wilcoxon's signed-rank test on the pairs' log ratios, exact (every
/// one of the 2^n sign patterns counted). Ties share their ranks; equal pairs are left out. Below
/// 0.05, one side is slower than the machine's own spread explains; `None` with no unequal pair.
pub fn signed_rank_p(pairs: &[(f64, f64)]) -> Option<f64> {
    let mut differences: Vec<f64> = pairs
        .iter()
        .filter(|(before, after)| *before > 0.0 && *after > 0.0)
        .map(|(before, after)| (after / before).ln())
        .filter(|difference| *difference != 0.0)
        .collect();
    if differences.is_empty() {
        return None;
    }
    differences.sort_by(|a, b| a.abs().total_cmp(&b.abs()));
    // Ranks doubled, so tied ranks (averages, halves) stay whole numbers.
    let mut ranks = vec![0usize; differences.len()];
    let mut start = 0;
    while start < differences.len() {
        let mut end = start;
        while end + 1 < differences.len() && differences[end + 1].abs() == differences[start].abs() {
            end += 1;
        }
        for rank in &mut ranks[start..=end] {
            *rank = start + end + 2;
        }
        start = end + 1;
    }
    let positive: usize = ranks.iter().zip(&differences).filter(|(_, d)| **d > 0.0).map(|(rank, _)| rank).sum();
    // How many sign patterns give each sum of positive (doubled) ranks.
    let total: usize = ranks.iter().sum();
    let mut ways = vec![0f64; total + 1];
    ways[0] = 1.0;
    for &rank in &ranks {
        for sum in (rank..=total).rev() {
            ways[sum] += ways[sum - rank];
        }
    }
    let patterns = 2f64.powi(ranks.len() as i32);
    let at_most: f64 = ways[..=positive].iter().sum::<f64>() / patterns;
    let at_least: f64 = ways[positive..].iter().sum::<f64>() / patterns;
    Some((2.0 * at_most.min(at_least)).min(1.0))
}

fn timeval_seconds(tv: libc::timeval) -> f64 {
    tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6
}

/// User + system CPU seconds this process has used.
#[allow(unsafe_code)]
pub fn cpu_seconds_self() -> f64 {
    // SAFETY: getrusage fills the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    timeval_seconds(usage.ru_utime) + timeval_seconds(usage.ru_stime)
}

/// Waits for a child and returns (exit success, user + system CPU seconds it used).
#[allow(unsafe_code)]
pub fn wait_with_cpu(child: &mut std::process::Child) -> anyhow::Result<(bool, f64)> {
    let pid = child.id() as libc::pid_t;
    let mut status: libc::c_int = 0;
    // SAFETY: wait4 on our own child; both out-pointers are valid.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    anyhow::ensure!(waited == pid, "wait4 failed: {}", std::io::Error::last_os_error());
    let success = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
    Ok((success, timeval_seconds(usage.ru_utime) + timeval_seconds(usage.ru_stime)))
}

/// (current RSS, peak RSS) of a process in MiB, from /proc.
pub fn rss_mib(pid: u32) -> Option<(f64, f64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<f64>().ok())
            .map(|kb| kb / 1024.0)
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}

/// Bytes a process has sent to storage so far (its dirtied pages, fsynced or not), from /proc.
pub fn written_bytes(pid: u32) -> Option<u64> {
    let io = std::fs::read_to_string(format!("/proc/{pid}/io")).ok()?;
    io.lines().find_map(|line| line.strip_prefix("write_bytes:")).and_then(|bytes| bytes.trim().parse().ok())
}

/// CPU time (user + system) a process has used so far, in seconds, from /proc.
pub fn process_cpu_seconds(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat_cpu_seconds(&stat).map(|(_, seconds)| seconds)
}

/// CPU time (user + system) of a process's threads so far, in seconds, summed by thread name (a
/// thread that ended meanwhile is not counted: compare two readings only over threads that live
/// through both, as the server's pools' do).
pub fn thread_cpu_seconds(pid: u32) -> std::collections::BTreeMap<String, f64> {
    let mut by_name = std::collections::BTreeMap::new();
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return by_name };
    for task in tasks.flatten() {
        let Ok(stat) = std::fs::read_to_string(task.path().join("stat")) else { continue };
        if let Some((name, seconds)) = stat_cpu_seconds(&stat) {
            *by_name.entry(name).or_insert(0.0) += seconds;
        }
    }
    by_name
}

/// The name and the user + system seconds of a `/proc/.../stat` line.
#[allow(unsafe_code)]
fn stat_cpu_seconds(stat: &str) -> Option<(String, f64)> {
    // The command name (field 2) may hold spaces and parentheses; the fields after it are counted
    // from its last ')'.
    let name_end = stat.rfind(')')?;
    let name = &stat[stat.find('(')? + 1..name_end];
    let fields: Vec<&str> = stat.get(name_end + 2..)?.split_whitespace().collect();
    let ticks = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    // SAFETY: sysconf only reads a configuration value.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    Some((name.to_string(), ticks / per_second.max(1.0)))
}

/// The machine's 1-minute load average.
pub fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg").ok()?.split_whitespace().next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_and_medians() {
        let mut l = Latencies::default();
        for ms in 1..=100 {
            l.record(Duration::from_millis(ms));
        }
        assert_eq!(l.percentile_ms(50.0), Some(50.0));
        assert_eq!(l.percentile_ms(99.0), Some(99.0));
        assert_eq!(summary(&[3.0, 1.0, 2.0]), Some((2.0, 1.0, 3.0)));
        assert_eq!(summary(&[4.0, 1.0, 2.0, 3.0]), Some((2.5, 1.0, 4.0)));
    }

    #[test]
    fn the_signed_rank_test_tells_a_steady_slowdown_from_noise() {
        // Six pairs all slower: the smallest p six pairs can give (2 / 64).
        let slower: Vec<(f64, f64)> = (1..=6).map(|i| (10.0, 11.0 + f64::from(i))).collect();
        assert!((signed_rank_p(&slower).unwrap() - 2.0 / 64.0).abs() < 1e-12);
        // Up and down by the same amounts: nothing to tell.
        let mixed = [(10.0, 12.0), (10.0, 8.0), (10.0, 13.0), (13.0, 10.0), (10.0, 11.0), (11.0, 10.0)];
        assert!(signed_rank_p(&mixed).unwrap() > 0.5);
        assert_eq!(signed_rank_p(&[(5.0, 5.0)]), None);
    }

    #[test]
    #[allow(unsafe_code)]
    fn cpu_time_is_read_per_thread_name() {
        let line = "12 (svc) worker) R 1 2 3 4 5 6 7 8 9 10 250 50 0 0 20 0 1 0";
        let (name, seconds) = stat_cpu_seconds(line).unwrap();
        assert_eq!(name, "svc) worker");
        // SAFETY: sysconf only reads a configuration value.
        let ticks_per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
        assert!((seconds - 300.0 / ticks_per_second).abs() < 1e-9);

        let busy = std::thread::Builder::new()
            .name("bench-busy".into())
            .spawn(|| {
                let started = std::time::Instant::now();
                let mut spin = 0u64;
                while started.elapsed() < std::time::Duration::from_millis(300) {
                    spin = std::hint::black_box(spin.wrapping_add(1));
                }
                crate::stats::thread_cpu_seconds(std::process::id())
            })
            .unwrap()
            .join()
            .unwrap();
        assert!(busy.get("bench-busy").is_some_and(|&seconds| seconds > 0.0), "{busy:?}");
    }
}
