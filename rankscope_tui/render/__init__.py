"""The output layer: the human renderings (text, markdown, LaTeX, CSV) of every command's payload.

Renderers take payload dicts or the kernel's result objects, never a workspace; they
compute no number, they only lay numbers out. The kernel never imports this package.
"""
