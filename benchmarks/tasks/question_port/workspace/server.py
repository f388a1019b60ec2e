"""A tiny status server for the build farm."""

import argparse
from http.server import BaseHTTPRequestHandler, HTTPServer

DEFAULT_PORT = 8421


class Status(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"ok\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=DEFAULT_PORT)
    args = ap.parse_args()
    HTTPServer(("127.0.0.1", args.port), Status).serve_forever()


if __name__ == "__main__":
    main()
