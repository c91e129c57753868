import { describe, expect, it } from 'vitest';
import { luhn, MASK, redactText, redactUrl } from '../src/redact';

const JWT = 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ1XzQyIn0.sflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c';

describe('redaction of text (console errors)', () => {
  it.each([
    ['Authorization: Bearer abc.DEF-123_456~xyz', 'Authorization: Bearer ' + MASK],
    ['fetch failed with header basic dXNlcjpwYXNzd29yZA==', 'fetch failed with header basic ' + MASK],
    ['token ' + JWT + ' expired', 'token ' + MASK + ' expired'],
    ['Stripe key sk_live_51HqABCDEFGHIJKLMNOP rejected', 'Stripe key ' + MASK + ' rejected'],
    ['OPENAI sk-proj-abcdefghijklmnopqrstuvwxyz012345', 'OPENAI ' + MASK],
    ['gh token ghp_abcdefghijklmnopqrstuvwxyz0123456789', 'gh token ' + MASK],
    ['aws AKIAIOSFODNN7EXAMPLE used', 'aws ' + MASK + ' used'],
    ['google AIzaSyA-abcdefghijklmnopqrstuvwxyz12345', 'google ' + MASK],
    ['svc pr_sk_0123456789abcdefghijklmnopqrstuvwxyzABCD', 'svc ' + MASK],
    ['slack xoxb-1234567890-abcdefghij', 'slack ' + MASK],
    ['{"password":"hunter2","user":"ada"}', '{"password":"' + MASK + '","user":"ada"}'],
    ['api_key=abc123 and apiKey: "zzz"', 'api_key=' + MASK + ' and apiKey: "' + MASK + '"'],
    ['card 4111 1111 1111 1111 declined', 'card ' + MASK + ' declined'],
    ['card 4111-1111-1111-1111', 'card ' + MASK],
    ['amex 378282246310005 ok', 'amex ' + MASK + ' ok'],
  ])('%s', (text, expected) => expect(redactText(text)).toBe(expected));

  it('leaves ordinary text alone', () => {
    for (const text of [
      'TypeError: Cannot read properties of undefined (reading total)',
      'Request failed with status code 500',
      'at 1714556400000 the order 4111111111111112 was placed', // a timestamp; a number failing Luhn
      'Bearer of bad news',
      'contact ada@example.com for help',
      'token',
    ]) {
      expect(redactText(text)).toBe(text);
    }
  });

  it('masks URLs inside the text as URLs', () => {
    expect(redactText('GET https://api.test/users/ada@example.com?session=s3cr3t&page=2 500')).toBe(
      'GET https://api.test/users/' + MASK + '?session=' + MASK + '&page=2 500',
    );
  });

  it('is idempotent', () => {
    const once = redactText('Bearer abcdefgh ' + JWT + ' 4111 1111 1111 1111 password=x https://a.test/?token=y');
    expect(redactText(once)).toBe(once);
  });
});

describe('redaction of URLs', () => {
  it('masks secret-named parameters and e-mail addresses, keeps the rest', () => {
    expect(redactUrl('https://shop.test/checkout?step=pay&token=abc&code=xyz#access_token=t0k&state=1')).toBe(
      'https://shop.test/checkout?step=pay&token=' + MASK + '&code=' + MASK + '#access_token=' + MASK + '&state=1',
    );
    expect(redactUrl('https://shop.test/users/ada%40example.com/orders?email=bob@example.org')).toBe(
      'https://shop.test/users/' + MASK + '/orders?email=' + MASK,
    );
    expect(redactUrl('https://shop.test/reset/' + JWT)).toBe('https://shop.test/reset/' + MASK);
    expect(redactUrl('https://shop.test/#section-2')).toBe('https://shop.test/#section-2');
    // By the parameter's last word: secrets are masked, look-alikes kept.
    expect(redactUrl('https://s.test/?apiKey=1&X-Amz-Signature=2&session_id=3&access_token=4&keyword=shoes&signup=1&monkey=2&author=ada')).toBe(
      'https://s.test/?apiKey=' + MASK + '&X-Amz-Signature=' + MASK + '&session_id=' + MASK + '&access_token=' + MASK + '&keyword=shoes&signup=1&monkey=2&author=ada',
    );
  });

  it('masks every query value of a failed request', () => {
    expect(redactUrl('https://api.test/pay?cart=42&currency=EUR&flag', true)).toBe(
      'https://api.test/pay?cart=' + MASK + '&currency=' + MASK + '&flag',
    );
    expect(redactUrl('/relative/path', true)).toBe('/relative/path');
  });
});

describe('luhn', () => {
  it('accepts card numbers and refuses others', () => {
    expect(luhn('4111111111111111')).toBe(true);
    expect(luhn('378282246310005')).toBe(true);
    expect(luhn('4111111111111112')).toBe(false);
  });
});
