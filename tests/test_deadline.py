"""convfuse.deadline on the CPU: fake events and a fake clock."""
import pytest

from convfuse.deadline import finish_within


class _Event:
    def __init__(self, done_after):
        self.calls, self.done_after = 0, done_after

    def query(self):
        self.calls += 1
        return self.calls > self.done_after


class _Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t

    def sleep(self, s):
        self.t += 1.0          # each poll one second of fake time


def test_work_that_finishes_in_time_returns_the_wait():
    c = _Clock()
    exits = []
    assert finish_within(10, "k", _Event(done_after=3), clock=c, sleep=c.sleep, exit=exits.append) == pytest.approx(3)
    assert exits == []


def test_work_past_the_deadline_ends_the_process_with_124_and_names_it(capsys):
    c = _Clock()
    exits = []
    finish_within(5, "conv3d/x (3, 8, 10, 64, 64)", _Event(done_after=10**9), clock=c, sleep=c.sleep, exit=exits.append)
    assert exits == [124]
    assert "conv3d/x (3, 8, 10, 64, 64): not finished after 5 s" in capsys.readouterr().out
