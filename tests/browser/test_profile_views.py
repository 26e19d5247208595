"""The profile that ``tfperf diagnose --profile-dir`` writes, opened as its report says: XProf's own server
(``xprof --logdir DIR``), its overview page and its trace viewer, in a real browser. No network here: XProf's
charts that load Google's chart library from the web are missing, its tables and the trace viewer are not."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.browser.conftest import free_port

#: Chapter 4's loop on its unfixed pipeline (records read one by one by a generator, mapped one at a time).
SCRIPT = """
from tfperf.experiments import tf_data as td

batches = iter(td.build_pipeline(td.SimulatedStorage(64, latency=0.001, seed=0), 8).repeat())


def train(steps):
    for _ in range(steps):
        td.device_step(*next(batches))
"""


@pytest.fixture(scope="module")
def diagnosed(tmp_path_factory, artifacts):
    """The tool's report (as JSON) and the log folder of its capture, and XProf serving that folder."""
    pytest.importorskip("xprof")
    work = tmp_path_factory.mktemp("diagnose")
    (work / "my_training.py").write_text(SCRIPT)
    env = dict(os.environ, XDG_CACHE_HOME=str(work / "cache"), TF_CPP_MIN_LOG_LEVEL="3")  # no device card
    command = [sys.executable, "-m", "tfperf", "diagnose", "my_training.py", "--steps", "8", "--json"]
    done = subprocess.run(
        [*command, "--profile-dir", str(work / "logs")], cwd=work, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    xprof = Path(sys.executable).parent / "xprof"
    port = free_port()
    with open(artifacts / "xprof.log", "w") as log:
        server = subprocess.Popen(
            [str(xprof), "--logdir", str(work / "logs"), "--port", str(port)], env=env, stdout=log, stderr=log
        )
    url = f"http://localhost:{port}"
    try:
        deadline = time.time() + 60
        while True:
            try:
                urllib.request.urlopen(f"{url}/data/plugin/profile/runs", timeout=2)
                break
            except OSError:
                if server.poll() is not None or time.time() > deadline:
                    raise RuntimeError(
                        f"XProf did not start: {(artifacts / 'xprof.log').read_text()[-2000:]}"
                    ) from None
                time.sleep(0.5)
        yield report, url
    finally:
        server.terminate()
        server.wait(timeout=20)


#: How the overview page shows the step's input time (a JavaScript regular expression too).
INPUT_TIME = r"Input Time\s*\(σ = [^)]*\)\s*([\d.]+) ms"


def input_wait(report) -> dict:
    [finding] = [f for f in report["findings"] if f["code"] == "input-bound"]
    return finding["evidence"]


def test_the_overview_page_shows_the_input_time_the_tool_reported(page, diagnosed, artifacts):
    report, url = diagnosed
    evidence = input_wait(report)  # the tool found the loop input-bound
    page.goto(url)
    page.get_by_text("Performance Summary").wait_for()
    # the summary's numbers come after it: "Loading overview data. First-time session loads may take up to a few
    # minutes." (XProf converts the capture on the first request)
    page.wait_for_function(f"() => /{INPUT_TIME}/.test(document.body.innerText)", timeout=180_000)
    text = page.locator("body").inner_text()
    shown = re.search(INPUT_TIME, text)
    page.screenshot(path=str(artifacts / "xprof-overview-page.png"), full_page=True)
    assert shown, text[:2000]
    # XProf's step-time breakdown of the tool's marked step and the tool's reading of tf.data's iterators agree
    assert float(shown.group(1)) / 1e3 == pytest.approx(evidence["input_wait_seconds"], rel=0.3), text[:2000]


def test_the_trace_viewer_shows_the_marked_step_and_the_pipelines_iterators(page, diagnosed, artifacts):
    report, url = diagnosed
    traces = []
    page.on("response", lambda r: traces.append(r) if "tag=trace_viewer" in r.url and "/data?" in r.url else None)
    page.goto(url)
    page.get_by_text("Performance Summary").wait_for()
    page.get_by_text("Overview Page").first.click()  # the tool menu
    page.get_by_role("option", name="Trace Viewer").click()
    page.wait_for_function("() => document.querySelector('iframe') !== null")
    viewer = next(f for f in _frames(page) if "trace_viewer_index" in f.url)
    viewer.get_by_text("tf_data_iterator_resource").first.wait_for()  # a track of the pipeline's threads
    page.wait_for_timeout(1000)  # the canvas draws the events
    page.screenshot(path=str(artifacts / "xprof-trace-viewer.png"))
    assert traces and traces[-1].status == 200
    events = traces[-1].text()
    assert '"train 0"' in events or "train 0" in events  # the marked step
    assert "Iterator::Root" in events


def _frames(page, timeout=30.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        found = [f for f in page.frames if "trace_viewer_index" in f.url]
        if found:
            return found
        page.wait_for_timeout(250)
    raise AssertionError(f"no trace viewer frame: {[f.url for f in page.frames]}")
