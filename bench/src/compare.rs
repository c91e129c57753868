//! `svc-bench compare`: two builds (a base commit's and the working tree's) measured alternately in
//! one run, so the machine's state at the moment weighs on both alike, and the ratio of each figure.
//! Each side runs its own `svc-bench suite` (its seeder writes the database its `svc` expects), one
//! measured run per round, base and head taking turns to go first; the table gives each side's
//! median over the rounds and head ÷ base. What `bench/run --compare <commit>` prints.

use anyhow::Context;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One side of the comparison: a build of `svc` and the `svc-bench` built with it.
pub struct Side {
    /// `base` or `head`, and the commit it is (for the table).
    pub name: String,
    pub label: String,
    pub bench: PathBuf,
    pub svc: PathBuf,
}

pub struct Options {
    pub base: Side,
    pub head: Side,
    /// Scenarios, as `svc-bench suite --only` takes them.
    pub only: Vec<String>,
    pub rounds: usize,
    /// Passed on to each suite (`--seconds`, `--list-seconds`, `--reports`).
    pub suite_args: Vec<String>,
    pub work: PathBuf,
    pub out: PathBuf,
}

/// A figure of a table: (scenario, measure).
type Key = (String, String);

/// The rows of a suite's Markdown table: scenario, measure, median. Skipped rows and the header
/// carry no number and are left out.
pub fn parse_table(markdown: &str) -> Vec<(Key, f64)> {
    markdown
        .lines()
        .filter(|line| line.starts_with("| "))
        .filter_map(|line| {
            let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
            let median: f64 = cells.get(2)?.replace(',', "").parse().ok()?;
            Some(((cells[0].to_string(), cells[1].to_string()), median))
        })
        .collect()
}

fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    if n % 2 == 1 { sorted[n / 2] } else { (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0 }
}

/// Whether a larger value of this measure is better (rates) or worse (latencies, memory, times).
fn higher_is_better(measure: &str) -> bool {
    measure.contains("/s") || measure.contains("share") || measure.contains('%')
}

fn run_suite(options: &Options, side: &Side, round: usize) -> anyhow::Result<String> {
    let out = options.work.join(format!("{}-{}.md", side.name, round + 1));
    let work = options.work.join(format!("{}-work", side.name));
    eprintln!("==> round {} of {}: {} ({})", round + 1, options.rounds, side.name, side.label);
    let status = Command::new(&side.bench)
        .arg("suite")
        .arg("--svc")
        .arg(&side.svc)
        .arg("--only")
        .arg(options.only.join(","))
        .args(["--runs", "1"])
        .args(&options.suite_args)
        .arg("--out")
        .arg(&out)
        .arg("--work")
        .arg(&work)
        .status()
        .with_context(|| format!("running {}", side.bench.display()))?;
    // A suite that found a problem exits 1 but still writes its table; a missing table is fatal.
    let table = std::fs::read_to_string(&out).with_context(|| format!("{} wrote no table ({status})", side.name))?;
    Ok(table)
}

pub fn run(options: Options) -> anyhow::Result<()> {
    std::fs::create_dir_all(&options.work)?;
    let mut figures: BTreeMap<&str, BTreeMap<Key, Vec<f64>>> = BTreeMap::new();
    let mut order: Vec<Key> = Vec::new();
    for round in 0..options.rounds {
        // Base first in odd rounds, head first in even ones: neither always runs on a warmer machine.
        let sides = if round % 2 == 0 { [&options.base, &options.head] } else { [&options.head, &options.base] };
        for side in sides {
            let table = run_suite(&options, side, round)?;
            for (key, value) in parse_table(&table) {
                if !order.contains(&key) {
                    order.push(key.clone());
                }
                figures.entry(side.name.as_str()).or_default().entry(key).or_default().push(value);
            }
        }
    }
    let text = render(&options, &figures, &order);
    print!("{text}");
    if let Some(parent) = options.out.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(&options.out, &text)?;
    eprintln!("written to {}", options.out.display());
    Ok(())
}

fn render(options: &Options, figures: &BTreeMap<&str, BTreeMap<Key, Vec<f64>>>, order: &[Key]) -> String {
    let (base, head) = (&options.base, &options.head);
    let mut text = format!(
        "# Comparison: {} against {}\n\n{} rounds, alternating (each side's median over the rounds); \
         head ÷ base, and whether that is better (+) or worse (−) for the measure.\n\n\
         | Scenario | Measure | base {} | head {} | head ÷ base | |\n|---|---|---:|---:|---:|---|\n",
        head.label, base.label, options.rounds, base.label, head.label,
    );
    let empty = BTreeMap::new();
    let (base_figures, head_figures) =
        (figures.get(base.name.as_str()).unwrap_or(&empty), figures.get(head.name.as_str()).unwrap_or(&empty));
    for key in order {
        let (Some(b), Some(h)) = (base_figures.get(key), head_figures.get(key)) else { continue };
        let (b, h) = (median(b), median(h));
        let ratio = if b == 0.0 { f64::NAN } else { h / b };
        // Within 3%: the noise of one machine.
        let verdict = match (ratio.is_finite(), higher_is_better(&key.1)) {
            (false, _) => "",
            (true, _) if (ratio - 1.0).abs() < 0.03 => "=",
            (true, true) if ratio > 1.0 => "+",
            (true, false) if ratio < 1.0 => "+",
            _ => "−",
        };
        text.push_str(&format!(
            "| {} | {} | {} | {} | {:.2} | {verdict} |\n",
            key.0,
            key.1,
            crate::suite::number(b),
            crate::suite::number(h),
            ratio
        ));
    }
    text
}

/// The default place of a comparison's table.
pub fn default_out(work: &Path, base_label: &str) -> PathBuf {
    work.join(format!("compare-{base_label}.md"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_suites_table_is_read_row_by_row() {
        let table = "# Latest\n\n| Scenario | Measure | Median | Min | Max | Target | Met | Generator CPU |\n\
            |---|---|---:|---:|---:|---|---|---:|\n\
            | Ingest, text-only ~1 KB, SQLite | reports/s (durable) | 10,295 | 10,122 | 10,467 | ≥ 10,000 | yes | 20% |\n\
            | Ingest, text-only ~1 KB, SQLite | p99 ms | 24.1 | 22.5 | 25.8 | ≤ 50.0 | yes |  |\n\
            | Widget | skipped: no chromium |  |  |  |  |  |  |\n";
        let rows = parse_table(table);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0], (("Ingest, text-only ~1 KB, SQLite".into(), "reports/s (durable)".into()), 10_295.0));
        assert_eq!(rows[1].1, 24.1);
        assert!(higher_is_better("reports/s (durable)"));
        assert!(!higher_is_better("p99 ms"));
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[1.0, 2.0]), 1.5);
    }
}
