// A real OpenID Connect provider for the reporter sign-in browser tests: panva's `oidc-provider`
// (the certified Node.js implementation) on a loopback port, with its built-in login and consent
// pages (any login name signs in; the password is not checked).
//
//   node e2e/oidc/provider.mjs --redirect-uri <svc callback> [--client-id svc-widget] [--client-secret S]
//
// Prints `ISSUER <url>` once it listens. The signed-in person's claims come from the login name:
// `ada` is {sub: "ada", email: "ada@example.com", email_verified: true, name: "Ada"}.

import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import Provider from 'oidc-provider';

const { values } = parseArgs({
  options: {
    'redirect-uri': { type: 'string' },
    'client-id': { type: 'string', default: 'svc-widget' },
    'client-secret': { type: 'string', default: 'svc-widget-secret' },
  },
});
if (!values['redirect-uri']) {
  console.error('usage: provider.mjs --redirect-uri <url>');
  process.exit(1);
}

const server = createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;

const capitalized = (name) => name.charAt(0).toUpperCase() + name.slice(1);
const provider = new Provider(issuer, {
  clients: [
    {
      client_id: values['client-id'],
      client_secret: values['client-secret'],
      redirect_uris: [values['redirect-uri']],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_post',
    },
  ],
  claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
  // The ID token carries the claims itself (Svc reads no userinfo endpoint).
  conformIdTokenClaims: false,
  pkce: { required: () => true },
  async findAccount(_ctx, id) {
    const login = String(id).toLowerCase();
    return {
      accountId: login,
      async claims() {
        return { sub: login, email: `${login}@example.com`, email_verified: true, name: capitalized(login) };
      },
    };
  },
});
// Plain http on loopback: tell the provider its cookies need not be `secure`.
provider.proxy = false;
server.on('request', provider.callback());
console.log(`ISSUER ${issuer}`);
