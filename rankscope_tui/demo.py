"""The built-in demo: a deterministic, synthetic data set that exhibits every lesson.

``write_demo(out_dir, seed=7)`` writes a small made-up retrieval evaluation (a spare
parts and service-manual search for invented appliance brands) with two lanes, graded
judgments split into dev and test, out-of-domain negatives, strata, a corpus list, texts
for the drill-down, a gates file and a README. Same seed, same bytes.

Everything is drawn from one ``numpy.random.default_rng(seed)``; numpy is imported
lazily so importing this module costs nothing. The lessons (SPEC section 11) are built
in on purpose, on fixed query ids listed in :data:`SHOWCASE` (the same for every seed):

* ``tie`` -- the lexical lane scores ``d10#p1`` (relevant) and ``d9#p1`` (not)
  exactly equal at the top. trec_eval puts ``d9#p1`` first (doc id descending as
  bytes), so hit@1 is 0; the file lists ``d10#p1`` first. Every tie in the run files
  is written in ascending byte order, the opposite of trec_eval, so a reader that
  trusts file order or the rank column gets them all wrong. Many other queries carry
  ties too, about half of them inside the top 10.
* ``dilution`` -- the lexical lane has the relevant doc at rank 1; the dense lane
  misses it and ranks three wrong look-alikes first, which the lexical lane has at
  ranks 2-4. RRF (k = 60) puts the right doc at rank 4.
* ``flood_cap_hurts`` -- a long manual (``d12``, 40 pages): six of its pages rank
  above its one right page (rank 7) in both lanes. ``--cap 5`` cuts the right page;
  ``--document-first`` keeps it at rank 7.
* ``flood_cap_helps`` -- a parts catalogue (``d3``, 60 near-identical pages): thirteen
  of its pages rank above the right spec sheet (rank 14) in both lanes. ``--cap 5``
  lifts the answer to rank 6; document-first keeps the flood on top.
* ``missing_from_dense`` (test) and ``missing_from_dense_dev`` -- judged positives
  absent from ``dense.run`` entirely.
* ``not_indexed`` / ``not_indexed_2`` (test) and ``not_indexed_dev`` -- every relevant
  doc is missing from the corpus; ``partly_not_indexed`` (test) and
  ``partly_not_indexed_dev`` -- one of two relevant passages is.
* ``unjudged`` -- two lane queries present in both runs and in no qrels file.

Statistical lessons come from the generator's design: the lexical lane fails the
``no-overlap`` stratum (colloquial symptom queries), the dense lane fails ``keyword``
(part-number queries); in-domain negatives reach dense top scores close to the
positives' while out-of-domain negatives score clearly lower, so a floor fitted on
them looks safe and is not; dev and test are drawn from the same design with slightly
different lane strengths (:data:`_SPLIT_SHIFT`), so fusion weights fitted on dev transfer
to test while weights fitted on test score higher there (the Calibrate view's "fit on test"
cheat is optimistic); every query carries a difficulty shared by both lanes
(:data:`_DIFFICULTY`, :data:`_CONFUSION`), so per-query scores correlate across lanes and
the paired compare interval is narrower than the unpaired one.
"""

from __future__ import annotations

import json
from pathlib import Path

from .kernel.inputs.provenance import MARKER

__all__ = ["write_demo", "SHOWCASE", "LANES", "DEPTH", "FILES"]

LANES = ("lexical", "dense")
DEPTH = 100
RRF_K = 60

# MARKER (kernel/inputs/provenance.py names it, the loader reads it): the file beside the demo
# listing the sha256 of every file written, so reports on these exact files are labelled
# synthetic and an edited file loses the label, and the showcase queries the dashboard
# opens on.

#: role -> file name, as written by :func:`write_demo`.
FILES = {
    "lexical": "lexical.run",
    "dense": "dense.run",
    "qrels_dev": "qrels-dev.txt",
    "qrels_test": "qrels-test.txt",
    "qrels_ood": "qrels-ood-negatives.txt",
    "strata": "strata.tsv",
    "corpus": "corpus.tsv",
    "queries": "queries.tsv",
    "docs": "docs.tsv",
    "gates": "gates.json",
    "readme": "README.txt",
    "marker": MARKER,
}

#: lesson -> query id (fixed for every seed). All but the ``*_dev`` ones and
#: ``unjudged`` are in qrels-test.txt.
SHOWCASE: dict[str, str | tuple[str, ...]] = {
    "dilution": "q7",
    "tie": "q12",
    "flood_cap_hurts": "q23",
    "flood_cap_helps": "q31",
    "missing_from_dense": "q42",
    "not_indexed": "q47",
    "not_indexed_2": "q51",
    "partly_not_indexed": "q53",
    "missing_from_dense_dev": "q58",
    "not_indexed_dev": "q66",
    "partly_not_indexed_dev": "q71",
    "unjudged": ("q88", "q140"),
}

# ---------------------------------------------------------------------------
# design constants
# ---------------------------------------------------------------------------

N_QUERIES = 178
# (split, stratum) -> count, showcases included
_SLOTS = {
    ("test", "keyword"): 16, ("test", "paraphrase"): 32, ("test", "no-overlap"): 16,
    ("dev", "keyword"): 14, ("dev", "paraphrase"): 28, ("dev", "no-overlap"): 14,
    ("test", "negative"): 16, ("dev", "negative"): 16,
    ("ood", "negative-ood"): 24, ("none", "unjudged"): 2,
}
_FIXED_ROLES = {
    "q7": ("test", "keyword"), "q12": ("test", "keyword"),
    "q23": ("test", "paraphrase"), "q31": ("test", "keyword"),
    "q42": ("test", "paraphrase"), "q47": ("test", "no-overlap"),
    "q51": ("test", "paraphrase"), "q53": ("test", "paraphrase"),
    "q58": ("dev", "paraphrase"), "q66": ("dev", "keyword"),
    "q71": ("dev", "paraphrase"), "q88": ("none", "unjudged"),
    "q140": ("none", "unjudged"),
}

# lane behaviour per stratum: (probability a relevant passage is retrieved, mean latent)
_LANE_MODEL = {
    "lexical": {"keyword": (1.0, 4.8), "paraphrase": (0.95, 4.3), "no-overlap": (0.8, -1.6)},
    "dense": {"keyword": (0.9, -1.2), "paraphrase": (1.0, 4.6), "no-overlap": (1.0, 4.4)},
}

# the per-query difficulty shared by both lanes: sd, per stratum, of a latent shift of every
# relevant passage (smaller where one lane must stay strong: keyword for lexical, no-overlap for dense)
_DIFFICULTY = {"keyword": 2.0, "paraphrase": 4.0, "no-overlap": 2.0}
# how far a query's difficulty lifts (hard) or sinks (easy) the candidates both lanes share
_CONFUSION = 0.8
# dev and test are drawn from slightly different lane strengths, so the convex grid's optimum
# moves between them: fitting on test scores higher on test than the dev fit does (optimism)
_SPLIT_SHIFT = {
    (split, kind): {"lexical": sign * 0.25, "dense": -sign * 0.25}
    for split, sign in (("dev", 1.0), ("test", -1.0)) for kind in ("keyword", "paraphrase", "no-overlap")
}

_PRODUCTS = [
    ("Kestrel", "K2", "garden pump"), ("Kestrel", "K4", "garden pump"),
    ("Kestrel", "K7", "garden pump"), ("Orrin", "O20", "dehumidifier"),
    ("Orrin", "O40", "dehumidifier"), ("Brevik", "B3", "espresso machine"),
    ("Brevik", "B5", "espresso machine"), ("Lumo", "L1", "air purifier"),
    ("Lumo", "L3", "air purifier"), ("Tamsin", "T6", "water heater"),
    ("Tamsin", "T8", "water heater"), ("Fenwick", "F1", "dishwasher"),
    ("Fenwick", "F3", "dishwasher"), ("Halden", "H2", "washing machine"),
    ("Halden", "H5", "washing machine"), ("Pellow", "P9", "heat pump"),
]
_PREFIX = {"Kestrel": "KP", "Orrin": "OR", "Brevik": "BV", "Lumo": "LM",
           "Tamsin": "TS", "Fenwick": "FW", "Halden": "HD", "Pellow": "PW"}
_COMPONENTS = {
    "garden pump": ["impeller", "shaft seal", "pressure switch", "check valve", "motor capacitor"],
    "dehumidifier": ["humidity sensor", "fan motor", "condensate pump", "dust filter", "control board"],
    "espresso machine": ["brew group", "steam wand valve", "heating element", "vibration pump", "descaling cartridge"],
    "air purifier": ["HEPA filter", "carbon filter", "fan motor", "particle sensor", "control board"],
    "water heater": ["heating element", "thermostat", "anode rod", "pressure relief valve", "thermal cut-out"],
    "dishwasher": ["door gasket", "drain pump", "spray arm", "inlet valve", "control board"],
    "washing machine": ["drum bearing", "door seal", "drain pump", "carbon brushes", "inlet valve"],
    "heat pump": ["defrost sensor", "expansion valve", "fan motor", "compressor relay", "control board"],
}
# (technical description used in documents, colloquial query with no shared word, component)
_SYMPTOMS = {
    "garden pump": [
        ("cavitation at the impeller inlet", "sounds like gravel rattling around inside", "impeller"),
        ("pressure switch contacts pitted, short cycling", "clicks on and off every few seconds", "pressure switch"),
        ("shaft seal leak at the motor end", "puddle forms under it overnight", "shaft seal"),
    ],
    "dehumidifier": [
        ("humidity sensor drift above ninety percent", "bedroom still feels clammy though it never stops", "humidity sensor"),
        ("condensate pump float stuck", "bucket stays dry yet carpet gets soaked", "condensate pump"),
        ("fan motor bearing dry", "shrill whine coming out of its grille", "fan motor"),
    ],
    "espresso machine": [
        ("scale deposit on the heating element", "my coffee comes out lukewarm", "heating element"),
        ("brew group misaligned after cleaning", "soggy puck and grounds everywhere", "brew group"),
        ("steam wand valve seat worn", "frother hisses but milk stays flat", "steam wand valve"),
    ],
    "air purifier": [
        ("HEPA filter saturated, airflow reduced", "room smells stale even on full blast", "HEPA filter"),
        ("particle sensor lens dusty, false readings", "light stays red all day long", "particle sensor"),
        ("fan motor capacitor failed", "hums yet nothing blows out", "fan motor"),
    ],
    "water heater": [
        ("thermal cut-out tripped after overheating", "shower turns icy after five minutes", "thermal cut-out"),
        ("anode rod depleted, tank corrosion", "rusty brown stuff from taps", "anode rod"),
        ("pressure relief valve weeping", "pipe by my drain keeps dribbling", "pressure relief valve"),
    ],
    "dishwasher": [
        ("drain pump blocked by debris", "murky pool left at bottom after every wash", "drain pump"),
        ("spray arm nozzles clogged with limescale", "plates still greasy when finished", "spray arm"),
        ("door gasket hardened, seal lost", "wet kitchen floor in front", "door gasket"),
    ],
    "washing machine": [
        ("drum bearing worn, radial play", "thunder-like rumble while spinning", "drum bearing"),
        ("carbon brushes worn below limit, motor loses torque", "tub refuses to turn and smells burnt", "carbon brushes"),
        ("inlet valve solenoid open circuit", "stays empty when I start laundry", "inlet valve"),
    ],
    "heat pump": [
        ("defrost sensor failure, outdoor coil iced", "big block of ice on that box outside", "defrost sensor"),
        ("expansion valve stuck closed, low suction pressure", "house never warms up in January", "expansion valve"),
        ("compressor relay chatter", "clicking all night from my garden unit", "compressor relay"),
    ],
}
_FILLER_TOPICS = [
    "Warranty terms for {b} appliances bought after {y}: two years parts and labour, registration required within {n} days.",
    "Press release: {b} opens a service centre in {c}, offering same-week repairs for all current models.",
    "Shipping and returns: spare parts ship within {n} working days; unopened parts may be returned for a refund.",
    "Recycling notice: return old {t} units to any {b} dealer; batteries and refrigerant are handled separately.",
    "Dealer bulletin {y}-{n}: revised price list for {b} consumables, effective from the first of next month.",
    "Energy label update: the {b} range was re-rated under the {y} scheme; no hardware changes were made.",
    "Training course: {b} certified technician programme, {n} days, held in {c} each spring.",
    "Accessibility statement for the {b} customer portal, reviewed in {y}.",
]
_CITIES = ["Leeds", "Lyon", "Utrecht", "Porto", "Graz", "Aarhus", "Bergen", "Turin", "Ghent", "Brno"]
_MANUAL_SECTIONS = [
    "Safety instructions", "Tools required", "Model identification", "Pressure tank overview",
    "Pressure tank pre-charge values", "Electrical connections", "Priming the pump", "Suction line layout",
    "Discharge line layout", "Float switch adjustment", "Tank membrane inspection", "Impeller removal",
    "Impeller refitting", "Shaft seal replacement", "Motor capacitor test", "Pressure switch calibration",
    "Pressure tank removal", "Check valve service", "Winter storage", "Frost damage assessment",
    "Noise diagnosis", "Pressure tank refitting", "Bleeding air from the pressure tank",
    "Pressure tank troubleshooting table", "Flow rate tables", "Head loss tables", "Wiring diagram K2",
    "Wiring diagram K4", "Wiring diagram K7", "Fault codes", "Thermal overload reset", "Bearing replacement",
    "Torque values", "Spare parts list, hydraulics", "Spare parts list, electrics", "Maintenance schedule",
    "Commissioning checklist", "Warranty service procedure", "Disposal", "Index",
]
_FLOOD_MANUAL_PAGES = (4, 5, 11, 17, 22, 24)  # pressure tank pages of d12 ranked above p23
_FLOOD_MANUAL_RIGHT = 23
_N_CATALOGUE_PAGES = 60
_N_CATALOGUE_FLOOD = 13
_OOD_QUERIES = [
    "sourdough starter feeding schedule", "how to file a late tax return", "best hiking trails near lake como",
    "chess opening for absolute beginners", "symptoms of vitamin d deficiency", "train times berlin to prague",
    "how long to boil a soft egg", "lyrics of an old sea shanty", "knitting pattern for a baby blanket",
    "history of the byzantine empire", "how to tune a ukulele by ear", "cheap flights to reykjavik in march",
    "what is a roth ira", "planting tulip bulbs in autumn", "difference between alligator and crocodile",
    "how to write a cover letter", "rules of cricket for americans", "why is the sky blue",
    "marathon training plan sixteen weeks", "translate good morning into welsh", "origami crane step by step",
    "how many moons does jupiter have", "vegan lasagne without cashews", "learn basic sign language alphabet",
    "who painted the night watch", "how to remove red wine stains",
]
_FAKE_MODELS = [("Kestrel", "K9", "garden pump"), ("Orrin", "O90", "dehumidifier"),
                ("Brevik", "B8", "espresso machine"), ("Lumo", "L7", "air purifier"),
                ("Tamsin", "T2", "water heater"), ("Fenwick", "F6", "dishwasher"),
                ("Halden", "H9", "washing machine"), ("Pellow", "P4", "heat pump")]
_ODD_PARTS = ["remote control", "wall bracket", "wifi module", "child lock", "carry handle",
              "night light", "timer knob", "ionizer", "water tank lid", "noise damper"]


# ---------------------------------------------------------------------------
# corpus
# ---------------------------------------------------------------------------

class _Doc:
    __slots__ = ("key", "num", "passages", "kind", "meta")

    def __init__(self, key, kind, passages, meta=None):
        self.key = key
        self.kind = kind
        self.passages = passages  # list of text, passage N = index + 1
        self.meta = meta or {}
        self.num = 0

    def pid(self, n: int) -> str:
        return f"d{self.num}#p{n}"


def _build_docs(rng):
    """Return (docs list, lookup dict). Numbers: d3 catalogue, d9/d10 twin sheets, d12 manual."""
    docs = []
    part_no = {}
    used = set()
    for brand, model, ptype in _PRODUCTS:
        for comp in _COMPONENTS[ptype]:
            while True:
                pn = f"{_PREFIX[brand]}-{int(rng.integers(1000, 10000))}"
                if pn not in used:
                    used.add(pn)
                    break
            part_no[(model, comp)] = pn
    # the tie twins: K2 and K4 share one shaft seal part number
    part_no[("K4", "shaft seal")] = part_no[("K2", "shaft seal")]
    materials = ["EPDM rubber", "stainless steel", "glass-filled nylon", "brass", "silicone", "ceramic"]
    for brand, model, ptype in _PRODUCTS:
        for comp in _COMPONENTS[ptype]:
            pn = part_no[(model, comp)]
            others = [m for b, m, t in _PRODUCTS if t == ptype and m != model]
            old = f"{_PREFIX[brand]}-{int(rng.integers(1000, 10000))}"
            mat = materials[int(rng.integers(len(materials)))]
            pack = int(rng.integers(1, 4))
            twin = (model, comp) in (("K2", "shaft seal"), ("K4", "shaft seal"))
            p1 = (f"{brand} {model} {ptype} {comp}, part number {pn}. Genuine replacement part"
                  f"{'' if twin else ', made of ' + mat}. Sold in packs of {pack}.")
            if twin:  # identical wording apart from the model: a lexical engine scores them equal
                p1 = f"{brand} {model} {ptype} {comp}, part number {pn}. Genuine replacement part. Sold singly."
            p2 = (f"Fitting the {comp} on the {brand} {model}: isolate the unit from the mains, remove the "
                  f"service cover, swap the old {comp} for the new one and run a short test cycle.")
            p3 = (f"Compatibility: part {pn} also fits the {', '.join(others) or 'no other model'}. "
                  f"Supersedes {old}.")
            docs.append(_Doc(("spec", model, comp), "spec", [p1, p2, p3],
                             {"brand": brand, "model": model, "type": ptype, "comp": comp, "pn": pn}))
    for ptype, syms in _SYMPTOMS.items():
        models = [f"{b} {m}" for b, m, t in _PRODUCTS if t == ptype]
        brand = models[0].split()[0]
        for tech, colloquial, comp in syms:
            pn = part_no[(models[0].split()[1], comp)]
            p1 = f"Service note, {ptype}: {tech}. Observed on {' and '.join(models)}."
            p2 = (f"Diagnosis: confirm the {comp} fault with a multimeter or visual check. Remedy: fit a new "
                  f"{comp}, part {pn}, and reset the controller.")
            p3 = f"Estimated labour for {brand} units: {int(rng.integers(20, 90))} minutes. Disconnect power first."
            docs.append(_Doc(("note", ptype, tech), "note", [p1, p2, p3],
                             {"type": ptype, "tech": tech, "colloquial": colloquial, "comp": comp}))
    for brand, model, ptype in _PRODUCTS:
        comp = _COMPONENTS[ptype][int(rng.integers(5))]
        docs.append(_Doc(("faq", model), "faq", [
            f"Frequently asked questions, {brand} {model}: how often should the {comp} be checked? "
            f"Once a year, or sooner under heavy use.",
            f"Where is the serial number of my {brand} {model}? On the rating plate behind the service cover.",
        ], {"brand": brand, "model": model}))
    brands = sorted(_PREFIX)
    for i in range(40):
        b = brands[int(rng.integers(len(brands)))]
        t = _PRODUCTS[int(rng.integers(len(_PRODUCTS)))][2]
        fill = dict(b=b, t=t, y=int(rng.integers(2015, 2025)), n=int(rng.integers(2, 30)),
                    c=_CITIES[int(rng.integers(len(_CITIES)))])
        a = _FILLER_TOPICS[i % len(_FILLER_TOPICS)].format(**fill)
        docs.append(_Doc(("filler", i), "filler", [a, f"Contact {b} customer care for details ({fill['c']} office)."]))
    manual = [f"Kestrel K-series service manual, page {n + 1}: {s}. " + (
        "Close the isolating valve and drain the tank before any work on the pressure vessel."
        if "ressure tank" in s else "Refer to the diagrams for part numbers and torque values.")
        for n, s in enumerate(_MANUAL_SECTIONS)]
    manual[_FLOOD_MANUAL_RIGHT - 1] = (
        "Kestrel K-series service manual, page 23: Bleeding air from the pressure tank. Open the bleed screw on "
        "the tank top, run the pump until water flows without bubbles, then close the screw and re-check the "
        "pre-charge.")
    docs.append(_Doc(("manual",), "manual", manual))
    cat = []
    lumo_pns = [part_no[(m, c)] for b, m, t in _PRODUCTS if b == "Lumo" for c in _COMPONENTS[t]]
    for n in range(_N_CATALOGUE_PAGES):
        items = ", ".join(lumo_pns[(n + j) % len(lumo_pns)] for j in range(4))
        cat.append(f"Spare parts catalogue, page {n + 1}: filters, cartridges and seals for Lumo air purifiers "
                   f"and other appliances. Items {items}.")
    docs.append(_Doc(("catalogue",), "catalogue", cat))
    # never-indexed material: three bulletins (whole documents) ...
    bulletins = [
        ("Tamsin", "Service bulletin TS-SB-14: hydrogen sulphide odour in hot water is caused by the magnesium "
                   "anode reacting with sulphate-rich supply water; fit the aluminium-zinc anode kit.",
         "hot water smells like rotten eggs", "no-overlap"),
        ("Orrin", "Service bulletin OR-SB-3: firmware update procedure for the Orrin O40 dehumidifier, "
                  "using the service key and the USB port under the tank.",
         "how do I update the firmware on an Orrin O40 dehumidifier", "paraphrase"),
        ("Brevik", "Recall notice BV-R-22: part BV-2207 steam wand valves from batch 41 must be replaced "
                   "free of charge.",
         "BV-2207 steam wand valve recall", "keyword"),
    ]
    for i, (b, text, q, s) in enumerate(bulletins):
        docs.append(_Doc(("bulletin", i), "bulletin", [text, f"Scanned copy, {b} archive, page 2 (signatures)."],
                         {"query": q, "stratum": s}))
    # the twin sheets, the manual and the catalogue get fixed numbers; the rest a seeded permutation
    fixed = {("catalogue",): 3, ("spec", "K2", "shaft seal"): 9, ("spec", "K4", "shaft seal"): 10, ("manual",): 12}
    free = [n for n in range(1, len(docs) + 1) if n not in fixed.values()]
    perm = rng.permutation(len(free))
    j = 0
    for d in docs:
        if d.key in fixed:
            d.num = fixed[d.key]
        else:
            d.num = free[int(perm[j])]
            j += 1
    by_key = {d.key: d for d in docs}
    return docs, by_key, part_no


# ---------------------------------------------------------------------------
# queries, lanes and judgments
# ---------------------------------------------------------------------------

def _assign_roles(rng):
    roles = dict(_FIXED_ROLES)
    remaining = dict(_SLOTS)
    for r in roles.values():
        remaining[r] -= 1
    pool = [r for r, n in sorted(remaining.items()) for _ in range(n)]
    free = [f"q{i}" for i in range(1, N_QUERIES + 1) if f"q{i}" not in roles]
    assert len(pool) == len(free)
    perm = rng.permutation(len(pool))
    for q, k in zip(free, perm.tolist()):
        roles[q] = pool[k]
    return roles


def _lane_scores(np, lane, z, off):
    """Latent z -> a lane's score scale, rounded to 6 decimals."""
    if lane == "lexical":
        a, b = off
        s = a + b * z
        s = np.maximum(s, 0.25)
    else:
        s = off + 0.045 * z
        s = np.clip(s, -1.0, 1.0)
    return np.round(s, 6)


def write_demo(out_dir: str | Path, seed: int = 7) -> dict[str, Path]:
    """Write the demo data set into ``out_dir`` (created if needed); return ``{role: path}``.

    The roles are the keys of :data:`FILES`. The same seed gives byte-identical files.
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)

    docs, by_key, _part_no = _build_docs(rng)
    not_indexed: set[str] = set()
    for d in docs:
        if d.kind == "bulletin":
            not_indexed.update(d.pid(n) for n in range(1, len(d.passages) + 1))
    indexed = [d.pid(n) for d in docs for n in range(1, len(d.passages) + 1) if d.pid(n) not in not_indexed]
    texts = {d.pid(n): t for d in docs for n, t in enumerate(d.passages, 1)}
    specs = [d for d in docs if d.kind == "spec"]
    notes = [d for d in docs if d.kind == "note"]
    manual = by_key[("manual",)]
    catalogue = by_key[("catalogue",)]
    bulletins = [d for d in docs if d.kind == "bulletin"]
    roles = _assign_roles(rng)

    # two spec sheets get a fourth, never-indexed passage (a scanned exploded diagram)
    partial_sheets = [specs[int(i)] for i in rng.choice(len(specs), size=2, replace=False)
                      if specs[int(i)].num not in (9, 10)]
    while len(partial_sheets) < 2:  # pragma: no cover - only if the draw hit a twin
        partial_sheets.append(next(s for s in specs if s.num not in (9, 10) and s not in partial_sheets))
    for d in partial_sheets:
        d.passages.append(f"Exploded diagram of the {d.meta['brand']} {d.meta['model']} {d.meta['comp']} "
                          f"assembly (scanned page, text layer missing).")
        pid = d.pid(len(d.passages))
        texts[pid] = d.passages[-1]
        not_indexed.add(pid)

    indexed_arr = np.array(indexed)
    group_of = {p: p.split("#", 1)[0] for p in texts}
    siblings: dict[str, list[str]] = {}
    for p in indexed:
        siblings.setdefault(group_of[p], []).append(p)

    qtext: dict[str, str] = {}
    qrels: dict[str, dict[str, int]] = {}
    lists: dict[str, dict[str, tuple[list[str], np.ndarray]]] = {lane: {} for lane in LANES}

    qids = [f"q{i}" for i in range(1, N_QUERIES + 1)]
    ood_pool = [int(i) for i in rng.permutation(len(_OOD_QUERIES))]
    lone_ood = None

    for q in qids:
        split, stratum = roles[q]
        rel: dict[str, int] = {}
        forced: dict[str, list[tuple[str, float]]] = {}
        drop: dict[str, set[str]] = {lane: set() for lane in LANES}
        judged0: list[str] = []
        bare: set[str] = set()
        # ---- query text and relevant passages ------------------------------------
        if stratum in ("keyword", "paraphrase", "no-overlap", "unjudged"):
            kind = stratum if stratum != "unjudged" else "paraphrase"
            if q == SHOWCASE["tie"]:
                d = by_key[("spec", "K4", "shaft seal")]
                twin = by_key[("spec", "K2", "shaft seal")]
                qtext[q] = f"{d.meta['pn']} shaft seal Kestrel K4"
                rel = {d.pid(1): 3, d.pid(3): 1}
                forced["lexical"] = [(d.pid(1), 4.2), (twin.pid(1), 4.2)]
                judged0.append(twin.pid(1))
            elif q == SHOWCASE["dilution"]:
                d = by_key[("spec", "K7", "check valve")]
                looks = [by_key[("spec", "K2", "check valve")], by_key[("spec", "K4", "check valve")],
                         by_key[("spec", "F3", "inlet valve")]]
                qtext[q] = f"{d.meta['pn']} check valve"
                rel = {d.pid(1): 3}
                forced["lexical"] = [(d.pid(1), 4.8)] + [(x.pid(1), 3.6 - 0.15 * i) for i, x in enumerate(looks)]
                forced["dense"] = [(x.pid(1), 4.6 - 0.2 * i) for i, x in enumerate(looks)]
                drop["dense"].add(d.pid(1))
                bare.add("dense")  # dense sees none of the answer's passages; no catalogue pages anywhere
                judged0 += [x.pid(1) for x in looks]
            elif q == SHOWCASE["flood_cap_hurts"]:
                qtext[q] = "air trapped in a Kestrel pump pressure vessel, how to get it out"
                right = manual.pid(_FLOOD_MANUAL_RIGHT)
                rel = {right: 3}
                for lane in LANES:
                    pages = [manual.pid(n) for n in _FLOOD_MANUAL_PAGES]
                    order = rng.permutation(len(pages))
                    forced[lane] = [(pages[int(i)], 4.7 - 0.12 * r) for r, i in enumerate(order)]
                    forced[lane].append((right, 3.85))
                judged0 += [manual.pid(n) for n in _FLOOD_MANUAL_PAGES]
            elif q == SHOWCASE["flood_cap_helps"]:
                d = by_key[("spec", "L3", "HEPA filter")]
                qtext[q] = "Lumo L3 HEPA filter part number"
                rel = {d.pid(1): 3, d.pid(3): 1}
                pages = [catalogue.pid(n) for n in rng.choice(_N_CATALOGUE_PAGES, size=_N_CATALOGUE_FLOOD,
                                                              replace=False) + 1]
                for lane in LANES:
                    order = rng.permutation(len(pages))
                    forced[lane] = [(pages[int(i)], 5.0 - 0.1 * r) for r, i in enumerate(order)]
                    forced[lane].append((d.pid(1), 3.6))
                    drop[lane].add(d.pid(3))
                judged0 += pages[:5]
            elif q in (SHOWCASE["not_indexed"], SHOWCASE["not_indexed_2"], SHOWCASE["not_indexed_dev"]):
                b = next(b for b in bulletins if b.meta["stratum"] == kind)
                qtext[q] = b.meta["query"]
                rel = {b.pid(1): 3}
            elif kind == "keyword":
                d = specs[int(rng.integers(len(specs)))]
                form = int(rng.integers(3))
                m = d.meta
                qtext[q] = [f"{m['pn']}", f"{m['pn']} {m['comp']}", f"part {m['pn']} for {m['brand']}"][form]
                rel = {d.pid(1): 3}
                if rng.random() < 0.4:
                    rel[d.pid(3)] = 1
            elif kind == "paraphrase":
                if q in (SHOWCASE["partly_not_indexed"], SHOWCASE["partly_not_indexed_dev"]):
                    d = partial_sheets[0 if split == "test" else 1]
                else:
                    d = specs[int(rng.integers(len(specs)))]
                m = d.meta
                form = int(rng.integers(3))
                qtext[q] = [f"how do I replace the {m['comp']} on a {m['brand']} {m['model']}",
                            f"swapping {m['comp']} {m['brand']} {m['model']} instructions",
                            f"{m['brand']} {m['model']} {m['comp']} fitting guide"][form]
                rel = {d.pid(2): 3}
                if len(d.passages) == 4:
                    rel[d.pid(4)] = 2
                elif rng.random() < 0.5:
                    rel[d.pid(1)] = 1
            else:  # no-overlap
                d = notes[int(rng.integers(len(notes)))]
                qtext[q] = d.meta["colloquial"]
                rel = {d.pid(1): 3, d.pid(2): 2}
            if stratum == "unjudged":
                rel_for_lanes, rel = rel, {}
            else:
                rel_for_lanes = rel
            lane_kind = kind
        elif stratum == "negative":
            brand, model, ptype = _FAKE_MODELS[int(rng.integers(len(_FAKE_MODELS)))]
            if rng.random() < 0.5:
                comp = _ODD_PARTS[int(rng.integers(len(_ODD_PARTS)))]
            else:
                comp = _COMPONENTS[ptype][int(rng.integers(5))]
            qtext[q] = [f"{brand} {model} {comp}", f"{comp} for {brand} {model} {ptype}",
                        f"part number of {brand} {model} {comp}"][int(rng.integers(3))]
            rel_for_lanes = {}
            lane_kind = "negative"
        else:  # negative-ood
            qtext[q] = _OOD_QUERIES[ood_pool.pop()]
            rel_for_lanes = {}
            lane_kind = "ood"
            if lone_ood is None:
                lone_ood = q

        # ---- lanes --------------------------------------------------------------
        # each lane ranks its own candidates: some shared with the other lane, most not
        relset = set(rel_for_lanes)
        relgroups = {group_of[p] for p in rel_for_lanes}
        sib = sorted({s for g in relgroups for s in siblings.get(g, []) if s not in relset})
        n_shared = 0 if q == SHOWCASE["dilution"] else 30
        drawn = indexed_arr[rng.choice(len(indexed_arr), size=n_shared + 260, replace=False)].tolist()
        skip = relset.union(sib)
        drawn = [c for c in drawn if c not in skip]
        t_all = rng.standard_normal(len(drawn))
        n_own = (len(drawn) - n_shared) // 2
        own = {"lexical": range(n_shared, n_shared + n_own),
               "dense": range(n_shared + n_own, n_shared + 2 * n_own)}
        # a query's difficulty, shared by both lanes: a hard query is hard for every system,
        # so per-query scores correlate across lanes and pairing narrows the interval
        hard = _DIFFICULTY.get(lane_kind, 0.0) * float(rng.standard_normal())
        for lane in LANES:
            if lane == "dense" and q in (SHOWCASE["missing_from_dense"], SHOWCASE["missing_from_dense_dev"]):
                continue
            sel = list(range(n_shared)) + list(own[lane])
            cand = [drawn[i] for i in sel]
            t = t_all[sel]
            z = 0.75 * t + 0.66 * rng.standard_normal(len(cand))
            z[:n_shared] -= _CONFUSION * hard  # a hard query's look-alikes score high in both lanes
            docs_l = list(cand)
            zl = list(z.tolist())
            if lane_kind in _LANE_MODEL[lane] and lane not in bare:
                p_ret, mu = _LANE_MODEL[lane][lane_kind]
                mu += _SPLIT_SHIFT.get((split, lane_kind), {}).get(lane, 0.0) + hard
                for p, g in rel_for_lanes.items():
                    if p in not_indexed or rng.random() >= p_ret:
                        continue
                    docs_l.append(p)
                    zl.append(mu + 0.3 * (g - 2) + 0.7 * float(rng.standard_normal()))
                found = any(p in docs_l for p in rel_for_lanes)
                for sp in sib:
                    if found or rng.random() < 0.5:
                        docs_l.append(sp)
                        zl.append(mu - 0.8 + 0.8 * float(rng.standard_normal()))
                if lane_kind == "keyword" and not bare:  # catalogue pages share part numbers with every keyword query
                    boost = 1.6 if lane == "lexical" else 0.4
                    for c in rng.choice(_N_CATALOGUE_PAGES, size=4, replace=False).tolist():
                        p = catalogue.pid(c + 1)
                        if p not in docs_l:
                            docs_l.append(p)
                            zl.append(boost + 0.5 * float(rng.standard_normal()))
            zarr = np.array(zl)
            if forced.get(lane) or drop[lane]:
                fdocs = {p for p, _ in forced.get(lane, [])}
                keep = [i for i, p in enumerate(docs_l) if p not in fdocs and p not in drop[lane]]
                docs_l = [docs_l[i] for i in keep]
                zarr = zarr[keep]
                if forced.get(lane):
                    lo = min(v for _, v in forced[lane])
                    shift = max(0.0, float(zarr.max()) - (lo - 0.3))
                    zarr = zarr - shift
                    docs_l = [p for p, _ in forced[lane]] + docs_l
                    zarr = np.concatenate([np.array([v for _, v in forced[lane]]), zarr])
            order = np.argsort(-zarr, kind="stable")
            depth = DEPTH
            if lane == "lexical" and lane_kind == "ood":  # lexical finds few shared terms
                depth = 1 if q == lone_ood else int(rng.integers(3, 40))
            order = order[:depth]
            zsel = zarr[order]
            dsel = [docs_l[i] for i in order.tolist()]
            if lane == "lexical":
                a = {"keyword": 12.5, "paraphrase": 11.0, "no-overlap": 7.0, "negative": 11.0,
                     "ood": 4.5}[lane_kind] + float(rng.normal(0, 1.2))
                off: float | tuple[float, float] = (a, float(rng.uniform(1.4, 2.2)))  # (BM25-like base, spread)
            else:
                off = (0.44 if lane_kind == "ood" else 0.60) + float(rng.normal(0, 0.015))
            s = _lane_scores(np, lane, zsel, off)
            # injected exact ties (never on the showcases, whose orders are exact by design)
            special = q in _FIXED_ROLES
            if not special and len(s) > 12 and rng.random() < 0.3:
                i = int(rng.integers(0, 9)) if rng.random() < 0.6 else int(rng.integers(10, len(s) - 2))
                s[i + 1] = s[i]
                if rng.random() < 0.25:
                    s[i + 2] = s[i]
            lists[lane][q] = (dsel, s)

        # ---- judgments ----------------------------------------------------------------
        if stratum == "unjudged":
            continue
        tops: list[str] = []
        for lane in LANES:
            if q in lists[lane]:
                tops += [p for p in lists[lane][q][0][:10] if p not in rel and p not in tops]
        if stratum == "negative-ood":
            tops = [p for p in lists["dense"][q][0][:10]]
            n0 = int(rng.integers(2, 4))
        elif stratum == "negative":
            n0 = int(rng.integers(3, 7))
        else:
            n0 = int(rng.integers(2, 6))
        pick = sorted(rng.choice(len(tops), size=min(n0, len(tops)), replace=False).tolist())
        j = dict(rel)
        for p in judged0 + [tops[i] for i in pick]:
            j.setdefault(p, 0)
        qrels[q] = j

    # ---- write ---------------------------------------------------------------------
    paths = {role: out / name for role, name in FILES.items()}
    qnum = lambda q: int(q[1:])  # noqa: E731

    for lane in LANES:
        rows = []
        for q in sorted(lists[lane], key=qnum):
            dsel, s = lists[lane][q]
            # score descending, ties in ascending byte order (the reverse of trec_eval;
            # doc ids are ASCII, so code-point order is byte order)
            idx = np.lexsort((np.array(dsel), -s)).tolist()
            sc = s.tolist()
            rows += [f"{q} Q0 {dsel[i]} {r} {sc[i]:.6f} {lane}\n" for r, i in enumerate(idx, 1)]
        _write(paths[lane], "".join(rows))

    def qrels_text(split):
        rows = []
        for q in sorted(qrels, key=qnum):
            if roles[q][0] != split:
                continue
            for p in sorted(qrels[q], key=lambda x: x.encode()):
                rows.append(f"{q} 0 {p} {qrels[q][p]}\n")
        return "".join(rows)

    _write(paths["qrels_dev"], qrels_text("dev"))
    _write(paths["qrels_test"], qrels_text("test"))
    _write(paths["qrels_ood"], qrels_text("ood"))
    _write(paths["strata"], "".join(f"{q}\t{roles[q][1]}\n" for q in qids if roles[q][0] != "none"))
    _write(paths["corpus"], "".join(f"{p}\t{texts[p]}\n" for p in _sorted_ids(indexed)))
    _write(paths["docs"], "".join(f"{p}\t{texts[p]}\n" for p in _sorted_ids(texts)))
    _write(paths["queries"], "".join(f"{q}\t{qtext[q]}\n" for q in qids))
    _write(paths["gates"], json.dumps(_GATES, indent=2) + "\n")
    _write(paths["readme"], _readme(seed, len(indexed), len(not_indexed), len(docs)))
    import hashlib

    digests = {FILES[r]: hashlib.sha256(Path(p).read_bytes()).hexdigest() for r, p in paths.items() if r != "marker"}
    _write(paths["marker"], json.dumps({"synthetic": True, "generator": "rankscope demo", "seed": seed,
                                        "files": dict(sorted(digests.items())), "showcase": SHOWCASE}, indent=2) + "\n")
    return paths


def _sorted_ids(ids):
    def key(p):
        d, n = p.split("#p")
        return int(d[1:]), int(n)
    return sorted(ids, key=key)


def _write(path: Path, text: str) -> None:
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)


_GATES = [
    {"path": "lanes.rrf.doc.hit@5", "op": ">=", "threshold": 0.55},
    {"path": "lanes.rrf.doc.hit@5", "op": ">=", "against": "lanes.lexical.doc.hit@5"},
    {"path": "lanes.rrf.doc.hit@1", "op": ">=", "against": "lanes.dense.doc.hit@1"},
    {"path": "lanes.dense.doc.hit@10", "op": ">=", "threshold": 0.55},
    {"path": "lanes.lexical.doc.hit@1", "op": ">=", "threshold": 0.5},
]


def _readme(seed: int, n_indexed: int, n_not_indexed: int, n_docs: int) -> str:
    s = SHOWCASE
    return f"""rankscope demo data set -- SYNTHETIC
=====================================

Every file in this folder is synthetic: made up by rankscope's own generator
(rankscope_tui/demo.py, write_demo(seed={seed})) with numpy's default_rng. The
brands, products, part numbers, manuals and queries are invented; no real
system produced these rankings. The same seed writes the same bytes.

Domain: search over a spare-parts and service-manual site for invented
appliance brands. {n_docs} documents, {n_indexed} indexed passages; doc ids are
d<N>#p<M> (passage M of document d<N>; the group is the part before '#').

Files
-----
lexical.run            TREC run (qid Q0 docid rank score tag), a BM25-like lane, depth {DEPTH}.
                       It fails the no-overlap stratum. Out-of-domain queries get
                       short lists (few shared terms); one gets a single hit.
dense.run              TREC run, an embedding-like lane (cosine-like scores), depth {DEPTH}.
                       It fails the keyword stratum (part numbers). {s['missing_from_dense']}
                       (test) and {s['missing_from_dense_dev']} (dev) are judged but absent here.
qrels-dev.txt          TREC qrels (qid 0 docid grade, grades 0..3) for calibration.
qrels-test.txt         TREC qrels for the report; its queries are disjoint from dev.
                       Both hold positives and in-domain negatives (grade 0 only:
                       questions about products that do not exist; no answer is in
                       the corpus).
qrels-ood-negatives.txt  out-of-domain negatives (grade 0 only): questions from
                       other domains. Their dense top scores are clearly lower than
                       the in-domain negatives', so a floor fitted on them looks
                       safe and accepts most in-domain negatives.
strata.tsv             qid<TAB>label: keyword, paraphrase, no-overlap, negative,
                       negative-ood.
corpus.tsv             docid<TAB>text of every indexed passage. {n_not_indexed} passages are
                       deliberately missing (three bulletins that were never
                       indexed, and two scanned diagram pages), so attribution's
                       not_indexed label and the coverage line are non-zero.
docs.tsv               docid<TAB>text of every passage, indexed or not (drill-down).
queries.tsv            qid<TAB>text of every query in the runs.
gates.json             rules (SPEC section 8) to judge the test report with. Written
                       so that on this data the point and interval columns disagree.
rankscope-synthetic.json  marks these files as synthetic (sha256 of each): reports
                       computed on them say "synthetic": true.

Lessons, by query id (all in qrels-test.txt unless noted)
--------------------------------------------------------
exact score ties       {s['tie']}: lexical scores d10#p1 (relevant) and d9#p1 equal at
                       rank 1; trec_eval orders d9#p1 first (doc id descending as
                       bytes), so hit@1 is 0. Ties are written in the opposite order,
                       so file order and the rank column are wrong on every tie; many
                       other queries carry ties, often inside the top 10.
RRF dilution           {s['dilution']}: lexical has the answer at rank 1; dense ranks three
                       look-alikes first, which lexical has at 2-4; RRF (k=60) puts the
                       answer at rank 4.
flooding group         {s['flood_cap_hurts']}: six pages of the service manual d12 rank above its
                       right page d12#p{_FLOOD_MANUAL_RIGHT} (rank 7); --cap 5 cuts it,
                       --document-first keeps it.
                       {s['flood_cap_helps']}: thirteen pages of the parts catalogue d3 rank above
                       the right spec sheet (rank 14); --cap 5 lifts it to rank 6,
                       --document-first keeps the flood on top.
missing from a lane    {s['missing_from_dense']} (test), {s['missing_from_dense_dev']} (dev): absent from dense.run.
not indexed            {s['not_indexed']}, {s['not_indexed_2']} (test), {s['not_indexed_dev']} (dev): no relevant passage
                       is in the corpus. {s['partly_not_indexed']} (test), {s['partly_not_indexed_dev']} (dev): one of
                       two relevant passages is missing.
unjudged lane queries  {', '.join(s['unjudged'])}: in both runs, in no qrels file.
strata                 lexical misses no-overlap queries, dense misses keyword ones.
negatives              in-domain vs out-of-domain: see qrels-ood-negatives.txt above.
dev/test               convex fusion weights fitted on dev transfer to test; fitting
                       them on test scores higher on test (optimism).
pairing                a query hard for one lane is hard for the other, so the paired
                       compare interval is narrower than the unpaired one.

Try
---
rankscope calibrate --lane lexical.run --lane dense.run --qrels qrels-dev.txt \\
    --gate-on dense --ood-negatives qrels-ood-negatives.txt --out thresholds.json
rankscope evaluate --lane lexical.run --lane dense.run --qrels qrels-test.txt \\
    --thresholds thresholds.json --gate-on dense --ood-negatives qrels-ood-negatives.txt \\
    --strata strata.tsv --blind no-overlap --corpus corpus.tsv --group-sep '#' \\
    --cap 5 --document-first --out report.json
rankscope verdict --report report.json --gates gates.json
rankscope tui          # with no inputs, opens this data set (texts: queries.tsv, docs.tsv)
"""
