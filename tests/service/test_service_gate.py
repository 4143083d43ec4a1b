"""The admission gate of the service's workers (service/gate.py): first come, first served; AI work steps out."""

from __future__ import annotations

import threading
import time

import pytest

from service import gate as gate_module
from service.gate import FifoGate, outside


def _wait_for(cond: object, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.001)


def test_waiters_are_let_in_in_the_order_they_came() -> None:
    gate = FifoGate(1)
    gate.acquire()
    admitted: list[int] = []
    threads = []

    def enter(i: int) -> None:
        gate.acquire()
        admitted.append(i)
        gate.release()

    for i in range(8):
        t = threading.Thread(target=enter, args=(i,))
        t.start()
        threads.append(t)
        _wait_for(lambda n=i + 1: gate.waiting == n)  # queued before the next one comes
    assert admitted == []
    gate.release()
    for t in threads:
        t.join(5)
    assert admitted == list(range(8))
    assert gate.waiting == 0


def test_at_most_slots_holders_at_once() -> None:
    gate = FifoGate(3)
    inside = 0
    most = 0
    lock = threading.Lock()

    def work() -> None:
        nonlocal inside, most
        for _ in range(200):
            gate.acquire()
            with lock:
                inside += 1
                most = max(most, inside)
            time.sleep(0)
            with lock:
                inside -= 1
            gate.release()

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert most == 3 and inside == 0


def test_outside_gives_the_slot_to_a_waiter_and_takes_one_back(monkeypatch: pytest.MonkeyPatch) -> None:
    gate = FifoGate(1)
    monkeypatch.setattr(gate_module, "GATE", gate)
    gate.acquire()
    assert gate.held
    other_in = threading.Event()
    other_may_leave = threading.Event()

    def other() -> None:
        gate.acquire()
        other_in.set()
        other_may_leave.wait(5)
        gate.release()

    t = threading.Thread(target=other)
    t.start()
    _wait_for(lambda: gate.waiting == 1)
    with outside():  # a long computation: the waiting request goes ahead meanwhile
        assert not gate.held
        assert other_in.wait(5)
        other_may_leave.set()
        t.join(5)
    assert gate.held  # back inside once the computation is done
    gate.release()
    assert not gate.held


def test_outside_is_a_no_op_without_a_slot(monkeypatch: pytest.MonkeyPatch) -> None:
    gate = FifoGate(1)
    monkeypatch.setattr(gate_module, "GATE", gate)
    with outside():
        assert not gate.held
    assert not gate.held and gate.waiting == 0
    monkeypatch.setattr(gate_module, "GATE", None)
    with outside():
        pass


def test_a_gate_needs_a_slot() -> None:
    with pytest.raises(ValueError, match="at least one slot"):
        FifoGate(0)
