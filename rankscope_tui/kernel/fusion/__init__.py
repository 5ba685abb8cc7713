"""Fusion: reciprocal-rank and convex fusion of ranked lanes, and their calibration.

``methods`` holds the fusion rules (RRF, min-max convex), the weight grid and what a
fused lane dilutes; ``rrf_at_k`` the fused lane at one k (the dashboard's slider);
``calibration`` convex weights fitted on one split and scored on another.
"""
