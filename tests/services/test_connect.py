"""The driver's connection to a cluster: retries with backoff, a clear error naming the
address, no retry of an error that is not a connection.  (A host lost mid-run:
tests/services/test_cluster.py.)"""
from __future__ import annotations

import time

import pytest

from services import runner
from services.runner import init_ray


@pytest.fixture
def cluster_connection(monkeypatch):
    """ray.init of a driver that is not connected, answered by `answers` in turn (an
    exception is raised, None is a connection made); returns the addresses asked."""
    asked: list[str] = []
    answers: list = []

    def init(address, **_):
        asked.append(address)
        answer = answers.pop(0)
        if answer is not None:
            raise answer

    monkeypatch.setattr(runner.ray, "is_initialized", lambda: False)
    monkeypatch.setattr(runner.ray, "init", init)
    return asked, answers


def test_the_driver_retries_a_failed_connection_with_backoff(cluster_connection, caplog):
    asked, answers = cluster_connection
    # what a driver met once: the head's client server failed to start, and worked later
    failed = ConnectionAbortedError("Initialization failure from server:\nStarting Ray "
                                    "client server failed. See ray_client_server_23000.err")
    answers += [failed, ConnectionError("ray client connection timeout"), None]
    began = time.monotonic()
    init_ray(address="ray://head:10001")
    assert asked == ["ray://head:10001"] * 3
    assert time.monotonic() - began >= 1 + 2  # waited 1 s, then 2 s
    retries = [r.getMessage() for r in caplog.records if r.name == "meeplelab.runner"]
    assert len(retries) == 2 and "Starting Ray client server failed" in retries[0]
    assert "trying again in 1 s (1 of 7)" in retries[0]
    assert "trying again in 2 s (2 of 7)" in retries[1]


def test_the_driver_gives_up_naming_the_address(cluster_connection, monkeypatch):
    asked, answers = cluster_connection
    monkeypatch.setattr(runner, "CONNECT_TRIES", 2)
    answers += [ConnectionError("ray client connection timeout")] * 2 + [None]
    with pytest.raises(ConnectionError, match="ray://head:10001 in 2 tries: ray client"):
        init_ray(address="ray://head:10001")
    assert len(asked) == 2


def test_an_error_that_is_not_a_connection_is_not_retried(cluster_connection):
    asked, answers = cluster_connection
    answers += [ValueError("bad runtime_env"), None]
    with pytest.raises(ValueError, match="bad runtime_env"):
        init_ray(address="ray://head:10001")
    assert len(asked) == 1
