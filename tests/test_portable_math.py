"""The measures' elementary functions do not depend on the CPU's vector extensions
(kernel/measures/portable.py).

numpy picks its float64 ``power``, ``exp``, ``log1p`` and ``log2`` loops by the CPU: with
AVX-512 they differ from the C library in the last bit (RBP with p = 0.8 and the goldens
file differed between two CI machines). The oracle for each function is the C library
through Python's ``math``; the end-to-end check runs the CLI twice on one machine, once with
numpy's AVX-512 loops switched off (``NPY_DISABLE_CPU_FEATURES``), and wants the same bytes.
"""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
from support import REPO, cli_env, run_cli

from rankscope_tui.kernel.measures import portable

# numpy's names for the AVX-512 groups it dispatches on (numpy 2.x); unknown names are ignored
NO_AVX512 = {"NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR AVX512_SKX AVX512F"}


def _bits(a) -> list[int]:
    return np.asarray(a, dtype=np.float64).view(np.int64).tolist()


def test_power_int_is_the_c_librarys_pow_for_every_exponent():
    for p in (0.8, 0.9, 0.5, 0.95, 0.123456789):
        e = np.arange(0, 4000)
        want = [math.pow(p, int(i)) for i in e]
        assert _bits(portable.power_int(p, e)) == _bits(want)
        # float exponents holding integers (ranks minus one as floats) take the same table
        assert _bits(portable.power_int(p, e[::-1].astype(np.float64))) == _bits(want[::-1])


def test_log_tables_are_the_c_librarys_log2_and_log():
    x = np.arange(1, 300_000)
    assert _bits(portable.log2_int(x)) == _bits([math.log2(int(i)) for i in x])
    assert _bits(portable.log_int(x[:5000])) == _bits([math.log(int(i)) for i in x[:5000]])
    assert portable.log2_int(np.array([0]))[0] == -math.inf and portable.log_int([0])[0] == -math.inf
    # a table grows on demand: a small request after a large one, then a larger one
    assert portable.log2_int([3])[0] == math.log2(3)
    big = 1_200_000
    assert portable.log2_int([big, 7])[0] == math.log2(big)
    with pytest.raises(ValueError):
        portable.log2_int([-1])


def test_elementwise_exp_and_log1p_are_the_c_librarys():
    rng = np.random.default_rng(3)
    x = -rng.random(20_000) * 30.0
    assert _bits(portable.exp(x)) == _bits([math.exp(v) for v in x])
    r = rng.random(20_000)
    assert _bits(portable.log1p(-r)) == _bits([math.log1p(-v) for v in r])
    assert portable.log1p(np.array([-1.0]))[0] == -math.inf
    assert portable.exp(np.zeros((2, 3))).shape == (2, 3) and portable.exp(np.zeros(0)).size == 0


def _numpy_differs_without_avx512() -> bool:
    """Whether switching numpy's AVX-512 loops off changes numpy's own power/log2 here."""
    code = ("import hashlib, numpy as np; r = np.arange(3000.0); "
            "print(hashlib.sha256(np.power(0.8, r).tobytes() + np.log2(r + 1).tobytes()).hexdigest())")
    outs = [subprocess.run([sys.executable, "-c", code], env=cli_env(env), capture_output=True, text=True, check=True).stdout
            for env in ({}, NO_AVX512)]
    return outs[0] != outs[1]


def _deep_inputs(tmp_path):
    """A graded run 3,000 deep over 40 queries: relevant docs at ranks where numpy's two
    loops disagree (log2(1621), 0.8^r), ERR over graded hits."""
    rng = np.random.default_rng(11)
    run, other, qrels = [], [], []
    for q in range(40):
        shuffled = rng.permutation(3000) + 1
        for r in range(1, 3001):
            run.append(f"q{q} Q0 d{q}_{r} {r} {3001 - r}.5 deep\n")
            other.append(f"q{q} Q0 d{q}_{shuffled[r - 1]} {r} {3001 - r}.25 other\n")
        for r in sorted(set(rng.integers(1, 3001, 60).tolist()) | {1620, 3}):
            qrels.append(f"q{q} 0 d{q}_{r} {int(rng.integers(1, 5))}\n")
    (tmp_path / "deep.run").write_text("".join(run))
    (tmp_path / "other.run").write_text("".join(other))
    (tmp_path / "deep.qrels").write_text("".join(qrels))
    return tmp_path / "deep.run", tmp_path / "other.run", tmp_path / "deep.qrels"


def test_outputs_are_the_same_bytes_with_numpys_avx512_loops_off(tmp_path):
    if not _numpy_differs_without_avx512():
        pytest.skip("numpy's loops are the same with AVX-512 off on this CPU (no AVX-512): nothing to compare here")
    run, other, qrels = _deep_inputs(tmp_path)
    metrics = "ndcg,ndcg@10,ndcg@2000,ndcg_exp@2000,rbp,rbp(p=0.8),rbp_resid(p=0.8),err@3000,nerr@3000,ap"
    outs = []
    for i, env in enumerate(({}, NO_AVX512)):
        per_query = tmp_path / f"pq{i}.csv"
        done = run_cli("evaluate", "--lane", f"deep={run}", "--lane", f"other={other}", "--fuse", "logisr", "--qrels",
                       str(qrels), "--metrics", metrics, "--resamples", "0", "--per-query", str(per_query),
                       cwd=REPO, env=env)
        assert done.returncode == 0, done.stderr
        goldens = run_cli("goldens", cwd=REPO, env=env)
        assert goldens.returncode == 0, goldens.stderr
        outs.append((per_query.read_bytes(), goldens.stdout))
    assert outs[0][0] == outs[1][0], "the per-query values depend on numpy's AVX-512 loops"
    assert outs[0][1] == outs[1][1], "the goldens depend on numpy's AVX-512 loops"
    assert outs[0][1] == (REPO / "goldens" / "reference.txt").read_text(encoding="utf-8")
