// The dashboard's keyboard triage in Chromium, against the listing scenario's server (a million
// reports): signed in with the scenario's session, the inbox's All view, `j` to the first report,
// then SVC_BENCH_CHANGES status changes from the keyboard (`s` then `t`, then `s` then `n`, ...).
// Each is timed in the page from the keydown of the status's letter until the row's status badge
// reads the new status (a MutationObserver), which is what the person sees. Prints one JSON line
// with every time in ms, or {"skipped": reason}. Env: SVC_URL, SVC_SESSION, SVC_BENCH_CHANGES,
// SVC_BENCH_CHROMIUM.
import { chromiumOrSkip } from './playwright.mjs';
const svcUrl = process.env.SVC_URL;
const session = process.env.SVC_SESSION;
const changes = Number(process.env.SVC_BENCH_CHANGES || 10);
const executablePath = process.env.SVC_BENCH_CHROMIUM || '/usr/bin/chromium';

const chromium = await chromiumOrSkip();

const browser = await chromium.launch({ executablePath, args: ['--no-sandbox'] });
try {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  await context.addCookies([{ name: 'svc_session', value: session, url: svcUrl }]);
  const page = await context.newPage();
  await page.goto(`${svcUrl}/?view=all`);
  await page.locator('.list .item').first().waitFor();
  await page.keyboard.press('j');
  await page.locator('#report h1').waitFor();
  const times = [];
  for (let i = 0; i < changes; i++) {
    const status = i % 2 === 0 ? 'triaged' : 'new';
    // Armed in the page: the time from the letter's keydown to the badge's new text.
    // The list itself is watched, not one badge: a live update may swap the rows meanwhile.
    const seen = page.evaluate((want) => new Promise((resolve, reject) => {
      const list = document.querySelector('.list');
      const current = () => list.querySelector('.item[aria-current="true"] [data-status]')?.textContent;
      setTimeout(() => reject(new Error(`the row did not show ${want} within 10 s`)), 10_000);
      let pressed = 0;
      // The status's letter, pressed in the chooser that `s` opens (the `s` itself is not it).
      const letter = (event) => { if (event.key === want[0] && document.querySelector('dialog[open]')) pressed = performance.now(); };
      document.addEventListener('keydown', letter, { capture: true });
      const observer = new MutationObserver(() => {
        if (pressed && current() === want) {
          observer.disconnect();
          document.removeEventListener('keydown', letter, { capture: true });
          resolve(performance.now() - pressed);
        }
      });
      observer.observe(list, { childList: true, characterData: true, subtree: true });
    }), status);
    await page.keyboard.press('s');
    await page.getByRole('dialog').waitFor();
    await page.keyboard.press(status[0]);
    times.push(await seen);
    // The next change starts once this one is settled (the message says so).
    await page.getByRole('status').filter({ hasText: `is ${status}.` }).waitFor({ timeout: 10_000 });
  }
  console.log(JSON.stringify({ visible_ms: times }));
} finally {
  await browser.close();
}
