"""Statistics: intervals, the resampling stream, paired tests, multiplicity and the verdict.

``intervals`` (Wilson, Wald, rule of three, percentile and BCa bounds), ``resampling``
(the draws of one seeded generator, read fast), ``paired`` and ``randomization`` (one
pair's statistics and its sign-flip test), ``multiplicity`` (Holm, Bonferroni),
``tukey`` (many systems at once), ``units`` (several rows per unit), ``seeds``
(retraining spread) and ``verdict`` (the one algorithm over a family of rows).
These modules take arrays of per-query values; they never read a file or a workspace.
"""
