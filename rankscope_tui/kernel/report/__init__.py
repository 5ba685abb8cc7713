"""Report: the payloads (report.json as a dict), strict JSON text and atomic output.

``payload`` builds and reads report.json (schema ``rankscope.report/1``);
``json_text`` formats strict JSON (no NaN) column by column; ``output`` checks output
paths before any work and writes all-or-nothing; ``figures`` holds the numbers behind
each figure; ``caveats`` says which flags a table marks beside a number (the small-sample
dagger) and which mean of a column is its best; ``tidy`` names the tidy tables' columns,
once for every face; ``run_file`` writes a run made by asking a retriever with its sidecar.
"""
