#!/usr/bin/env python3
"""A stand-in for Pyroscope's ingest endpoint (and Parca's WriteRaw gateway) for the agent's
tests: Python's standard library only.

    agent_receiver.py DIR [PORT]

Listens on 127.0.0.1:PORT (0 or none: any free port, written to DIR/port); https when
DIR/tls.pem exists (a certificate and its key, PEM). While DIR/down exists (made before the
start) the port is bound but not listened on: a connection is refused, as with no server at
all, and the port stays the receiver's (none other can take it before it comes up). How it
answers is read from DIR/mode at each request: "ok" (200), "status N" (answer N), "slow S"
(wait S seconds, then 200). Each request is recorded before it is answered: its body in DIR/N.body,
and a line of JSON in DIR/requests.jsonl: {"n", "method", "path", "query" (parsed, each
parameter's values), "headers" (a few), "len", "answer" (the mode used)}.
"""
import json
import os
import ssl
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DIR = sys.argv[1]
PORT = int(sys.argv[2]) if len(sys.argv) > 2 else 0
LOCK = threading.Lock()
COUNT = [0]


def mode():
    try:
        with open(os.path.join(DIR, "mode")) as f:
            return f.read().split()
    except OSError:
        return ["ok"]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def do_POST(self):
        n_bytes = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n_bytes)
        m = mode()
        url = urllib.parse.urlsplit(self.path)
        with LOCK:
            COUNT[0] += 1
            n = COUNT[0]
            with open(os.path.join(DIR, "%d.body" % n), "wb") as f:
                f.write(body)
            rec = {
                "n": n,
                "method": self.command,
                "path": url.path,
                "query": urllib.parse.parse_qs(url.query, keep_blank_values=True),
                "headers": {k: self.headers.get(k) for k in
                            ("Content-Type", "Authorization", "X-Scope-OrgID")
                            if self.headers.get(k) is not None},
                "len": len(body),
                "answer": " ".join(m),
                "t": time.time(),
            }
            with open(os.path.join(DIR, "requests.jsonl"), "a") as f:
                f.write(json.dumps(rec) + "\n")
        code = 200
        if m[0] == "slow":
            time.sleep(float(m[1]))
        elif m[0] == "status":
            code = int(m[1])
        msg = b"" if code == 200 else b"refused by the test receiver"
        try:
            self.send_response(code)
            self.send_header("Content-Length", str(len(msg)))
            self.end_headers()
            self.wfile.write(msg)
        except OSError:
            pass  # the agent gave up waiting (slow)


def main():
    srv = ThreadingHTTPServer(("127.0.0.1", PORT), Handler, bind_and_activate=False)
    srv.daemon_threads = True
    srv.server_bind()
    down = os.path.join(DIR, "down")
    was_down = os.path.exists(down)
    if not was_down:
        srv.server_activate()
    tmp = os.path.join(DIR, "port.tmp")
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, os.path.join(DIR, "port"))
    if was_down:
        while os.path.exists(down):
            time.sleep(0.05)
        srv.server_activate()
    pem = os.path.join(DIR, "tls.pem")
    if os.path.exists(pem):
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(pem)
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
