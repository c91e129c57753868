//! What the benchmark sends and seeds: realistic report bodies (about 1 KB with page context), stored
//! reports spread over statuses and channels, and a real 200 KB PNG screenshot.

use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use serde_json::{Value, json};
use svc_core::model::{Author, Report};

pub const CHANNELS: [&str; 3] = ["bug", "idea", "question"];

const TEXTS: [&str; 8] = [
    "The checkout button does nothing when I click it after changing the shipping address. I tried twice, \
     reloaded the page and the cart was still there, but the order never went through and no error was shown.",
    "It would be great if the order history could be filtered by date range. I have hundreds of orders and \
     scrolling through all of them to find last month's invoice takes forever on my phone.",
    "How do I change the email address on my account? The settings page only lets me change the password and \
     the profile picture, and the help centre article links to a page that no longer exists.",
    "The price shown in the cart is different from the price on the product page: 24.90 on the product page, \
     27.40 in the cart, for the same size and colour. Is a fee added somewhere that is not explained?",
    "Search returns no results for anything with an accent (crème, café), although those products exist. \
     Searching for creme without the accent finds them. Looks like the query is not normalised.",
    "The date picker on the booking form opens behind the cookie banner on small screens, so I cannot pick \
     a date until I dismiss the banner, and there is no visible way to do that on the first visit.",
    "Dark mode makes the error messages on the login form unreadable: dark red on dark grey. The text is \
     there (I can select it) but the contrast is far too low to read without zooming in.",
    "After uploading a profile picture the page shows a spinner forever. Reloading shows the new picture, so \
     the upload worked, but the page never finds out. Happens in Firefox and Chrome.",
];

const PAGES: [(&str, &str); 6] = [
    ("/cart", "#checkout > div.summary > button.btn-primary"),
    ("/orders", "main > section.history > table > thead > tr > th:nth-child(2)"),
    ("/account/settings", "#settings-form > fieldset.email > label"),
    ("/products/linen-shirt", "div.product > div.price-box > span.price"),
    ("/search", "header > form.search > input[name=q]"),
    ("/booking", "#booking-form > div.dates > input.datepicker"),
];

const AGENTS: [&str; 3] = [
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_6) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148",
];

/// Blocks and context of report number `n`: a text block and a pinpoint on the element it is about.
fn content(n: usize) -> (Value, Value, &'static str) {
    let (path, css) = PAGES[n % PAGES.len()];
    let text = TEXTS[n % TEXTS.len()];
    let channel = CHANNELS[(n / 3) % CHANNELS.len()];
    let test_id = path.trim_start_matches('/').replace('/', "-");
    let blocks = json!([
        {"type": "text", "text": text},
        {"type": "pinpoint", "selector": css, "comment": "this one",
         "target": {"css": css, "xpath": "/html/body/main/div[2]/button", "testIds": [format!("{test_id}-main")]},
         "point": {"x": 0.42, "y": 0.61}},
    ]);
    let agent = AGENTS[n % AGENTS.len()];
    let mobile = agent.contains("iPhone");
    let context = json!({
        "url": format!("https://shop.example.com{path}?ref=nav&session={:08x}", n * 2_654_435_761 % (1 << 32)),
        "pathname": path,
        "host": "shop.example.com",
        "userAgent": agent,
        "language": "en-US",
        "viewport": if mobile { json!({"width": 390, "height": 844}) } else { json!({"width": 1440, "height": 900}) },
        "device": if mobile { "mobile" } else { "desktop" },
        "timestamp": "2026-11-20T10:15:30.000Z",
        "flags": ["new-checkout", "search-v2"],
        "consoleErrors": ["TypeError: Cannot read properties of undefined (reading 'total') at cart.js:212:17"],
        "userId": format!("u-{:05}", n % 5000),
    });
    (blocks, context, channel)
}

/// `count` distinct `POST /ingest/report` bodies, one compact JSON document per line.
pub fn report_bodies(count: usize) -> Vec<String> {
    (0..count)
        .map(|n| {
            let (blocks, context, channel) = content(n);
            json!({"blocks": blocks, "channelKey": channel, "context": context}).to_string()
        })
        .collect()
}

/// The report body that files a screenshot blob with a short text.
pub fn screenshot_body(n: usize, blob_id: &str) -> String {
    let (_, context, _) = content(n);
    json!({
        "blocks": [
            {"type": "text", "text": TEXTS[n % TEXTS.len()]},
            {"type": "screenshot", "blobId": blob_id},
        ],
        "channelKey": "bug",
        "context": context,
    })
    .to_string()
}

/// Statuses as a project's history has them: mostly new and triaged, some of everything else.
const STATUS_SHARES: [(&str, u32); 6] =
    [("new", 40), ("triaged", 20), ("in-progress", 10), ("fixed", 20), ("verified", 5), ("canceled", 5)];
/// Channels: most reports are bugs.
const CHANNEL_SHARES: [(&str, u32); 3] = [("bug", 60), ("idea", 25), ("question", 15)];

fn pick<'a>(rng: &mut SmallRng, shares: &[(&'a str, u32)]) -> &'a str {
    let total: u32 = shares.iter().map(|(_, w)| w).sum();
    let mut roll = rng.random_range(0..total);
    for (value, weight) in shares {
        if roll < *weight {
            return value;
        }
        roll -= weight;
    }
    shares[0].0
}

/// Generates stored reports for the seeder: ids increase with creation time, statuses and channels
/// are spread so filtered listings read real index ranges.
pub struct ReportMaker {
    rng: SmallRng,
    project_id: String,
    n: usize,
}

impl ReportMaker {
    pub fn new(project_id: &str) -> Self {
        ReportMaker { rng: SmallRng::seed_from_u64(7), project_id: project_id.to_string(), n: 0 }
    }

    /// The next `count` reports, created `step_ms` apart from `start_ms` on.
    pub fn batch(&mut self, count: usize, start_ms: i64, step_ms: i64) -> Vec<Report> {
        (0..count)
            .map(|_| {
                let n = self.n;
                self.n += 1;
                let at = start_ms + (n as i64) * step_ms;
                let (blocks, context, _) = content(n);
                let blocks: Vec<svc_core::block::Block> = serde_json::from_value(blocks).expect("valid blocks");
                let context: svc_core::context::Context = serde_json::from_value(context).expect("a valid context");
                let status = pick(&mut self.rng, &STATUS_SHARES).parse().expect("a status");
                let channel_key = pick(&mut self.rng, &CHANNEL_SHARES).to_string();
                let title = svc_core::report::derive_title(&blocks);
                let artifact_id = (n % 20 == 0).then(|| format!("artifact-{}", n % 50));
                let url = context.url.clone();
                let user_id = context.user_id.clone();
                Report {
                    id: svc_core::ids::new_id_at(at),
                    project_id: self.project_id.clone(),
                    channel_key,
                    status,
                    title,
                    blocks,
                    context,
                    identity: None,
                    identity_error: None,
                    author: Author { kind: svc_core::model::AuthorKind::Reporter, id: user_id, label: None },
                    artifact_id,
                    url,
                    created_at: at,
                    updated_at: at,
                    assignee: None,
                    labels: Vec::new(),
                }
            })
            .collect()
    }
}

/// A valid PNG of about `target_bytes`: RGB rows in stored (uncompressed) deflate blocks, so its
/// size is what it says, like a screenshot that does not compress well.
pub fn png(target_bytes: usize) -> Vec<u8> {
    let width: usize = 400;
    let row = 1 + width * 3;
    let height = (target_bytes / row).max(1);
    let mut rgb = Vec::with_capacity(width * 3 * height);
    let mut rng = SmallRng::seed_from_u64(42);
    for y in 0..height {
        for x in 0..width {
            let noise: u8 = rng.random_range(0..24);
            rgb.extend_from_slice(&[(x % 256) as u8 ^ noise, (y % 256) as u8, 200u8.wrapping_add(noise)]);
        }
    }
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, width as u32, height as u32);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_compression(png::Compression::NoCompression);
    // Writing to a Vec only fails on a bad header or a wrong data length, which these sizes rule out.
    let mut writer = encoder.write_header().expect("PNG header");
    writer.write_image_data(&rgb).expect("PNG data");
    writer.finish().expect("PNG end");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use svc_core::ingest::{Limits, validate_submission};

    #[test]
    fn bodies_are_valid_and_about_one_kilobyte() {
        for body in report_bodies(12) {
            let value: Value = serde_json::from_str(&body).unwrap();
            validate_submission(&value, &Limits::default()).unwrap();
            assert!((800..1400).contains(&body.len()), "{} bytes", body.len());
        }
        let value: Value = serde_json::from_str(&screenshot_body(3, "0123456789abcdef01234567")).unwrap();
        validate_submission(&value, &Limits::default()).unwrap();
    }

    #[test]
    fn png_is_a_real_png_of_the_asked_size() {
        let png = png(200 * 1024);
        assert!(png.len() > 195 * 1024 && png.len() < 210 * 1024, "{}", png.len());
        assert_eq!(svc_core::media::image_dimensions(&png[..64]), Some((400, 170)));
    }

    #[test]
    fn seeded_reports_increase_and_spread() {
        let mut maker = ReportMaker::new("p");
        let reports = maker.batch(1000, 1_700_000_000_000, 10);
        assert!(reports.windows(2).all(|w| w[0].id < w[1].id));
        for status in svc_core::status::STATUSES {
            assert!(reports.iter().any(|r| r.status == status), "{status}");
        }
        for channel in CHANNELS {
            assert!(reports.iter().any(|r| r.channel_key == channel), "{channel}");
        }
    }
}
