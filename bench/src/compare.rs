//! `svc-bench compare`: two builds (a base commit's and the working tree's) measured alternately in
//! one run, so the machine's state at the moment weighs on both alike, and the ratio of each figure.
//! Each side runs its own `svc-bench suite` (its seeder writes the database its `svc` expects), one
//! measured run per round, base and head taking turns to go first. A round's two runs are minutes
//! apart, while the machine's speed drifts by a third over a longer run, so each figure's ratio is
//! taken within each round (head ÷ base) and the table gives the median of those, each round's own,
//! and a verdict only where every round agrees. What `bench/run --compare <commit>` prints.

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

/// Per side (`base`, `head`): each figure's value in each round it was measured in.
type Figures<'a> = BTreeMap<&'a str, BTreeMap<Key, BTreeMap<usize, f64>>>;

/// Within this much of 1, a ratio is the noise of one machine.
const SAME: f64 = 0.03;

/// What head ÷ base says about a measure, read round by round: better (+) or worse (−) only when
/// every round says so beyond the noise, the same (=) when the median is within it, else unsure (?):
/// the rounds disagree, so the change is smaller than the machine's noise.
fn verdict(round_ratios: &[f64], higher_is_better: bool) -> &'static str {
    let better = |r: f64| if higher_is_better { r > 1.0 + SAME } else { r < 1.0 - SAME };
    let worse = |r: f64| if higher_is_better { r < 1.0 - SAME } else { r > 1.0 + SAME };
    if round_ratios.is_empty() || round_ratios.iter().any(|r| !r.is_finite()) {
        ""
    } else if round_ratios.iter().all(|&r| better(r)) {
        "+"
    } else if round_ratios.iter().all(|&r| worse(r)) {
        "−"
    } else if (median(round_ratios) - 1.0).abs() < SAME {
        "="
    } else {
        "?"
    }
}

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
    let mut figures: Figures = BTreeMap::new();
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
                figures.entry(side.name.as_str()).or_default().entry(key).or_default().insert(round, value);
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

fn render(options: &Options, figures: &Figures, order: &[Key]) -> String {
    let (base, head) = (&options.base, &options.head);
    let mut text = format!(
        "# Comparison: {} against {}\n\n{} rounds, alternating; each side's median over the rounds, head ÷ base \
         taken in each round (its two runs back to back) and their median, each round's own, and whether \
         that is better (+), worse (−), the same (=, within 3%) or unsure (?: the rounds disagree) for the \
         measure.\n\n\
         | Scenario | Measure | base {} | head {} | head ÷ base | each round | |\n|---|---|---:|---:|---:|---|---|\n",
        head.label, base.label, options.rounds, base.label, head.label,
    );
    let empty = BTreeMap::new();
    let (base_figures, head_figures) =
        (figures.get(base.name.as_str()).unwrap_or(&empty), figures.get(head.name.as_str()).unwrap_or(&empty));
    for key in order {
        let (Some(b), Some(h)) = (base_figures.get(key), head_figures.get(key)) else { continue };
        let round_ratios: Vec<f64> =
            b.iter().filter_map(|(round, b)| h.get(round).map(|h| if *b == 0.0 { f64::NAN } else { h / b })).collect();
        let values = |side: &BTreeMap<usize, f64>| median(&side.values().copied().collect::<Vec<_>>());
        let ratio = if round_ratios.is_empty() { f64::NAN } else { median(&round_ratios) };
        let each = round_ratios.iter().map(|r| format!("{r:.2}")).collect::<Vec<_>>().join(" / ");
        text.push_str(&format!(
            "| {} | {} | {} | {} | {:.2} | {each} | {} |\n",
            key.0,
            key.1,
            crate::suite::number(values(b)),
            crate::suite::number(values(h)),
            ratio,
            verdict(&round_ratios, higher_is_better(&key.1)),
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

    /// A verdict needs every round to agree: one slow round on either side makes it unsure, not
    /// better or worse.
    #[test]
    fn a_verdict_is_given_only_when_the_rounds_agree() {
        assert_eq!(verdict(&[1.05, 1.10, 1.04], true), "+");
        assert_eq!(verdict(&[0.95, 0.90, 0.96], false), "+");
        assert_eq!(verdict(&[0.90, 0.95, 0.96], true), "−");
        assert_eq!(verdict(&[0.97, 1.00, 1.14], true), "=");
        assert_eq!(verdict(&[0.80, 1.06, 1.14], false), "?");
        assert_eq!(verdict(&[1.02, 0.99], true), "=");
        assert_eq!(verdict(&[], true), "");
    }

    /// Each round's ratio pairs the two runs of that round: a machine twice as fast in round 2
    /// moves both sides and not the ratio.
    #[test]
    fn ratios_are_taken_within_each_round() {
        let side = |values: &[(usize, f64)]| values.iter().copied().collect::<BTreeMap<usize, f64>>();
        let key: Key = ("Ingest".into(), "reports/s (durable)".into());
        let mut figures: Figures = BTreeMap::new();
        figures.entry("base").or_default().insert(key.clone(), side(&[(0, 1000.0), (1, 2000.0), (2, 1000.0)]));
        figures.entry("head").or_default().insert(key.clone(), side(&[(0, 1100.0), (1, 2200.0), (2, 1100.0)]));
        let named =
            |name: &str| Side { name: name.into(), label: name.into(), bench: PathBuf::new(), svc: PathBuf::new() };
        let options = Options {
            base: named("base"),
            head: named("head"),
            only: vec![],
            rounds: 3,
            suite_args: vec![],
            work: PathBuf::new(),
            out: PathBuf::new(),
        };
        let table = render(&options, &figures, &[key]);
        assert!(
            table.contains("| Ingest | reports/s (durable) | 1,000 | 1,100 | 1.10 | 1.10 / 1.10 / 1.10 | + |"),
            "{table}"
        );
    }
}
