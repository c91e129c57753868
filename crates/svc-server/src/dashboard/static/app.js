// Svc dashboard: what a server-rendered page cannot do alone: keyboard shortcuts, copy buttons,
// filters that apply as they change. It never turns text into HTML.
'use strict';

function inEditable(target) {
  return target instanceof HTMLElement &&
    (target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName));
}

// Copy buttons: data-copy holds the text, or data-copy-from names an element whose text is copied.
document.addEventListener('click', async (event) => {
  const button = event.target instanceof Element ? event.target.closest('[data-copy], [data-copy-from]') : null;
  if (!button) return;
  const source = button.getAttribute('data-copy-from');
  const text = source ? document.getElementById(source)?.textContent ?? '' : button.getAttribute('data-copy') ?? '';
  try {
    await navigator.clipboard.writeText(text);
    const label = button.textContent;
    button.textContent = 'Copied';
    setTimeout(() => { button.textContent = label; }, 1200);
  } catch {
    button.textContent = 'Copy failed';
  }
});

// The popup of a reporter's sign-in with a provider: hand the result to the page that opened it,
// only at the origin the server names (postMessage drops it if the opener is elsewhere), then close.
const signInResult = document.getElementById('svc-sign-in-result');
if (signInResult && window.opener) {
  try {
    window.opener.postMessage(JSON.parse(signInResult.dataset.message ?? '{}'), signInResult.dataset.origin ?? '');
  } catch {
    // No opener left, or an origin the browser cannot post to: the page says what to do.
  }
  if (!('error' in JSON.parse(signInResult.dataset.message ?? '{}'))) window.close();
}

// Filters submit themselves when changed.
document.addEventListener('change', (event) => {
  const target = event.target;
  if (target instanceof HTMLSelectElement && target.form?.hasAttribute('data-autosubmit')) target.form.requestSubmit();
});

// Times: the server writes UTC; the exact moment on hover (and a moment shown whole, such as when
// the reporter sent the report) reads in the person's own time zone.
const exactTime = new Intl.DateTimeFormat(undefined, {
  year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit', timeZoneName: 'short',
});
function localTimes(root) {
  for (const time of root.querySelectorAll('time[datetime]')) {
    const moment = new Date(time.dateTime);
    if (Number.isNaN(moment.getTime())) continue;
    const text = exactTime.format(moment);
    time.title = text;
    if (time.hasAttribute('data-local')) time.textContent = text;
  }
}
localTimes(document);

// The help button opens the shortcuts dialog.
const help = document.getElementById('shortcuts');
document.addEventListener('click', (event) => {
  const button = event.target instanceof Element ? event.target.closest('[data-help]') : null;
  if (button && help instanceof HTMLDialogElement) help.showModal();
});

// The inbox without reloads. Moving through the list asks the server for the report's pane alone
// (`Svc-Fragment: report`); an action posts its form as the page would and swaps in what the
// answer shows (the list, the counts, the report), keeping the selection, the scroll and what is
// being typed. Status changes show at once and are undone by `z`. Without this script every link
// and form still works, one page load each.
const workspace = document.querySelector('.workspace');
const list = document.querySelector('.list');
const pane = document.getElementById('report');
const toastBox = document.getElementById('toast');
const picker = document.getElementById('picker');
const parse = (html) => new DOMParser().parseFromString(html, 'text/html');
const adopt = (target, source) => target.replaceChildren(...[...source.childNodes].map((node) => document.importNode(node, true)));
const rows = () => [...document.querySelectorAll('.list .item')];
const currentRow = () => rows().find((row) => row.getAttribute('aria-current') === 'true');
const picked = () => [...document.querySelectorAll('.list .pick:checked')].map((box) => box.value);
const shownId = () => pane?.querySelector('[data-report-id]')?.getAttribute('data-report-id') ?? null;
const here = () => location.pathname + location.search;
const csrf = () => document.querySelector('input[name="_csrf"]')?.value ?? '';
let cursor = -1;
let undo = null;

function toast(message, { error = false, action = null } = {}) {
  if (!toastBox) return;
  toastBox.hidden = false;
  toastBox.classList.toggle('error', error);
  toastBox.setAttribute('role', error ? 'alert' : 'status');
  const text = document.createElement('span');
  text.textContent = message;
  const parts = [text];
  if (action) {
    const button = document.createElement('button');
    button.type = 'button';
    button.textContent = action.label;
    button.addEventListener('click', action.run);
    parts.push(button);
  }
  toastBox.replaceChildren(...parts);
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { toastBox.hidden = true; }, error ? 8000 : 10000);
}

/** What a refused request says: the error page's sentence, else its status. */
async function refusal(response) {
  const page = parse(await response.text());
  return page.querySelector('.lead')?.textContent?.trim() || `The server answered ${response.status}.`;
}

function busy(on) { document.body.classList.toggle('busy', on); }

/** Posts `fields` to `action` as its form would and returns the page the answer leads to. */
async function send(action, fields) {
  const body = fields instanceof URLSearchParams ? fields : new URLSearchParams(fields);
  body.set('_csrf', csrf());
  body.set('back', here());
  busy(true);
  try {
    const response = await fetch(action, { method: 'POST', body, credentials: 'same-origin' });
    if (!response.ok) throw new Error(await refusal(response));
    if (new URL(response.url).pathname !== '/') {
      location.assign(response.url); // signed out meanwhile, or a page of its own
      return null;
    }
    return parse(await response.text());
  } finally {
    busy(false);
  }
}

/** The list from a fresh page, with the person's ticks kept. */
function swapList(fresh, { keepCurrent = false } = {}) {
  const freshList = fresh.querySelector('.list');
  if (!list || !freshList) return;
  const ticked = new Set(picked());
  const scroll = list.scrollTop;
  const current = currentRow()?.dataset.id;
  adopt(list, freshList);
  for (const box of list.querySelectorAll('.pick')) box.checked = ticked.has(box.value);
  // A page fetched in the background was rendered for the address of the moment it was asked
  // for; the person may have moved since, and the row they are on stays the current one.
  const still = keepCurrent && current ? rowOf(current) : null;
  if (still) markCurrent(still);
  list.scrollTop = scroll;
  localTimes(list);
  const index = rows().findIndex((row) => row.getAttribute('aria-current') === 'true');
  if (index >= 0) cursor = index;
}

/** The views' counts and the list's count from a fresh page. */
function swapCounts(fresh) {
  for (const selector of ['.views', '.filters .count']) {
    const mine = document.querySelector(selector);
    const theirs = fresh.querySelector(selector);
    if (mine && theirs) adopt(mine, theirs);
  }
}

/** The report pane from `fresh`; `keep` keeps its scroll and anything typed outside `sent`. */
function swapPane(fresh, { keep = false, sent = null } = {}) {
  const freshPane = fresh.getElementById?.('report') ?? fresh.body;
  if (!pane || !freshPane) return;
  const scroll = pane.scrollTop;
  const focusId = document.activeElement?.id;
  const typed = keep
    ? [...pane.querySelectorAll('textarea[id], input[type="text"][id]')]
      .filter((field) => field.value && !(sent && sent.contains(field)))
      .map((field) => [field.id, field.value])
    : [];
  adopt(pane, freshPane);
  for (const [id, value] of typed) {
    const field = document.getElementById(id);
    if (field) field.value = value;
  }
  if (keep && focusId && !(sent && sent.querySelector(`#${CSS.escape(focusId)}`))) document.getElementById(focusId)?.focus({ preventScroll: true });
  pane.scrollTop = keep ? scroll : 0;
  workspace?.classList.toggle('has-detail', Boolean(shownId()));
  localTimes(pane);
  const heading = pane.querySelector('h1')?.textContent;
  document.title = `${heading || 'Inbox'} · Svc`;
  fillSimilar();
}

/** The report's similar reports come after it (a full-text search costs more than the report). */
async function fillSimilar() {
  const box = pane?.querySelector('#similar[data-similar-from]');
  if (!box || box.querySelector('ul')) return;
  try {
    const response = await fetch(box.getAttribute('data-similar-from'), { headers: { 'Svc-Fragment': 'similar' }, credentials: 'same-origin' });
    if (response.ok && box.isConnected) adopt(box, parse(await response.text()).body);
  } catch {
    // The link in the panel still finds them.
  }
}

/** After an action: everything its answer shows, where the person was. */
function settle(fresh, sent = null) {
  if (!fresh) return;
  swapCounts(fresh);
  swapList(fresh);
  swapPane(fresh, { keep: true, sent });
}

/** Marks `row` (and its link) as the list's current row, and no other. */
function markCurrent(row) {
  for (const other of rows()) {
    other.removeAttribute('aria-current');
    other.querySelector('a.open')?.removeAttribute('aria-current');
  }
  row.setAttribute('aria-current', 'true');
  row.querySelector('a.open')?.setAttribute('aria-current', 'true');
}

/** The report of `row` beside the list, without a page load; the address follows. */
let loading = null;
async function show(row, { push = true } = {}) {
  const link = row?.querySelector('a.open');
  if (!link) return;
  markCurrent(row);
  row.classList.add('read');
  row.querySelector('.unread-dot')?.remove();
  row.scrollIntoView({ block: 'nearest' });
  cursor = rows().indexOf(row);
  const href = link.getAttribute('href');
  if (push) history.pushState(null, '', href);
  loading?.abort();
  loading = new AbortController();
  pane?.setAttribute('aria-busy', 'true');
  try {
    const response = await fetch(href, { headers: { 'Svc-Fragment': 'report' }, credentials: 'same-origin', signal: loading.signal });
    if (!response.ok) throw new Error(await refusal(response));
    swapPane(parse(await response.text()));
  } catch (error) {
    if (error.name !== 'AbortError') toast(`The report did not open: ${error.message}`, { error: true });
  } finally {
    pane?.removeAttribute('aria-busy');
  }
}

function move(offset, extend) {
  const list = rows();
  if (!list.length) return;
  const index = list.findIndex((row) => row.getAttribute('aria-current') === 'true');
  const from = index >= 0 ? index : Math.min(cursor, list.length - 1);
  const next = list[Math.min(list.length - 1, Math.max(0, from < 0 ? 0 : from + offset))];
  if (extend) {
    if (from >= 0) tick(list[from], true);
    tick(next, true);
  }
  show(next);
}

function tick(row, on) {
  const box = row?.querySelector('.pick');
  if (box instanceof HTMLInputElement) box.checked = on ?? !box.checked;
}

/** A whole page (another view, a search, back and forward): everything but the top bar. */
async function navigate(url, { push = true } = {}) {
  busy(true);
  try {
    const response = await fetch(url, { credentials: 'same-origin' });
    const fresh = parse(await response.text());
    if (!response.ok || !fresh.querySelector('.workspace') || new URL(response.url).pathname !== '/') {
      location.assign(url);
      return;
    }
    for (const selector of ['.views', '.filters']) {
      const mine = document.querySelector(selector);
      const theirs = fresh.querySelector(selector);
      if (mine && theirs) adopt(mine, theirs);
    }
    for (const box of document.querySelectorAll('.list .pick:checked')) box.checked = false;
    swapList(fresh);
    if (list) list.scrollTop = 0;
    swapPane(fresh);
    cursor = rows().findIndex((row) => row.getAttribute('aria-current') === 'true');
    if (push) history.pushState(null, '', new URL(response.url).pathname + new URL(response.url).search);
  } catch {
    location.assign(url);
  } finally {
    busy(false);
  }
}

/** The reports an action applies to: the ticked ones, else the one shown. */
function targets() {
  const ticked = picked();
  if (ticked.length) return ticked;
  const id = shownId() ?? currentRow()?.dataset.id;
  return id ? [id] : [];
}
const rowOf = (id) => document.querySelector(`.list .item[data-id="${CSS.escape(id)}"]`);
function statusOf(id) {
  if (id === shownId()) return document.getElementById('status-select')?.value ?? null;
  return rowOf(id)?.querySelector('[data-status]')?.getAttribute('data-status') ?? null;
}
function paintStatus(id, status) {
  for (const badge of [rowOf(id)?.querySelector('[data-status]'), id === shownId() ? pane.querySelector('.facts [data-status]') : null]) {
    if (!badge) continue;
    badge.className = badge.className.replace(/\bstatus-[\w-]+/, `status-${status}`);
    badge.dataset.status = status;
    badge.textContent = status;
  }
  const select = id === shownId() ? document.getElementById('status-select') : null;
  if (select instanceof HTMLSelectElement) select.value = status;
}

/** Posts one change to `ids`: the report's own form for one, the bulk form for several. */
function apply(ids, single, bulk) {
  const fields = new URLSearchParams();
  if (ids.length === 1 && !picked().length) {
    for (const [name, value] of single.fields) fields.append(name, value);
    return send(`/reports/${encodeURIComponent(ids[0])}/${single.path}`, fields);
  }
  for (const id of ids) fields.append('ids', id);
  for (const [name, value] of bulk) fields.append(name, value);
  return send('/reports/bulk', fields);
}

async function setStatus(ids, status, { undoable = true } = {}) {
  const before = new Map(ids.map((id) => [id, statusOf(id)]));
  for (const id of ids) paintStatus(id, status);
  const what = ids.length === 1 ? 'The report is' : `${ids.length} reports are`;
  try {
    settle(await apply(ids, { path: 'status', fields: [['status', status]] }, [['status', status]]));
    if (!undoable) return;
    undo = { until: Date.now() + 10_000, run: () => restoreStatuses(before) };
    toast(`${what} ${status}.`, { action: { label: 'Undo (z)', run: () => runUndo() } });
  } catch (error) {
    for (const [id, previous] of before) if (previous) paintStatus(id, previous);
    toast(`Not changed: ${error.message}`, { error: true });
  }
}

async function restoreStatuses(before) {
  const groups = new Map();
  for (const [id, status] of before) if (status) groups.set(status, [...(groups.get(status) ?? []), id]);
  for (const [status, ids] of groups) {
    for (const id of ids) paintStatus(id, status);
    const fields = new URLSearchParams([['status', status], ...ids.map((id) => ['ids', id])]);
    settle(await send('/reports/bulk', fields));
  }
}

async function runUndo() {
  if (!undo || Date.now() > undo.until) { toast('Nothing to undo.'); return; }
  const { run } = undo;
  undo = null;
  try {
    await run();
    toast('Undone.');
  } catch (error) {
    toast(`Could not undo: ${error.message}`, { error: true });
  }
}

/**
 * A small chooser: `options` ({value, label, key?}) filtered by what is typed; a key of its own
 * (a digit) or Enter picks. `free` lets a typed value stand for itself (a new label).
 */
function choose(title, options, { filter = true, free = false } = {}) {
  return new Promise((resolve) => {
    if (!(picker instanceof HTMLDialogElement)) { resolve(null); return; }
    const heading = picker.querySelector('h2');
    const input = picker.querySelector('input');
    const listbox = picker.querySelector('ul');
    heading.textContent = title;
    input.hidden = !filter;
    input.value = '';
    let chosen = null;
    const render = () => {
      const typed = input.value.trim().toLowerCase();
      const shown = options.filter((option) => !typed || option.label.toLowerCase().includes(typed));
      listbox.replaceChildren(...shown.map((option, index) => {
        const item = document.createElement('li');
        const button = document.createElement('button');
        button.type = 'button';
        button.value = option.value;
        if (option.key) {
          const key = document.createElement('kbd');
          key.textContent = option.key;
          button.append(key, ' ');
        }
        button.append(option.label);
        if (index === 0) button.classList.add('first');
        button.addEventListener('click', () => { chosen = option.value; picker.close(); });
        item.append(button);
        return item;
      }));
      return shown;
    };
    let shown = render();
    input.oninput = () => { shown = render(); };
    picker.onkeydown = (event) => {
      if (event.key === 'Enter' && event.target === input) {
        event.preventDefault();
        const typed = input.value.trim();
        const exact = options.find((option) => option.label.toLowerCase() === typed.toLowerCase());
        chosen = exact?.value ?? shown[0]?.value ?? (free && typed ? typed : null);
        if (free && typed && !exact && !shown.length) chosen = typed;
        picker.close();
        return;
      }
      if (filter) return;
      const byKey = options.find((option) => option.key === event.key || option.label[0] === event.key);
      if (byKey) { event.preventDefault(); chosen = byKey.value; picker.close(); }
    };
    picker.onclose = () => resolve(chosen);
    picker.showModal();
    (filter ? input : listbox.querySelector('button'))?.focus();
  });
}

const optionsOf = (select) => select instanceof HTMLSelectElement
  ? [...select.options].filter((option) => option.value !== '' || select.id === 'assignee-select').map((option) => ({ value: option.value, label: option.textContent.trim() }))
  : [];

function needTargets() {
  const ids = targets();
  if (!ids.length) toast('Open a report, or select some with x, first.', { error: true });
  return ids;
}

const actions = {
  async status() {
    const ids = needTargets();
    if (!ids.length) return;
    const statuses = [...(document.getElementById('bulk-status')?.options ?? [])].map((option) => option.value).filter(Boolean);
    const status = await choose(ids.length === 1 ? 'Set status' : `Set status of ${ids.length} reports`,
      statuses.map((value, index) => ({ value, label: value, key: String(index + 1) })), { filter: false });
    if (status) await setStatus(ids, status);
  },
  async assign() {
    const ids = needTargets();
    if (!ids.length) return;
    const single = ids.length === 1 && !picked().length && document.getElementById('assignee-select');
    const options = single ? optionsOf(single) : optionsOf(document.getElementById('bulk-assignee'));
    const who = await choose('Assign to', options);
    if (who === null) return;
    const name = options.find((option) => option.value === who)?.label ?? '';
    const nobody = who === '' || who === 'none';
    for (const id of ids) paintAssignee(id, nobody ? null : name);
    try {
      settle(await apply(ids, { path: 'assignee', fields: [['assignee', nobody ? '' : who]] }, [['assignee', nobody ? 'none' : who]]));
    } catch (error) {
      toast(`Not assigned: ${error.message}`, { error: true });
      navigate(here(), { push: false });
    }
  },
  async label() {
    const ids = needTargets();
    if (!ids.length) return;
    const known = document.getElementById(ids.length === 1 && !picked().length ? 'project-labels' : 'known-labels') ?? document.getElementById('known-labels');
    const options = [...(known?.querySelectorAll('option') ?? [])].map((option) => ({ value: option.value, label: option.value }));
    const label = await choose('Add a label (type a new one, or pick)', options, { free: true });
    if (!label) return;
    for (const id of ids) paintLabel(id, label);
    try {
      settle(await apply(ids, { path: 'labels', fields: [['add', label]] }, [['label', label]]));
    } catch (error) {
      toast(`Label not added: ${error.message}`, { error: true });
      navigate(here(), { push: false });
    }
  },
  async duplicate() {
    const id = shownId();
    if (!id) { toast('Open a report first.', { error: true }); return; }
    if (!document.getElementById('duplicate-of')) { toast('This report is marked already, or you cannot change it.'); return; }
    const options = [...pane.querySelectorAll('[data-similar]')].map((item) => ({
      value: item.getAttribute('data-similar'),
      label: item.querySelector('a')?.textContent?.trim() ?? '',
    }));
    const original = await choose('Duplicate of… (a similar report, or type an id)', options, { free: true });
    if (!original) return;
    paintStatus(id, 'canceled');
    try {
      settle(await send(`/reports/${encodeURIComponent(id)}/duplicate`, [['of', original]]));
      toast('Marked as a duplicate.');
    } catch (error) {
      toast(`Not marked: ${error.message}`, { error: true });
      navigate(here(), { push: false });
    }
  },
};

function paintAssignee(id, name) {
  const meta = rowOf(id)?.querySelector('.meta');
  if (!meta) return;
  let span = meta.querySelector('.assignee');
  if (!name) { span?.remove(); return; }
  if (!span) {
    span = document.createElement('span');
    span.className = 'assignee';
    span.title = 'Assignee';
    meta.append(span);
  }
  span.textContent = `→ ${name}`;
}
function paintLabel(id, label) {
  const meta = rowOf(id)?.querySelector('.meta');
  if (!meta || [...meta.querySelectorAll('.label')].some((badge) => badge.textContent === label)) return;
  const badge = document.createElement('span');
  badge.className = 'badge label';
  badge.textContent = label;
  meta.append(badge);
}

const firstDraft = () => pane?.querySelector('.comment.draft');
let prefix = null;
const views = { i: 'triage', o: 'open', d: 'drafts', w: 'waiting', m: 'mine', a: 'all' };
const shortcuts = {
  j: () => move(1, false),
  k: () => move(-1, false),
  J: () => move(1, true),
  K: () => move(-1, true),
  x: () => tick(currentRow(), null),
  o: () => show(currentRow() ?? rows()[0]),
  Enter: () => show(currentRow() ?? rows()[0]),
  s: () => actions.status(),
  a: () => actions.assign(),
  l: () => actions.label(),
  d: () => actions.duplicate(),
  z: () => runUndo(),
  '/': () => document.getElementById('search')?.focus(),
  c: () => { const box = document.getElementById('comment-text'); box?.scrollIntoView({ block: 'center' }); box?.focus(); },
  p: () => {
    const publish = firstDraft()?.querySelector('form');
    if (publish instanceof HTMLFormElement) publish.requestSubmit();
    else toast('No draft waiting on this report.');
  },
  e: () => {
    const editor = firstDraft()?.querySelector('details');
    if (!editor) { toast('No draft waiting on this report.'); return; }
    editor.open = true;
    editor.querySelector('textarea')?.focus();
  },
  g: () => { prefix = 'g'; setTimeout(() => { prefix = null; }, 1500); },
  Escape: () => {
    if (picked().length) { for (const box of document.querySelectorAll('.list .pick:checked')) box.checked = false; return; }
    const back = pane?.querySelector('a.back');
    if (back instanceof HTMLAnchorElement) back.click();
  },
  '?': () => { if (help instanceof HTMLDialogElement) help.showModal(); },
};
document.addEventListener('keydown', (event) => {
  if (event.metaKey || event.ctrlKey || event.altKey || inEditable(event.target) || document.querySelector('dialog[open]')) return;
  if (prefix === 'g') {
    prefix = null;
    const view = views[event.key];
    const link = view && document.querySelector(`.views a[data-view="${view}"]`);
    if (link instanceof HTMLAnchorElement) { event.preventDefault(); link.click(); }
    return;
  }
  if (!workspace && !['/', '?', 'c'].includes(event.key)) return;
  if (event.key === 'Enter' && event.target instanceof Element && event.target.closest('a, button')) return;
  const action = shortcuts[event.key];
  if (!action) return;
  event.preventDefault();
  action();
});

if (workspace) {
  cursor = rows().findIndex((row) => row.getAttribute('aria-current') === 'true');
  fillSimilar();
  // Links within the inbox: a report opens beside the list; views, pages and "Clear" swap the page.
  document.addEventListener('click', (event) => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    const link = event.target instanceof Element ? event.target.closest('a[href]') : null;
    if (!link || link.hasAttribute('download') || link.target) return;
    const url = new URL(link.href, location.href);
    if (url.origin !== location.origin || url.pathname !== '/' || url.hash) return;
    event.preventDefault();
    const row = link.closest('.list .item');
    if (row && link.matches('a.open')) show(row);
    else navigate(url.pathname + url.search);
  });
  // Forms: searches and filters swap the page; triage forms post without leaving it.
  document.addEventListener('submit', async (event) => {
    const form = event.target;
    if (!(form instanceof HTMLFormElement) || form.method === 'dialog') return;
    if (form.matches('.filters')) {
      event.preventDefault();
      const query = new URLSearchParams();
      for (const [name, value] of new FormData(form)) if (typeof value === 'string' && value.trim()) query.append(name, value);
      navigate(`/?${query}`);
      return;
    }
    if (form.method !== 'post' || !(form.closest('.workspace') || form.id === 'bulk')) return;
    event.preventDefault();
    const fields = new URLSearchParams(new FormData(form, event.submitter));
    if (form.id === 'bulk') {
      if (!fields.getAll('ids').length) { toast('Select reports first: press x on each, or tick their boxes.', { error: true }); return; }
      const status = fields.get('status');
      if (status && !fields.get('assignee') && !fields.get('label') && !fields.get('github')) {
        await setStatus(fields.getAll('ids'), status);
        return;
      }
    }
    if (form.matches('[action$="/status"]')) {
      const id = shownId();
      if (id) { await setStatus([id], fields.get('status')); return; }
    }
    try {
      settle(await send(form.action, fields), form);
      if (form.id === 'bulk') form.reset();
    } catch (error) {
      toast(error.message, { error: true });
    }
  });
  window.addEventListener('popstate', () => navigate(here(), { push: false }));
}

// Live inbox: the server says when reports of the person's projects change; the page is fetched
// again as the server renders it and its list and counts swapped in (the selection, the report
// being read and anything being typed stay as they are).
if (list?.hasAttribute('data-live') && 'EventSource' in window) {
  const indicator = document.querySelector('.live');
  const source = new EventSource('/dashboard/events');
  let pending = null;
  source.addEventListener('open', () => { indicator?.classList.add('on'); indicator?.setAttribute('title', 'Live: new reports appear by themselves'); });
  source.addEventListener('error', () => { indicator?.classList.remove('on'); indicator?.setAttribute('title', 'Reconnecting…'); });
  source.addEventListener('change', () => {
    if (pending) return;
    pending = setTimeout(async () => {
      pending = null;
      const response = await fetch(here(), { credentials: 'same-origin' });
      if (!response.ok) return;
      const fresh = parse(await response.text());
      swapCounts(fresh);
      swapList(fresh, { keepCurrent: true });
    }, 200);
  });
}

// Widget tab (form[data-widget-preview]): a live preview of the real widget. The page loads the
// shared bundle (/v1/svc.js, same origin); each change of a look field starts it again with the
// form's values. Its ingest address is the dashboard's preview route, which answers the widget's
// settings requests and refuses reports: nothing can be filed from the preview.
const previewForm = document.querySelector('form[data-widget-preview]');
if (previewForm) {
  const LOOK = ['mascot', 'shape', 'anchor', 'triggerVariant', 'size', 'offsetX', 'offsetY'];
  const field = (name) => previewForm.elements.namedItem(name);
  const preview = () => {
    const svc = window.Svc;
    if (!svc || typeof svc.init !== 'function') return;
    const options = {
      projectKey: previewForm.dataset.projectKey,
      apiUrl: location.origin + previewForm.dataset.previewApi,
      widgetId: 'svc-preview',
      ignoreUrlPatterns: true,
      captureConsoleErrors: false,
    };
    for (const name of LOOK) {
      const value = field(name)?.value ?? '';
      if (value.trim() === '') continue;
      if (field(name).type !== 'number') options[name] = value;
      else if (Number.isFinite(Number(value))) options[name] = name === 'size' ? Math.min(64, Math.max(32, Number(value))) : Number(value);
    }
    svc.init(options);
  };
  const changed = (event) => { if (LOOK.includes(event.target?.name)) preview(); };
  previewForm.addEventListener('input', changed);
  previewForm.addEventListener('change', changed);
  if (window.Svc) preview();
  else window.addEventListener('load', preview);
}
// Keys and members: a secret shown once (a minted key, an invitation link) comes on the answer to
// a form. Replacing the history entry makes a reload fetch the page afresh, without the secret,
// instead of posting the form again (which would mint another key or link). A form posted to an
// address of its own names the page to reload instead (`data-shown-once="/path"`).
const shownOnce = document.querySelector('[data-shown-once]');
if (shownOnce) history.replaceState(null, '', shownOnce.dataset.shownOnce || location.href);
