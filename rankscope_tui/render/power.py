"""What a comparison could establish, as lines under its table: the family's false-positive
chance, and per row the minimum detectable effect, the randomization test's floor and the
sample a target difference needs (``kernel.statistics.power`` computes every number)."""

from __future__ import annotations

from typing import Any


def _p(x: float) -> str:
    return f"{x:.4g}"


def family_line(result: Any) -> str | None:
    """The family's false-positive chance beside J; None without a tested family. With
    ``--reuse-correct`` J counts the earlier logged rows folded in."""
    settings = result.settings_dict()
    fam = settings["family_false_positive"]
    J = fam["family_size"]
    if not J:
        return None
    earlier = settings.get("earlier_tests", 0)
    size = f"J = {J}" if not earlier else f"J = {J} ({result.family_size} in this call + {earlier} logged earlier)"
    return (f"family of {size} test{'s' if J != 1 else ''} at α = {_p(fam['alpha'])}: uncorrected, the chance of at least "
            f"one false \"established\" is 1 − (1 − α)^J = {fam['uncorrected']:.3f}; {fam['holds']}")


def exploratory_family_line(result: Any) -> str | None:
    """A planned call's exploratory rows, corrected apart: their own J and false-positive chance."""
    fam = result.settings_dict().get("exploratory_family_false_positive")
    if not fam or not fam["family_size"]:
        return None
    J = fam["family_size"]
    return (f"exploratory rows (beyond the plan), corrected apart as their own family of J = {J} at "
            f"α = {_p(fam['alpha'])}: uncorrected 1 − (1 − α)^J = {fam['uncorrected']:.3f}; {fam['holds']}; "
            "never called established")


def row_line(row: Any) -> str | None:
    """One row's MDE, randomization floor and the sample its target needs."""
    pw = row.power
    if pw is None:
        return None
    d = pw.as_dict()
    tag = f"{row.candidate} vs {row.baseline} on {row.metric}"
    unit = pw.sampled
    parts = []
    if pw.mde is not None:
        parts.append(f"with n = {pw.n} {unit} and sd = {pw.sd:.4f}, Δ ≥ {pw.mde:.4f} would be established with "
                     f"{pw.power:.0%} power at α = {_p(pw.alpha)} ({d['approximation']})")
    else:
        parts.append(f"no detectable effect: {d.get('mde_reason', 'not computed')}")
    if pw.randomization_floor is not None:
        floor = (f"randomization floor p = {_p(pw.randomization_floor)} (n_nonzero = {row.n_nonzero}, "
                 f"B = {row.resamples:,})")
        if pw.resolvable is False:
            floor += f" > α = {_p(pw.alpha)}: unresolvable, even a perfect result could not be established"
        parts.append(floor)
    if pw.target_delta is not None:
        what = "--min-delta" if pw.target_from == "min_delta" else "observed"
        if pw.needed is not None:
            parts.append(f"Δ = {pw.target_delta:.4f} ({what}) needs about {pw.needed:,} {unit}")
        else:
            parts.append(f"Δ = {pw.target_delta:.4f} ({what}): {d.get('needed_reason', 'not computed')}")
    return f"{tag}: " + "; ".join(parts)


def power_lines(result: Any) -> list[str]:
    """The family line, then one line per row (``result``: a ``verdict.CompareResult``)."""
    lines = [family_line(result), exploratory_family_line(result)] + [row_line(r) for r in result.rows]
    return [x for x in lines if x]
