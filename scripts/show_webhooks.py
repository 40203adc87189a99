"""A webhook receiver for trying the service by hand: prints one line per delivery and checks its signature.

    python3 scripts/show_webhooks.py --port 9000 --secret whsec_…

Standard library only, so it runs with any Python 3.11+. Each delivery is answered 200 when its
`X-Webhook-Signature` (HMAC-SHA256 of the exact body, keyed with the secret as shown) matches, 401 when it does
not (the service then retries it, as it would for any receiver that refuses). The line printed holds the event,
its actor, the chat's phone when it has one, and whether the signature held. Stop it with Ctrl-C.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def signature_holds(secret: str, body: bytes, header: str) -> bool:
    expected = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, header)


def receiver(secret: str) -> type[BaseHTTPRequestHandler]:
    class Receiver(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            valid = signature_holds(secret, body, self.headers.get("X-Webhook-Signature", ""))
            self.send_response(200 if valid else 401)
            self.send_header("Content-Length", "0")
            self.end_headers()
            try:
                envelope = json.loads(body)
            except ValueError:
                envelope = {}
            data = envelope.get("data") if isinstance(envelope.get("data"), dict) else {}
            line = {"webhook": envelope.get("event"), "actor": envelope.get("actor"), "phone": data.get("phone"),
                    "signature": "valid" if valid else "INVALID"}
            print(json.dumps(line), flush=True)

        def log_message(self, format: str, *args) -> None:
            pass  # one line per delivery is printed above; the request log would double it

    return Receiver


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9000)
    parser.add_argument("--secret", required=True, help="the whsec_… secret the webhook settings call showed")
    args = parser.parse_args()
    server = ThreadingHTTPServer((args.host, args.port), receiver(args.secret))
    print(f"receiving webhooks on http://{args.host}:{server.server_port}/", file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
