-- A verified reporter's id says how they were verified, so no value a host page or a provider
-- chooses can name a reporter of another kind (svc_core::reporter::Reporter): `token:<sub>` for an
-- identity token, `email:<address>` for a mailed code (unchanged), `oidc:<issuer>#<subject>` for the
-- project's provider. Reports, their search rows and reporter sessions move to the new ids.

-- Identity tokens: the author id was the token's sub (identity.userId, which stays as it is).
UPDATE reports SET author_id = 'token:' || author_id
 WHERE identity IS NOT NULL AND author_id IS NOT NULL
   AND COALESCE(identity ->> 'method', 'token') = 'token';

-- A provider's sign-in: `oidc:<subject>` gains the project's issuer (in userId too).
UPDATE reports r
   SET author_id = 'oidc:' || (p.reporter_auth -> 'oidc' ->> 'issuer') || '#' || substr(r.author_id, 6)
  FROM projects p
 WHERE p.id = r.project_id AND r.identity IS NOT NULL AND r.identity ->> 'method' = 'oidc'
   AND r.author_id LIKE 'oidc:%' AND (p.reporter_auth -> 'oidc' ->> 'issuer') IS NOT NULL;
UPDATE reports SET identity = jsonb_set(identity::jsonb, '{userId}', to_jsonb(author_id))::json
 WHERE identity IS NOT NULL AND identity ->> 'method' = 'oidc' AND author_id LIKE 'oidc:%#%';
UPDATE reporter_sessions s
   SET reporter_id = 'oidc:' || (p.reporter_auth -> 'oidc' ->> 'issuer') || '#' || substr(s.reporter_id, 6)
  FROM projects p
 WHERE p.id = s.project_id AND s.method = 'oidc' AND s.reporter_id NOT LIKE 'oidc:%#%'
   AND (p.reporter_auth -> 'oidc' ->> 'issuer') IS NOT NULL;

-- The search index holds the author id.
UPDATE report_search rs SET reporter = r.author_id
  FROM reports r
 WHERE r.id = rs.report_id AND r.identity IS NOT NULL AND rs.reporter IS DISTINCT FROM r.author_id;
