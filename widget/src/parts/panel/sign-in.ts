// Sign-in in the panel: signing in when the project asks for it (a code mailed to their address,
// or the project's provider in a popup), who is signed in and signing out, and in History their
// reports with the team's published answers, a reply, and "does it work now?" once a report is
// marked fixed. Every text from the server is set as text.

import type { Core } from '../../core';
import { button, el } from '../../dom';
import { fill, type STRINGS } from '../../i18n';
import type { HistoryEntry, SignInAnswer, ThreadReport } from '../../types';
import { row } from './shared';

type Failure = Error & { code?: string; body?: { triesLeft?: number } };

export interface ReporterUi {
  /** the sign-in step (shown while the project offers sign-in and nobody is signed in) */
  gate: HTMLElement;
  /** "Signed in as ..." with Sign out */
  who: HTMLElement;
  /** shows what fits the current state */
  render(): void;
  /** the project requires signing in and nobody is: sending waits */
  blocked(): boolean;
  /** History for a signed-in reporter: what waits here, then their reports from the server */
  thread(list: HTMLElement, waiting: HistoryEntry[], local: (h: HistoryEntry) => HTMLElement): Promise<void>;
  destroy(): void;
}

/** A labelled input (or textarea, with `type` empty). */
function field(id: string, label: string, type: string, auto = 'off'): [HTMLLabelElement, HTMLInputElement] {
  const l = el('label', undefined, label);
  l.htmlFor = id;
  const i = (type ? el('input') : el('textarea')) as HTMLInputElement;
  i.id = id;
  if (type) (i.type = type), (i.autocomplete = auto as AutoFill);
  return [l, i];
}

export function reporterUi(core: Core, t: typeof STRINGS.en, say: (text: string) => void, locale: string, apiUrl: string, projectKey: string): ReporterUi {
  const signedIn = () => !!(core.reporter() || {}).token;
  let skipped = false;
  let email = '';
  const gate = el('div', 'box gate');
  const who = el('p', 'hint who');
  const error = el('p', 'err');
  error.setAttribute('role', 'alert');
  const [emailLabel, emailInput] = field('svc-email', t.email, 'email', 'email');
  const [codeLabel, codeInput] = field('svc-code', t.code, 'text', 'one-time-code');
  codeInput.inputMode = 'numeric';
  const oops = (e: unknown) => fill(t.error, { code: (e as Failure).code || String(e) });

  /** A sign-in request; `then` runs with its answer, a refusal is said in words. */
  const step = (path: string, body: Record<string, string>, then: (a: SignInAnswer) => void) => {
    error.textContent = '';
    core.ask<SignInAnswer>('POST', path, body).then(then, (e: Failure) => {
      const words: Record<string, string> = {
        code_invalid: fill(t.codeWrong, { n: (e.body && e.body.triesLeft) || 0 }),
        code_expired: t.codeExpired,
        too_many_tries: t.codeUsedUp,
        email_invalid: t.emailInvalid,
      };
      error.textContent = words[e.code || ''] || oops(e);
      if (e.code === 'too_many_tries' || e.code === 'code_expired') (email = ''), render();
    });
  };
  const done = (a: SignInAnswer) => {
    core.signIn(a);
    say(fill(t.signedInAs, { who: a.reporter.name || a.reporter.email || a.reporter.id }));
    render();
  };
  const sendCode = () =>
    step('/auth/reporter/email', { email: emailInput.value.trim() }, () => {
      email = emailInput.value.trim();
      render();
      codeInput.focus();
    });
  const checkCode = () => step('/auth/reporter/email/verify', { email, code: codeInput.value }, done);
  emailInput.onkeydown = (e) => e.key === 'Enter' && (e.preventDefault(), sendCode());
  codeInput.onkeydown = (e) => e.key === 'Enter' && (e.preventDefault(), checkCode());

  // The provider's popup posts its result from Svc's own origin.
  const onMessage = (e: MessageEvent) => {
    const d = e.data;
    if (e.origin !== new URL(apiUrl).origin || !d || d.type !== 'svc:reporter-sign-in') return;
    if (d.token) done(d);
    else error.textContent = oops({ code: d.error });
  };
  window.addEventListener('message', onMessage);
  const popup = () => {
    const url = apiUrl + '/auth/reporter/oidc/start?projectKey=' + encodeURIComponent(projectKey) + '&origin=' + encodeURIComponent(location.origin);
    error.textContent = window.open(url, 'svc-sign-in', 'popup,width=480,height=660') ? '' : t.popupBlocked;
  };
  const later = button('', t.notNow, () => ((skipped = true), render()));

  function render(): void {
    const auth = core.auth();
    const go = button('primary', auth.mode === 'oidc' || email ? t.signIn : t.sendCode, auth.mode === 'oidc' ? popup : email ? checkCode : sendCode);
    const buttons = row(...(auth.required ? [] : [later]), go);
    gate.hidden = signedIn() || auth.mode === 'off' || skipped;
    if (email) codeInput.value = '';
    gate.replaceChildren(
      ...(gate.hidden ? [] : email
        ? [el('p', 'hint', fill(t.codeSent, { email })), codeLabel, codeInput, row(button('', t.otherAddress, () => ((email = ''), render())), go), error]
        : [el('p', 'lbl', auth.required ? t.signInToSend : t.signInForAnswers), ...(auth.mode === 'oidc' ? [] : [emailLabel, emailInput]), buttons, error]),
    );
    const profile = (core.reporter() || {}).profile || {};
    who.hidden = !signedIn();
    who.replaceChildren(
      ...(who.hidden ? [] : [
      el('span', undefined, fill(t.signedInAs, { who: String(profile.name || profile.email || t.you) }) + ' '),
      button('link', t.signOut, () => void core.signOut().then(() => ((skipped = false), render()))),
      ]),
    );
  }

  function item(r: ThreadReport, again: () => void): HTMLElement {
    const meta = el('span', 'meta');
    const when = el('time', undefined, new Date(r.createdAt).toLocaleString(locale, { dateStyle: 'short', timeStyle: 'short' }));
    when.dateTime = r.createdAt;
    const status = t.statuses.split('|')[['new', 'triaged', 'in-progress', 'fixed', 'verified', 'canceled'].indexOf(r.status)];
    meta.append(el('span', 'st ' + r.status, status || r.status), when);
    if (core.isNew(r)) meta.append(el('span', 'st news', t.news));
    const li = el('li');
    li.append(el('span', 'ttl', r.title || '—'), meta);
    for (const c of r.comments) {
      const p = el('p', 'cm');
      p.append(el('b', undefined, (c.author.kind === 'reporter' ? t.you : c.author.label || t.team) + ': '), c.text);
      li.append(p);
    }
    const [label, note] = field('svc-note-' + r.id, '', '');
    const form = el('div', 'box');
    form.hidden = true;
    const act = (path: string, body: Record<string, unknown>) =>
      core.ask('POST', '/ingest/reporter/reports/' + r.id + path, body).then(() => (say(t.thanks), again()), (e) => say(oops(e)));
    const open = (words: string, send: () => void) => {
      label.textContent = words;
      form.replaceChildren(label, note, row(button('', t.cancel, () => (form.hidden = true)), button('primary', t.send, send)));
      form.hidden = false;
      note.focus();
    };
    const actions = row(button('', t.reply, () => open(t.yourReply, () => note.value.trim() && act('/comments', { text: note.value }))));
    if (r.awaitingConfirmation) {
      li.append(el('p', 'lbl', t.fixedAsk));
      actions.prepend(
        button('primary', t.worksNow, () => act('/confirmation', { works: true })),
        button('', t.stillBroken, () => open(t.whatIsWrong, () => act('/confirmation', { works: false, note: note.value }))),
      );
    }
    li.append(actions, form);
    return li;
  }

  return {
    gate,
    who,
    render,
    blocked: () => core.auth().required && core.auth().mode !== 'off' && !signedIn(),
    async thread(list, waiting, local) {
      list.replaceChildren(el('li', 'hint', t.loading));
      const load = async (): Promise<void> => {
        try {
          const reports = await core.thread();
          list.replaceChildren(...waiting.map(local), ...reports.map((r) => item(r, load)));
          if (!list.firstChild) list.append(el('li', 'hint', t.historyEmpty));
          core.seen(reports);
        } catch (e) {
          list.replaceChildren(...waiting.map(local), el('li', 'hint', oops(e)));
        }
      };
      await load();
    },
    destroy: () => window.removeEventListener('message', onMessage),
  };
}
