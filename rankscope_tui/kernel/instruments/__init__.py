"""Instruments: what each command computes, over one workspace.

``evaluate`` (lanes x measures with intervals, strata, attribution, fusion, gate),
``compare`` (paired comparisons and the verdict), ``calibrate`` (thresholds.json),
``diff`` (two reports), ``rules`` (pre-registered rules over a report) and
``goldens`` (reference vectors).
"""
