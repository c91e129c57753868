-- A verified reporter's id says how they were verified, so no value a host page or a provider
-- chooses can name a reporter of another kind (svc_core::reporter::Reporter): `token:<sub>` for an
-- identity token, `email:<address>` for a mailed code (unchanged), `oidc:<issuer>#<subject>` for the
-- project's provider. Reports, their search rows and reporter sessions move to the new ids.

-- Identity tokens: the author id was the token's sub (identity.userId, which stays as it is).
UPDATE reports SET author_id = 'token:' || author_id
 WHERE identity IS NOT NULL AND author_id IS NOT NULL
   AND COALESCE(json_extract(identity, '$.method'), 'token') = 'token';

-- A provider's sign-in: `oidc:<subject>` gains the project's issuer (in userId too).
UPDATE reports
   SET author_id = 'oidc:' || (SELECT json_extract(p.reporter_auth, '$.oidc.issuer') FROM projects p
                                WHERE p.id = reports.project_id) || '#' || substr(author_id, 6)
 WHERE identity IS NOT NULL AND json_extract(identity, '$.method') = 'oidc' AND author_id LIKE 'oidc:%'
   AND (SELECT json_extract(p.reporter_auth, '$.oidc.issuer') FROM projects p WHERE p.id = reports.project_id)
       IS NOT NULL;
UPDATE reports SET identity = json_set(identity, '$.userId', author_id)
 WHERE identity IS NOT NULL AND json_extract(identity, '$.method') = 'oidc' AND author_id LIKE 'oidc:%#%';
UPDATE reporter_sessions
   SET reporter_id = 'oidc:' || (SELECT json_extract(p.reporter_auth, '$.oidc.issuer') FROM projects p
                                  WHERE p.id = reporter_sessions.project_id) || '#' || substr(reporter_id, 6)
 WHERE method = 'oidc' AND reporter_id NOT LIKE 'oidc:%#%'
   AND (SELECT json_extract(p.reporter_auth, '$.oidc.issuer') FROM projects p
         WHERE p.id = reporter_sessions.project_id) IS NOT NULL;

-- The search index holds the author id: those reports are indexed again.
INSERT OR IGNORE INTO search_stale (report_id)
SELECT id FROM reports WHERE identity IS NOT NULL AND author_id IS NOT NULL;
