"""The monitor returns a timeline on a CPU, and reads NVML when a GPU is present (fake NVML here)."""

import os
import sys
import types

import psutil
import pytest

from tfperf.measure import monitor


def _spin(seconds: float) -> int:
    from tfperf.measure import timing

    end, n = timing.now() + seconds, 0
    while timing.now() < end:
        n += 1
    return n


def test_cpu_timeline_shows_a_busy_process():
    with monitor.Monitor(interval=0.02, source="cpu") as m:
        _spin(0.3)
    assert m.source == "cpu"
    assert len(m.timeline) >= 5
    assert all(set(r) == {"t", "busy", "source"} for r in m.timeline)
    ts = [r["t"] for r in m.timeline]
    assert ts == sorted(ts)
    assert all(0.0 <= r["busy"] <= 100.0 for r in m.timeline)
    # One spinning core is 100 / cores percent of the machine (6.25% on a 16-core GPU machine): at least half that.
    cores = psutil.cpu_count() or os.cpu_count() or 1
    assert monitor.mean_busy(m.timeline) > 50.0 / cores


def test_busy_while_returns_result_and_at_least_one_record():
    result, timeline = monitor.busy_while(lambda: 42, interval=1.0, source="cpu")
    assert result == 42 and len(timeline) == 1


def test_unknown_source_is_rejected():
    with pytest.raises(ValueError):
        with monitor.Monitor(source="tpu"):
            pass


class _FakeNvml(types.ModuleType):
    def __init__(self, count=1, fail_init=False):
        super().__init__("pynvml")
        self.count, self.fail_init = count, fail_init
        self.calls = []
        self.readings = iter([94, 93, 95] + [20] * 1000)

    def nvmlInit(self):
        self.calls.append("init")
        if self.fail_init:
            raise RuntimeError("NVML Shared Library Not Found")

    def nvmlShutdown(self):
        self.calls.append("shutdown")

    def nvmlDeviceGetCount(self):
        return self.count

    def nvmlDeviceGetHandleByIndex(self, index):
        self.calls.append(f"handle {index}")
        return object()

    def nvmlDeviceGetUtilizationRates(self, handle):
        return types.SimpleNamespace(gpu=next(self.readings), memory=10)


def test_nvml_is_used_when_a_gpu_is_present(monkeypatch):
    fake = _FakeNvml()
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    assert monitor.nvml_available()
    with monitor.Monitor(interval=0.01) as m:
        for _ in range(50):  # until three samples were taken (two in 0.1 s once, beside the class-grading tests)
            _spin(0.1)
            if len(m.timeline) >= 3:
                break
    assert m.source == "nvml"
    assert [r["busy"] for r in m.timeline[:3]] == [94.0, 93.0, 95.0]
    assert all(r["source"] == "nvml" for r in m.timeline)
    assert "handle 0" in fake.calls
    assert fake.calls[-1] == "shutdown"
    assert fake.calls.count("init") == fake.calls.count("shutdown")


@pytest.mark.parametrize("fake", [_FakeNvml(count=0), _FakeNvml(fail_init=True)], ids=["no GPU", "no driver"])
def test_falls_back_to_cpu_without_a_gpu(monkeypatch, fake):
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    assert not monitor.nvml_available()
    with monitor.Monitor(interval=0.5) as m:
        pass
    assert m.source == "cpu"


def test_falls_back_to_cpu_without_the_package(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import pynvml raises ImportError
    assert not monitor.nvml_available()
