#!/usr/bin/env python3
"""Serves one file over HTTP at a set rate, as a slow mirror would: for the download tests.
  slow_http.py FILE PORT BYTES_PER_SECOND   (listens on every address; GET /NAME of FILE only)"""
import http.server
import os
import sys
import time

path, port, rate = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
name = "/" + os.path.basename(path)


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path != name:
            self.send_error(404)
            return
        data = open(path, "rb").read()
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        chunk = max(1, rate // 10)
        for at in range(0, len(data), chunk):
            self.wfile.write(data[at:at + chunk])
            self.wfile.flush()
            time.sleep(0.1)

    def log_message(self, *args):
        pass


http.server.ThreadingHTTPServer(("", port), Handler).serve_forever()
