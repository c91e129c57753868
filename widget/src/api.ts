// The ingest API client: project key in x-svc-project-key, the reporter's token in x-svc-identity.

import type { Outcome, QueueItem } from './queue';
import { retryable } from './queue';
import type { SvcError as PublicSvcError } from './types';

/** A failed report or upload: `code` is the ingest error code (or `network_error`, `offline`, ...). */
export class SvcError extends Error implements PublicSvcError {
  code: string;
  status: number;
  /** the report is in the retry queue and will be delivered later */
  queued: boolean;
  constructor(code: string, status = 0, queued = false, message?: string) {
    super(message || '[Svc] ' + code + (queued ? ' (queued for retry)' : ''));
    this.name = 'SvcError';
    this.code = code;
    this.status = status;
    this.queued = queued;
  }
}

export interface Client {
  apiUrl: string;
  projectKey: string;
  identity?: string;
}

function headers(c: Client, extra?: Record<string, string>): Record<string, string> {
  const h: Record<string, string> = { 'x-svc-project-key': c.projectKey, ...extra };
  if (c.identity) h['x-svc-identity'] = c.identity;
  return h;
}

export async function errorCode(r: Response): Promise<string> {
  try {
    const body = await r.json();
    if (body && typeof body.error === 'string') return body.error;
  } catch {
    /* not JSON */
  }
  return 'http_' + r.status;
}


/**
 * One JSON request to the reporter routes (`/auth/...`, `/ingest/reporter/...`); resolves the
 * answer, or rejects with an SvcError carrying the ingest error code (and the answer as `body`).
 */
export async function callJson<T>(c: Client, method: string, path: string, body?: unknown, auth?: string): Promise<T> {
  const extra: Record<string, string> = body === undefined ? {} : { 'content-type': 'application/json' };
  if (auth) extra.authorization = 'Bearer ' + auth;
  let r: Response;
  try {
    r = await fetch(c.apiUrl + path, { method, headers: headers(c, extra), body: body === undefined ? undefined : JSON.stringify(body), credentials: 'omit' });
  } catch {
    throw new SvcError('network_error');
  }
  const answer = await r.json().catch(() => ({}));
  if (r.ok) return answer as T;
  const e = new SvcError(typeof answer.error === 'string' ? answer.error : 'http_' + r.status, r.status) as SvcError & { body?: unknown };
  e.body = answer;
  throw e;
}

export interface Uploaded {
  blobId: string;
  mime: string;
  bytes: number;
}

/** POST /ingest/blob (multipart: `kind` first, then `file`). */
export async function uploadBlob(c: Client, kind: string, blob: Blob, name: string, fields?: Record<string, string>): Promise<Uploaded> {
  const form = new FormData();
  form.append('kind', kind);
  for (const k in fields || {}) form.append(k, (fields as Record<string, string>)[k]);
  form.append('file', blob, name);
  let r: Response;
  try {
    r = await fetch(c.apiUrl + '/ingest/blob', { method: 'POST', headers: headers(c), body: form, credentials: 'omit' });
  } catch (e) {
    throw new SvcError('network_error', 0, false, '[Svc] upload failed: ' + String((e as Error)?.message || e));
  }
  if (!r.ok) throw new SvcError(await errorCode(r), r.status);
  return (await r.json()) as Uploaded;
}

/** One attempt to deliver a queued report. */
export async function sendReport(item: QueueItem): Promise<Outcome> {
  const c: Client = { apiUrl: item.apiUrl, projectKey: item.projectKey, identity: item.identity };
  if (typeof navigator !== 'undefined' && navigator.onLine === false) return { ok: false, retry: true, error: 'offline' };
  let r: Response;
  try {
    r = await fetch(c.apiUrl + '/ingest/report', {
      method: 'POST',
      headers: headers(c, { 'content-type': 'application/json', 'Idempotency-Key': item.id }),
      body: JSON.stringify(item.payload),
      credentials: 'omit',
    });
  } catch {
    return { ok: false, retry: true, error: 'network_error' };
  }
  if (r.ok) {
    try {
      const body = await r.json();
      if (body && typeof body.reportId === 'string') return { ok: true, reportId: body.reportId };
    } catch {
      /* fall through */
    }
    return { ok: false, retry: true, error: 'bad_response' };
  }
  const retryAfter = Number(r.headers.get('retry-after'));
  return { ok: false, retry: retryable(r.status), error: await errorCode(r), retryAfterMs: retryAfter > 0 ? retryAfter * 1000 : undefined };
}
