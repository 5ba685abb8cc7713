"""The names users type for a measure, each mapped to one canonical ``MetricKey``.

A name is ``BASE[(rel=N)][SEP k]`` with SEP one of ``@`` (rankscope, ir_measures, ranx),
``.`` or ``_`` (trec_eval as typed and as pytrec_eval prints it) and ``_at_`` (MTEB).
The bases are the ``Name`` entries of the registry, matched without regard to case, except
where two tools use one spelling for different things: ir_measures' ``Judged@k`` (÷ min(k,
retrieved)) is refused with the difference stated, never read as our ``judged@k`` (÷ k).
An unknown name gets the closest known spelling in its error.

References
----------
- trec_eval (NIST), the TREC evaluation program, version 10.0: the measure's definition
  and its conventions (judged grades, relevance level, tie order).
- Van Gysel, C. & de Rijke, M. (2018). Pytrec_eval: an extremely fast Python interface
  to trec_eval. *SIGIR 2018*, 873-876.
- MacAvaney, S., Macdonald, C. & Ounis, I. (2022). Streamlining evaluation with
  ir-measures. *ECIR 2022*, 305-310. (ir_measures' names, ``Judged@k``)
- Bassani, E. (2022). ranx: a blazing-fast Python library for ranking evaluation and
  comparison. *ECIR 2022*, 259-264. (ranx's names)
- Muennighoff, N., Tazi, N., Magne, L. & Reimers, N. (2023). MTEB: massive text
  embedding benchmark. *EACL 2023*, 2014-2037. (the ``_at_`` spelling)
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..errors import InputError
from . import registry as R
from .measure import NONE, OPTIONAL, REQUIRED, Measure, Name
from .registry import MetricKey

# A base starts with a letter, or with digits then a letter (trec_eval's ``11pt_avg``); the
# trailing number is a cutoff, or (``0.10``) the real parameter of a measure that takes one there.
_NAME = re.compile(r"^(?P<base>(?:[0-9]+[A-Za-z]|[A-Za-z])[A-Za-z0-9_\-]*?)(?:\((?P<params>[^()]*)\))?"
                   r"(?:(?P<sep>_at_|@|\.|_)(?P<k>[0-9]+(?:\.[0-9]+)?|\.[0-9]+))?$")

#: The one name of the response-time measure (report.json's ``latency`` block, every face's
#: row for it). It is not a relevance measure: it reads no judgment, is not averaged over the
#: positive queries, and takes no cutoff; it exists only for a run that carries the seconds
#: each query took (a run made by asking a retriever, ``inputs.retrieve``).
RESPONSE_TIME = "response_time"
#: What the response-time rows mean, in the words every face prints.
RESPONSE_TIME_DEFINITION = (
    "response_time: seconds from asking the retriever a query until its whole answer was read (wall clock), over "
    "every query the run was made for, judged or not; not a relevance measure; mean, median and 95th percentile "
    "(linear interpolation between order statistics), no interval: the times describe this machine and this "
    "moment, not a sample of queries")

# Spellings whose meaning differs from ours: (base as the tool writes it, case-sensitive) -> why refused.
REFUSED: dict[str, str] = {
    "Judged": ("ir_measures' Judged@k divides by min(k, retrieved); rankscope's judged@k divides by k (a short list's "
               "missing places count as unjudged): write judged@{k} for ours"),
    RESPONSE_TIME: ("response_time is not a relevance measure: evaluate reports it on its own (mean, median, p95) "
                    "for a run that carries per-query seconds, such as one written by 'rankscope run'"),
    "unj": ("trec_eval's unj.k is the unjudged share and counts a short list's missing places as judged; rankscope's "
            "judged@k counts judged hits / k: write judged@{k}"),
}


@functools.cache
def _bases() -> dict[str, list[tuple[Measure, Name]]]:
    out: dict[str, list[tuple[Measure, Name]]] = {}
    for m in R.ENTRIES:
        for n in m.names:
            out.setdefault(n.base.lower(), []).append((m, n))
    return out


def known_spellings() -> list[str]:
    """Every accepted spelling as the README shows it (``k`` = a cutoff)."""
    seen = []
    for m in R.ENTRIES:
        for n in m.names:
            if n.shown not in seen:
                seen.append(n.shown)
    return seen


def _closest(raw: str) -> str:
    import difflib  # a suggestion is made only for a name refused: not on a run's path

    m = re.search(r"([0-9]+)$", raw)
    number = m.group(1) if m else None
    probe = (raw[: m.start()] + "k") if m else raw
    probe = re.sub(r"\(.*\)", "", probe)
    pool = known_spellings()
    low: dict[str, str] = {}
    for s in pool:
        low.setdefault(s.lower(), s)  # rankscope's own spelling first
    hits = difflib.get_close_matches(probe.lower(), list(low), n=1, cutoff=0.4)
    if not hits:
        return ""
    best = low[hits[0]]
    if number is not None and best.endswith("k") and best[-2:-1] in ("@", ".", "_"):
        best = best[:-1] + number
    return f"; closest known name: {best}"


def _error(raw: str, what: str) -> InputError:
    return InputError(f"metric {raw!r}: {what}", "--metrics")


def parse_name(raw: str) -> MetricKey:
    """One typed name → its canonical key; ``InputError`` (one line, ``--metrics``) otherwise."""
    text = raw.strip()
    m = _NAME.match(text)
    if not m:
        raise InputError(f"unknown metric {text!r}{_closest(text)} (the README's Measures table lists every name)",
                         "--metrics")
    base, params, k = m.group("base"), m.group("params"), m.group("k")
    if base in REFUSED:
        raise _error(text, REFUSED[base].format(k=k or "k"))
    entries = _bases().get(base.lower())
    if not entries:
        raise InputError(f"unknown metric {text!r}{_closest(text)} (the README's Measures table lists every name)",
                         "--metrics")
    measure = entries[0][0]
    rules = {n.cutoff or me.cutoff for me, n in entries}
    kk = None
    rel, param = None, None
    if params is not None:
        rel, param = _params(text, base, params, measure)
    spec = measure.param
    if spec is not None and spec.style == "suffix":
        if k is None:
            if spec.default is None:
                raise _error(text, f"{base} needs its {spec.name} after the name, e.g. {base}_0.50")
            param = spec.default
        else:
            param = float(k)
        k = None
    elif spec is not None and param is None:
        param = spec.default
    if param is not None and spec is not None:
        why = spec.check(param)
        if why:
            raise _error(text, why)
    if k is not None and not k.isdigit():
        raise _error(text, "the cutoff must be a whole number")
    if k is not None:
        if rules == {NONE}:
            cut = f", or {measure.kind}@{k} for the cut form" if measure.cutoff == OPTIONAL else ""
            raise _error(text, f"{base} takes no cutoff (write {base}{cut})")
        kk = int(k)
        if kk < 1:
            raise _error(text, "the cutoff must be at least 1")
    elif rules == {REQUIRED}:
        shown = next(n.shown for _, n in entries if n.shown.endswith("k"))
        raise _error(text, f"{base} needs a cutoff, e.g. {shown[:-1]}10")
    return MetricKey(measure.kind, kk, rel, param)


def _params(text: str, base: str, params: str, measure: Measure) -> tuple[int | None, float | None]:
    """``rel=N`` and, for a measure with a parameter in parentheses (RBP), ``NAME=X``."""
    spec = measure.param if measure.param is not None and measure.param.style == "paren" else None
    rel: int | None = None
    param: float | None = None
    for piece in params.replace(" ", "").split(","):
        pm = re.fullmatch(r"rel=(-?[0-9]+)", piece)
        if pm:
            rel = _rel_level(text, base, int(pm.group(1)), measure)
            continue
        if spec is not None:
            vm = re.fullmatch(re.escape(spec.name) + r"=([0-9]*\.?[0-9]+(?:[eE]-?[0-9]+)?)", piece)
            if vm:
                param = float(vm.group(1))
                continue
        extra = " (for exponential gains write ndcg_exp@k)" if "dcg" in piece else ""
        reads = "rel=N" if spec is None else f"rel=N and {spec.name}=X"
        raise _error(text, f"the only parameters rankscope reads here are {reads}, not {params!r}{extra}")
    return rel, param


def _rel_level(text: str, base: str, rel: int, measure: Measure) -> int:
    if not measure.takes_rel:
        why = {"judged": "it counts judged docs", "num_ret": "it counts retrieved docs"}.get(measure.kind,
                                                                                           "its gain is the grade")
        raise _error(text, f"{base} takes no rel=: it does not depend on the relevance level ({why})")
    if rel < 1:
        raise _error(text, f"rel must be at least 1, not {rel} (grade 0 is judged non-relevant)")
    return rel


def canonical_key(name: object) -> str:
    """The canonical key of one typed name (``'ndcg_cut.10'`` → ``'ndcg@10'``) or measure
    object (its ``str``: ir_measures' ``nDCG@10`` → ``'ndcg@10'``)."""
    return parse_name(str(name)).key


def parse_metrics(spec: str | Iterable[Any], option: str = "--metrics") -> list[MetricKey]:
    """``'ndcg@10,RR@10,map'`` → keys (read by :func:`resolve_measures`); every ``ndcg@k``
    (and ``ndcg_exp@k``) brings ``judged@k`` with it. Order kept, no repeats (two spellings
    of one measure are one)."""
    out: list[MetricKey] = []
    for asked in resolve_measures(spec, option):
        if asked.metric not in out:
            out.append(asked.metric)
    for key in list(out):
        if key.measure.brings_judged and key.k is not None and MetricKey("judged", key.k) not in out:
            out.append(MetricKey("judged", key.k))
    # a companion (RBP's residual) sits right after its measure, so that every table shows them side by side
    for key in [k for k in out if k.measure.companion]:
        mate = MetricKey(key.measure.companion or "", key.k, key.rel, key.param)
        if mate in out:
            out.remove(mate)
        out.insert(out.index(key) + 1, mate)
    return out


@dataclass(frozen=True)
class AskedMeasure:
    """One measure as a user asked for it: ``asked`` is what was given (a typed name such as
    ``'map'`` or ``'P.10'``, or a measure object whose ``str`` is its name, as ir_measures'
    ``AP`` or ``nDCG@10``), ``metric`` its canonical key. Results handed back to the user
    are keyed by ``asked`` (as ir_measures keys them); ``key`` is the canonical key the
    per-query CSV and report.json use."""

    asked: Any
    metric: MetricKey

    @property
    def typed(self) -> str:
        return str(self.asked).strip()

    @property
    def key(self) -> str:
        return self.metric.key


def _split(item: Any) -> list[Any]:
    """A comma list of names becomes its names; anything else (a measure object) stays whole."""
    if isinstance(item, str):
        return [x.strip() for x in item.split(",")]
    return [item]


def resolve_measures(measures: str | Iterable[Any], option: str = "--metrics") -> list[AskedMeasure]:
    """The one resolver of measure names every face uses: ``measures`` is a comma list or an
    iterable of names and measure objects (``str(obj)`` is read: ir_measures' objects print
    their name). Each is read by :func:`parse_name`; order kept, a name given twice is one.
    An empty list, an empty name or an unknown name raises ``InputError`` naming ``option``.
    An empty piece (a trailing comma) names nothing. Unlike :func:`parse_metrics`, nothing
    is added: ``ndcg@10`` does not bring ``judged@10``."""
    items = _split(measures) if isinstance(measures, str) else [x for m in measures for x in _split(m)]
    out: list[AskedMeasure] = []
    for item in items:
        text = str(item).strip()
        if not text:  # a trailing comma ('ndcg@10,') names nothing more
            continue
        if text.isdigit() and out:  # trec_eval's P.5,10: one measure, several cutoffs
            raise InputError(f"metric {text!r}: a bare cutoff; trec_eval's multi-cutoff form (P.5,10) is written "
                             f"one name per cutoff here (P.5,P.10)", option)
        try:
            key = parse_name(text)
        except InputError as exc:
            raise InputError(exc.detail, option) from None
        if all(a.typed != text for a in out):
            out.append(AskedMeasure(item, key))
    if not out:
        raise InputError("no metric given", option)
    return out


def resolve_metric_path(report: dict[str, Any], keys: list[str]) -> list[str]:
    """A rule's dotted path with the metric named as a user types it (``lanes.bm25.doc.map``,
    ``lanes.bm25.doc.ndcg_cut.10``, whose dot splits the name) rewritten to the report's
    canonical key. Keys found in the report as written are kept; anything else is left for
    the caller's "not found" error."""
    node = report
    for i, key in enumerate(keys):
        if not isinstance(node, dict):
            return keys
        if key not in node:
            for j in range(len(keys), i, -1):
                try:
                    c = canonical_key(".".join(keys[i:j]))
                except InputError:
                    continue
                if c in node:
                    return keys[:i] + [c] + keys[j:]
            return keys
        node = node[key]
    return keys
