"""The instructor's Jupyter server (``make instructor``): every Formgrader link opens in JupyterLab.

Formgrader used as its own page (``/formgrader``) links an assignment's folders as
``/tree/autograde/../notebooks/<assignment>`` (nbgrader's ``linkTo``). Notebook 7 serves ``/tree/``,
and its page takes any path with a ``/notebooks/`` segment for a notebook to open (its router's
pattern ``/(notebooks|edit)/(.*)`` is not anchored; jupyter/notebook#7216): the release folder
``notebooks/`` opened with a "File Load Error ... 404 Not Found" dialog, every time. On this server
``/tree/PATH`` redirects to JupyterLab's ``/lab/tree/PATH``, which opens folders and files alike.

A Jupyter server extension, enabled by ``tools/jupyterlab/instructor/jupyter_server_config.json``.
"""

from __future__ import annotations

from jupyter_server.utils import url_escape, url_path_join
from tornado import web
from tornado.routing import PathMatches, Rule


def _jupyter_server_extension_points():
    return [{"module": __name__}]


class LabTree(web.RequestHandler):
    """``/tree/PATH`` -> ``/lab/tree/PATH`` (query kept); JupyterLab asks for the login itself."""

    def initialize(self, base_url: str) -> None:
        self.base_url = base_url

    def get(self, path: str) -> None:
        query = f"?{self.request.query}" if self.request.query else ""
        self.redirect(url_path_join(self.base_url, "lab", "tree", url_escape(path)) + query)


def _load_jupyter_server_extension(serverapp) -> None:
    router = serverapp.web_app.default_router
    pattern = url_path_join(serverapp.base_url, "/tree/(.*)")
    # First of all rules: extensions load in alphabetical order, so Notebook 7's /tree handler is already there.
    router.rules.insert(0, router.process_rule(Rule(PathMatches(pattern), LabTree, {"base_url": serverapp.base_url})))
