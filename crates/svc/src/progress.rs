//! The progress bar of the long commands (`svc backup`, `svc restore`, `svc migrate`): drawn on a
//! terminal only (indicatif hides it when stderr is not one; the commands also print each phase).

use indicatif::{ProgressBar, ProgressStyle};

/// A bar of `total` units, drawn with indicatif's `template`.
pub fn bar(total: u64, template: &str) -> ProgressBar {
    let bar = ProgressBar::new(total);
    bar.set_style(
        ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar()).progress_chars("=> "),
    );
    bar
}
