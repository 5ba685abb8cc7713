"""Attribution: which input lane surfaced each positive query's answer (SPEC §4).

``misses`` labels every positive query by the lanes that found a relevant document
within the window, counts the labels, and finds the blind spots fusion cannot mend.
"""
