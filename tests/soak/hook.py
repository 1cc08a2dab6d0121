#!/usr/bin/python3
"""The soak's webhook receiver (stdlib only).

    hook.py PORT MODEFILE LOGFILE

Listens on 127.0.0.1:PORT (0: a free port, printed on stdout as the first
line). MODEFILE holds how to answer, read on every request: "ok" (200),
"500", "429" (with Retry-After: 2); a missing file is "ok". Every request
is appended to LOGFILE as one JSON line {"t", "code", "id", "kind", "tag",
"body"} with the code it was answered with; "id" is the event's id from
the json payload (schemas/event.schema.json), so duplicates show. The
harness stops it (the webhook host down) with SIGTERM and starts it again
on the same port.
"""
import http.server
import json
import signal
import sys
import threading
import time


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "xloop-soak-hook"

    def log_message(self, fmt, *args):  # quiet
        pass

    def mode(self):
        try:
            with open(self.server.modefile) as f:
                return f.read().strip() or "ok"
        except OSError:
            return "ok"

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n > 0 else b""
        mode = self.mode()
        code = {"500": 500, "429": 429}.get(mode, 200)
        try:
            doc = json.loads(body)
        except ValueError:
            doc = {}
        if not isinstance(doc, dict):
            doc = {}
        rec = {"t": time.time(), "code": code, "id": doc.get("id"),
               "kind": doc.get("kind"), "tag": doc.get("tag"),
               "body": body.decode("utf-8", "replace")}
        with self.server.lock:
            with open(self.server.logfile, "a") as f:
                f.write(json.dumps(rec) + "\n")
        self.send_response(code)
        if code == 429:
            self.send_header("Retry-After", "2")
        text = b"ok" if code == 200 else b"not now"
        self.send_header("Content-Length", str(len(text)))
        self.end_headers()
        self.wfile.write(text)


def main():
    port, modefile, logfile = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    http.server.ThreadingHTTPServer.allow_reuse_address = True
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    srv.daemon_threads = True
    srv.modefile = modefile
    srv.logfile = logfile
    srv.lock = threading.Lock()

    def stop(*_):
        threading.Thread(target=srv.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print(srv.server_address[1], flush=True)
    srv.serve_forever(poll_interval=0.2)
    srv.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
