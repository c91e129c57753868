"""OAuth on Svc's tool endpoint, driven by the official Python MCP SDK (`mcp` package): an agent given
only the URL discovers the authorization server, registers, sends a signed-in person to the consent
page and exchanges the code for a key, all through `OAuthClientProvider` on `httpx2.AsyncClient`.
The "browser" is headless: the provider's redirect handler signs in as the test user, opens the
consent page, fills in its form and keeps the redirect's `Location` for the callback handler.
Then raw-HTTP checks of the protocol's refusals (wrong verifier, reused code, foreign redirect URI,
wrong `resource`, ...), as docs/mcp.md describes them.

Run by e2e/mcp/run.sh, which starts the server and sets:
  SVC_BASE_URL, SVC_MCP_URL                      where the server is
  SVC_PROJECT_ID, SVC_OTHER_PROJECT_ID           the projects "Default" and "Other shop"
  SVC_ORG_ID                                     their organization ("Default")
  SVC_SETUP_TOKEN                                the Default project's setup token (REST revoke)
  SVC_USER_EMAIL, SVC_USER_PASSWORD              a dashboard user, owner of the organization
  SVC_REPORT_ID, SVC_FOREIGN_REPORT_ID           a report in each project

A plain script like test_sdk.py: each check prints ok/FAIL, the last line is "N passed, N failed",
and the exit status is non-zero when any check failed.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import json
import os
import secrets
import sys
import traceback
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any, AsyncIterator, Iterator
from urllib.parse import parse_qs, urlencode, urljoin, urlsplit

import httpx2
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from mcp.shared.exceptions import MCPError

ENV = os.environ
BASE = ENV["SVC_BASE_URL"]
MCP_URL = ENV["SVC_MCP_URL"]
PROJECT_ID = ENV["SVC_PROJECT_ID"]
OTHER_PROJECT_ID = ENV["SVC_OTHER_PROJECT_ID"]
ORG_ID = ENV["SVC_ORG_ID"]
SETUP_TOKEN = ENV["SVC_SETUP_TOKEN"]
USER_EMAIL = ENV["SVC_USER_EMAIL"]
USER_PASSWORD = ENV["SVC_USER_PASSWORD"]
REPORT_ID = ENV["SVC_REPORT_ID"]
FOREIGN_REPORT_ID = ENV["SVC_FOREIGN_REPORT_ID"]

TOOL_NAMES = ["introduce", "list_reports", "get_report", "create_report", "create_room", "set_status", "add_comment"]
SCOPES = ["feedback:read", "feedback:write"]
# Nothing listens here: the redirect handler reads the code from the consent form's redirect.
REDIRECT_URI = "http://127.0.0.1:9999/callback"
PRM_URL = f"{BASE}/.well-known/oauth-protected-resource/mcp"
# What a read-only key gets from a write tool today (crates/svc-server/src/mcp/error.rs).
MISSING_WRITE = (-32003, "forbidden: this key lacks feedback:write")


# --------------------------------------------------------------------------------------------
# A little HTML reading (the consent page, the Keys tab, Members)


@dataclass
class Element:
    tag: str
    attrs: dict[str, str]
    children: list[Element | str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text for c in self.children)

    def classes(self) -> list[str]:
        return self.attrs.get("class", "").split()

    def iter(self) -> Iterator[Element]:
        yield self
        for child in self.children:
            if isinstance(child, Element):
                yield from child.iter()

    def find_all(self, tag: str, **attrs: str) -> list[Element]:
        return [
            e
            for e in self.iter()
            if e.tag == tag and all(e.attrs.get(k.rstrip("_").replace("_", "-")) == v for k, v in attrs.items())
        ]


VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class _TreeBuilder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("#document", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = Element(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(element)
        if tag not in VOID:
            self.stack.append(element)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.stack[-1].children.append(Element(tag, {k: v or "" for k, v in attrs}))

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def parse_html(html: str) -> Element:
    builder = _TreeBuilder()
    builder.feed(html)
    builder.close()
    return builder.root


def squash(text: str) -> str:
    return " ".join(text.split())


@dataclass
class ConsentPage:
    heading: str
    text: str
    csrf: str
    request: str
    grants: list[str]
    accesses: list[str]
    decisions: dict[str, str]  # value -> button label


def read_consent_page(html: str) -> ConsentPage:
    doc = parse_html(html)
    headings = doc.find_all("h1")
    assert len(headings) == 1, f"one <h1> on the consent page: {[h.text for h in headings]}"
    forms = [f for f in doc.find_all("form") if f.attrs.get("action") == "/authorize"]
    assert len(forms) == 1, f"one form posting to /authorize: {[f.attrs for f in doc.find_all('form')]}"
    form = forms[0]
    assert form.attrs.get("method", "").lower() == "post", form.attrs
    inputs = form.find_all("input")

    def hidden(name: str) -> str:
        found = [i.attrs.get("value", "") for i in inputs if i.attrs.get("name") == name and i.attrs.get("type") == "hidden"]
        assert len(found) == 1 and found[0], f"one hidden {name} with a value: {found}"
        return found[0]

    def radios(name: str) -> list[str]:
        return [i.attrs.get("value", "") for i in inputs if i.attrs.get("name") == name and i.attrs.get("type") == "radio"]

    buttons = [b for b in form.find_all("button") if b.attrs.get("name") == "decision"]
    return ConsentPage(
        heading=squash(headings[0].text),
        text=squash(doc.text),
        csrf=hidden("_csrf"),
        request=hidden("request"),
        grants=radios("grant"),
        accesses=radios("access"),
        decisions={b.attrs.get("value", ""): squash(b.text) for b in buttons},
    )


@dataclass
class KeyRow:
    id: str
    name: str
    active: bool
    scopes: list[str]
    text: str


def read_key_rows(html: str) -> list[KeyRow]:
    """The rows of the key tables on a project's Keys tab or on Members (dashboard/key_table.html)."""
    rows = []
    for tr in parse_html(html).find_all("tr"):
        key_id = tr.attrs.get("data-key-id")
        if not key_id:
            continue
        names = [e for e in tr.iter() if "key-name" in e.classes()]
        assert names, f"a key row names its key: {squash(tr.text)}"
        scopes = [squash(li.text) for ul in tr.iter() if "scopes" in ul.classes() for li in ul.find_all("li")]
        rows.append(KeyRow(key_id, squash(names[0].text), "key-active" in tr.classes(), scopes, squash(tr.text)))
    return rows


# --------------------------------------------------------------------------------------------
# The signed-in test user (a headless browser: one cookie, redirects not followed)


class Person:
    def __init__(self) -> None:
        self.http = httpx2.AsyncClient(timeout=30, follow_redirects=False)
        self.cookie: str | None = None
        self.sign_ins = 0

    async def aclose(self) -> None:
        await self.http.aclose()

    def _headers(self, post: bool = False) -> dict[str, str]:
        headers = {"Cookie": self.cookie} if self.cookie else {}
        if post:
            headers["Origin"] = BASE
        return headers

    async def sign_in(self, next_path: str | None = None) -> str:
        """POST /sign-in; keeps the session cookie and answers the redirect's Location."""
        form = {"email": USER_EMAIL, "password": USER_PASSWORD}
        if next_path is not None:
            form["next"] = next_path
        response = await self.http.post(f"{BASE}/sign-in", data=form, headers={"Origin": BASE})
        assert response.status_code == 303, (response.status_code, response.text[:500])
        cookies = [
            v.split(";", 1)[0] for k, v in response.headers.multi_items() if k.lower() == "set-cookie"
        ]
        session = [c for c in cookies if c.split("=", 1)[0] in ("svc_session", "__Host-svc_session")]
        assert session, f"sign-in sets the session cookie: {cookies}"
        self.cookie = session[0]
        self.sign_ins += 1
        return response.headers["location"]

    async def get(self, url: str) -> httpx2.Response:
        return await self.http.get(urljoin(BASE, url), headers=self._headers())

    async def post_form(self, url: str, form: dict[str, str]) -> httpx2.Response:
        return await self.http.post(urljoin(BASE, url), data=form, headers=self._headers(post=True))

    async def open_consent(self, authorize_url: str) -> tuple[ConsentPage, httpx2.Response]:
        """Opens the authorization URL like a browser; signs in first (and comes back) if need be."""
        assert authorize_url.startswith(f"{BASE}/authorize?"), authorize_url
        if self.cookie is None:
            # Not signed in: /authorize sends the person to sign in and back.
            response = await self.get(authorize_url)
            assert response.status_code == 303, (response.status_code, response.text[:500])
            location = urlsplit(urljoin(BASE, response.headers["location"]))
            assert location.path == "/sign-in", location
            next_path = parse_qs(location.query)["next"][0]
            wanted = urlsplit(authorize_url)
            assert urlsplit(next_path).path == "/authorize", next_path
            assert parse_qs(urlsplit(next_path).query) == parse_qs(wanted.query), (next_path, authorize_url)
            back = await self.sign_in(next_path)
            assert back == next_path, (back, next_path)
            authorize_url = urljoin(BASE, back)
        response = await self.get(authorize_url)
        assert response.status_code == 200, (response.status_code, response.headers.get("location"), response.text[:500])
        assert response.headers.get("content-type", "").startswith("text/html"), response.headers
        return read_consent_page(response.text), response

    async def decide(self, page: ConsentPage, grant: str, access: str, decision: str = "approve") -> str:
        """Submits the consent form; answers the redirect's Location (to the client's redirect URI)."""
        assert grant in page.grants, (grant, page.grants)
        assert access in page.accesses, (access, page.accesses)
        response = await self.post_form(
            "/authorize",
            {"_csrf": page.csrf, "request": page.request, "grant": grant, "access": access, "decision": decision},
        )
        assert response.status_code == 303, (response.status_code, response.text[:500])
        return response.headers["location"]

    async def key_rows(self, page: str) -> list[KeyRow]:
        response = await self.get(page)
        assert response.status_code == 200, (page, response.status_code)
        return read_key_rows(response.text)


def check_consent_page(page: ConsentPage, client_name: str) -> None:
    assert f"Connect {client_name}" in page.heading, page.heading
    assert "127.0.0.1" in page.text, "the consent page names the redirect host"
    for grant in (f"project:{PROJECT_ID}", f"project:{OTHER_PROJECT_ID}", f"org:{ORG_ID}"):
        assert grant in page.grants, (grant, page.grants)
    assert sorted(page.accesses) == ["read", "triage"], page.accesses
    assert page.decisions == {"approve": "Allow", "deny": "Deny"}, page.decisions


def redirect_params(location: str, redirect_uri: str) -> dict[str, str]:
    """The query of a redirect to the client: each parameter once."""
    parts = urlsplit(location)
    assert f"{parts.scheme}://{parts.netloc}{parts.path}" == redirect_uri, (location, redirect_uri)
    query = parse_qs(parts.query)
    assert all(len(v) == 1 for v in query.values()), query
    return {k: v[0] for k, v in query.items()}


def refusal_link_back(response: Any, redirect_uri: str) -> dict[str, str]:
    """A refused authorization request: a page of Svc's (400, never a redirect) whose "Return to"
    link carries the OAuth error back to the client. Returns that link's parameters."""
    assert response.status_code == 400, (response.status_code, response.text[:300])
    assert "location" not in response.headers, response.headers

    class Links(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.back: str | None = None

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            found = dict(attrs)
            if tag == "a" and found.get("class") == "button" and found.get("rel") == "noreferrer":
                self.back = found.get("href")

    links = Links()
    links.feed(response.text)
    assert links.back, response.text[:500]
    return redirect_params(links.back, redirect_uri)


# --------------------------------------------------------------------------------------------
# The SDK client with OAuth


class MemoryStorage:
    """The provider's token storage (`mcp.client.auth.TokenStorage`), in memory, with a history."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None
        self.token_history: list[OAuthToken] = []
        self.registrations = 0

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens
        self.token_history.append(tokens)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info
        self.registrations += 1


class Agent:
    """One MCP client application: its registration and tokens persist across connections; the
    person consents with the given grant (`project:<id>` or `org:<id>`) and access (`read`/`triage`)."""

    def __init__(self, person: Person, client_name: str, grant: str, access: str) -> None:
        self.person = person
        self.client_name = client_name
        self.grant = grant
        self.access = access
        self.storage = MemoryStorage()
        self.consents = 0
        self.traffic: list[tuple[str, str, int]] = []
        self._location: str | None = None
        self.provider = OAuthClientProvider(
            server_url=MCP_URL,
            client_metadata=OAuthClientMetadata(client_name=client_name, redirect_uris=[REDIRECT_URI]),
            storage=self.storage,
            redirect_handler=self._redirect_handler,
            callback_handler=self._callback_handler,
        )

    async def _redirect_handler(self, authorization_url: str) -> None:
        page, _ = await self.person.open_consent(authorization_url)
        check_consent_page(page, self.client_name)
        self._location = await self.person.decide(page, self.grant, self.access)
        self.consents += 1

    async def _callback_handler(self) -> AuthorizationCodeResult:
        assert self._location is not None, "the redirect handler ran"
        params = redirect_params(self._location, REDIRECT_URI)
        self._location = None
        assert "error" not in params, params
        assert params.get("iss") == BASE, params
        return AuthorizationCodeResult(code=params["code"], state=params.get("state"), iss=params.get("iss"))

    async def _log(self, response: httpx2.Response) -> None:
        self.traffic.append((response.request.method, response.request.url.path, response.status_code))

    @contextlib.asynccontextmanager
    async def connect(self) -> AsyncIterator[Client]:
        async with httpx2.AsyncClient(
            auth=self.provider, timeout=30, event_hooks={"response": [self._log]}
        ) as http:
            async with Client(streamable_http_client(MCP_URL, http_client=http)) as client:
                yield client

    @property
    def access_token(self) -> str:
        assert self.storage.tokens is not None, "the agent holds a token"
        return self.storage.tokens.access_token


def text_of(result: Any) -> str:
    assert result.content, f"empty content: {result}"
    first = result.content[0]
    assert first.type == "text", f"first item is {first.type}"
    return first.text


def ok_json(result: Any) -> Any:
    assert not result.is_error, f"tool failed: {text_of(result)}"
    return json.loads(text_of(result))


async def raw_mcp(token: str, message: Any) -> httpx2.Response:
    async with httpx2.AsyncClient(timeout=30) as http:
        return await http.post(
            MCP_URL,
            json=message,
            headers={"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"},
        )


def assert_unauthorized(response: httpx2.Response) -> None:
    assert response.status_code == 401, (response.status_code, response.text)
    challenge = response.headers.get("www-authenticate", "")
    assert challenge.startswith("Bearer ") and f'resource_metadata="{PRM_URL}"' in challenge, challenge


def assert_discovered_and_registered(agent: Agent) -> None:
    """The first connection went 401 → PRM → AS metadata → register → (consent) → token → retry."""
    paths = [(m, p) for m, p, _ in agent.traffic]
    first_401 = next(i for i, (m, p, s) in enumerate(agent.traffic) if (m, p, s) == ("POST", "/mcp", 401))
    after = paths[first_401 + 1 :]
    for step in (
        ("GET", "/.well-known/oauth-protected-resource/mcp"),
        ("GET", "/.well-known/oauth-authorization-server"),
        ("POST", "/register"),
        ("POST", "/token"),
    ):
        assert step in after, (step, agent.traffic)
    statuses = {(m, p): s for m, p, s in agent.traffic}
    assert statuses[("POST", "/register")] == 201, agent.traffic
    assert statuses[("POST", "/token")] == 200, agent.traffic
    assert agent.storage.registrations == 1 and agent.consents == 1, (agent.storage.registrations, agent.consents)


# --------------------------------------------------------------------------------------------
# Checks: the SDK flow

PERSON: Person


async def check_one_project_read_only() -> None:
    agent = Agent(PERSON, "Python SDK e2e (read)", f"project:{PROJECT_ID}", "read")
    async with agent.connect() as client:
        assert client.protocol_version == "2024-11-05", client.protocol_version
        assert [t.name for t in (await client.list_tools()).tools] == TOOL_NAMES
        items = ok_json(await client.call_tool("list_reports", {"limit": 200}))
        ids = [i["id"] for i in items]
        assert REPORT_ID in ids and FOREIGN_REPORT_ID not in ids, ids
        status_before = next(i for i in items if i["id"] == REPORT_ID)["status"]
        assert status_before != "fixed", status_before
        result = await client.call_tool("get_report", {"id": REPORT_ID})
        assert not result.is_error and "Checkout button does nothing" in text_of(result), text_of(result)
        result = await client.call_tool("get_report", {"id": FOREIGN_REPORT_ID})
        assert result.is_error and f"no report {FOREIGN_REPORT_ID}" in text_of(result), text_of(result)
        # A write tool: the tool endpoint's answer for a missing scope, as the SDK surfaces it.
        try:
            await client.call_tool("set_status", {"id": REPORT_ID, "status": "fixed"})
        except MCPError as e:
            assert (e.code, e.message) == MISSING_WRITE, (e.code, e.message)
        else:
            raise AssertionError("a read-only grant must not change a status")
    assert_discovered_and_registered(agent)
    assert PERSON.sign_ins == 1, "the first consent signed the person in"
    tokens = agent.storage.tokens
    assert tokens is not None and tokens.access_token.startswith("pr_sk_"), tokens
    assert tokens.token_type == "Bearer" and tokens.refresh_token is None, tokens
    assert tokens.scope == "feedback:read", tokens.scope
    # On the wire: 403, the JSON-RPC error, and no challenge (a challenge would start a step-up).
    response = await raw_mcp(
        agent.access_token,
        {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "set_status", "arguments": {"id": REPORT_ID, "status": "fixed"}}},
    )
    assert response.status_code == 403, response.status_code
    assert response.json() == {"jsonrpc": "2.0", "id": 7, "error": {"code": MISSING_WRITE[0], "message": MISSING_WRITE[1]}}
    assert "www-authenticate" not in response.headers, response.headers
    # Listed with the project's other keys: named after the client, exactly the chosen scope.
    rows = [r for r in await PERSON.key_rows(f"/projects/{PROJECT_ID}/keys") if r.name == "OAuth: Python SDK e2e (read)"]
    assert len(rows) == 1 and rows[0].active and rows[0].scopes == ["feedback:read"], rows
    # The status did not change.
    async with agent.connect() as client:
        items = ok_json(await client.call_tool("list_reports", {"limit": 200}))
        assert next(i for i in items if i["id"] == REPORT_ID)["status"] == status_before, items
    assert agent.consents == 1, "a second connection reuses the token"


async def check_organization_with_triage() -> None:
    agent = Agent(PERSON, "Python SDK e2e (org)", f"org:{ORG_ID}", "triage")
    async with agent.connect() as client:
        assert [t.name for t in (await client.list_tools()).tools] == TOOL_NAMES
        items = ok_json(await client.call_tool("list_reports", {"limit": 200}))
        by_id = {i["id"]: i for i in items}
        assert REPORT_ID in by_id and FOREIGN_REPORT_ID in by_id, list(by_id)
        assert by_id[REPORT_ID]["project"] == "Default" and by_id[REPORT_ID]["projectId"] == PROJECT_ID
        assert by_id[FOREIGN_REPORT_ID]["project"] == "Other shop"
        assert by_id[FOREIGN_REPORT_ID]["projectId"] == OTHER_PROJECT_ID
        changed = ok_json(await client.call_tool("set_status", {"id": FOREIGN_REPORT_ID, "status": "triaged"}))
        assert changed == {"id": FOREIGN_REPORT_ID, "status": "triaged"}, changed
        changed = ok_json(await client.call_tool("set_status", {"id": REPORT_ID, "status": "in-progress"}))
        assert changed == {"id": REPORT_ID, "status": "in-progress"}, changed
        comment = ok_json(await client.call_tool("add_comment", {"report_id": FOREIGN_REPORT_ID, "text": "On it"}))
        assert comment["draft"] is True, comment
    assert_discovered_and_registered(agent)
    tokens = agent.storage.tokens
    assert tokens is not None and sorted((tokens.scope or "").split()) == SCOPES, tokens
    # An org-wide key works on the tool endpoint only: the REST API refuses it.
    async with httpx2.AsyncClient(timeout=30) as http:
        for project in (PROJECT_ID, OTHER_PROJECT_ID):
            response = await http.get(
                f"{BASE}/api/v1/projects/{project}/feedback", headers={"Authorization": f"Bearer {agent.access_token}"}
            )
            assert response.status_code == 403, (project, response.status_code, response.text)
    rows = [r for r in await PERSON.key_rows("/members") if r.name == "OAuth: Python SDK e2e (org)"]
    assert len(rows) == 1 and rows[0].active and sorted(rows[0].scopes) == SCOPES, rows


async def check_revoke_then_reconnect() -> None:
    name = "Python SDK e2e (revoke)"
    agent = Agent(PERSON, name, f"project:{PROJECT_ID}", "triage")
    async with agent.connect() as client:
        ok_json(await client.call_tool("list_reports", {}))
        first_token = agent.access_token
        rows = [r for r in await PERSON.key_rows(f"/projects/{PROJECT_ID}/keys") if r.name == f"OAuth: {name}"]
        assert len(rows) == 1 and rows[0].active and sorted(rows[0].scopes) == SCOPES, rows
        first_key = rows[0].id

        # Revoke it with the REST API (the project's setup token).
        async with httpx2.AsyncClient(timeout=30) as http:
            response = await http.delete(
                f"{BASE}/api/v1/projects/{PROJECT_ID}/keys/{first_key}",
                headers={"Authorization": f"Bearer {SETUP_TOKEN}"},
            )
        assert response.status_code == 200, (response.status_code, response.text)
        # The next call with that token fails, with the challenge that starts OAuth again.
        assert_unauthorized(await raw_mcp(first_token, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))

        # The same SDK session: the provider meets the 401, re-runs discovery and consent (no
        # refresh token, so no silent refresh), exchanges the new code and replays the call.
        agent.traffic.clear()
        items = ok_json(await client.call_tool("list_reports", {}))
        assert REPORT_ID in [i["id"] for i in items], items
        assert ("POST", "/mcp", 401) in agent.traffic, agent.traffic
        assert ("POST", "/token", 200) in agent.traffic, agent.traffic
        assert ("POST", "/register", 201) not in agent.traffic, "the registration is reused"
        assert agent.consents == 2 and agent.storage.registrations == 1, (agent.consents, agent.storage.registrations)
        second_token = agent.access_token
        assert second_token != first_token, "reconnecting mints a fresh key"
        changed = ok_json(await client.call_tool("set_status", {"id": REPORT_ID, "status": "triaged"}))
        assert changed["status"] == "triaged", changed

    assert_unauthorized(await raw_mcp(first_token, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
    response = await raw_mcp(second_token, {"jsonrpc": "2.0", "id": 3, "method": "tools/list"})
    assert response.status_code == 200, (response.status_code, response.text)
    rows = [r for r in await PERSON.key_rows(f"/projects/{PROJECT_ID}/keys") if r.name == f"OAuth: {name}"]
    assert {r.id: r.active for r in rows}.get(first_key) is False, rows
    fresh = [r for r in rows if r.active]
    assert len(fresh) == 1 and fresh[0].id != first_key, rows


# --------------------------------------------------------------------------------------------
# Checks: the protocol, raw HTTP


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
    return verifier, challenge


class RawClient:
    """A client registered with POST /register, walking the flow by hand."""

    def __init__(self, http: httpx2.AsyncClient, person: Person, client_id: str, redirect_uri: str) -> None:
        self.http = http
        self.person = person
        self.client_id = client_id
        self.redirect_uri = redirect_uri

    @classmethod
    async def register(cls, http: httpx2.AsyncClient, person: Person, name: str, redirect_uri: str) -> RawClient:
        response = await http.post(
            f"{BASE}/register",
            json={
                "client_name": name,
                "redirect_uris": [redirect_uri],
                "grant_types": ["authorization_code"],
                "response_types": ["code"],
                "token_endpoint_auth_method": "none",
            },
        )
        assert response.status_code == 201, (response.status_code, response.text)
        body = response.json()
        assert body["redirect_uris"] == [redirect_uri] and body["client_id"], body
        return cls(http, person, body["client_id"], redirect_uri)

    def authorize_url(self, challenge: str, **overrides: str | None) -> tuple[str, str]:
        state = secrets.token_urlsafe(16)
        params: dict[str, str | None] = {
            "response_type": "code",
            "client_id": self.client_id,
            "redirect_uri": self.redirect_uri,
            "state": state,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "resource": MCP_URL,
            "scope": "feedback:read feedback:write",
        }
        params.update(overrides)
        return f"{BASE}/authorize?{urlencode({k: v for k, v in params.items() if v is not None})}", state

    async def code(self, challenge: str, grant: str = f"project:{PROJECT_ID}", access: str = "read") -> str:
        url, state = self.authorize_url(challenge)
        page, _ = await self.person.open_consent(url)
        params = redirect_params(await self.person.decide(page, grant, access), self.redirect_uri)
        assert params.get("state") == state and params.get("iss") == BASE and params.get("code"), params
        return params["code"]

    async def token(self, code: str, verifier: str, **overrides: str | None) -> httpx2.Response:
        form: dict[str, str | None] = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": self.redirect_uri,
            "client_id": self.client_id,
            "code_verifier": verifier,
            "resource": MCP_URL,
        }
        form.update(overrides)
        return await self.http.post(f"{BASE}/token", data={k: v for k, v in form.items() if v is not None})


def assert_oauth_error(response: httpx2.Response, error: str) -> None:
    assert response.status_code == 400, (response.status_code, response.text)
    body = response.json()
    assert body.get("error") == error, body
    assert "access_token" not in body, body


@contextlib.asynccontextmanager
async def raw_client(name: str, redirect_uri: str = "http://127.0.0.1:7777/callback") -> AsyncIterator[RawClient]:
    if PERSON.cookie is None:
        await PERSON.sign_in()
    async with httpx2.AsyncClient(timeout=30, follow_redirects=False) as http:
        yield await RawClient.register(http, PERSON, name, redirect_uri)


async def check_discovery_documents() -> None:
    async with httpx2.AsyncClient(timeout=30, follow_redirects=False) as http:
        response = await http.post(MCP_URL, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert response.status_code == 401, response.status_code
        assert response.headers["www-authenticate"] == f'Bearer resource_metadata="{PRM_URL}"', response.headers
        for path in ("/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"):
            response = await http.get(f"{BASE}{path}")
            assert response.status_code == 200, (path, response.status_code)
            assert response.json() == {
                "resource": MCP_URL,
                "authorization_servers": [BASE],
                "scopes_supported": SCOPES,
                "bearer_methods_supported": ["header"],
                "resource_name": "Svc",
            }, response.json()
        for path in ("/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"):
            response = await http.get(f"{BASE}{path}")
            assert response.status_code == 200, (path, response.status_code)
            metadata = response.json()
            expected = {
                "issuer": BASE,
                "authorization_endpoint": f"{BASE}/authorize",
                "token_endpoint": f"{BASE}/token",
                "registration_endpoint": f"{BASE}/register",
                "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["none"],
                "scopes_supported": SCOPES,
                "authorization_response_iss_parameter_supported": True,
            }
            assert {k: metadata.get(k) for k in expected} == expected, (path, metadata)


async def check_registration() -> None:
    async with httpx2.AsyncClient(timeout=30) as http:
        uris = [
            "cursor://anysphere.cursor-mcp/oauth/callback",
            "https://www.cursor.com/agents/mcp/oauth/callback",
            "http://localhost:8787/callback",
        ]
        response = await http.post(
            f"{BASE}/register",
            json={"client_name": "Cursor-like", "redirect_uris": uris, "token_endpoint_auth_method": "none", "x-unknown": 1},
        )
        assert response.status_code == 201, (response.status_code, response.text)
        body = response.json()
        assert body["redirect_uris"] == uris and body["client_name"] == "Cursor-like", body
        assert body["token_endpoint_auth_method"] == "none" and "client_secret" not in body, body
        assert isinstance(body["client_id_issued_at"], int), body
        for bad in (["http://evil.example/callback"], ["javascript:alert(1)"], []):
            response = await http.post(f"{BASE}/register", json={"client_name": "Bad", "redirect_uris": bad})
            assert response.status_code == 400, (bad, response.status_code, response.text)
            assert response.json()["error"] in ("invalid_redirect_uri", "invalid_client_metadata"), response.json()


async def check_wrong_verifier() -> None:
    async with raw_client("Negative e2e (verifier)") as rc:
        verifier, challenge = pkce()
        code = await rc.code(challenge)
        other_verifier, _ = pkce()
        assert_oauth_error(await rc.token(code, other_verifier), "invalid_grant")
        # Without a verifier at all: refused too (a missing parameter or a failed PKCE check).
        response = await rc.token(code, None)
        assert response.status_code == 400 and response.json()["error"] in ("invalid_request", "invalid_grant"), response.text


async def check_reused_code() -> None:
    async with raw_client("Negative e2e (reuse)") as rc:
        verifier, challenge = pkce()
        code = await rc.code(challenge)
        response = await rc.token(code, verifier)
        assert response.status_code == 200, (response.status_code, response.text)
        assert "no-store" in response.headers.get("cache-control", ""), response.headers
        body = response.json()
        assert body["token_type"] == "Bearer" and body["access_token"].startswith("pr_sk_"), body
        assert body["scope"] == "feedback:read" and "refresh_token" not in body, body
        assert_oauth_error(await rc.token(code, verifier), "invalid_grant")


async def check_token_request_mismatches() -> None:
    async with raw_client("Negative e2e (mismatch)") as rc, raw_client("Negative e2e (other)") as other:
        verifier, challenge = pkce()
        # Another client presenting this client's code.
        code = await rc.code(challenge)
        assert_oauth_error(await other.token(code, verifier), "invalid_grant")
        # Another redirect URI than the one the code was issued for.
        code = await rc.code(challenge)
        assert_oauth_error(await rc.token(code, verifier, redirect_uri="http://127.0.0.1:7777/elsewhere"), "invalid_grant")
        # A resource other than the tool endpoint at the token endpoint only.
        code = await rc.code(challenge)
        assert_oauth_error(await rc.token(code, verifier, resource=f"{BASE}/api/v1"), "invalid_target")
        # Unknown codes, grant types and clients.
        assert_oauth_error(await rc.token("not-a-code", verifier), "invalid_grant")
        assert_oauth_error(await rc.token(code, verifier, grant_type="password"), "unsupported_grant_type")
        assert_oauth_error(await rc.token(code, verifier, client_id="no-such-client"), "invalid_client")


async def check_foreign_redirect_uri() -> None:
    async with raw_client("Negative e2e (redirect)") as rc:
        _, challenge = pkce()
        for foreign in (
            "https://evil.example/callback",
            "http://127.0.0.1:7777/other-path",
            "http://evil.example:7777/callback",
        ):
            url, _ = rc.authorize_url(challenge, redirect_uri=foreign)
            response = await PERSON.get(url)
            assert response.status_code == 400, (foreign, response.status_code, response.headers.get("location"))
            assert "location" not in response.headers, response.headers
            assert response.headers.get("content-type", "").startswith("text/html"), response.headers
        # An unknown client: the same error page.
        url, _ = rc.authorize_url(challenge, client_id="no-such-client")
        response = await PERSON.get(url)
        assert response.status_code == 400 and "location" not in response.headers, response.status_code
        # RFC 8252: a loopback redirect URI matches on any port.
        url, _ = rc.authorize_url(challenge, redirect_uri="http://127.0.0.1:5555/callback")
        page, _ = await PERSON.open_consent(url)
        location = await PERSON.decide(page, f"project:{PROJECT_ID}", "read")
        assert location.startswith("http://127.0.0.1:5555/callback?"), location


async def check_wrong_resource() -> None:
    async with raw_client("Negative e2e (resource)") as rc:
        _, challenge = pkce()
        for wrong in (f"{BASE}/api/v1", "https://other.example/mcp"):
            url, state = rc.authorize_url(challenge, resource=wrong)
            params = refusal_link_back(await PERSON.get(url), rc.redirect_uri)
            assert params.get("error") == "invalid_target" and params.get("state") == state, params
            assert params.get("iss") == BASE and "code" not in params, params
        # A trailing slash is the same resource.
        url, _ = rc.authorize_url(challenge, resource=f"{MCP_URL}/")
        await PERSON.open_consent(url)


async def check_other_authorize_refusals() -> None:
    async with raw_client("Negative e2e (authorize)") as rc:
        verifier, challenge = pkce()
        for overrides, error in (
            ({"code_challenge": None}, "invalid_request"),
            ({"code_challenge_method": "plain", "code_challenge": verifier}, "invalid_request"),
            ({"response_type": "token"}, "unsupported_response_type"),
        ):
            url, state = rc.authorize_url(challenge, **overrides)
            params = refusal_link_back(await PERSON.get(url), rc.redirect_uri)
            assert params.get("error") == error and params.get("state") == state, (overrides, params)
        # The person denies: access_denied, and no code.
        url, state = rc.authorize_url(challenge)
        page, _ = await PERSON.open_consent(url)
        params = redirect_params(await PERSON.decide(page, f"project:{PROJECT_ID}", "read", "deny"), rc.redirect_uri)
        assert params == {"error": "access_denied", "state": state, "iss": BASE}, params
        # The consent form is a dashboard form: without its CSRF token it is refused, no redirect.
        page, _ = await PERSON.open_consent(url)
        response = await PERSON.post_form(
            "/authorize",
            {"_csrf": "0" * 32, "request": page.request, "grant": f"project:{PROJECT_ID}", "access": "read", "decision": "approve"},
        )
        assert response.status_code == 403 and "location" not in response.headers, response.status_code


async def check_hostile_client_name_is_text() -> None:
    hostile = '<script>alert(1)</script><img src=x onerror=alert(2)>"\' &amp;'
    async with raw_client(hostile) as rc:
        _, challenge = pkce()
        url, _ = rc.authorize_url(challenge)
        page, response = await PERSON.open_consent(url)
        assert f"Connect {hostile}" in page.heading, page.heading
        assert "<script>alert(1)" not in response.text and "<img src=x" not in response.text, "escaped"
        csp = response.headers.get("content-security-policy", "")
        assert "script-src 'self'" in csp and "unsafe-inline" not in csp, f"the dashboard's strict CSP: {csp!r}"


CHECKS = [
    check_one_project_read_only,
    check_organization_with_triage,
    check_revoke_then_reconnect,
    check_discovery_documents,
    check_registration,
    check_wrong_verifier,
    check_reused_code,
    check_token_request_mismatches,
    check_foreign_redirect_uri,
    check_wrong_resource,
    check_other_authorize_refusals,
    check_hostile_client_name_is_text,
]


async def main() -> int:
    global PERSON
    PERSON = Person()
    passed = failed = 0
    try:
        for check in CHECKS:
            name = check.__name__.removeprefix("check_").replace("_", " ")
            try:
                await asyncio.wait_for(check(), timeout=60)
            except BaseException as e:  # noqa: BLE001 - report every failure and go on
                if isinstance(e, KeyboardInterrupt):
                    raise
                failed += 1
                print(f"FAIL {name}")
                traceback.print_exc()
            else:
                passed += 1
                print(f"ok   {name}")
    finally:
        await PERSON.aclose()
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
