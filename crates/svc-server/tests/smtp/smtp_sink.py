"""A real SMTP server for Svc's mail tests (aiosmtpd, from PyPI).

Usage: python smtp_sink.py <folder> [--port N] [--user NAME --password SECRET]

Listens on 127.0.0.1 on a port the system picks (or --port, to start again where a stopped one
listened) and prints `PORT <n>` once it accepts
connections. Each message it accepts is parsed back with Python's own `email` package and written
to <folder>/<n>.json (n counting from 1): the envelope (`mail_from`, `rcpt_tos`), the `From`, `To`
and `Subject` headers decoded, every header, and the body decoded from its transfer encoding.
While <folder>/reject exists, every message is answered `451` (a temporary failure). With --user
and --password, AUTH is required (over plain text: this is a loopback test server).
"""

import argparse
import asyncio
import email
import json
import logging
import os
import warnings
from email import policy

from aiosmtpd.smtp import SMTP, AuthResult, LoginPassword


class Sink:
    def __init__(self, folder):
        self.folder = folder
        self.count = 0

    async def handle_DATA(self, server, session, envelope):
        if os.path.exists(os.path.join(self.folder, "reject")):
            return "451 4.3.0 Try again later (the test server is rejecting mail)"
        message = email.message_from_bytes(envelope.original_content or envelope.content, policy=policy.default)
        record = {
            "mail_from": envelope.mail_from,
            "rcpt_tos": envelope.rcpt_tos,
            "from": str(message["From"]),
            "to": str(message["To"]),
            "subject": str(message["Subject"]),
            "content_type": message.get_content_type(),
            "headers": {name: str(value) for name, value in message.items()},
            "body": message.get_content(),
        }
        self.count += 1
        path = os.path.join(self.folder, f"{self.count}.json")
        with open(path + ".tmp", "w", encoding="utf-8") as out:
            json.dump(record, out)
        os.replace(path + ".tmp", path)
        return "250 2.0.0 Accepted"


def main():
    # AUTH without TLS is what this loopback test server is for: no warning about it.
    warnings.filterwarnings("ignore", message="Requiring AUTH while not requiring TLS")
    logging.getLogger("mail.log").setLevel(logging.CRITICAL)
    parser = argparse.ArgumentParser()
    parser.add_argument("folder")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--user")
    parser.add_argument("--password")
    args = parser.parse_args()
    sink = Sink(args.folder)

    def authenticator(server, session, envelope, mechanism, auth_data):
        ok = (
            isinstance(auth_data, LoginPassword)
            and auth_data.login.decode() == args.user
            and auth_data.password.decode() == args.password
        )
        return AuthResult(success=ok, handled=False)

    def protocol():
        if args.user:
            return SMTP(
                sink,
                hostname="svc-test-smtp",
                authenticator=authenticator,
                auth_required=True,
                auth_require_tls=False,
            )
        return SMTP(sink, hostname="svc-test-smtp")

    async def serve():
        server = await asyncio.get_running_loop().create_server(protocol, "127.0.0.1", args.port)
        print(f"PORT {server.sockets[0].getsockname()[1]}", flush=True)
        await server.serve_forever()

    asyncio.run(serve())


if __name__ == "__main__":
    main()
