"""thresholds.json: what `calibrate` fits on calibration queries and `evaluate --thresholds`
applies to others. Its schema, the reader (validating every block used later) and the
writer (:func:`calibrate`, the file's content as a dict).

The reader returns typed blocks (:class:`CalibrationBlock`, :class:`FusionBlock`,
:class:`GateBlock`), each value checked once here; nothing downstream reads the JSON.

Blocks: ``settings`` (the workspace's LoadSettings), ``fingerprints`` (sha256 per input),
``calibration`` (qrels path, the calibration qids = positives and in-domain negatives),
``fusion`` (RRF k and its source, convex weights with their objective and grid) and
``gate`` (lane, target FPIR, basis, miss rate, mutual r, the null and conformal floors,
the operating point and margin; the applied ``floor`` / ``margin``, an infinite floor
written as null with a ``floor_reason``).

References
----------
- Vovk, V., Gammerman, A. & Shafer, G. (2005). *Algorithmic Learning in a Random World*.
  Springer. (conformal prediction)
- Grother, P., Ngan, M. & Hanaoka, K. (2019). Face Recognition Vendor Test (FRVT) Part
  2: Identification. NISTIR 8271. (FNIR and FPIR of 1:N identification, a threshold on
  the top candidate's score)
- Cormack, G. V., Clarke, C. L. A. & Büttcher, S. (2009). Reciprocal rank fusion
  outperforms Condorcet and individual rank learning methods. *SIGIR 2009*, 758-759.
  (RRF)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InputError, InputWarning

if TYPE_CHECKING:
    from ..settings import LoadSettings
    from ..workspace.contract import PerQuery

THRESHOLDS_SCHEMA = "rankscope.thresholds/1"


@dataclass(frozen=True)
class CalibrationBlock:
    """``calibration``: which queries calibration used (its positives and in-domain negatives)."""

    qrels: str | None = None  # the calibration qrels' path, as recorded
    qids: frozenset[str] = field(default_factory=frozenset)
    qrels_sha256: str | None = None  # from the file's fingerprints, when they name the qrels


@dataclass(frozen=True)
class FusionBlock:
    """``fusion``: the RRF k in force at calibration, and the fitted convex weights."""

    rrf_k: float | None = None  # a number from 1 to 1e6 (as the JSON holds it), or None
    rrf_k_source: str | None = None  # "default" | "chosen on the command line" | "calibration"
    convex_weights: dict[str, Any] | None = None  # {lane: weight >= 0}, not all zero
    convex_objective: str | None = None  # the metric the weights maximise
    method_weights: dict[str, dict[str, float]] = field(default_factory=dict)  # fusion method -> {lane: weight}


@dataclass(frozen=True)
class GateBlock:
    """``gate``: the lane gated and what ``evaluate --thresholds`` applies. ``floor`` and
    ``margin`` are the JSON numbers as written (an infinite floor is null plus a
    ``floor_reason``); ``mutual_r`` counts only when the block records it (``records_mutual_r``,
    null included: no mutual condition), else the gate settings' r applies."""

    lane: str | None = None
    floor: float | None = None
    floor_reason: object = None
    margin: float | None = None
    mutual_r: int | None = None
    records_mutual_r: bool = False
    recorded: dict[str, Any] = field(default_factory=dict)  # the block as written (shown, and reported as is)

    def mutual_r_or(self, default: int | None) -> int | None:
        """The recorded mutual r, or ``default`` when the block does not record one."""
        return self.mutual_r if self.records_mutual_r else default


@dataclass(frozen=True)
class Thresholds:
    """What `calibrate` fitted, as read back from thresholds.json: its typed blocks
    (``gate`` None when the file has no gate block), the fitted-under settings as recorded,
    and the whole document (``data``: what a cache key fingerprints, never read for values)."""

    path: str
    data: dict[str, Any]
    calibration: CalibrationBlock = field(default_factory=CalibrationBlock)
    fusion: FusionBlock = field(default_factory=FusionBlock)
    gate: GateBlock | None = None
    fitted_settings: dict[str, Any] = field(default_factory=dict)

    @property
    def calibration_qids(self) -> frozenset[str]:
        return self.calibration.qids

    @property
    def calibration_qrels_sha256(self) -> str | None:
        return self.calibration.qrels_sha256

    @property
    def convex_weights(self) -> dict[str, Any] | None:
        return self.fusion.convex_weights

    @property
    def rrf_k(self) -> float | None:
        """The RRF k calibration settled on; None when it merely recorded the default."""
        return None if self.fusion.rrf_k_source == "default" else self.fusion.rrf_k


def read_thresholds(path: str) -> Thresholds:
    """Read and validate thresholds.json; every block used later is checked here."""
    from ..inputs.files import as_finite_number, load_json, read_text

    data = load_json(read_text(path), path)
    if not isinstance(data, dict) or data.get("schema") != THRESHOLDS_SCHEMA:
        raise InputError(f"not a thresholds file (expected 'schema': '{THRESHOLDS_SCHEMA}')", path, 1)

    def block(name: str) -> dict[str, Any]:
        b = data.get(name)
        if b is None:
            return {}
        if not isinstance(b, dict):
            raise InputError(f"'{name}' must be an object", path, 1)
        return b

    cal = block("calibration")
    cal_sha = _calibration_qrels_sha(data, cal, path)
    qids = cal.get("qids")
    unknown = qids is None and cal_sha is None
    qids = [] if qids is None else qids
    if not isinstance(qids, list) or not all(isinstance(q, str) for q in qids):
        raise InputError("'calibration.qids' must be a list of strings", path, 1)
    counts = [cal.get(k) for k in ("positives", "negatives")]
    if "qids" in cal and all(isinstance(c, int) and not isinstance(c, bool) for c in counts) \
            and sum(c for c in counts if isinstance(c, int)) != len(set(qids)):
        raise InputError(f"'calibration.qids' lists {len(set(qids))} queries but 'calibration' counts "
                         f"{counts[0]} positives + {counts[1]} negatives: the file was edited or is incomplete",
                         path, 1)
    fusion = block("fusion")
    if fusion.get("rrf_k") is not None:
        k = as_finite_number(fusion["rrf_k"], "'fusion.rrf_k'", path, 1)
        if not 1 <= k <= 1e6:  # as --rrf-k: at least 1
            raise InputError("'fusion.rrf_k' must be between 1 and 1e6", path, 1)
    conv = fusion.get("convex")
    if conv is not None:
        if not isinstance(conv, dict) or not isinstance(conv.get("weights"), dict):
            raise InputError("'fusion.convex.weights' must be an object {lane: weight}", path, 1)
        total = 0.0
        for lane, w in conv["weights"].items():
            x = as_finite_number(w, f"convex weight of {lane}", path, 1)
            if x < 0:
                raise InputError(f"convex weight of {lane} must be >= 0", path, 1)
            total += x
        if conv["weights"] and total <= 0:
            raise InputError("convex weights must not all be zero", path, 1)
    method_weights: dict[str, dict[str, float]] = {}
    methods = fusion.get("methods")
    if methods is not None:  # calibrate --fuse: the weighted methods' dev weights
        table = methods.get("methods") if isinstance(methods, dict) else None
        if not isinstance(table, dict):
            raise InputError("'fusion.methods.methods' must be an object {method: {...}}", path, 1)
        for name, entry in table.items():
            w = entry.get("weights") if isinstance(entry, dict) else None
            if w is None:
                continue
            if not isinstance(w, dict) or not w:
                raise InputError(f"'fusion.methods.methods.{name}.weights' must be an object {{lane: weight}}", path, 1)
            ws = {str(lane): as_finite_number(x, f"{name} weight of {lane}", path, 1) for lane, x in w.items()}
            if any(x < 0 for x in ws.values()) or sum(ws.values()) <= 0:
                raise InputError(f"{name} weights must be >= 0 and not all zero", path, 1)
            method_weights[str(name)] = ws
    gate = block("gate")
    for key in ("floor", "margin"):
        if gate.get(key) is not None:
            as_finite_number(gate[key], f"'gate.{key}'", path, 1)
    r = gate.get("mutual_r")
    if r is not None and (isinstance(r, bool) or not isinstance(r, int) or r < 1):
        raise InputError("'gate.mutual_r' must be a positive integer", path, 1)
    if unknown:  # checked last: a malformed block above is named first
        raise InputError("'calibration.qids' is missing and the fingerprints do not name the calibration qrels: "
                         "which queries calibration used is unknown, so in-sample evaluation could not be told "
                         "from held-out; re-run `rankscope calibrate`", path, 1)
    objective = (conv.get("objective") or {}) if isinstance(conv, dict) else {}
    lane = gate.get("lane")
    fitted = data.get("settings")
    return Thresholds(
        path, data,
        calibration=CalibrationBlock(cal.get("qrels") if isinstance(cal.get("qrels"), str) else None, frozenset(qids),
                                     cal_sha),
        fusion=FusionBlock(fusion.get("rrf_k"), fusion.get("rrf_k_source"), conv["weights"] if conv else None,
                           objective.get("name") if isinstance(objective, dict) else None, method_weights),
        gate=GateBlock(str(lane) if lane else None, gate.get("floor"), gate.get("floor_reason"), gate.get("margin"),
                       r, "mutual_r" in gate, gate) if gate else None,
        fitted_settings=fitted if isinstance(fitted, dict) else {},
    )


def _calibration_qrels_sha(data: dict[str, Any], cal: dict[str, Any], path: str) -> str | None:
    """sha256 of the calibration qrels, from ``fingerprints[calibration.qrels]``; None when
    the file does not say (no fingerprints, or none for that path)."""
    fp = data.get("fingerprints")
    if fp is None:
        return None
    if not isinstance(fp, dict) or not all(isinstance(v, str) for v in fp.values()):
        raise InputError("'fingerprints' must be an object {path: sha256}", path, 1)
    q = cal.get("qrels")
    sha = fp.get(q) if isinstance(q, str) else None
    return str(sha).lower() if sha else None


#: settings a fitted quantity depends on: (key in the settings block, command-line flag, words when unset)
FITTED_UNDER = (
    ("depth", "--depth", "no --depth (full lists)"),
    ("relevant", "--relevant", None),
    ("group_sep", "--group-sep", "no --group-sep"),
    ("confidence", "--confidence", None),
    ("ignore_self", "--ignore-self", None),  # the fit saw other lists
)


def _setting_words(flag: str, value: object, unset: str | None) -> str:
    if value is None or value is False:
        return unset or f"no {flag}"
    if value is True:
        return flag
    return f"{flag} {value!r}" if isinstance(value, str) else f"{flag} {value:g}"


def settings_warnings(settings: LoadSettings, th: Thresholds) -> list[InputWarning]:
    """Warnings (``InputWarning``) when ``th`` is applied under other settings than it was
    fitted with: depth, relevant level, group separator, confidence (the conservative
    floor's Wilson bound), ignore_self (the lists the fit saw), and a convex objective metric the report does not compute."""
    fitted = th.fitted_settings
    now = settings.as_dict()
    out = []
    for key, flag, unset in FITTED_UNDER:
        if key not in fitted or fitted[key] == now[key]:
            continue
        was, is_ = _setting_words(flag, fitted[key], unset), _setting_words(flag, now[key], unset)
        out.append(InputWarning("thresholds_settings", 1, f"thresholds fitted with {was} are applied with {is_}: "
                                "the fitted floors and weights may not hold under these settings", th.path))
    name = th.fusion.convex_objective
    if name and name not in now["metrics"]:
        out.append(InputWarning("thresholds_settings", 1, f"convex weights were fitted to maximise {name}, which this "
                                f"report does not compute (metrics {', '.join(now['metrics'])})", th.path))
    return out


def in_sample_overlap(ws: PerQuery, th: Thresholds, queries: np.ndarray) -> int:
    """How many evaluated queries were also calibration queries: all of them when the
    evaluated qrels are the calibration qrels (the same sha256 in the file's
    fingerprints), else those the file lists as calibration queries."""
    if th.calibration_qrels_sha256 is not None:
        evaluated = next((f.sha256 for f in ws.inputs if f.role == "qrels"), None)
        if evaluated is not None and evaluated.lower() == th.calibration_qrels_sha256:
            return int(np.asarray(queries).size)
    return sum(1 for q in ws.qids[queries].tolist() if q in th.calibration_qids)
