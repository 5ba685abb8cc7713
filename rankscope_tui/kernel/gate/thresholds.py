"""thresholds.json: what `calibrate` fits on calibration queries and `evaluate --thresholds`
applies to others. Its schema, the reader (validating every block used later) and the
writer (:func:`calibrate`, the file's content as a dict).

Blocks: ``settings`` (the workspace's LoadSettings), ``fingerprints`` (sha256 per input),
``calibration`` (qrels path, the calibration qids = positives and in-domain negatives),
``fusion`` (RRF k and its source, convex weights with their objective and grid) and
``gate`` (lane, target FPIR, basis, miss rate, mutual r, the null and conformal floors,
the operating point and margin; the applied ``floor`` / ``margin``, an infinite floor
written as null with a ``floor_reason``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError

THRESHOLDS_SCHEMA = "rankscope.thresholds/1"


@dataclass(frozen=True)
class Thresholds:
    """What `calibrate` fitted, as read back from thresholds.json."""

    path: str
    data: dict
    calibration_qids: frozenset = field(default_factory=frozenset)
    calibration_qrels_sha256: str | None = None  # from the file's fingerprints, when they name it

    @property
    def convex_weights(self) -> dict | None:
        fusion = self.data.get("fusion") or {}
        conv = fusion.get("convex")
        return conv.get("weights") if conv else None

    @property
    def rrf_k(self) -> float | None:
        """The RRF k calibration settled on; None when it merely recorded the default."""
        fusion = self.data.get("fusion") or {}
        return None if fusion.get("rrf_k_source") == "default" else fusion.get("rrf_k")


def read_thresholds(path: str) -> Thresholds:
    """Read and validate thresholds.json; every block used later is checked here."""
    from ..inputs.files import as_finite_number, load_json, read_text

    data = load_json(read_text(path), path)
    if not isinstance(data, dict) or data.get("schema") != THRESHOLDS_SCHEMA:
        raise InputError(f"not a thresholds file (expected 'schema': '{THRESHOLDS_SCHEMA}')", path, 1)

    def block(name: str) -> dict:
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
            and sum(counts) != len(set(qids)):
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
    return Thresholds(path, data, frozenset(qids), cal_sha)


def _calibration_qrels_sha(data: dict, cal: dict, path: str) -> str | None:
    """sha256 of the calibration qrels, from ``fingerprints[calibration.qrels]``; None when
    the file does not say (no fingerprints, or none for that path)."""
    fp = data.get("fingerprints")
    if fp is None:
        return None
    if not isinstance(fp, dict) or not all(isinstance(v, str) for v in fp.values()):
        raise InputError("'fingerprints' must be an object {path: sha256}", path, 1)
    q = cal.get("qrels")
    sha = fp.get(q) if isinstance(q, str) else None
    return sha.lower() if sha else None


#: settings a fitted quantity depends on: (key in the settings block, command-line flag, words when unset)
FITTED_UNDER = (
    ("depth", "--depth", "no --depth (full lists)"),
    ("relevant", "--relevant", None),
    ("group_sep", "--group-sep", "no --group-sep"),
    ("confidence", "--confidence", None),
)


def _setting_words(flag: str, value, unset: str | None) -> str:
    if value is None:
        return unset or f"no {flag}"
    return f"{flag} {value!r}" if isinstance(value, str) else f"{flag} {value:g}"


def settings_warnings(settings, th: Thresholds) -> list:
    """Warnings (``InputWarning``) when ``th`` is applied under other settings than it was
    fitted with: depth, relevant level, group separator, confidence (the conservative
    floor's Wilson bound), and a convex objective metric the report does not compute."""
    from ..errors import InputWarning

    fitted = th.data.get("settings") or {}
    now = settings.as_dict()
    out = []
    for key, flag, unset in FITTED_UNDER:
        if key not in fitted or fitted[key] == now[key]:
            continue
        was, is_ = _setting_words(flag, fitted[key], unset), _setting_words(flag, now[key], unset)
        out.append(InputWarning("thresholds_settings", 1, f"thresholds fitted with {was} are applied with {is_}: "
                                "the fitted floors and weights may not hold under these settings", th.path))
    conv = (th.data.get("fusion") or {}).get("convex") or {}
    name = (conv.get("objective") or {}).get("name")
    if name and name not in now["metrics"]:
        out.append(InputWarning("thresholds_settings", 1, f"convex weights were fitted to maximise {name}, which this "
                                f"report does not compute (metrics {', '.join(now['metrics'])})", th.path))
    return out


def in_sample_overlap(ws, th: Thresholds, queries: np.ndarray) -> int:
    """How many evaluated queries were also calibration queries: all of them when the
    evaluated qrels are the calibration qrels (the same sha256 in the file's
    fingerprints), else those the file lists as calibration queries."""
    if th.calibration_qrels_sha256 is not None:
        evaluated = next((f.sha256 for f in ws.inputs if f.role == "qrels"), None)
        if evaluated is not None and evaluated.lower() == th.calibration_qrels_sha256:
            return int(np.asarray(queries).size)
    return sum(1 for q in ws.qids[queries].tolist() if q in th.calibration_qids)
