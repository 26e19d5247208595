"""Driving a notebook in JupyterLab from a test, through the page's JupyterLab application
(``--LabApp.expose_app_in_browser``): find cells, run them as a learner would (Shift+Enter runs
the same command), and read what the page shows."""

from __future__ import annotations

import re

WIDGET_FAILURES = re.compile(
    r"Loading widget|Error displaying widget|model not found|Failed to (?:load|render) model", re.IGNORECASE
)
STDERR = '[data-mime-type="application/vnd.jupyter.stderr"]'


class NotebookPage:
    def __init__(self, page, lab, path: str):
        self.page, self.lab, self.path = page, lab, path

    def open(self) -> NotebookPage:
        self.page.goto(self.lab.page_url(f"lab/tree/{self.path}"))
        return self._ready()

    def reload(self) -> NotebookPage:
        """Save, then reload the page, as a learner does (Ctrl+S, F5): the notebook reopens on the kernel it had."""
        self.page.evaluate("async () => { await jupyterapp.commands.execute('docmanager:save'); }")
        self.page.reload()
        return self._ready()

    def _ready(self) -> NotebookPage:
        self.page.wait_for_function(
            "() => window.jupyterapp && jupyterapp.shell.currentWidget && jupyterapp.shell.currentWidget.content"
            " && jupyterapp.shell.currentWidget.content.model && jupyterapp.shell.currentWidget.content.widgets.length > 0",
            timeout=90_000,
        )
        self.page.evaluate("async () => { const p = jupyterapp.shell.currentWidget; await p.sessionContext.ready; }")
        self.page.wait_for_function(
            "() => jupyterapp.shell.currentWidget.sessionContext.session?.kernel?.status === 'idle'", timeout=90_000
        )
        return self

    def cells(self) -> list[dict]:
        """Each cell's type, source and nbgrader grade_id."""
        return self.page.evaluate("""() => {
            const cells = jupyterapp.shell.currentWidget.content.model.cells, out = [];
            for (let i = 0; i < cells.length; i++) {
                const c = cells.get(i), nb = c.getMetadata('nbgrader') || {};
                out.push({type: c.type, source: c.sharedModel.getSource(), grade_id: nb.grade_id || null});
            }
            return out; }""")

    def index(self, *, grade_id: str | None = None, containing: str | None = None) -> int:
        for i, cell in enumerate(self.cells()):
            if (
                cell["type"] == "code"
                and (grade_id is None or cell["grade_id"] == grade_id)
                and (containing is None or containing in cell["source"])
            ):
                return i
        raise LookupError(f"no code cell with grade_id={grade_id!r} containing {containing!r} in {self.path}")

    def select(self, index: int) -> None:
        self.page.evaluate(
            """(i) => { const nb = jupyterapp.shell.currentWidget.content;
            nb.deselectAll(); nb.activeCellIndex = i; nb.mode = 'command'; }""",
            index,
        )

    def run(self, index: int) -> None:
        """Run one cell and wait until it has finished (the command's promise resolves then)."""
        self.select(index)
        self.page.evaluate("async () => { await jupyterapp.commands.execute('notebook:run-cell'); }")

    def run_all(self) -> None:
        """Run > Run All Cells, as a learner does; returns when JupyterLab has run them (or stopped at a failing cell)."""
        self.page.evaluate("async () => { await jupyterapp.commands.execute('notebook:run-all-cells'); }")

    def execution_counts(self) -> list[int | None]:
        """Each code cell's execution count (None: not run), in order."""
        return self.page.evaluate("""() => {
            const cells = jupyterapp.shell.currentWidget.content.model.cells, out = [];
            for (let i = 0; i < cells.length; i++) {
                const c = cells.get(i);
                if (c.type === 'code') out.push(c.executionCount ?? null);
            }
            return out; }""")

    def set_source(self, index: int, source: str) -> None:
        """Replace a cell's text, as a learner typing an answer does."""
        self.page.evaluate(
            "([i, src]) => { jupyterapp.shell.currentWidget.content.model.cells.get(i).sharedModel.setSource(src); }",
            [index, source],
        )

    def errors(self, index: int) -> list[str]:
        """The error outputs of a cell: ``ename: evalue`` each."""
        return self.page.evaluate(
            """(i) => jupyterapp.shell.currentWidget.content.model.cells.get(i).outputs.toJSON()
                .filter(o => o.output_type === 'error').map(o => o.ename + ': ' + o.evalue)""",
            index,
        )

    def run_all_above(self, index: int) -> None:
        self.select(index)
        self.page.evaluate("async () => { await jupyterapp.commands.execute('notebook:run-all-above'); }")

    def run_widget_cell(self, index: int, timeout_ms: int = 30_000):
        """Run every cell above ``index``, then that cell; return its first widget box once it shows."""
        self.run_all_above(index)
        self.run(index)
        box = self.cell(index).locator(".jp-OutputArea .widget-vbox").first
        box.wait_for(timeout=timeout_ms)
        return box

    def add_cell_and_run(self, source: str) -> str:
        """Append a code cell with ``source`` at the end, run it, and return its text output."""
        n = len(self.cells())
        self.select(n - 1)
        self.page.evaluate(
            """async (src) => { await jupyterapp.commands.execute('notebook:insert-cell-below');
            const nb = jupyterapp.shell.currentWidget.content; nb.activeCell.model.sharedModel.setSource(src);
            await jupyterapp.commands.execute('notebook:run-cell'); }""",
            source,
        )
        return self.output_text(n)

    def cell(self, index: int):
        return self.page.locator(".jp-Notebook .jp-Cell").nth(index)

    def output_text(self, index: int) -> str:
        """The text of a cell's outputs, from the notebook's model (streams, plain-text results, errors)."""
        return self.page.evaluate(
            """(i) => {
            const outputs = jupyterapp.shell.currentWidget.content.model.cells.get(i).outputs.toJSON();
            return outputs.map(o => o.text !== undefined ? [].concat(o.text).join('')
                : o.traceback ? o.traceback.join('\\n') : o.data && o.data['text/plain'] ? [].concat(o.data['text/plain']).join('') : '').join(''); }""",
            index,
        )

    def stderr_outputs(self) -> list[str]:
        """Texts of every red (stderr or error) output in the notebook."""
        return self.page.locator(f".jp-Notebook {STDERR}").all_inner_texts()

    def widget_failures(self) -> list[str]:
        text = self.page.locator(".jp-Notebook").inner_text()
        return WIDGET_FAILURES.findall(text)
