#!/usr/bin/env python3
"""A fault-injecting HTTP/1.1 server (keep-alive, threaded) for the soak.

    faultserver.py --root DIR --log FILE --port-file FILE [--seed N] [--rate 0.1]

Serves files under DIR. Tile requests (/tiles/...) fail at `rate` with one of these faults,
drawn per attempt: the draw for the n-th request of a path is Random("seed/path/n"), so the
same path gets a fresh draw on every retry or later run, and a run is reproducible whatever
order the client's threads send requests in.

    503        503 Service Unavailable, no Retry-After (client backs off)
    429        429 Too Many Requests with Retry-After: 0
    reset      correct headers, half the body, then a TCP reset (SO_LINGER 0)
    truncated  a lying Content-Length (longer than the body), the body, then close
    html       200 with an HTML error page (a permanent failure for that attempt)
    drip       the right body, a few bytes at a time over ~0.4 s (slow but complete)

Control (never faulted, never logged as traffic):
    GET /__control?run=N&rate=R   set the run number written to the log and the fault rate
    GET /__stats                  counters as JSON

Every other request is logged as one JSON line: run, path, status, fault, bytes sent,
expected bytes, complete (the whole body was handed to the socket), time.
"""
import argparse
import json
import os
import random
import socket
import struct
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

FAULTS = ["503", "429", "reset", "truncated", "html", "drip"]
HTML = b"<!DOCTYPE html><html><head><title>Service Unavailable</title></head><body>Try later</body></html>\n"


class State:
    def __init__(self, root, log, seed, rate):
        self.root = os.path.realpath(root)
        self.seed = seed
        self.rate = rate
        self.run = 0
        self.lock = threading.Lock()
        self.seen = {}
        self.counters = {"requests": 0, "tileRequests": 0, "faults": 0, "served": 0, "incomplete": 0,
                         "byFault": {f: 0 for f in FAULTS}, "byRun": {},
                         "tilesStartedByRun": {}}
        self.log = open(log, "a", buffering=1)

    def attempt(self, path):
        """The fault for this attempt at `path` (None for a normal answer)."""
        with self.lock:
            n = self.seen.get(path, 0)
            self.seen[path] = n + 1
            run, rate = self.run, self.rate
            if path.startswith("/tiles/"):
                started = self.counters["tilesStartedByRun"]
                started[str(run)] = started.get(str(run), 0) + 1
        if not path.startswith("/tiles/") or rate <= 0:
            return run, None
        draw = random.Random(f"{self.seed}/{path}/{n}")
        if draw.random() >= rate:
            return run, None
        return run, draw.choice(FAULTS)

    def record(self, entry):
        with self.lock:
            c = self.counters
            c["requests"] += 1
            per = c["byRun"].setdefault(str(entry["run"]), {"requests": 0, "faults": 0, "tileRequests": 0})
            per["requests"] += 1
            if entry["path"].startswith("/tiles/"):
                c["tileRequests"] += 1
                per["tileRequests"] += 1
            if entry["fault"]:
                c["faults"] += 1
                per["faults"] += 1
                c["byFault"][entry["fault"]] += 1
            if entry["status"] == 200 and entry["complete"] and not entry["fault"]:
                c["served"] += 1
            if not entry["complete"]:
                c["incomplete"] += 1
            self.log.write(json.dumps(entry, sort_keys=True) + "\n")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "soak-faultserver/1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        state = self.server.state
        url = urlparse(self.path)
        if url.path == "/__control":
            query = parse_qs(url.query)
            with state.lock:
                if "run" in query:
                    state.run = int(query["run"][0])
                if "rate" in query:
                    state.rate = float(query["rate"][0])
            return self.send_json({"run": state.run, "rate": state.rate})
        if url.path == "/__stats":
            with state.lock:
                return self.send_json(state.counters)

        run, fault = state.attempt(url.path)
        entry = {"run": run, "path": url.path, "fault": fault, "status": 0, "bytes": 0, "expected": 0,
                 "complete": False, "t": round(time.time(), 4)}
        try:
            self.answer(url.path, fault, entry)
        except (BrokenPipeError, ConnectionResetError, OSError) as error:
            entry["error"] = type(error).__name__
            self.close_connection = True
        finally:
            state.record(entry)

    def answer(self, path, fault, entry):
        file = os.path.realpath(os.path.join(self.server.state.root, path.lstrip("/")))
        if not file.startswith(self.server.state.root + os.sep) or not os.path.isfile(file):
            entry["status"] = 404
            self.send_plain(404, b"not found\n")
            entry["complete"] = True
            return
        with open(file, "rb") as f:
            body = f.read()
        entry["expected"] = len(body)
        ctype = "application/json" if path.endswith(".json") else "application/x-protobuf"
        if fault in ("503", "429"):
            entry["status"] = int(fault)
            self.send_response(int(fault))
            if fault == "429":
                self.send_header("Retry-After", "0")
            payload = b"busy\n"
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
            entry["bytes"] = len(payload)
            entry["complete"] = True
            return
        if fault == "html":
            entry["status"] = 200
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(HTML)))
            self.end_headers()
            self.wfile.write(HTML)
            entry["bytes"] = len(HTML)
            entry["complete"] = True
            return
        entry["status"] = 200
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        lie = len(body) + 37 if fault == "truncated" else len(body)
        self.send_header("Content-Length", str(lie))
        self.end_headers()
        if fault == "reset":
            half = body[: len(body) // 2]
            self.wfile.write(half)
            self.wfile.flush()
            entry["bytes"] = len(half)
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
            self.close_connection = True
            return
        if fault == "drip":
            step = max(1, len(body) // 8)
            for start in range(0, len(body), step):
                self.wfile.write(body[start:start + step])
                self.wfile.flush()
                entry["bytes"] = min(len(body), start + step)
                time.sleep(0.05)
            entry["complete"] = True
            return
        self.wfile.write(body)
        self.wfile.flush()
        entry["bytes"] = len(body)
        if fault == "truncated":
            # The body is all there, but the header promised more: close so the client sees it short.
            self.close_connection = True
            return
        entry["complete"] = True

    def send_plain(self, status, payload):
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def send_json(self, value):
        payload = json.dumps(value, sort_keys=True).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256
    allow_reuse_address = True

    def handle_error(self, request, client_address):
        pass  # clients killed mid-response are the point of the exercise


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rate", type=float, default=0.1)
    args = parser.parse_args()
    server = Server(("127.0.0.1", 0), Handler)
    server.state = State(args.root, args.log, args.seed, args.rate)
    tmp = args.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(server.server_address[1]))
    os.replace(tmp, args.port_file)
    server.serve_forever(poll_interval=0.1)


if __name__ == "__main__":
    main()
