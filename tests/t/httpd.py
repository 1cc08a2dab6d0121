#!/usr/bin/python3
"""A webhook receiver for the notification tests (stdlib only).

    httpd.py PORTFILE LOGFILE [LIFETIME]

Listens on 127.0.0.1 on a free port and writes the port to PORTFILE once it
accepts connections. Every request is appended to LOGFILE as one JSON line
{"method", "path", "headers" (names lowercased), "body", "t"} as soon as its
body is read, before the answer. The first path segment picks the answer;
"first time" counts per full path, so /flaky/a and /flaky/b are separate:

    /ok       200
    /flaky    500 the first time, then 200
    /slow     answers only after 12 s
    /limited  429 with Retry-After: 1 the first time, then 200
    /later    429 with Retry-After: 60 every time
    /gone     404
    /moved    302 to /ok
    anything else: 404

Stops by itself after LIFETIME seconds (default 120) and on SIGTERM/SIGINT.
"""
import http.server
import json
import os
import signal
import sys
import threading
import time

SLOW_SECS = 12


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "xloop-test-httpd"

    def log_message(self, fmt, *args):  # quiet
        pass

    def record(self, body):
        rec = {
            "method": self.command,
            "path": self.path,
            "headers": {k.lower(): v for k, v in self.headers.items()},
            "body": body.decode("utf-8", "replace"),
            "t": time.time(),
        }
        with self.server.lock:
            with open(self.server.logfile, "a") as f:
                f.write(json.dumps(rec) + "\n")
                f.flush()

    def first_time(self):
        with self.server.lock:
            n = self.server.seen.get(self.path, 0)
            self.server.seen[self.path] = n + 1
        return n == 0

    def answer(self, code, headers=(), body=b""):
        self.send_response(code)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def handle_any(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n > 0 else b""
        self.record(body)
        what = self.path.split("?")[0].strip("/").split("/")[0]
        if what == "ok":
            self.answer(200, body=b"ok")
        elif what == "flaky":
            if self.first_time():
                self.answer(500, body=b"try again")
            else:
                self.answer(200, body=b"ok")
        elif what == "slow":
            time.sleep(SLOW_SECS)
            try:
                self.answer(200, body=b"late")
            except OSError:
                pass
        elif what == "limited":
            if self.first_time():
                self.answer(429, [("Retry-After", "1")], b"slow down")
            else:
                self.answer(200, body=b"ok")
        elif what == "later":
            self.answer(429, [("Retry-After", "60")], b"slow down")
        elif what == "moved":
            self.answer(302, [("Location", "/ok")])
        else:
            self.answer(404, body=b"no such webhook " + self.path.encode())

    do_POST = handle_any
    do_GET = handle_any
    do_PUT = handle_any


def main():
    portfile, logfile = sys.argv[1], sys.argv[2]
    lifetime = float(sys.argv[3]) if len(sys.argv) > 3 else 120.0
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    srv.logfile = logfile
    srv.lock = threading.Lock()
    srv.seen = {}

    def stop(*_):
        # shutdown() waits for serve_forever: call it from another thread
        threading.Thread(target=srv.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    timer = threading.Timer(lifetime, stop)
    timer.daemon = True
    timer.start()
    tmp = portfile + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, portfile)
    srv.serve_forever(poll_interval=0.2)
    srv.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
