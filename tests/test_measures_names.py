"""Issue 15, must show 4: every name a user types parses to one canonical key (one
parametrised test per source tool, listing every spelling), and every refused spelling
has its error line tested (one line, the difference stated, our measure named)."""

from __future__ import annotations

import pytest

from rankscope_tui import cli
from rankscope_tui.kernel.errors import InputError
from rankscope_tui.kernel.measures import REGISTRY, MetricKey, canonical_key, parse_metrics

IR_MEASURES = {
    "AP": "ap", "AP@100": "ap@100", "RR": "rr", "RR@10": "rr@10", "nDCG": "ndcg", "nDCG@10": "ndcg@10",
    "P@10": "p@10", "R@100": "recall@100", "Rprec": "rprec", "Bpref": "bpref", "Success@5": "hit@5",
    "P(rel=2)@10": "p(rel=2)@10", "RR(rel=2)@10": "rr(rel=2)@10", "RR(rel=2)": "rr(rel=2)", "AP(rel=2)": "ap(rel=2)",
    "AP(rel=2)@10": "ap(rel=2)@10", "R(rel=2)@100": "recall(rel=2)@100", "Rprec(rel=2)": "rprec(rel=2)",
    "Bpref(rel=2)": "bpref(rel=2)", "Success(rel=3)@1": "hit(rel=3)@1",
}
TREC_EVAL = {
    "map": "ap", "map_cut.100": "ap@100", "map_cut_100": "ap@100", "recip_rank": "rr", "ndcg": "ndcg",
    "ndcg_cut.10": "ndcg@10", "ndcg_cut_10": "ndcg@10", "P.10": "p@10", "P_10": "p@10", "recall.100": "recall@100",
    "recall_100": "recall@100", "success.5": "hit@5", "success_5": "hit@5", "Rprec": "rprec", "bpref": "bpref",
}
RANX = {
    "map": "ap", "map@100": "ap@100", "mrr": "rr", "mrr@10": "rr@10", "ndcg@10": "ndcg@10",
    "ndcg_burges@10": "ndcg_exp@10", "precision@10": "p@10", "recall@100": "recall@100", "hit_rate@5": "hit@5",
    "r-precision": "rprec", "bpref": "bpref",
}
MTEB = {
    "ndcg_at_10": "ndcg@10", "map_at_100": "ap@100", "recall_at_100": "recall@100", "precision_at_10": "p@10",
    "mrr_at_10": "rr@10",
}
RANKSCOPE = {
    "hit@1": "hit@1", "success@10": "hit@10", "recall@10": "recall@10", "p@10": "p@10", "rr": "rr", "rr@10": "rr@10",
    "ndcg": "ndcg", "ndcg@10": "ndcg@10", "judged@10": "judged@10", "ap": "ap", "ap@10": "ap@10", "rprec": "rprec",
    "bpref": "bpref", "ndcg_exp@10": "ndcg_exp@10", "calibrated_recall@20": "calibrated_recall@20",
    "p(rel=2)@10": "p(rel=2)@10", "rr(rel=2)@10": "rr(rel=2)@10",
}


@pytest.mark.parametrize("name, key", IR_MEASURES.items())
def test_ir_measures_names(name, key):
    assert canonical_key(name) == key


@pytest.mark.parametrize("name, key", TREC_EVAL.items())
def test_trec_eval_and_pytrec_eval_names(name, key):
    assert canonical_key(name) == key


@pytest.mark.parametrize("name, key", RANX.items())
def test_ranx_names(name, key):
    assert canonical_key(name) == key


@pytest.mark.parametrize("name, key", MTEB.items())
def test_mteb_names(name, key):
    assert canonical_key(name) == key


@pytest.mark.parametrize("name, key", RANKSCOPE.items())
def test_canonical_keys_parse_to_themselves(name, key):
    assert canonical_key(name) == key
    assert canonical_key(key) == key  # canonical keys are fixed points


def test_every_registered_spelling_parses_to_its_own_measure():
    for kind, m in REGISTRY.items():
        for n in m.names:
            typed = n.shown.replace("_k", "_10").replace("@k", "@10").replace(".k", ".10")
            assert parse_metrics(typed)[0].kind == kind, typed


def test_two_spellings_of_one_measure_are_one_key():
    keys = [k.key for k in parse_metrics("ndcg_cut.10,nDCG@10,ndcg_at_10,map,AP,recip_rank,mrr")]
    assert keys == ["ndcg@10", "ap", "rr", "judged@10"]


def test_existing_keys_are_unchanged():
    assert parse_metrics("rr, p@10") == [MetricKey("rr", None), MetricKey("p", 10)]
    assert [k.key for k in parse_metrics("hit@1,recall@100,ndcg@10")] == ["hit@1", "recall@100", "ndcg@10", "judged@10"]


# ------------------------------------------------------------------ refused spellings: one error line each

REFUSED = {
    "Judged@10": ("min(k, retrieved)", "judged@10"),
    "unj.10": ("unj.k", "judged@10"),
    "nDCG(rel=2)@10": ("takes no rel=",),
    "judged(rel=2)@10": ("takes no rel=",),
    "ndcg_burges(rel=2)@10": ("takes no rel=",),
    "nDCG(dcg=exp-log2)@10": ("only parameter", "ndcg_exp@k"),
    "P(rel=0)@10": ("at least 1",),
    "recip_rank@10": ("takes no cutoff", "rr@10"),
    "Rprec@10": ("takes no cutoff",),
    "bpref@5": ("takes no cutoff",),
    "map_cut": ("needs a cutoff", "map_cut.10"),
    "P": ("needs a cutoff",),
    "p@0": ("at least 1",),
    "ndcg_cutt.10": ("unknown metric", "closest known name: ndcg_cut.10"),
    "mrrr@10": ("unknown metric", "closest known name: mrr@10"),
    "ndcg@x": ("unknown metric", "closest known name"),
    "alpha_nDCG@20": ("unknown metric",),
    "P.5,10": ("bare cutoff", "P.5,P.10"),
}


@pytest.mark.parametrize("name, needles", REFUSED.items())
def test_refused_names_raise_one_input_error(name, needles):
    with pytest.raises(InputError) as e:
        parse_metrics(name)
    text = str(e.value)
    assert "\n" not in text and text.startswith("--metrics: ")
    for n in needles:
        assert n in text, (n, text)


@pytest.mark.parametrize("name", ["Judged@10", "nDCG(rel=2)@10", "ndcg_cutt.10"])
def test_refused_name_on_the_command_line_is_one_error_line(tmp_path, capsys, name):
    (tmp_path / "r.run").write_text("q Q0 a 1 1.0 t\n")
    (tmp_path / "q.txt").write_text("q 0 a 1\n")
    out = tmp_path / "out.json"
    code = cli.main(["evaluate", "--lane", str(tmp_path / "r.run"), "--qrels", str(tmp_path / "q.txt"),
                     "--metrics", f"ndcg@10,{name}", "--out", str(out), "--resamples", "0"])
    err = capsys.readouterr().err
    assert code == 2
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("rankscope: error: --metrics: "), err
    assert name in lines[0] and "Traceback" not in err
    assert not out.exists()


def test_readme_measures_table_lists_every_accepted_spelling():
    from pathlib import Path

    from rankscope_tui.kernel.measures import known_spellings

    text = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    section = text.split("## Measures", 1)[1].split("\n## ", 1)[0]
    missing = [s for s in known_spellings() if f"`{s}`" not in section]
    assert not missing, missing
    for kind in REGISTRY:
        assert f"`{kind}" in section, kind


def test_every_example_in_the_metrics_help_is_a_measure():
    """The names `--metrics --help` offers as examples parse (a renamed measure cannot
    leave a stale example behind)."""
    import re

    from rankscope_tui.commands import build_parser

    sub = next(a for a in build_parser()._actions if a.dest == "command").choices["evaluate"]
    text = next(a.help for a in sub._actions if a.dest == "metrics")
    names = re.findall(r"[a-z_]+(?:\(rel=\d+\))?(?:@\d+)?", text.split("(also")[0].split("e.g.")[1])
    names += re.findall(r"[a-z_]+(?:\(rel=\d+\))?(?:@\d+)?", text.split("(also")[1].split(", and")[0])
    assert len(names) == 10, names
    from rankscope_tui.kernel.measures import parse_metrics

    # (parse_metrics adds judged@10 after them: ndcg brings its judged share)
    assert [m.key for m in parse_metrics(",".join(names))][:10] == [
        "ndcg@10", "rr", "p@10", "recall@100", "ap", "rprec", "bpref", "ndcg", "rr@10", "p(rel=2)@10"]
