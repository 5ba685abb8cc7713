"""Reusable dashboard widgets: the k slider, the view bar, tables, dialogs, formatting."""
