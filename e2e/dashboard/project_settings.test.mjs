// A project's Settings, Retention and Audit log tabs in Chromium against a real `svc serve`, used
// from the keyboard: an owner deletes a project (refused until its name is typed exactly) and its
// screenshots are gone from the data folder's blob store and its keys stop working; sets retention;
// reads who did what in the audit log. Project names and key names carry script payloads: they show
// as text only, nothing runs and the Content Security Policy never has to step in.

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { cspViolations, ingest, launchChromium, makeScreenshot, ownerPage, rest, startSvc, unsafeMarkup, watch } from './lib.mjs';

const HOSTILE = `"><img src=x onerror=alert('XSS')><svg onload=alert('XSS')>`;

let svc;
let chrome;
let owner; // {context, page}
let seen;

before(async () => {
  svc = await startSvc();
  chrome = await launchChromium();
  owner = await ownerPage(svc, chrome, { name: 'Olivia Owner' });
  seen = watch(owner.page);
});

after(async () => {
  await chrome?.close();
  await svc?.stop();
});

const blobFile = (blobId) => join(svc.dataDir, 'blobs', 'objects', blobId);

function assertNothingRan(where) {
  assert.deepEqual(seen.dialogs, [], `${where}: no dialog`);
  assert.deepEqual(seen.console.filter((line) => /XSS|Content Security Policy|Refused to/i.test(line)), [], `${where}: nothing ran`);
  assert.deepEqual(seen.errors, [], `${where}: no page error`);
  assert.deepEqual(cspViolations(svc), [], `${where}: no CSP report`);
}

/** Types into a field reached with Tab from the top of the page, as a keyboard user does. */
async function tabTo(page, label) {
  const field = page.getByLabel(label);
  await page.locator('body').focus();
  for (let i = 0; i < 60; i++) {
    await page.keyboard.press('Tab');
    if (await field.evaluate((el) => el === document.activeElement)) return field;
  }
  throw new Error(`Tab never reached ${label}`);
}

describe('project settings', () => {
  test('deleting a project takes its exact name; then its blob files are gone and its keys answer 401', async () => {
    const { page } = owner;
    const doomed = svc.createProject(`Old Shop ${HOSTILE}`);
    const filer = ingest(svc, doomed.projectKey);
    const shot = await makeScreenshot(chrome);
    const image = await filer.blob('screenshot', shot.png, { type: 'image/png', name: 'shot.png' });
    await filer.report({ blocks: [{ type: 'text', text: 'Checkout is broken' }, { type: 'screenshot', blobId: image.blobId }] });
    const unbound = await filer.blob('screenshot', shot.png, { type: 'image/png', name: 'unsent.png' });
    const kept = await ingest(svc).blob('screenshot', shot.png, { type: 'image/png', name: 'kept.png' });
    for (const id of [image.blobId, unbound.blobId, kept.blobId]) assert.ok(existsSync(blobFile(id)), `blob ${id} is a file`);
    const doomedApi = rest(svc.url, doomed.setupToken);
    await doomedApi.get(`/api/v1/projects/${doomed.projectId}/feedback`);

    await page.goto(`${svc.url}/projects/${doomed.projectId}/settings`);
    assert.deepEqual(await unsafeMarkup(page), [], 'the hostile name is text');
    await page.getByRole('heading', { name: 'Delete this project' }).waitFor();

    const confirm = await tabTo(page, /Type the project's name/);
    await confirm.fill('Old Shop');
    await page.keyboard.press('Enter');
    await page.getByRole('alert').getByText('Nothing was deleted.').waitFor();
    assert.ok(existsSync(blobFile(image.blobId)), 'a wrong name deletes nothing');

    await page.getByLabel(/Type the project's name/).fill(`Old Shop ${HOSTILE}`);
    await page.keyboard.press('Enter');
    await page.waitForURL(`${svc.url}/projects?deleted=1`);
    await page.getByRole('status').getByText('The project was deleted').waitFor();
    assert.equal(await page.getByText('Old Shop').count(), 0, 'no longer listed');

    assert.ok(!existsSync(blobFile(image.blobId)), "the report's screenshot is gone from the blob store");
    assert.ok(!existsSync(blobFile(unbound.blobId)), 'the unbound upload is gone too');
    assert.ok(existsSync(blobFile(kept.blobId)), "another project's blob stays");
    const answer = await fetch(`${svc.url}/api/v1/projects/${doomed.projectId}/feedback`, {
      headers: { authorization: `Bearer ${doomed.setupToken}` },
    });
    assert.equal(answer.status, 401, 'its keys no longer work');
    assertNothingRan('deleting a project');
  });

  test('retention is set from the keyboard and shows in the audit log with who set it', async () => {
    const { page } = owner;
    await page.goto(`${svc.url}/projects/${svc.projectId}/retention`);
    await page.getByText('Off: every report is kept').waitFor();
    const days = await tabTo(page, 'Delete reports older than (days)');
    await days.fill('30');
    await page.keyboard.press('Enter');
    await page.getByRole('status').getByText('Saved.').waitFor();
    await page.getByText('Reports older than 30 days are deleted').waitFor();
    const project = await rest(svc.url, svc.token).get(`/api/v1/projects/${svc.projectId}`);
    assert.equal(project.retentionDays, 30);

    // An agent-named key: its name is text in the log.
    await rest(svc.url, svc.token).post(`/api/v1/projects/${svc.projectId}/keys`, { name: `bot ${HOSTILE}`.slice(0, 100), scopes: ['feedback:read'] });
    await page.getByRole('navigation', { name: 'Project settings' }).getByRole('link', { name: 'Audit log' }).click();
    await page.waitForURL(`${svc.url}/projects/${svc.projectId}/audit`);
    const rows = page.locator('table.audit tbody tr');
    assert.match(await rows.nth(0).innerText(), /minted the key bot "><img/);
    assert.match(await rows.nth(1).innerText(), /Olivia Owner\s+person\s+set retention to 30 days/);
    assert.deepEqual(await unsafeMarkup(page), []);
    assertNothingRan('retention and the audit log');
  });
});
