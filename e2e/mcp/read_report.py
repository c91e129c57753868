"""Reads one report the way a coding agent does, with the official Python MCP SDK, and prints what
it got as JSON (for e2e/widget/agent.test.mjs, which filed the report through the widget):

  {"protocolVersion", "resources": [uri, ...] (resources/list),
   "report": {"isError", "text", "images": [{"mimeType", "data"}]} (get_report),
   "files": {uri: {"mimeType", "text" | "blob"}} (resources/read of every svc://blobs/ URI the text names),
   "reproduction": {"mimeType", "text"} | null (resources/read of svc://reports/<id>/reproduction.spec.ts;
   null when the server has none for the report)}

Usage: SVC_MCP_URL=... SVC_KEY=... python read_report.py <report id>
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


async def main(report_id: str) -> None:
    headers = {"Authorization": f"Bearer {os.environ['SVC_KEY']}"}
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
        async with Client(streamable_http_client(os.environ["SVC_MCP_URL"], http_client=http)) as client:
            listed = await client.list_resources()
            result = await client.call_tool("get_report", {"id": report_id})
            text = result.content[0].text
            images = [{"mimeType": c.mime_type, "data": c.data} for c in result.content if c.type == "image"]
            files = {}
            for uri in dict.fromkeys(re.findall(r"svc://blobs/[0-9a-f]{24}", text)):
                read = await client.read_resource(uri)
                item = read.contents[0]
                files[uri] = {"mimeType": item.mime_type, **({"text": item.text} if hasattr(item, "text") else {"blob": item.blob})}
            reproduction = None
            try:
                read = await client.read_resource(f"svc://reports/{report_id}/reproduction.spec.ts")
                reproduction = {"mimeType": read.contents[0].mime_type, "text": read.contents[0].text}
            except Exception:  # the report has no page to replay from: no reproduction
                reproduction = None
            print(
                json.dumps(
                    {
                        "protocolVersion": client.protocol_version,
                        "resources": [str(r.uri) for r in listed.resources],
                        "report": {"isError": bool(result.is_error), "text": text, "images": images},
                        "files": files,
                        "reproduction": reproduction,
                    }
                )
            )


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
