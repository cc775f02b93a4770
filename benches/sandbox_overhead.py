"""Per-run overhead of the local sandbox: a trivial MONO_PREDICT solution on the smallest
bundled competition, run N times (1) by the harness directly, with no sandbox, and (2)
through `ml2b grade-file --backend local` (sandbox, plus loading the manifests and
grading). The difference is an upper bound on the sandbox's overhead per run.

    python benches/sandbox_overhead.py [--ml2b target/release/ml2b] [--python PY] [-n 20]
    python benches/sandbox_overhead.py --throughput [-j 2]
    python benches/sandbox_overhead.py --network [--backends local,docker] [-n 20]

`--throughput` instead runs every bundled competition's reference solution in both formats
through `ml2b grade-file`, `-j` at a time, and reports the wall time and runs per minute.

`--network` measures `--network proxy` against `--network none`, side by side in one run on
each backend (the two interleaved): the trivial solution through `ml2b grade-file`, which
starts squid for each run (a stage starts it once), so the difference is what one run
through the proxy costs at most; and the same solution downloading a 1 MiB file from a
server on this machine through the proxy, an allowed host of the bench's own root.
"""

import argparse
import json
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMP = "concrete-strength"
TRIVIAL = "import numpy as np\n\ndef train_and_predict(data, X_val):\n    return np.full(len(X_val), data['compressive_strength'].mean())\n"


def timed(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True)
    return time.perf_counter() - start


def throughput(ml2b: str, jobs: int) -> None:
    from concurrent.futures import ThreadPoolExecutor

    runs = [(c.name, fmt) for c in sorted((ROOT / "data").iterdir()) if (c / "solution").is_dir()
            for fmt in ("modular", "mono")]

    def one(run):
        comp, fmt = run
        cmd = [ml2b, "--json", "grade-file", "--root", str(ROOT), "--competition", comp, "--format", fmt,
               str(ROOT / "data" / comp / "solution" / f"{fmt}.py")]
        out = subprocess.run(cmd, capture_output=True, text=True)
        return comp, fmt, json.loads(out.stdout)["outcome"]

    start = time.perf_counter()
    with ThreadPoolExecutor(jobs) as pool:
        results = list(pool.map(one, runs))
    wall = time.perf_counter() - start
    bad = [r for r in results if r[2] != "ok"]
    print(f"{len(runs)} reference runs, -j {jobs}: {wall:.1f} s wall, {len(runs) / wall * 60:.1f} runs/min; "
          f"not ok: {bad or 'none'}")


DOWNLOAD = """import urllib.request
import numpy as np

def train_and_predict(data, X_val):
    body = urllib.request.urlopen("http://files.huggingface.co:{port}/blob", timeout=60).read()
    assert len(body) == 1 << 20
    return np.full(len(X_val), data['compressive_strength'].mean())
"""


def network(ml2b: str, backends: list[str], n: int) -> None:
    """--network proxy against --network none, interleaved, on each backend."""
    import http.server
    import shutil
    import threading

    class Blob(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Length", str(1 << 20))
            self.end_headers()
            self.wfile.write(b"x" * (1 << 20))

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Blob)
    port = server.server_address[1]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp).chmod(0o755)  # the sandbox's own user reads the public files through it
        root = Path(tmp) / "root"
        # The bundled root, with an allowlist whose host is this machine's server.
        (root / "manifests").mkdir(parents=True)
        for f in (ROOT / "manifests").iterdir():
            if f.is_file():
                shutil.copy(f, root / "manifests" / f.name)
            else:
                shutil.copytree(f, root / "manifests" / f.name)
        (root / "data").symlink_to(ROOT / "data")
        (root / "manifests" / "network.toml").write_text(
            f'[proxy]\nports = [80, 443, {port}]\n[proxy.hosts]\n"files.huggingface.co" = "127.0.0.1"\n')
        trivial, download = Path(tmp) / "trivial.py", Path(tmp) / "download.py"
        trivial.write_text(TRIVIAL)
        download.write_text(DOWNLOAD.replace("{port}", str(port)))

        def run(backend: str, code: Path, proxy: bool) -> float:
            cmd = [ml2b, "--json", "grade-file", "--root", str(root), "--competition", COMP, "--format", "mono",
                   "--backend", backend, "--network", "proxy" if proxy else "none", str(code)]
            start = time.perf_counter()
            out = subprocess.run(cmd, capture_output=True, text=True)
            took = time.perf_counter() - start
            report = json.loads(out.stdout) if out.stdout else {"outcome": out.stderr}
            if report["outcome"] != "ok":
                raise SystemExit(f"{backend} proxy={proxy} {code.name}: {report}")
            return took

        print(f"runs: {n} of each, interleaved, competition {COMP}; medians")
        print(f"{'backend':8} {'none':>9} {'proxy':>9} {'overhead':>9} {'1 MiB via proxy':>16}")
        for backend in backends:
            run(backend, trivial, False), run(backend, trivial, True)  # warm
            none, proxy, fetch = [], [], []
            for _ in range(n):
                none.append(run(backend, trivial, False))
                proxy.append(run(backend, trivial, True))
                fetch.append(run(backend, download, True))
            m = statistics.median
            print(f"{backend:8} {m(none) * 1000:7.0f}ms {m(proxy) * 1000:7.0f}ms "
                  f"{(m(proxy) - m(none)) * 1000:7.0f}ms {m(fetch) * 1000:14.0f}ms")
    server.shutdown()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--throughput", action="store_true")
    ap.add_argument("--network", action="store_true")
    ap.add_argument("--backends", default="local,docker")
    ap.add_argument("-j", type=int, default=2)
    ap.add_argument("--ml2b", default="/var/tmp/ml2b-target/release/ml2b")
    ap.add_argument("--python", default="/var/tmp/ml2b-venv/bin/python")
    ap.add_argument("-n", type=int, default=20)
    args = ap.parse_args()
    if args.throughput:
        throughput(args.ml2b, args.j)
        return
    if args.network:
        network(args.ml2b, args.backends.split(","), args.n)
        return
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        code = tmp / "trivial.py"
        code.write_text(TRIVIAL)
        spec = tmp / "spec.json"
        spec.write_text(json.dumps({"id": "id", "targets": ["compressive_strength"], "kind": "values"}))
        public = ROOT / "data" / COMP / "public"
        direct = [args.python, str(ROOT / "assets/execute/harness.py"), "--code", str(code), "--mode", "mono",
                  "--spec", str(spec), "--train", str(public / "train.csv"), "--test", str(public / "test.csv"),
                  "--out", str(tmp / "pred.csv")]
        sandboxed = [args.ml2b, "--json", "grade-file", "--root", str(ROOT), "--competition", COMP,
                     "--format", "mono", str(code)]
        for cmd in (direct, sandboxed):  # warm the page cache
            timed(cmd)
        a = [timed(direct) for _ in range(args.n)]
        b = [timed(sandboxed) for _ in range(args.n)]
    ma, mb = statistics.median(a), statistics.median(b)
    print(f"runs: {args.n} each, competition {COMP}")
    print(f"harness directly:        median {ma * 1000:7.1f} ms")
    print(f"ml2b grade-file (local): median {mb * 1000:7.1f} ms")
    print(f"overhead per run:        median {(mb - ma) * 1000:7.1f} ms")


if __name__ == "__main__":
    main()
