"""Judgments: how far two sets of labels for the same (query, doc) pairs agree.

``pairs`` (the pairs two qrels both judge, and the rule for grades on one scale),
``kappa`` (Cohen's κ and weighted κ over a confusion matrix, with a bootstrap over
queries), ``rank_correlation`` (Kendall's τ and τ_AP between two orders of systems) and
``ppi`` (a prediction-powered mean: cheap labels everywhere, corrected on a random
subset labelled by the reference). These modules take qrels as read and arrays of
per-query values; they never load a run or a workspace.
"""
