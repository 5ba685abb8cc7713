"""Judgments and ranking: qrels as columns, ids as integer codes, hits in trec_eval's order.

``judgments`` holds the qrels as columns and the query classes they define;
``encoding`` turns id strings into integer codes; ``ranks`` orders each lane's hits by
trec_eval's rule (score descending, doc id descending on ties), cuts at depth and
numbers ranks and groups. Everything above this room reads ranked lanes, never raw rows.
"""
