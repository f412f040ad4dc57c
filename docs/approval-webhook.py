#!/usr/bin/env python3
"""A minimal approval webhook for hitl (README: Answering from anywhere).

    HITL_APPROVER_SECRET=whsec_... python3 docs/approval-webhook.py 8787
    hitl exec --approver http://127.0.0.1:8787/ agent.yaml    # elsewhere

Each question hitl POSTs is checked against its Standard Webhooks signature
(a bad one gets 401), asked here with `hitl ask --request` (on this
terminal, or as HITL_PROMPT says), and answered in the reply, bound to the
question by its nonce. Standard library only.
"""
import base64, hashlib, hmac, json, os, subprocess, sys, tempfile, time
from http.server import BaseHTTPRequestHandler, HTTPServer

KEY = base64.b64decode(os.environ["HITL_APPROVER_SECRET"].removeprefix("whsec_"))


def signed(headers, body):
    msg_id, ts = headers.get("webhook-id", ""), headers.get("webhook-timestamp", "0")
    if abs(time.time() - int(ts)) > 300:
        return False
    mac = hmac.new(KEY, f"{msg_id}.{ts}.".encode() + body, hashlib.sha256).digest()
    want = "v1," + base64.b64encode(mac).decode()
    return any(hmac.compare_digest(want, s) for s in headers.get("webhook-signature", "").split())


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if not signed(self.headers, body):
            self.send_response(401)
            self.end_headers()
            return
        question = json.loads(body)
        with tempfile.NamedTemporaryFile("wb", suffix=".json") as f:
            f.write(body)
            f.flush()
            out = subprocess.run(["hitl", "ask", "--request", f.name], stdout=subprocess.PIPE).stdout
        answer = json.loads(out or b'{"action":"pass"}')
        answer["nonce"] = question["nonce"]
        reply = json.dumps(answer).encode() + b"\n"
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)


server = HTTPServer(("127.0.0.1", int(sys.argv[1]) if len(sys.argv) > 1 else 8787), Handler)
print(f"approval webhook on http://127.0.0.1:{server.server_port}/", flush=True)
server.serve_forever()
