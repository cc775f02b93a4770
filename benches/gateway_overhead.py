#!/usr/bin/env python3
"""What ml2b's recording model gateway costs an external agent per request: the same client
code timing the same requests, once straight to a scripted chat server from this host and
once from inside an external agent's sandbox through the relay and the gateway (which
forwards to that server and records every request), side by side in one run.

    python3 benches/gateway_overhead.py [--requests 200] [--latency 0.0] \
        [--ml2b $CARGO_TARGET_DIR/release/ml2b]

A temporary root holds one bundled competition (English) and a model `scripted` served on
127.0.0.1 (answers after `--latency` seconds); the agent (standard library only) sends
`--requests` requests one after another with urllib and writes each one's time to
/home/logs/times.json. The direct side runs the same loop here, interleaved in rounds of
ten before and after the agent's run. Printed: median, p90 and mean per request for both,
the difference, and the gateway's own recorded time (`answer_seconds`).
"""

import argparse
import http.server
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

CRATE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(CRATE, "target"))
COMPETITION = "ames-housing"

CLIENT = r'''
import json, os, sys, time, urllib.request

def ask(url, key, i):
    body = {"model": "scripted", "messages": [{"role": "user", "content": "request %d" % i}]}
    req = urllib.request.Request(url + "/chat/completions", data=json.dumps(body).encode(),
        headers={"Authorization": "Bearer " + key, "Content-Type": "application/json"})
    started = time.perf_counter()
    json.load(urllib.request.urlopen(req, timeout=60))
    return time.perf_counter() - started
'''

AGENT = CLIENT + r'''
n = int(os.environ["REQUESTS"])
times = [ask(os.environ["OPENAI_BASE_URL"], os.environ["OPENAI_API_KEY"], i) for i in range(n)]
os.makedirs("/home/logs", exist_ok=True)
json.dump(times, open("/home/logs/times.json", "w"))
'''


def server(latency):
    """A chat-completions server on a free port; returns (port, counter)."""
    seen = {"requests": 0}
    lock = threading.Lock()
    answer = json.dumps({
        "id": "cmpl", "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 1},
    }).encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            self.rfile.read(int(self.headers["Content-Length"]))
            with lock:
                seen["requests"] += 1
            if latency:
                time.sleep(latency)
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd.server_address[1], seen


def root_with(tmp, port, requests):
    """A root with one competition (English), the scripted model and the timing agent."""
    root = os.path.join(tmp, "root")
    shutil.copytree(os.path.join(CRATE, "manifests"), os.path.join(root, "manifests"))
    competitions = os.path.join(root, "manifests", "competitions")
    for name in os.listdir(competitions):
        if name != f"{COMPETITION}.toml":
            os.remove(os.path.join(competitions, name))
    src = os.path.join(CRATE, "data", COMPETITION)
    shutil.copytree(src, os.path.join(root, "data", COMPETITION), ignore=shutil.ignore_patterns("source"))
    with open(os.path.join(root, "manifests", "models.toml"), "a") as f:
        f.write(f'\n[[model]]\nname = "scripted"\nprovider = "openai"\n'
                f'endpoint = "http://127.0.0.1:{port}/v1"\nmodel = "scripted-2025-01-01"\n'
                'api_key_env = "ML2B_BENCH_KEY"\nusd_per_mtok_input = 1.0\nusd_per_mtok_output = 2.0\n')
    agent_dir = os.path.join(root, "agents", "timing")
    os.makedirs(agent_dir)
    with open(os.path.join(agent_dir, "agent.py"), "w") as f:
        f.write(AGENT)
    with open(os.path.join(root, "manifests", "agents.toml"), "w") as f:
        f.write('[agents.timing]\ndir = "agents/timing"\ncommand = ["python", "/home/agent/agent.py"]\n'
                f'submission = "python"\ntime_limit_s = 3600\n[agents.timing.env]\nREQUESTS = "{requests}"\n')
    return root


def read_object(objects, hex_hash):
    """An object of a directory store (`objects/blake3/ab/cd/<rest>`)."""
    with open(os.path.join(objects, "blake3", hex_hash[:2], hex_hash[2:4], hex_hash[4:]), "rb") as f:
        return f.read()


def summary(name, times):
    ms = sorted(t * 1000 for t in times)
    p90 = ms[int(0.9 * (len(ms) - 1))]
    print(f"{name:<22} {len(ms):>6} {statistics.median(ms):>10.3f} {p90:>10.3f} {statistics.mean(ms):>10.3f}")
    return statistics.median(ms)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--requests", type=int, default=200)
    p.add_argument("--latency", type=float, default=0.0)
    p.add_argument("--ml2b", default=os.path.join(TARGET, "release", "ml2b"))
    args = p.parse_args()
    port, seen = server(args.latency)
    scope = {}
    exec(CLIENT, scope)
    direct = []
    url = f"http://127.0.0.1:{port}/v1"
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o755)  # the sandbox's own uid reads the root's data
        root = root_with(tmp, port, args.requests)
        env = dict(os.environ, ML2B_BENCH_KEY="sk-bench", ML2B_STORE=os.path.join(tmp, "store"))
        direct += [scope["ask"](url, "sk-bench", i) for i in range(args.requests // 2)]
        out = subprocess.run([args.ml2b, "--json", "stage", "generate", "--root", root, "--model", "scripted",
                              "--agent", "external:timing", "--competition", COMPETITION, "--language", "en",
                              "--format", "modular"], env=env, capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"ml2b generate failed:\n{out.stderr}")
        direct += [scope["ask"](url, "sk-bench", i) for i in range(args.requests - args.requests // 2)]
        run = json.loads(subprocess.run([args.ml2b, "--json", "query", "SELECT * FROM external"],
                                        env=env, capture_output=True, text=True, check=True).stdout)[0]
        objects = os.path.join(tmp, "store", "objects")
        if "logs_blake3" not in run:
            stderr = read_object(objects, run["stderr_blake3"]).decode()
            sys.exit(f"the agent kept no times: {run}\n{stderr}")
        listing = json.loads(read_object(objects, run["logs_blake3"]))
        times = json.loads(read_object(objects, listing["times.json"]["blake3"]))
        recorded = json.loads(subprocess.run(
            [args.ml2b, "--json", "query", "SELECT answer_seconds FROM gateway"],
            env=env, capture_output=True, text=True, check=True).stdout)
    print(f"{args.requests} requests each way, server latency {args.latency * 1000:.0f} ms; ms per request")
    print(f"{'path':<22} {'n':>6} {'median':>10} {'p90':>10} {'mean':>10}")
    d = summary("direct (this host)", direct)
    g = summary("through the gateway", times)
    summary("gateway's own record", [r["answer_seconds"] for r in recorded])
    print(f"overhead per request (medians): {g - d:.3f} ms; the model saw {seen['requests']} requests "
          f"({args.requests} direct + {run['calls']} through the gateway)")


if __name__ == "__main__":
    main()
