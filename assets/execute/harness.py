"""Runs one submission (MONO_PREDICT or MODULAR_PREDICT) on a competition's public files
and writes its predictions as a submission Parquet file that `ml2b score` grades.

    python harness.py --code code.py --mode modular|mono --spec spec.json \
        --train public/train.csv --test public/test.csv --out predictions.parquet \
        [--result result.json]

spec.json (written by ml2b from the competition manifest):
    {"id": "id", "targets": ["y"], "kind": "values" | "labels" | "probabilities" | "ranked",
     "k": 3}
`kind` says what the submission returns, one row per row of test.csv, in order:
    values         1-D floats, or (n, len(targets)) for several targets;
    labels         1-D labels;
    probabilities  binary: 1-D P(larger label) (or (n, 2), whose last column is used);
                   multiclass: (n, classes) in sorted class order;
    ranked         (n, k) labels best first, or 1-D space-separated strings.

The submission is loaded as the original ML2B loads it (`python/ast_parser.py`): only
imports, function and class definitions, `if` blocks and constant-like assignments at the
top level are kept; everything else at the top level is ignored. The original contract
passes `data` (train.csv, target included) and `X_val` (test.csv) as DataFrames.

Exit 0 and result {"success": true, "outcome": "ok", ...} when the predictions were
written; exit 1 with {"success": false, "outcome": <why>, "errors": [...], "tracebacks":
[...]} otherwise. Before it loads the submission, once its own imports worked and it read
its inputs, the harness prints the line `ml2b-harness: ready` to stdout: a run
whose stdout does not begin with it never reached the submission, and ml2b records it as
the sandbox's failure. `outcome` is one of ok, syntax_error, import_error, missing_function,
signature_mismatch, runtime_error, out_of_memory, bad_predictions, constraint_violation
(a write past the file-size or scratch-space limit; the sandbox adds timeout and
sandbox_error). The result also lists the top-level
statements the loader dropped ("dropped": [{"line", "statement"}]), the load and
fit/predict times and the peak resident memory. Nothing but the predictions file and the
result file is written.
"""

from __future__ import annotations

import argparse
import ast
import errno
import json
import sys
import time
import traceback
from pathlib import Path


# What the harness prints first; ml2b's sandbox::run::READY.
READY = "ml2b-harness: ready"


class SubmissionError(Exception):
    """The submission broke the contract (as opposed to crashing inside its own code)."""

    def __init__(self, outcome: str, message: str):
        super().__init__(message)
        self.outcome = outcome


def constant_like(node: ast.stmt) -> bool:
    if not isinstance(node, (ast.Assign, ast.AnnAssign)):
        return False
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    if len(targets) != 1 or not isinstance(targets[0], ast.Name):
        return isinstance(node.value, ast.Constant)
    name = targets[0].id
    lowered = name.lower()
    return (
        name.isupper()
        or name.startswith("_")
        or any(w in lowered for w in ("config", "setting", "default"))
        or isinstance(node.value, ast.Constant)
    )


KEPT = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom, ast.If)


def load_submission(path: Path, dropped: list) -> dict:
    """Loads the kept top-level statements; appends each dropped one to `dropped`."""
    source = path.read_text(encoding="utf-8")
    try:
        tree = ast.parse(source, filename=str(path))
    except SyntaxError as e:
        raise SubmissionError("syntax_error", f"line {e.lineno}: {e.msg}") from None
    kept = []
    for node in tree.body:
        if isinstance(node, KEPT) or constant_like(node):
            kept.append(node)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            pass  # a docstring or bare literal: dropped too, but nothing is lost
        else:
            dropped.append({"line": node.lineno, "statement": type(node).__name__})
    tree.body = kept
    namespace: dict = {"__name__": "submission", "__file__": str(path)}
    try:
        exec(compile(tree, str(path), "exec"), namespace)
    except ImportError as e:
        raise SubmissionError("import_error", f"{type(e).__name__}: {e}") from None
    return namespace


def call(namespace: dict, mode: str, data, x_val):
    import inspect

    def need(name: str, arity: int):
        fn = namespace.get(name)
        if not callable(fn):
            raise SubmissionError("missing_function", f"Submission code does not have the {name} function")
        try:
            inspect.signature(fn).bind(*([None] * arity))
        except TypeError as e:
            raise SubmissionError("signature_mismatch", f"{name} cannot take {arity} arguments: {e}") from None
        except ValueError:
            pass  # no signature to inspect (a builtin); let the call decide
        return fn

    if mode == "mono":
        return need("train_and_predict", 2)(data, x_val)
    train, prepare_val, predict = need("train", 1), need("prepare_val", 2), need("predict", 2)
    train_output = train(data)
    return predict(train_output, prepare_val(train_output, x_val))


def to_frame(pred, spec: dict, test, classes: list):
    import numpy as np
    import pandas as pd

    n = len(test)
    targets = spec["targets"]
    kind = spec["kind"]
    if isinstance(pred, (pd.DataFrame, pd.Series)):
        pred = pred.to_numpy()
    arr = np.asarray(pred, dtype=object if kind in ("labels", "ranked") else None)
    if arr.shape[:1] != (n,):
        raise SubmissionError("bad_predictions", f"predictions have shape {arr.shape}; expected {n} rows, one per row of test.csv")
    out = pd.DataFrame({spec["id"]: test[spec["id"]].to_numpy()})
    if kind == "values":
        arr = arr.astype(float)
        if len(targets) == 1:
            out[targets[0]] = arr.reshape(n, -1)[:, 0] if arr.ndim == 2 and arr.shape[1] == 1 else arr
            if arr.ndim == 2 and arr.shape[1] != 1:
                raise SubmissionError("bad_predictions", f"predictions have shape {arr.shape}; expected ({n},)")
        else:
            if arr.ndim != 2 or arr.shape[1] != len(targets):
                raise SubmissionError("bad_predictions", f"predictions have shape {arr.shape}; expected ({n}, {len(targets)})")
            for j, t in enumerate(targets):
                out[t] = arr[:, j]
    elif kind == "labels":
        out[targets[0]] = arr.reshape(n) if arr.ndim == 2 and arr.shape[1] == 1 else arr
    elif kind == "probabilities":
        arr = arr.astype(float)
        if len(classes) == 2:
            out[targets[0]] = arr[:, -1] if arr.ndim == 2 else arr
        else:
            if arr.ndim != 2 or arr.shape[1] != len(classes):
                raise SubmissionError("bad_predictions", f"predictions have shape {arr.shape}; expected ({n}, {len(classes)})")
            for j, c in enumerate(classes):
                out[str(c)] = arr[:, j]
    elif kind == "ranked":
        k = spec.get("k", 3)
        rows = []
        for row in arr:
            if isinstance(row, str):
                rows.append(row)
            else:
                rows.append(" ".join(str(x) for x in list(row)[:k]))
        out[targets[0]] = rows
    else:
        raise ValueError(f"unknown kind {kind!r} in spec")
    if kind in ("values", "probabilities"):
        numeric = out.drop(columns=[spec["id"]]).to_numpy(dtype=float)
        if not np.isfinite(numeric).all():
            raise SubmissionError("bad_predictions", "predictions contain NaN or infinite values")
    return out


def write_parquet(frame, path: Path) -> None:
    """Writes the predictions with pyarrow: the id column and the prediction columns in
    their own types (floats stay IEEE doubles, no decimal round trip). A label column of
    mixed Python types, which Parquet cannot hold, is written as text, as a CSV would hold it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    columns = {}
    for name in frame.columns:
        values = frame[name]
        try:
            columns[str(name)] = pa.array(values, from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            columns[str(name)] = pa.array(values.map(str), type=pa.string())
    pq.write_table(pa.table(columns), path, compression="snappy")


def trimmed_traceback(lines: int = 30) -> str:
    text = traceback.format_exc().splitlines()
    return "\n".join(text[-lines:])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--code", required=True, type=Path)
    ap.add_argument("--mode", required=True, choices=["modular", "mono"])
    ap.add_argument("--spec", required=True, type=Path)
    ap.add_argument("--train", required=True, type=Path)
    ap.add_argument("--test", required=True, type=Path)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--result", type=Path)
    args = ap.parse_args()

    result: dict = {"success": False, "outcome": "ok", "errors": [], "tracebacks": [], "dropped": []}
    started = time.monotonic()
    try:
        import numpy as np  # noqa: F401 - imported before the submission, like the original
        import pandas as pd
        import pyarrow  # noqa: F401 - the predictions are written with it

        spec = json.loads(args.spec.read_text(encoding="utf-8"))
        # round_trip: every decimal in the CSV parses to the double that prints as it
        # (pandas 2's default parser can miss by an ulp; pandas 3 is exact by default).
        data = pd.read_csv(args.train, float_precision="round_trip")
        test = pd.read_csv(args.test, float_precision="round_trip")
        target = spec["targets"][0]
        classes = sorted(data[target].dropna().unique().tolist()) if spec["kind"] == "probabilities" else []
        # The first line of stdout, once the harness's own imports and inputs worked and
        # before the submission is loaded: ml2b's proof that the sandbox and the Python
        # environment started (a run without it is the sandbox's failure, never the
        # submission's, and the submission cannot print it first).
        print(READY, flush=True)
        namespace = load_submission(args.code, result["dropped"])
        loaded = time.monotonic()
        result["load_seconds"] = round(loaded - started, 3)
        pred = call(namespace, args.mode, data, test.copy())
        result["fit_predict_seconds"] = round(time.monotonic() - loaded, 3)
        try:
            frame = to_frame(pred, spec, test, classes)
        except (ValueError, TypeError) as e:
            raise SubmissionError("bad_predictions", f"predictions cannot be read: {e}") from None
        write_parquet(frame, args.out)
        result.update(success=True, rows=len(frame))
    except SubmissionError as e:
        result["outcome"] = e.outcome
        result["errors"].append(str(e))
    except OSError as e:
        if e.errno in (errno.EFBIG, errno.ENOSPC, errno.EDQUOT):
            result["outcome"] = "constraint_violation"
        else:
            result["outcome"] = "runtime_error"
            result["exception"] = type(e).__name__
        result["errors"].append(f"{type(e).__name__}: {e}")
        result["tracebacks"].append(trimmed_traceback())
    except MemoryError as e:
        result["outcome"] = "out_of_memory"
        result["errors"].append(f"MemoryError: {e}")
        result["tracebacks"].append(trimmed_traceback())
    except Exception as e:  # noqa: BLE001 - the submission's own failure is reported, not raised
        result["outcome"] = "runtime_error"
        result["errors"].append(f"{type(e).__name__}: {e}")
        result["exception"] = type(e).__name__
        result["tracebacks"].append(trimmed_traceback())
    import resource

    result["peak_memory_bytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    result["seconds"] = round(time.monotonic() - started, 3)
    text = json.dumps(result)
    if args.result:
        args.result.write_text(text, encoding="utf-8")
    print(text, file=sys.stderr if not result["success"] else sys.stdout)
    return 0 if result["success"] else 1


if __name__ == "__main__":
    sys.exit(main())
