// Redaction before anything leaves the page: values that look like secrets are masked in the
// page's URL, console errors and failed requests (the core part applies it when it builds a
// report's context). What is masked: credentials after Bearer/Basic/Token, JWTs, API keys of the
// common services (Stripe, OpenAI, GitHub, GitLab, Slack, AWS, Google, Svc's own), values of
// secret-named fields (`password=`, `token: ...`, `api_key=`), card numbers (13 to 19 digits that
// pass the Luhn check) and, in URLs, e-mail addresses and the values of secret-named query
// parameters (of every query parameter for failed requests).

export const MASK = '[redacted]';

const AUTH = /\b(Bearer|Basic|Token|Digest)\s+[\w.~+/=-]{6,}/gi;
const JWT = /\beyJ[\w-]{4,}\.[\w-]{4,}\.[\w-]*/g;
const KEYS =
  /\b(?:(?:sk|pk|rk)_(?:live|test)_[0-9A-Za-z]{8,}|sk-[\w-]{20,}|gh[pousr]_[0-9A-Za-z]{20,}|github_pat_\w{20,}|glpat-[\w-]{20,}|xox[abposr]-[0-9A-Za-z-]{10,}|AKIA[0-9A-Z]{16}|AIza[\w-]{30,}|pr_sk_[0-9A-Za-z]{20,})/g;
const PAIR =
  /\b((?:api[_-]?key|apikey|access[_-]?token|auth[_-]?token|refresh[_-]?token|id[_-]?token|client[_-]?secret|secret|token|password|passwd|pwd)["']?\s*[:=]\s*["']?)(?!\[redacted\])[^\s"'&,;)}\]]+/gi;
const CARD = /\b[2-6](?:[ -]?\d){12,18}\b/g;
const EMAIL = /[\w.%+-]+(?:@|%40)[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,}/g;
const URLS = /\bhttps?:\/\/[^\s"'<>`]+/gi;
/** Query parameter names whose values are secrets (the name's last word, camelCase split: `api_key`, `apiKey`, `X-Amz-Signature`). */
const SECRET_NAME = /(^|[_.-])(token|secret|password|passwd|pwd|pass|auth|session|session_id|sessionid|sid|sig|signature|code|otp|credentials?|key|apikey|jwt)$/;
const secretName = (name: string) => SECRET_NAME.test(name.replace(/([a-z])([A-Z])/g, '$1_$2').toLowerCase());

/** Whether a digit string passes the Luhn check (card numbers do). */
export function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = +digits[digits.length - 1 - i];
    if (i % 2) d = d > 4 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return sum % 10 === 0;
}

function secrets(text: string): string {
  return text
    .replace(AUTH, '$1 ' + MASK)
    .replace(JWT, MASK)
    .replace(KEYS, MASK)
    .replace(PAIR, '$1' + MASK)
    .replace(CARD, (m) => (luhn(m.replace(/\D/g, '')) ? MASK : m));
}

/** `a=1&token=x` with the values masked: all of them, or those of secret-named parameters. */
function params(text: string, all: boolean): string {
  return text
    .split('&')
    .map((p) => {
      const i = p.indexOf('=');
      return i < 0 || !(all || secretName(p.slice(0, i))) ? p : p.slice(0, i + 1) + MASK;
    })
    .join('&');
}

/**
 * A URL with its secrets masked: e-mail addresses anywhere, secret-named query (and fragment)
 * parameters, or with `allValues` every query value (failed requests: their queries are the
 * page's data, not needed to see what failed), and whatever else looks like a secret.
 */
export function redactUrl(url: string, allValues = false): string {
  const hash = url.indexOf('#');
  const fragment = hash < 0 ? '' : url.slice(hash + 1);
  const rest = hash < 0 ? url : url.slice(0, hash);
  const q = rest.indexOf('?');
  let out = q < 0 ? rest : rest.slice(0, q + 1) + params(rest.slice(q + 1), allValues);
  if (hash >= 0) out += '#' + (fragment.includes('=') ? params(fragment, allValues) : fragment);
  return secrets(out).replace(EMAIL, MASK);
}

/** Free text (a console error) with its secrets masked, and every URL in it as `redactUrl` leaves it. */
export function redactText(text: string): string {
  return secrets(text).replace(URLS, (u) => redactUrl(u));
}
