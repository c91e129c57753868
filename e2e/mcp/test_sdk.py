"""Svc's tool endpoint driven by the official Python MCP SDK (`mcp` package, streamable HTTP client).

Run by e2e/mcp/run.sh, which starts the server and sets:
  SVC_BASE_URL, SVC_MCP_URL, SVC_PROJECT_ID   where the server is
  SVC_KEY_RW, SVC_KEY_RO, SVC_KEY_ORG         keys: feedback:read+write, feedback:read, org-wide read+write
  SVC_REPORT_ID                               a seeded report with one 1x1 PNG screenshot
  SVC_FOREIGN_REPORT_ID, SVC_OTHER_PROJECT_ID a report of a second project (out of the project keys' reach)

A plain script: each check prints ok/FAIL, the last line is "N passed, N failed", and the exit status
is non-zero when any check failed.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import re
import sys
import traceback
import urllib.error
import urllib.request
import warnings
from typing import Any, AsyncIterator, Iterator

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

ENV = os.environ
BASE = ENV["SVC_BASE_URL"]
MCP_URL = ENV["SVC_MCP_URL"]
PROJECT_ID = ENV["SVC_PROJECT_ID"]
KEY_RW = ENV["SVC_KEY_RW"]
KEY_RO = ENV["SVC_KEY_RO"]
KEY_ORG = ENV["SVC_KEY_ORG"]
REPORT_ID = ENV["SVC_REPORT_ID"]
FOREIGN_REPORT_ID = ENV["SVC_FOREIGN_REPORT_ID"]
OTHER_PROJECT_ID = ENV["SVC_OTHER_PROJECT_ID"]

TOOL_NAMES = ["introduce", "list_reports", "get_report", "create_report", "create_room", "set_status", "add_comment"]
STATUSES = ["new", "triaged", "in-progress", "fixed", "verified", "canceled"]
PNG_1X1 = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
AGENT = "Python SDK e2e"


@contextlib.asynccontextmanager
async def connect(key: str) -> AsyncIterator[Client]:
    """An SDK client over streamable HTTP with the key as a bearer token."""
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=30) as http:
        async with Client(streamable_http_client(MCP_URL, http_client=http)) as client:
            yield client


def text_of(result: Any) -> str:
    assert result.content, f"empty content: {result}"
    first = result.content[0]
    assert first.type == "text", f"first item is {first.type}"
    return first.text


def ok_json(result: Any) -> Any:
    assert not result.is_error, f"tool failed: {text_of(result)}"
    return json.loads(text_of(result))


def rest(method: str, path: str, key: str) -> tuple[int, Any]:
    request = urllib.request.Request(f"{BASE}{path}", method=method, headers={"Authorization": f"Bearer {key}"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def raw_mcp(key: str, message: Any) -> tuple[int, dict[str, str], bytes]:
    """POST /mcp without the SDK."""
    request = urllib.request.Request(
        MCP_URL,
        method="POST",
        data=json.dumps(message).encode(),
        headers={
            "Authorization": f"Bearer {key}",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def schema_of(tool: Any) -> dict[str, Any]:
    schema = tool.input_schema
    if hasattr(schema, "model_dump"):
        schema = schema.model_dump(by_alias=True, exclude_none=True)
    return schema


# --------------------------------------------------------------------------------------------
# Checks


async def check_connects_and_negotiates() -> None:
    async with connect(KEY_RW) as client:
        assert client.protocol_version == "2024-11-05", client.protocol_version
        assert client.server_info is not None and client.server_info.name == "svc", client.server_info
        assert client.server_capabilities.tools is not None
        with warnings.catch_warnings():
            # mcp 2.x warns that ping is gone from the 2026 protocol; this is a 2024-11-05 session.
            warnings.simplefilter("ignore")
            await client.send_ping()


async def check_lists_the_seven_tools() -> None:
    async with connect(KEY_RW) as client:
        listed = await client.list_tools()
        names = [t.name for t in listed.tools]
        assert names == TOOL_NAMES, names
        tools = {t.name: t for t in listed.tools}
        for name, tool in tools.items():
            schema = schema_of(tool)
            assert schema["type"] == "object", (name, schema)
            read_only = tool.annotations.read_only_hint if tool.annotations else None
            assert read_only is (name in ("list_reports", "get_report")), (name, read_only)
        assert schema_of(tools["set_status"])["properties"]["status"]["enum"] == STATUSES
        assert sorted(schema_of(tools["set_status"])["required"]) == ["id", "status"]
        assert schema_of(tools["get_report"])["required"] == ["id"]


async def check_every_tool() -> None:
    async with connect(KEY_RW) as client:
        # introduce
        result = await client.call_tool("introduce", {"agentName": AGENT, "owner": "svc CI"})
        assert not result.is_error and AGENT in text_of(result), text_of(result)

        # list_reports: a JSON array in compact form, the seeded report in it, the foreign one not.
        items = ok_json(await client.call_tool("list_reports", {"limit": 200}))
        assert isinstance(items, list), items
        ids = [i["id"] for i in items]
        assert REPORT_ID in ids and FOREIGN_REPORT_ID not in ids, ids
        seeded = next(i for i in items if i["id"] == REPORT_ID)
        assert set(seeded) == {"id", "shortId", "title", "status", "channelKey", "url", "artifactId", "createdAt"}
        assert seeded["title"] == "Checkout button does nothing", seeded
        assert seeded["artifactId"] == "preview-1", seeded
        only_bug = ok_json(await client.call_tool("list_reports", {"channelKey": "bug", "artifactId": "preview-1"}))
        assert [i["id"] for i in only_bug] == [REPORT_ID], only_bug

        # get_report: Markdown plus the screenshot as an image item; by full id and by shortId.
        for reference in (REPORT_ID, REPORT_ID[-6:]):
            result = await client.call_tool("get_report", {"id": reference})
            assert not result.is_error, text_of(result)
            markdown = text_of(result)
            assert markdown.startswith("# Checkout button does nothing"), markdown
            assert "https://shop.example.com/cart" in markdown, markdown
            images = [c for c in result.content if c.type == "image"]
            assert len(images) == 1, result.content
            assert images[0].mime_type == "image/png"
            assert base64.b64decode(images[0].data) == PNG_1X1

        # create_report, then read it back through the REST API.
        filed = ok_json(
            await client.call_tool(
                "create_report",
                {"message": "Footer overlaps the cookie banner", "url": "https://shop.example.com/", "channelKey": "idea"},
            )
        )
        assert filed["title"] == "Footer overlaps the cookie banner" and filed["channelKey"] == "idea", filed
        status, report = rest("GET", f"/api/v1/projects/{PROJECT_ID}/feedback/{filed['id']}", KEY_RW)
        assert status == 200, (status, report)
        assert report["context"]["extra"]["via"] == "mcp", report["context"]
        assert report["author"]["kind"] == "agent", report["author"]
        assert report["author"]["id"].startswith("agent:"), report["author"]
        assert report["author"]["label"] == AGENT, report["author"]

        # create_room: an idempotent upsert.
        first = ok_json(await client.call_tool("create_room", {"artifact_id": "py-sdk-room", "title": "Python room"}))
        again = ok_json(await client.call_tool("create_room", {"artifact_id": "py-sdk-room", "goal": "Check the SDK"}))
        assert first["created"] is True and again["created"] is False, (first, again)
        assert first["id"] == again["id"] and again["title"] == "Python room", again
        assert again["meta"]["goal"] == "Check the SDK", again

        # set_status with every value.
        for value in STATUSES:
            changed = ok_json(await client.call_tool("set_status", {"id": filed["id"], "status": value}))
            assert changed == {"id": filed["id"], "status": value}, changed

        # add_comment: a draft by default, published with draft false.
        draft = ok_json(await client.call_tool("add_comment", {"report_id": filed["shortId"], "text": "Looking into it"}))
        assert draft["draft"] is True and draft["publishedAt"] is None and draft["authorLabel"] == AGENT, draft
        posted = ok_json(
            await client.call_tool(
                "add_comment", {"report_id": filed["id"], "text": "Fixed", "draft": False, "kind": "fix"}
            )
        )
        assert posted["draft"] is False and posted["kind"] == "fix" and posted["publishedAt"], posted
        status, comments = rest("GET", f"/api/v1/projects/{PROJECT_ID}/feedback/{filed['id']}/comments", KEY_RW)
        assert status == 200 and [c["id"] for c in comments["items"]] == [draft["id"], posted["id"]], comments


async def check_is_error_results() -> None:
    async with connect(KEY_RW) as client:
        for name, arguments in (
            ("get_report", {"id": FOREIGN_REPORT_ID}),
            ("set_status", {"id": FOREIGN_REPORT_ID, "status": "fixed"}),
            ("add_comment", {"report_id": FOREIGN_REPORT_ID, "text": "hi"}),
        ):
            result = await client.call_tool(name, arguments)
            assert result.is_error is True, (name, result)
            assert f"no report {FOREIGN_REPORT_ID}" in text_of(result), text_of(result)
        result = await client.call_tool("get_report", {"id": "not-an-id"})
        assert result.is_error is True and "24 hex characters" in text_of(result), text_of(result)
        result = await client.call_tool("set_status", {"id": REPORT_ID, "status": "done"})
        assert result.is_error is True, result
        assert "argument status must be one of" in text_of(result), text_of(result)
        # Unknown tool: a protocol error, -32601.
        try:
            await client.call_tool("drop_everything", {})
        except MCPError as e:
            assert e.code == -32601, e
        else:
            raise AssertionError("an unknown tool must be a protocol error")


async def check_resources() -> None:
    async with connect(KEY_RO) as client:
        assert client.server_capabilities.resources is not None, client.server_capabilities
        listed = await client.list_resources()
        uris = [str(r.uri) for r in listed.resources]
        assert f"svc://reports/{REPORT_ID}" in uris and f"svc://reports/{FOREIGN_REPORT_ID}" not in uris, uris
        report = await client.read_resource(f"svc://reports/{REPORT_ID}")
        text = report.contents[0].text
        assert text.startswith("# Checkout button does nothing"), text
        # The screenshot get_report names, read back byte for byte.
        blob_uri = re.search(r"svc://blobs/[0-9a-f]{24}", text)
        assert blob_uri, text
        blob = (await client.read_resource(blob_uri.group(0))).contents[0]
        assert blob.mime_type == "image/png" and base64.b64decode(blob.blob) == PNG_1X1, blob
        # Another project's report is out of a project key's reach: resource not found.
        try:
            await client.read_resource(f"svc://reports/{FOREIGN_REPORT_ID}")
        except MCPError as e:
            assert e.code == -32002, e
        else:
            raise AssertionError("a foreign report must not be readable")
    async with connect(KEY_ORG) as client:
        other = await client.read_resource(f"svc://reports/{FOREIGN_REPORT_ID}")
        assert "A report of another project" in other.contents[0].text


async def check_argument_aliases_and_unknown_arguments() -> None:
    async with connect(KEY_RW) as client:
        for name in ("id", "report_id", "reportId"):
            result = await client.call_tool("get_report", {name: REPORT_ID})
            assert not result.is_error and text_of(result).startswith("# Checkout button does nothing"), name
        items = ok_json(await client.call_tool("list_reports", {"channel_key": "bug", "artifact_id": "preview-1"}))
        assert [i["id"] for i in items] == [REPORT_ID], items
        room = ok_json(await client.call_tool("create_room", {"artifactId": "py-alias-room"}))
        assert room["artifactId"] == "py-alias-room", room
        comment = ok_json(await client.call_tool("add_comment", {"id": REPORT_ID, "text": "Via an alias"}))
        assert comment["reportId"] == REPORT_ID and comment["draft"] is True, comment
        # An unknown argument is named, with the closest valid one, and nothing is listed.
        result = await client.call_tool("list_reports", {"channel": "bug"})
        assert result.is_error is True, result
        assert 'unknown argument "channel"' in text_of(result) and "did you mean channelKey?" in text_of(result), text_of(result)


async def check_read_only_key() -> None:
    async with connect(KEY_RO) as client:
        assert [t.name for t in (await client.list_tools()).tools] == TOOL_NAMES
        items = ok_json(await client.call_tool("list_reports", {}))
        assert REPORT_ID in [i["id"] for i in items], items
        result = await client.call_tool("get_report", {"id": REPORT_ID})
        assert not result.is_error and "Checkout button does nothing" in text_of(result)
        assert not (await client.call_tool("introduce", {"agentName": "Read-only e2e"})).is_error
    # The refusal of a write tool, checked on the wire: HTTP 403 and the JSON-RPC error body.
    for i, (name, arguments) in enumerate(
        (
            ("create_report", {"message": "nope"}),
            ("create_room", {"artifact_id": "nope"}),
            ("set_status", {"id": REPORT_ID, "status": "fixed"}),
            ("add_comment", {"report_id": REPORT_ID, "text": "nope"}),
        )
    ):
        status, headers, body = raw_mcp(
            KEY_RO,
            {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": name, "arguments": arguments}},
        )
        assert status == 403, (name, status, body)
        assert json.loads(body) == {
            "jsonrpc": "2.0",
            "id": i,
            "error": {"code": -32003, "message": "forbidden: this key lacks feedback:write"},
        }, body
        assert "www-authenticate" not in {k.lower() for k in headers}, headers


async def check_org_wide_key() -> None:
    async with connect(KEY_ORG) as client:
        items = ok_json(await client.call_tool("list_reports", {"limit": 200}))
        by_id = {i["id"]: i for i in items}
        assert REPORT_ID in by_id and FOREIGN_REPORT_ID in by_id, list(by_id)
        assert by_id[REPORT_ID]["projectId"] == PROJECT_ID and by_id[REPORT_ID]["project"] == "Default"
        assert by_id[FOREIGN_REPORT_ID]["projectId"] == OTHER_PROJECT_ID
        assert by_id[FOREIGN_REPORT_ID]["project"] == "Other shop"
        result = await client.call_tool("get_report", {"id": FOREIGN_REPORT_ID})
        assert not result.is_error and "A report of another project" in text_of(result), text_of(result)
        result = await client.call_tool("create_report", {"message": "Where does this go?"})
        assert result.is_error and "project" in text_of(result), text_of(result)
        filed = ok_json(await client.call_tool("create_report", {"message": "Org-wide filing", "project": "Other shop"}))
        assert filed["projectId"] == OTHER_PROJECT_ID, filed


async def check_unauthorized() -> None:
    status, headers, _ = raw_mcp("pr_sk_" + "x" * 40, {"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert status == 401, status
    assert {k.lower(): v for k, v in headers.items()}["www-authenticate"].startswith("Bearer"), headers
    try:
        async with connect("pr_sk_" + "x" * 40) as client:
            await client.send_ping()
    except Exception as e:  # the SDK raises the 401's JSON-RPC error, possibly inside task groups
        errors = list(leaves(e))
        assert any(isinstance(x, MCPError) and "invalid API key" in x.message for x in errors), errors
    else:
        raise AssertionError("connecting with an unknown key must fail")


def leaves(error: BaseException) -> Iterator[BaseException]:
    """The exceptions inside (nested) exception groups."""
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            yield from leaves(inner)
    else:
        yield error


CHECKS = [
    check_connects_and_negotiates,
    check_lists_the_seven_tools,
    check_every_tool,
    check_is_error_results,
    check_resources,
    check_argument_aliases_and_unknown_arguments,
    check_read_only_key,
    check_org_wide_key,
    check_unauthorized,
]


async def main() -> int:
    passed = failed = 0
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
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
