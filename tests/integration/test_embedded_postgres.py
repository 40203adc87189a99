"""The embedded PostgreSQL: made on first use, shared by the processes using it, stopped by the last one out.

Each EmbeddedPostgres instance stands for one process: its user registration is its own open file, exactly
as a separate process's would be.
"""

import shutil
import tempfile
from pathlib import Path

import pytest

from persistence.embedded import EmbeddedPostgres


@pytest.fixture
def data_dir():
    path = Path(tempfile.mkdtemp(prefix="inbox-embedded-test-"))
    yield path
    EmbeddedPostgres(path).stop()
    shutil.rmtree(path, ignore_errors=True)


def running(data_dir: Path) -> bool:
    return (data_dir / "pg" / "postmaster.pid").exists()


def test_the_last_user_out_stops_the_server(data_dir):
    service, command = EmbeddedPostgres(data_dir, durable=False), EmbeddedPostgres(data_dir, durable=False)
    first = service.start()
    assert first.started_here and running(data_dir)
    second = command.start()
    assert not second.started_here and second.port == first.port

    assert service.release() is False  # the command still uses it
    assert running(data_dir)
    assert command.release() is True
    assert not running(data_dir)


def test_a_restart_keeps_the_cluster_and_its_password(data_dir):
    server = EmbeddedPostgres(data_dir, durable=False)
    first = server.start()
    server.release()
    again = server.start()
    assert again.password == first.password and again.started_here
    assert (data_dir / "pg-password").stat().st_mode & 0o077 == 0  # readable by its owner only
    server.release()


def test_a_server_left_by_a_dead_process_is_reused_and_then_stopped(data_dir):
    crashed = EmbeddedPostgres(data_dir, durable=False)
    crashed.start()
    crashed._unregister_user()  # what the kernel does when a process dies holding the lock
    survivor = EmbeddedPostgres(data_dir, durable=False)
    assert survivor.start().started_here is False
    assert survivor.release() is True
    assert not running(data_dir)
