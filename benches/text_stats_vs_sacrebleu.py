#!/usr/bin/env python3
"""Times sacreBLEU 2.6.0 corpus BLEU + chrF against a Rust command on the same
seeded corpus and checks that the scores are identical (to 1e-9).

    cargo build --release --example bleu_bench     # CARGO_BUILD_JOBS=1
    python3 benches/text_stats_vs_sacrebleu.py -- target/release/examples/bleu_bench
    python3 benches/text_stats_vs_sacrebleu.py -- ml2b bleu --json --chrf --ref {ref} {hyp}

Everything after `--` is the command; `{hyp}` and `{ref}` are replaced by the
file paths, and if neither appears the two paths are appended (hyp, ref).
The command must print JSON with `bleu.score` and `chrf.score`.
"""

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sacrebleu.metrics import BLEU, CHRF

WORDS = ("the model data training score test set predict house price error mean "
         "le modèle données prédire prix la maison el modelo datos predecir precio "
         "модель данные цена дом ошибка İstanbul ılık şehir 机器 学习 模型 価格 "
         "3.5 1,000 x-ray don't e-mail (approx.) 42 % $ € , . ; : ! ? \" '").split()


def sentence(rng):
    words = [rng.choice(WORDS) for _ in range(rng.randint(3, 30))]
    return " ".join(words)


def perturb(rng, text):
    words = text.split()
    for _ in range(rng.randint(0, max(1, len(words) // 3))):
        op = rng.random()
        i = rng.randrange(len(words)) if words else 0
        if op < 0.4 and words:
            words[i] = rng.choice(WORDS)
        elif op < 0.7 and words:
            del words[i]
        else:
            words.insert(i, rng.choice(WORDS))
    return " ".join(words)


def make_corpus(n, seed):
    rng = random.Random(seed)
    refs = [sentence(rng) for _ in range(n)]
    hyps = [perturb(rng, r) for r in refs]
    return hyps, refs


def run_sacrebleu(hyps, refs):
    start = time.perf_counter()
    bleu = BLEU().corpus_score(hyps, [refs]).score
    chrf = CHRF().corpus_score(hyps, [refs]).score
    return bleu, chrf, time.perf_counter() - start


def run_command(command, hyp, ref):
    has_slot = any("{hyp}" in c or "{ref}" in c for c in command)
    argv = [c.replace("{hyp}", str(hyp)).replace("{ref}", str(ref)) for c in command]
    if not has_slot:
        argv += [str(hyp), str(ref)]
    start = time.perf_counter()
    out = subprocess.run(argv, check=True, capture_output=True, text=True).stdout
    elapsed = time.perf_counter() - start
    report = json.loads(out)
    return report["bleu"]["score"], report["chrf"]["score"], elapsed


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--segments", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--rust-runs", type=int, default=3, help="best of N runs")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the Rust command after --")
    hyps, refs = make_corpus(args.segments, args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        hyp, ref = Path(tmp) / "hyp.txt", Path(tmp) / "ref.txt"
        hyp.write_text("\n".join(hyps) + "\n", encoding="utf-8")
        ref.write_text("\n".join(refs) + "\n", encoding="utf-8")
        py_bleu, py_chrf, py_time = run_sacrebleu(hyps, refs)
        runs = [run_command(command, hyp, ref) for _ in range(args.rust_runs)]
    rs_bleu, rs_chrf = runs[0][0], runs[0][1]
    rs_time = min(r[2] for r in runs)
    print(f"segments: {args.segments}")
    print(f"sacrebleu: BLEU {py_bleu!r} chrF {py_chrf!r} in {py_time:.3f} s")
    print(f"rust:      BLEU {rs_bleu!r} chrF {rs_chrf!r} in {rs_time:.3f} s (best of {len(runs)})")
    print(f"speed-up:  {py_time / rs_time:.1f}x")
    same = abs(py_bleu - rs_bleu) <= 1e-9 * max(1, abs(py_bleu)) and \
        abs(py_chrf - rs_chrf) <= 1e-9 * max(1, abs(py_chrf))
    print("scores identical (1e-9):", "yes" if same else "NO")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
