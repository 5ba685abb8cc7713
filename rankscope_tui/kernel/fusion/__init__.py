"""Fusion: reciprocal-rank and convex fusion of ranked lanes, and their calibration.

``methods`` holds the fusion rules (RRF, min-max convex, and ``fuse`` for every other
method), the weight grid and what a fused lane dilutes; ``combine`` the other methods'
formulas and normalisations (CombSUM/MNZ/..., Borda, ISR, weighted RRF and sums);
``rrf_at_k`` the fused lane at one k (the dashboard's slider); ``calibration`` convex
weights (and any method's) fitted on one split and scored on another.
"""
