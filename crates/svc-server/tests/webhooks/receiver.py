"""A webhook receiver for Svc's tests: every delivery is checked with the `standardwebhooks`
package (the Standard Webhooks reference library, from PyPI) and Slack messages with the Block Kit
models of Slack's own `slack_sdk`, which enforce the limits Slack documents.

Usage: python receiver.py <folder> [--port N]

Listens on 127.0.0.1 (a port the system picks, or --port to listen where a stopped one did) and
prints `PORT <n>` once it accepts connections. Each request is written to <folder>/<n>.json (n
counting from 1): its path, headers and body, what the endpoint answered, and
- `verified`: for each secret in <folder>/secrets.json (a JSON list), whether the delivery verifies
  with it (`Webhook(secret).verify(body, headers)`), and `verify_errors` with the library's words;
- `slack`: for a body with `blocks`, "ok" when every block parses into slack_sdk's models and
  passes their `validate_json()` (and the message has at most 50 blocks), else the error.
While <folder>/answer holds a status code (e.g. 500), every request is answered with it; while
<folder>/delay holds seconds, the answer waits that long first.
"""

import argparse
import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from slack_sdk.models.blocks import Block
from standardwebhooks import Webhook


def read(folder, name, default=None):
    try:
        with open(os.path.join(folder, name), encoding="utf-8") as f:
            return f.read().strip()
    except FileNotFoundError:
        return default


def slack_check(message):
    blocks = message.get("blocks")
    if blocks is None:
        return None
    try:
        if not isinstance(blocks, list) or not 1 <= len(blocks) <= 50:
            return "a message has 1 to 50 blocks"
        for raw in blocks:
            block = Block.parse(raw)
            if block is None:
                return f"unknown block type {raw.get('type')!r}"
            block.validate_json()
        return "ok"
    except Exception as error:  # the SDK's SlackObjectFormationError names the broken limit
        return f"{type(error).__name__}: {error}"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("folder")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    folder = args.folder
    lock = threading.Lock()
    count = [0]

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_):
            pass

        def do_POST(self):
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length).decode("utf-8")
            headers = {name.lower(): value for name, value in self.headers.items()}
            delay = float(read(folder, "delay", "0") or 0)
            if delay:
                time.sleep(delay)
            status = int(read(folder, "answer", "200") or 200)
            secrets = json.loads(read(folder, "secrets.json", "[]"))
            verified, errors = [], []
            for secret in secrets:
                try:
                    Webhook(secret).verify(body, headers)
                    verified.append(True)
                    errors.append(None)
                except Exception as error:
                    verified.append(False)
                    errors.append(f"{type(error).__name__}: {error}")
            try:
                parsed = json.loads(body)
            except ValueError:
                parsed = None
            record = {
                "path": self.path,
                "headers": headers,
                "body": body,
                "json": parsed,
                "answered": status,
                "verified": verified,
                "verify_errors": errors,
                "slack": slack_check(parsed) if isinstance(parsed, dict) else None,
            }
            with lock:
                count[0] += 1
                path = os.path.join(folder, f"{count[0]}.json")
                with open(path + ".tmp", "w", encoding="utf-8") as out:
                    json.dump(record, out)
                os.replace(path + ".tmp", path)
            reply = b'{"ok":true}' if status < 300 else b'{"error":"the test receiver was told to fail"}'
            try:
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the sender stopped waiting (a timeout test)

    # Svc sends an endpoint a few deliveries at once: a listen queue longer than the default 5.
    ThreadingHTTPServer.request_queue_size = 128
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    print(f"PORT {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
