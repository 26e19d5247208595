"""For contributors: keeping the course's notebooks, links and reports right.

- ``launch``: Colab and Binder links, Colab metadata and the setup cell, built from the one configured
  repository and ref (``pyproject.toml``'s ``[tool.tfperf.launch]``).
- ``nblint``: named rules every notebook follows.
- ``notebooks``: ``python -m tfperf.authoring normalize | release | check | lint | launch``.
- ``report``: ``make_report()``: every chapter's reference notebook run on this device, and one
  Markdown report of what it measured (machine, printed measurements, plots, records, speed-check ratios).
"""
