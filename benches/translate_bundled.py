#!/usr/bin/env python3
"""What `ml2b translate` costs on the 12 bundled competitions, into 13 languages, against a
scripted chat server of fixed latency: requests, tokens and wall time, with the
concurrency used, then the same re-run (which must ask nothing).

    python3 benches/translate_bundled.py [--latency 0.5] [--max-in-flight 32] \
        [--ml2b $CARGO_TARGET_DIR/release/ml2b]

A copy of the repository's manifests and task texts is made in a temporary root with only
`tasks/en.toml` left for each competition (its manifest listing English alone, as an
MLE-bench import's does). Two OpenAI-compatible servers on 127.0.0.1 answer after
`--latency` seconds: the forward one returns the request's JSON with each field marked
`[Language]`, the back one returns it with the marks taken out, each with the usage of the
prompt's and the answer's characters / 4. The script prints, per leg, the requests the
server saw, the tokens ml2b recorded, the wall time and the in-flight peak, and checks the
re-run sends nothing.
"""

import argparse
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

CRATE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(CRATE, "target"))


def server(latency, back):
    """A chat-completions server on a free port; returns (port, counters)."""
    seen = {"requests": 0, "in_flight": 0, "peak": 0}
    lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            self.reply({"object": "list", "data": []})

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with lock:
                seen["requests"] += 1
                seen["in_flight"] += 1
                seen["peak"] = max(seen["peak"], seen["in_flight"])
            time.sleep(latency)
            user = body["messages"][-1]["content"]
            target = user.split(" into ", 1)[1].split(".", 1)[0]
            fields = json.loads(user[user.index("{"): user.rindex("}") + 1])
            if back:
                out = {k: re.sub(r"\[[A-Za-z]+\] ", "", v) for k, v in fields.items()}
            else:
                out = {k: f"[{target}] {v}" for k, v in fields.items()}
            text = json.dumps(out, ensure_ascii=False)
            with lock:
                seen["in_flight"] -= 1
            self.reply({
                "id": "cmpl", "object": "chat.completion",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": len(user) // 4, "completion_tokens": len(text) // 4},
            })

        def reply(self, value):
            data = json.dumps(value).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd.server_address[1], seen


def english_root(root):
    """The bundled competitions in `root`, English alone."""
    shutil.copytree(os.path.join(CRATE, "manifests"), os.path.join(root, "manifests"))
    for name in os.listdir(os.path.join(root, "manifests", "competitions")):
        path = os.path.join(root, "manifests", "competitions", name)
        with open(path) as f:
            text = f.read()
        with open(path, "w") as f:
            f.write(text.replace('translation = "machine"', 'translation = "none"\nlanguages = ["en"]', 1))
        cid = name[: -len(".toml")]
        src = os.path.join(CRATE, "data", cid)
        dst = os.path.join(root, "data", cid)
        shutil.copytree(src, dst, ignore=shutil.ignore_patterns("tasks", "back", "source"))
        os.makedirs(os.path.join(dst, "tasks"))
        shutil.copy(os.path.join(src, "tasks", "en.toml"), os.path.join(dst, "tasks", "en.toml"))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--latency", type=float, default=0.5)
    p.add_argument("--max-in-flight", type=int, default=32)
    p.add_argument("--ml2b", default=os.path.join(TARGET, "release", "ml2b"))
    args = p.parse_args()
    forward, forward_seen = server(args.latency, back=False)
    back, back_seen = server(args.latency, back=True)
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, "root")
        english_root(root)
        with open(os.path.join(root, "manifests", "models.toml"), "a") as f:
            for name, port in [("forward", forward), ("back", back)]:
                f.write(f'\n[[model]]\nname = "{name}"\nprovider = "openai"\n'
                        f'endpoint = "http://127.0.0.1:{port}/v1"\nmodel = "{name}-2025-01-01"\n'
                        'api_key_env = "ML2B_BENCH_KEY"\nusd_per_mtok_input = 1.0\nusd_per_mtok_output = 2.0\n')
        env = dict(os.environ, ML2B_BENCH_KEY="sk-bench", ML2B_STORE=os.path.join(tmp, "store"))
        cmd = [args.ml2b, "--json", "translate", "--model", "forward", "--back-model", "back",
               "--root", root, "--max-in-flight", str(args.max_in_flight)]
        started = time.monotonic()
        out = subprocess.run(cmd, env=env, capture_output=True, text=True)
        wall = time.monotonic() - started
        if out.returncode != 0:
            sys.exit(f"ml2b translate failed:\n{out.stderr}")
        legs = json.loads(out.stdout)["legs"]
        print(f"12 competitions x 13 languages, latency {args.latency} s, --max-in-flight {args.max_in_flight}")
        print(f"{'leg':<8} {'units':>6} {'requests':>9} {'peak in flight':>15} {'files':>6} {'wall s':>8}")
        for leg, seen in zip(legs, [forward_seen, back_seen]):
            s = leg["summary"]
            print(f"{'forward' if seen is forward_seen else 'back':<8} {s['ran']:>6} {seen['requests']:>9} "
                  f"{seen['peak']:>15} {len(leg['written']['files']):>6} {s['overhead']['wall_ms'] / 1000:>8.2f}")
        tokens = subprocess.run(
            [args.ml2b, "--json", "query",
             "SELECT sum(input_tokens) AS input, sum(output_tokens) AS output, sum(cost_usd) AS usd FROM translate"],
            env=env, capture_output=True, text=True, check=True)
        print(f"tokens recorded: {json.loads(tokens.stdout)[0]}")
        print(f"whole command: {wall:.2f} s")
        before = forward_seen["requests"] + back_seen["requests"]
        started = time.monotonic()
        subprocess.run(cmd, env=env, capture_output=True, check=True)
        again = time.monotonic() - started
        asked = forward_seen["requests"] + back_seen["requests"] - before
        print(f"re-run: {again:.2f} s, {asked} requests")
        if asked:
            sys.exit("the re-run asked again")


if __name__ == "__main__":
    main()
