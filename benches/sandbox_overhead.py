"""Per-run overhead of the local sandbox: a trivial MONO_PREDICT solution on the smallest
bundled competition, run N times (1) by the harness directly, with no sandbox, and (2)
through `ml2b grade-file --backend local` (sandbox, plus loading the manifests and
grading). The difference is an upper bound on the sandbox's overhead per run.

    python benches/sandbox_overhead.py [--ml2b target/release/ml2b] [--python PY] [-n 20]
    python benches/sandbox_overhead.py --throughput [-j 2]

`--throughput` instead runs every bundled competition's reference solution in both formats
through `ml2b grade-file`, `-j` at a time, and reports the wall time and runs per minute.
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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--throughput", action="store_true")
    ap.add_argument("-j", type=int, default=2)
    ap.add_argument("--ml2b", default="/var/tmp/ml2b-target/release/ml2b")
    ap.add_argument("--python", default="/var/tmp/ml2b-venv/bin/python")
    ap.add_argument("-n", type=int, default=20)
    args = ap.parse_args()
    if args.throughput:
        throughput(args.ml2b, args.j)
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
