// Mail in Chromium against a real `svc serve` without an SMTP server, the way a local setup runs:
// an owner chooses new reports "at once" on the account page with the keyboard, a hostile report
// comes in through ingest, the server's mail task queues the mail (no test hook: this waits for the
// task's own round, about 15 s), the owner reads it in the outbox as text, follows its unsubscribe
// link, confirms, and finds the setting off. Delivery over SMTP is tested in
// crates/svc-server/tests/server/mail.rs against a real SMTP server.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ingest, launchChromium, ownerPage, startSvc, unsafeMarkup, until, watch } from './lib.mjs';

const IMG = `<img src=x onerror="alert('XSS img')">`;
const SCRIPT = `<script>alert('XSS')</script>`;

let svc;
let chrome;
let owner;
let seen;

before(async () => {
  svc = await startSvc();
  chrome = await launchChromium();
  owner = await ownerPage(svc, chrome, { email: 'olivia@example.com' });
  seen = watch(owner.page);
});

after(async () => {
  await chrome?.close();
  await svc?.stop();
});

describe('mail without an SMTP server', () => {
  test('a new report reaches the outbox as text, and its unsubscribe link turns the mail off', async () => {
    const { page } = owner;
    // The top bar's name opens the account page.
    await page.locator('.topbar .me').getByRole('link', { name: 'Olivia Owner' }).click();
    await page.getByRole('heading', { name: 'Notifications' }).waitFor();
    assert.ok(await page.getByText('This server has no SMTP server set').isVisible(), 'the page says where mail waits');
    const reports = page.getByLabel('New reports from Default');
    assert.equal(await reports.inputValue(), 'off', 'off by default');
    assert.equal(await page.getByLabel('Replies from reporters in Default').inputValue(), 'on', 'replies on by default');
    // Keyboard only: focus the choice, pick "At once", save with Enter.
    await reports.focus();
    await page.keyboard.press('ArrowDown');
    assert.equal(await reports.inputValue(), 'instant');
    await page.getByRole('button', { name: 'Save notifications' }).focus();
    await page.keyboard.press('Enter');
    await page.getByText('Your notification settings are saved.').waitFor();
    assert.equal(await page.getByLabel('New reports from Default').inputValue(), 'instant');

    await ingest(svc).report({ blocks: [{ type: 'text', text: `Checkout broke ${IMG}\n${SCRIPT}` }] });

    // The mail task runs every 5 s and takes reports once they are 10 s old.
    const subject = `[Default] Checkout broke ${IMG}`;
    await until(async () => {
      await page.goto(svc.url + '/outbox');
      return (await page.locator('.mail-subject').allInnerTexts()).includes(subject);
    }, 45000, 'the new-report mail in the outbox');
    assert.ok(await page.getByText('No SMTP server is set').isVisible());
    const mail = page.locator('li.mail', { hasText: subject });
    assert.ok((await mail.locator('.mail-meta').innerText()).includes('To olivia@example.com'));
    await mail.getByText('Message').click();
    const body = await mail.locator('pre.mail-body').innerText();
    assert.ok(body.includes(`> Checkout broke ${IMG}\n> ${SCRIPT}`), `the reporter's words, quoted as text:\n${body}`);
    assert.deepEqual(await unsafeMarkup(page), [], 'nothing in the outbox became markup');

    const link = /Stop these mails \(one click\): (\S+)/.exec(body)?.[1];
    assert.ok(link?.startsWith(`${svc.url}/unsubscribe?token=`), `an unsubscribe link: ${link}`);
    await page.goto(link);
    await page.getByText('Stop mail to olivia@example.com about new reports in Default?').waitFor();
    await page.getByRole('button', { name: 'Stop these mails' }).click();
    await page.getByRole('heading', { name: 'Unsubscribed' }).waitFor();
    await page.getByRole('link', { name: 'your account page' }).click();
    assert.equal(await page.getByLabel('New reports from Default').inputValue(), 'off', 'the choice is off again');

    assert.deepEqual(seen.dialogs, [], 'no dialog opened');
    assert.deepEqual(seen.console.filter((line) => /XSS|Content Security Policy|Refused to/i.test(line)), [], 'nothing ran or was blocked');
    assert.deepEqual(seen.errors, [], 'no page error');
  });
});
