"""CI's webhook receiver: HTTPS on port 8443 with the certificate in its folder; prints one line per delivery."""

import http.server
import json
import ssl
import sys
from pathlib import Path

HERE = Path(__file__).parent


class Receiver(http.server.BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        print("delivered", self.headers.get("webhook-id"), body.get("type"), flush=True)
        self.send_response(204)
        self.end_headers()

    def log_message(self, *_: object) -> None:
        pass


server = http.server.ThreadingHTTPServer(("0.0.0.0", 8443), Receiver)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(HERE / "cert.pem", HERE / "key.pem")
server.socket = context.wrap_socket(server.socket, server_side=True)
print("receiving on 8443", file=sys.stderr, flush=True)
server.serve_forever()
