"""Properties of the kernel over small generated TREC files (SPEC §2, §3, §6).

Every example writes real run and qrels files and loads them with
``Workspace.load`` (the same road the CLI takes: the columnar fast path for clean
single-space files, the general reader otherwise), then checks a property that
must hold whatever the data:

- shuffling the lines of a run never changes a result;
- adding hits below ``--depth`` never changes a result;
- renaming docs with an order-preserving bijection (byte order, so ties keep their
  order) never changes a result;
- re-writing the same run with other whitespace, line endings, score spellings,
  comments and blank lines never changes a result;
- a doc repeated within a query is refused wherever the repeat sits;
- every metric stays within [0, 1];
- nDCG@k is exactly 1 when the top k is an ideal order and < 1 otherwise (when the
  ideal is non-zero);
- the fast gate sweep over a loaded workspace equals the brute-force sweep.

"The result" compared is the report a workspace builds (``pipeline.evaluate_report``
with resampling off): per-query values, means, ceilings, strata, attribution, fusion
and the gate, at doc and group level, for every input lane and the RRF lane.
The goldens reference (rankscope_tui/kernel/instruments/goldens_reference.py) is checked against the kernel on
random inputs in tests/test_goldens.py and is not repeated here.
"""

from __future__ import annotations

import math
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest
from gate_oracles import sweep_brute_force  # the test oracle (tests/gate_oracles.py)
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from rankscope_tui.kernel.errors import InputError
from rankscope_tui.kernel.gate.analysis import analyse_gate
from rankscope_tui.kernel.instruments import evaluate as P
from rankscope_tui.kernel.measures import parse_metrics
from rankscope_tui.kernel.settings import GateSettings, LoadSettings
from rankscope_tui.kernel.workspace.loaded import Workspace

METRICS = tuple(parse_metrics("hit@1,hit@3,recall@2,recall@10,p@1,p@3,rr,ndcg@1,ndcg@2,ndcg@3,ndcg@10,judged@5"))
# RANKSCOPE_PROPERTY_EXAMPLES=500 for a longer hunt (default kept small: the suite stays fast)
N_EXAMPLES = int(os.environ.get("RANKSCOPE_PROPERTY_EXAMPLES", "25"))
FAST = settings(max_examples=N_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# ---------------------------------------------------------------------------- data

# Id characters: ASCII letters and digits, punctuation the renderers escape, the group
# separator '#', and multi-byte UTF-8 (byte order of UTF-8 = code point order).
_CHARS = "abcxyzABZ019_-%&$*|{}\\#é€\U0001f600"
_ID_SHORT = st.text(alphabet=_CHARS, min_size=1, max_size=6)
# long ids with a shared prefix: past the 8-byte words and past the 64/128-byte limits
# where the encoders switch strategy
_ID_LONG = st.builds(lambda n, s: "p" * n + s, st.sampled_from([7, 8, 9, 15, 16, 63, 64, 65, 130]), _ID_SHORT)
ID = st.one_of(_ID_SHORT, _ID_SHORT, _ID_LONG)
# a qid starting with '#' makes a comment line; one starting with '{' makes the file
# look like JSON to the format sniffer (a known limitation: test_reliability.py)
QID = ID.filter(lambda s: s[0] not in "#{[")
# few distinct values: many ties; signed zeros; neighbouring floats
SCORE = st.one_of(
    st.sampled_from([0.0, -0.0, 1.0, 2.5, -3.0, 1e-300, 1e300, 0.1, 0.30000000000000004]),
    st.sampled_from([1.0, math.nextafter(1.0, 2.0), math.nextafter(1.0, 0.0)]),
    st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False),
)


@st.composite
def datasets(draw, n_lanes: int = 2, min_hits: int = 0):
    qids = draw(st.lists(QID, min_size=1, max_size=6, unique=True))
    pool = draw(st.lists(ID, min_size=1, max_size=10, unique=True))
    lanes = []
    for _ in range(n_lanes):
        rows = []
        for q in qids:
            if not draw(st.integers(0, 5)):  # now and then a query the lane does not hold
                continue
            docs = draw(st.lists(st.sampled_from(pool), unique=True, min_size=min_hits, max_size=len(pool)))
            rows += [(q, d, draw(SCORE)) for d in docs]
        if not rows:
            rows = [(qids[0], pool[0], 1.0)]
        lanes.append(rows)
    qrels = []
    for q in qids + draw(st.lists(QID, max_size=2, unique=True).filter(lambda xs: not set(xs) & set(qids))):
        for d in draw(st.lists(st.sampled_from(pool), unique=True, max_size=len(pool))):
            qrels.append((q, d, draw(st.integers(-1, 4))))
    if not any(g >= 1 for *_, g in qrels):  # at least one positive query
        qrels.append((qids[0], pool[0], 2))
        qrels = [r for r in qrels if not (r[0] == qids[0] and r[1] == pool[0] and r[2] != 2)]
    return lanes, qrels


def run_text(rows, sep: str = " ", fmt=repr, eol: str = "\n") -> str:
    return "".join(f"{q}{sep}Q0{sep}{d}{sep}{i + 1}{sep}{fmt(s)}{sep}tag{eol}" for i, (q, d, s) in enumerate(rows))


def qrels_text(rows) -> str:
    return "".join(f"{q} 0 {d} {g}\n" for q, d, g in rows)


class Files:
    """One scratch directory per test function, files overwritten per example."""

    def __init__(self):
        self.dir = Path(tempfile.mkdtemp(prefix="rs-props-"))
        self.n = 0

    def write(self, name: str, text: str) -> str:
        p = self.dir / name
        p.write_bytes(text.encode("utf-8"))
        return str(p)

    def close(self):
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture(scope="module")
def files():
    f = Files()
    yield f
    f.close()


def load(files: Files, lane_texts: list[str], qrels: str, tag: str = "", **settings_kw) -> Workspace:
    paths = [(f"l{i}", files.write(f"lane{i}{tag}.run", t)) for i, t in enumerate(lane_texts)]
    qp = files.write(f"qrels{tag}.txt", qrels)
    return Workspace.load(paths, qp, LoadSettings(metrics=METRICS, resamples=0, **settings_kw))


def result(ws: Workspace) -> dict:
    """The report, without what names the input files or their lines."""
    rep = P.evaluate_report(ws, GateSettings(gate_on="l0"))
    rep.pop("inputs")
    for w in rep["summary"]["warnings"]:
        w.pop("where", None)
    return rep


def per_query(ws: Workspace) -> dict:
    """{lane: {level: {qid: {metric: value}}}} over every query code (not only positives)."""
    P.add_derived_lanes(ws)
    out = {}
    for lane in ws.lanes:
        for level in ws.levels():
            pq = ws.per_query(lane, level)
            out[(lane, level)] = {q: {k: float(v[i]) for k, v in pq.items()} for i, q in enumerate(ws.qids.tolist())}
    return out


def assert_same(a: dict, b: dict, path: str = "") -> None:
    """Equal dicts, with a pointer to the first difference (floats compared exactly)."""
    assert type(a) is type(b) or (isinstance(a, (int, float)) and isinstance(b, (int, float))), (path, a, b)
    if isinstance(a, dict):
        assert list(a) == list(b), (path, list(a), list(b))
        for k in a:
            assert_same(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list):
        assert len(a) == len(b), (path, a, b)
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{path}[{i}]")
    elif isinstance(a, float) and math.isnan(a):
        assert isinstance(b, float) and math.isnan(b), (path, a, b)
    else:
        assert a == b, (path, a, b)


# ---------------------------------------------------------------------------- invariances


@FAST
@given(data=datasets(), perm_seed=st.integers(0, 2**32 - 1), group=st.booleans())
def test_shuffling_the_lines_of_a_run_never_changes_a_result(files, data, perm_seed, group):
    lanes, qrels = data
    rng = np.random.default_rng(perm_seed)
    shuffled = [[rows[i] for i in rng.permutation(len(rows))] for rows in lanes]
    kw = {"group_sep": "#"} if group else {}
    a = load(files, [run_text(r) for r in lanes], qrels_text(qrels), "a", **kw)
    b = load(files, [run_text(r) for r in shuffled], qrels_text(qrels), "b", **kw)
    assert_same(result(a), result(b))


@FAST
@given(data=datasets(min_hits=1), depth=st.integers(1, 4), extra=st.lists(st.tuples(ID, st.integers(-1, 4)), max_size=6),
       tie=st.booleans(), group=st.booleans())
def test_adding_hits_below_the_depth_never_changes_a_result(files, data, depth, extra, tie, group):
    lanes, qrels = data
    rows = lanes[0]
    # a query holding at least `depth` hits: new hits scored below its depth-th hit
    # (or tied with it and sorting after it: a smaller doc id as bytes) land below the cut
    by_q: dict = {}
    for q, d, s in rows:
        by_q.setdefault(q, []).append((s, d.encode()))
    full = [q for q, h in by_q.items() if len(h) >= depth]
    assume(full)
    q = full[0]
    ordered = sorted(by_q[q], key=lambda t: (t[0], t[1]), reverse=True)
    cut_score, cut_doc = ordered[depth - 1]
    have = {d for _, d in ordered}
    added, new_qrels = [], list(qrels)
    judged = {(qq, dd) for qq, dd, _ in qrels}
    for i, (d, g) in enumerate(extra):
        if d.encode() in have or any(d == a[1] for a in added):
            continue
        if tie and d.encode() < cut_doc:
            s = cut_score
        else:
            s = cut_score - 1.0 - i if abs(cut_score) < 1e15 else cut_score * (1 - 1e-9) - abs(cut_score) * 1e-9 * i
            if not s < cut_score:
                continue
        added.append((q, d, s))
        if (q, d) not in judged:  # judge the newcomers too: relevant docs below the cut
            new_qrels.append((q, d, g))
            judged.add((q, d))
    assume(added)
    kw = {"depth": depth, "group_sep": "#" if group else None}
    a = load(files, [run_text(rows), run_text(lanes[1])], qrels_text(new_qrels), "a", **kw)
    b = load(files, [run_text(rows + added), run_text(lanes[1])], qrels_text(new_qrels), "b", **kw)
    ra, rb = result(a), result(b)
    assert_same(ra, rb)


@FAST
@given(data=datasets())
def test_renaming_docs_in_byte_order_never_changes_a_result(files, data):
    lanes, qrels = data
    docs = sorted({d for rows in lanes for _, d, _ in rows} | {d for _, d, _ in qrels}, key=str.encode)
    # an order-preserving bijection on byte order, onto ids of another length and alphabet
    new = {d: f"N{i:05d}" for i, d in enumerate(docs)}
    a = load(files, [run_text(r) for r in lanes], qrels_text(qrels), "a")
    b = load(files, [run_text([(q, new[d], s) for q, d, s in r]) for r in lanes],
             qrels_text([(q, new[d], g) for q, d, g in qrels]), "b")
    assert_same(per_query(a), per_query(b))
    ra, rb = result(a), result(b)
    assert_same(ra, rb)


_GROUP_CHARS = "abcxyz019"  # every character sorts after the separator '#'


@FAST
@given(
    groups=st.lists(st.text(alphabet=_GROUP_CHARS, min_size=1, max_size=4), min_size=1, max_size=5, unique=True),
    data=st.data(),
)
def test_renaming_groups_in_byte_order_never_changes_a_group_result(files, groups, data):
    """Group ids ``G#part`` with G renamed order-preservingly (fixed width): both the
    doc byte order and the group structure are kept, so group-level results too."""
    parts = ["p1", "p2", "p10"]
    pool = [f"{g}#{p}" for g in groups for p in parts]
    qids = ["q1", "q2", "q3"]
    rows = []
    for q in qids:
        for d in data.draw(st.lists(st.sampled_from(pool), unique=True, max_size=8)):
            rows.append((q, d, data.draw(st.sampled_from([0.0, 1.0, 2.0]))))
    assume(rows)
    qrels = [(q, d, data.draw(st.integers(-1, 3))) for q in qids for d in data.draw(st.lists(st.sampled_from(pool), unique=True, max_size=5))]
    assume(any(g >= 1 for *_, g in qrels))
    gmap = {g: f"G{i:03d}" for i, g in enumerate(sorted(groups, key=str.encode))}
    ren = {d: gmap[d.split("#")[0]] + "#" + d.split("#", 1)[1] for d in pool}
    assert sorted(pool, key=str.encode) == sorted(pool, key=lambda d: ren[d].encode())
    a = load(files, [run_text(rows)], qrels_text(qrels), "a", group_sep="#")
    b = load(files, [run_text([(q, ren[d], s) for q, d, s in rows])], qrels_text([(q, ren[d], g) for q, d, g in qrels]), "b",
             group_sep="#")
    assert_same(result(a), result(b))


def _reformat(rows, how: str) -> str:
    if how == "tabs":
        return run_text(rows, sep="\t")
    if how == "crlf_padded":
        return "\ufeff# a comment\r\n\r\n" + run_text(rows, sep="  ", eol=" \t\r\n") + "\r\n   \r\n"
    if how == "score_spelling":  # the same float, written another way
        return run_text(rows, fmt=lambda s: f"{s:.17e}" if s else ("-0" if math.copysign(1, s) < 0 else "0e0"))
    if how == "extra_columns":
        return run_text([(q, d, s) for q, d, s in rows], eol=" extra col\n")
    if how == "comments_between":
        return "".join(line + "\n# q Q0 d 1 9.0 x\n\n" for line in run_text(rows).splitlines())
    raise AssertionError(how)


@FAST
@given(data=datasets(), how=st.sampled_from(["tabs", "crlf_padded", "score_spelling", "extra_columns", "comments_between"]))
def test_rewriting_the_whitespace_and_spelling_of_a_run_never_changes_a_result(files, data, how):
    """The fast columnar reader takes the clean single-space file; the general reader
    the rewritten one: both must read the same run."""
    lanes, qrels = data
    a = load(files, [run_text(r) for r in lanes], qrels_text(qrels), "a")
    b = load(files, [_reformat(r, how) for r in lanes], qrels_text(qrels), "b")
    ra, rb = result(a), result(b)
    ra["summary"]["warnings"] = [w for w in ra["summary"]["warnings"] if w["kind"] != "extra_columns"]
    rb["summary"]["warnings"] = [w for w in rb["summary"]["warnings"] if w["kind"] != "extra_columns"]
    assert_same(ra, rb)


@FAST
@given(data=datasets(n_lanes=1, min_hits=1), perm_seed=st.integers(0, 2**32 - 1), where=st.integers(0, 10**6))
def test_a_doc_repeated_within_a_query_is_refused_wherever_it_sits(files, data, perm_seed, where):
    lanes, qrels = data
    rows = list(lanes[0])
    q, d, s = rows[where % len(rows)]
    rows.append((q, d, s - 1.0))
    rng = np.random.default_rng(perm_seed)
    rows = [rows[i] for i in rng.permutation(len(rows))]
    with pytest.raises(InputError) as exc:
        load(files, [run_text(rows)], qrels_text(qrels))
    lines = [i + 1 for i, r in enumerate(rows) if r[0] == q and r[1] == d]
    assert exc.value.line == lines[1], (str(exc.value), lines)
    assert f"first at line {lines[0]}" in str(exc.value)


# ---------------------------------------------------------------------------- bounds


@FAST
@given(data=datasets(), depth=st.one_of(st.none(), st.integers(1, 5)), relevant=st.integers(1, 3), group=st.booleans())
def test_every_metric_stays_within_0_and_1(files, data, depth, relevant, group):
    lanes, qrels = data
    ws = load(files, [run_text(r) for r in lanes], qrels_text(qrels), depth=depth, relevant=relevant,
              group_sep="#" if group else None)
    rep = P.evaluate_report(ws)
    for lane, levels in rep["per_query"].items():
        for level, rows in levels.items():
            for qid, vals in rows.items():
                for m, v in vals.items():
                    if m == "rank":
                        assert v >= 0
                        continue
                    assert 0.0 <= v <= 1.0, (lane, level, qid, m, v)
    # every query, not only the positives the report lists
    for (lane, level), rows in per_query(ws).items():
        for qid, vals in rows.items():
            for m, v in vals.items():
                if m != "rank":
                    assert 0.0 <= v <= 1.0, (lane, level, qid, m, v)
    for level, cells in rep["ceilings"].items():
        for m, v in cells.items():
            assert v is None or 0.0 <= v <= 1.0, (level, m, v)


# ---------------------------------------------------------------------------- nDCG = 1 exactly at an ideal order


@st.composite
def ndcg_case(draw):
    n = draw(st.integers(1, 8))
    docs = [f"d{i}" for i in range(n)]
    grades = {d: draw(st.integers(-1, 4)) for d in docs}
    ideal_first = draw(st.booleans())
    if ideal_first:  # judged docs in descending grade order at the top, equal grades in any order
        order = sorted(docs, key=lambda d: (-max(grades[d], 0), draw(st.integers(0, 100))))
    else:
        order = draw(st.permutations(docs))
    retrieved = order[: draw(st.integers(1, n))]
    extra_unjudged = draw(st.integers(0, 3))
    return grades, retrieved, extra_unjudged


@settings(max_examples=2 * N_EXAMPLES, deadline=None)
@given(case=ndcg_case(), score_ties=st.booleans())
def test_ndcg_is_one_exactly_at_an_ideal_order_and_below_one_otherwise(files, case, score_ties):
    grades, retrieved, extra = case
    # scores strictly decreasing down the wanted order (or all tied, with doc ids chosen
    # to sort descending in that order), so the kernel's order is the wanted one
    if score_ties:
        ids = {d: f"z{len(retrieved) - i:03d}" for i, d in enumerate(retrieved)}
        rows = [("q", ids[d], 1.0) for d in retrieved]
    else:
        ids = {d: d for d in retrieved}
        rows = [("q", d, float(100 - i)) for i, d in enumerate(retrieved)]
    rows += [("q", f"u{i}", -1.0 - i) for i in range(extra)]
    qrels = [("q", ids.get(d, d), g) for d, g in grades.items()]
    if not any(g >= 1 for g in grades.values()):
        qrels.append(("q", "zz-positive", 1))  # not retrieved: a positive query with a non-zero ideal
    ws = load(files, [run_text(rows)], qrels_text(qrels))
    pq = ws.per_query("l0", "doc")
    qi = ws.qid_index["q"]
    judged = {d: g for _, d, g in qrels}
    gains = [max(judged.get(d, 0), 0) for _, d, _ in rows]
    ideal = sorted((max(g, 0) for g in judged.values()), reverse=True)
    for k in (1, 2, 3, 10):
        top = (gains + [0] * k)[:k]
        want = (ideal + [0] * k)[:k]
        v = float(pq[f"ndcg@{k}"][qi])
        if want[0] == 0:
            assert v == 0.0
        elif top == want:
            assert v == 1.0, (k, top, want, v)
        else:
            assert v < 1.0, (k, top, want, v)


# ---------------------------------------------------------------------------- the gate sweep, end to end


@FAST
@given(data=datasets(n_lanes=1), n_neg=st.integers(0, 4), relevant=st.integers(1, 2))
def test_the_fast_gate_sweep_equals_brute_force_on_a_loaded_workspace(files, data, n_neg, relevant):
    lanes, qrels = data
    rows = list(lanes[0])
    # add negative queries (judged, no positive grade) that the lane answers
    for i in range(n_neg):
        q = f"neg{i}"
        qrels.append((q, f"nd{i}", 0))
        rows += [(q, f"nd{j}", float(j % 3)) for j in range(i + 1)]
    ws = load(files, [run_text(rows)], qrels_text(qrels), relevant=relevant)
    view = analyse_gate(ws, GateSettings(gate_on="l0", fpir=0.05, conservative=False, miss_rate=0.1))
    slow = sweep_brute_force(view.top, view.positives, view.negatives, confidence=ws.settings.confidence)
    fast = view.sweep
    np.testing.assert_array_equal(fast.threshold, slow.threshold)
    for f in ("correct", "wrong_accept", "rejected"):
        np.testing.assert_array_equal(getattr(fast, f), getattr(slow, f))
    assert fast.n_negatives == slow.n_negatives
    for k in fast.accepted:
        np.testing.assert_array_equal(fast.accepted[k], slow.accepted[k])
    # and the brute force from first principles on the same workspace: a query is
    # accepted at floor x when the lane holds it and its top score is >= x
    top = {}
    for q, d, s in rows:
        top[q] = max(top.get(q, -math.inf), s)
    negs = {ws.qids[c] for c in ws.negatives.tolist()}
    for i, x in enumerate(fast.threshold.tolist()):
        assert fast.accepted["in_domain"][i] == sum(1 for q in negs if q in top and top[q] >= x)
