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

// Keyboard shortcuts (off while typing).
function items() { return [...document.querySelectorAll('.list .item')]; }
function focused() {
  const list = items();
  const active = document.activeElement instanceof Element ? document.activeElement.closest('.item') : null;
  return active ?? list.find((item) => item.getAttribute('aria-current') === 'true') ?? list[0];
}
function currentIndex(list) { return list.findIndex((item) => item.getAttribute('aria-current') === 'true'); }
function go(offset) {
  const list = items();
  if (!list.length) return;
  const index = currentIndex(list);
  const next = list[Math.min(list.length - 1, Math.max(0, index < 0 ? 0 : index + offset))];
  next?.querySelector('a.open')?.click();
}
const shortcuts = {
  j: () => go(1),
  k: () => go(-1),
  '/': () => document.getElementById('search')?.focus(),
  x: () => { const pick = focused()?.querySelector('.pick'); if (pick instanceof HTMLInputElement) pick.checked = !pick.checked; },
  o: () => focused()?.querySelector('a.open')?.click(),
  c: () => document.getElementById('comment-text')?.focus(),
  s: () => document.getElementById('status-select')?.focus(),
  a: () => document.getElementById('assignee-select')?.focus(),
  l: () => document.getElementById('label-add')?.focus(),
  Escape: () => { const back = document.querySelector('a.back'); if (back instanceof HTMLAnchorElement) back.click(); },
  '?': () => { const help = document.getElementById('shortcuts'); if (help instanceof HTMLDialogElement) help.showModal(); },
};
document.addEventListener('keydown', (event) => {
  if (event.metaKey || event.ctrlKey || event.altKey || inEditable(event.target)) return;
  const action = shortcuts[event.key];
  if (!action) return;
  event.preventDefault();
  action();
});

// The help button opens the shortcuts dialog.
document.addEventListener('click', (event) => {
  const button = event.target instanceof Element ? event.target.closest('[data-help]') : null;
  const help = document.getElementById('shortcuts');
  if (button && help instanceof HTMLDialogElement) help.showModal();
});

// Live inbox: the server says when reports of the person's projects change; the page is fetched
// again as the server renders it and its list swapped in (the selection and anything being typed
// stay as they are).
const list = document.querySelector('.list[data-live]');
if (list && 'EventSource' in window) {
  const indicator = document.querySelector('.live');
  const source = new EventSource('/dashboard/events');
  let pending = null;
  source.addEventListener('open', () => { indicator?.classList.add('on'); indicator?.setAttribute('title', 'Live: new reports appear by themselves'); });
  source.addEventListener('error', () => { indicator?.classList.remove('on'); indicator?.setAttribute('title', 'Reconnecting…'); });
  source.addEventListener('change', () => {
    if (pending) return;
    pending = setTimeout(async () => {
      pending = null;
      const response = await fetch(window.location.href, { credentials: 'same-origin' });
      if (!response.ok) return;
      const fresh = new DOMParser().parseFromString(await response.text(), 'text/html');
      const freshList = fresh.querySelector('.list');
      if (freshList) list.replaceChildren(...[...freshList.childNodes].map((node) => document.importNode(node, true)));
      const freshViews = fresh.querySelector('.views');
      const views = document.querySelector('.views');
      if (freshViews && views) views.replaceChildren(...[...freshViews.childNodes].map((node) => document.importNode(node, true)));
      const freshCount = fresh.querySelector('.filters .count');
      const count = document.querySelector('.filters .count');
      if (freshCount && count) count.textContent = freshCount.textContent;
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
