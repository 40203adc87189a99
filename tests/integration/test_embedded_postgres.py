"""The embedded PostgreSQL: made on first use, shared by the processes using it, stopped by the last one out.

Each EmbeddedPostgres instance stands for one process: its user registration is its own open file, exactly
as a separate process's would be.
"""

import os
import pwd
import secrets
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import trio

from persistence.database import Database
from persistence.embedded import EmbeddedPostgres, EmbeddedPostgresError


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


@pytest.fixture
async def superuser_db(data_dir, asyncio_loop):
    """A connection to a fresh embedded server as its superuser, who may create any extension."""
    server = EmbeddedPostgres(data_dir, durable=False)
    running_server = await trio.to_thread.run_sync(server.start)
    db = await Database.connect(running_server.url("postgres"), min_size=1, max_size=1)
    yield db
    await db.close()
    await trio.to_thread.run_sync(server.release)


async def test_the_server_has_the_trigram_extension_for_fuzzy_search(superuser_db):
    db = superuser_db
    await db.execute("CREATE EXTENSION pg_trgm")
    await db.execute("CREATE TABLE contacts (name text)")
    await db.execute("INSERT INTO contacts VALUES ('Maria Souza'), ('Mario Santos'), ('John Smith')")
    assert await db.fetchval("SELECT similarity('Maria Souza', 'maria sousa')") > 0.5
    # `%` is "similar enough" (similarity above pg_trgm.similarity_threshold, 0.3 by default): a misspelt
    # search finds the contact and leaves out the others.
    rows = await db.fetch("SELECT name FROM contacts WHERE name % $1", "maria sousa")
    assert [row["name"] for row in rows] == ["Maria Souza"]


async def test_the_server_tracks_statements_for_pg_stat_statements(superuser_db):
    db = superuser_db
    await db.execute("CREATE EXTENSION pg_stat_statements")
    await db.fetchval("SELECT 1 AS tracked_statement")
    # The view refuses to answer unless the module was loaded at server start; constants are normalised
    # away in its text, the alias is kept.
    calls = await db.fetchval("SELECT sum(calls) FROM pg_stat_statements WHERE query LIKE '%tracked_statement%'")
    assert calls >= 1


def test_a_cluster_of_another_major_version_is_refused_and_left_alone(data_dir):
    # What a data directory made by the earlier PostgreSQL 16 wheel holds.
    (data_dir / "pg").mkdir()
    (data_dir / "pg" / "PG_VERSION").write_text("16\n")
    with pytest.raises(EmbeddedPostgresError, match="made by PostgreSQL 16, which PostgreSQL 18 cannot open"):
        EmbeddedPostgres(data_dir, durable=False).start()
    assert (data_dir / "pg" / "PG_VERSION").read_text() == "16\n"


# One process of the race below: wait for the starting gun, start the embedded server in a data directory of
# its own, prove it answers, leave. Under root the server runs as $INBOX_PG_USER, which may not exist yet.
_STARTER = """
import os, sys, time
from pathlib import Path
from persistence.embedded import EmbeddedPostgres
go = Path(sys.argv[2])
while not go.exists():
    time.sleep(0.001)
server = EmbeddedPostgres(Path(sys.argv[1]), durable=False)
running = server.start()
print(running.port, flush=True)
server.release()
"""


def _start_at_once(data_dirs: list[Path], go: Path, user: str) -> list[subprocess.CompletedProcess]:
    env = {**os.environ, "INBOX_PG_USER": user}
    starters = [subprocess.Popen([sys.executable, "-c", _STARTER, str(path), str(go)], env=env, text=True,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE) for path in data_dirs]
    go.touch()
    results = []
    for starter in starters:
        out, err = starter.communicate(timeout=120)
        results.append(subprocess.CompletedProcess(starter.args, starter.returncode, out, err))
    return results


@pytest.fixture
def fresh_service_user():
    """A service user name no machine has yet; under root the test removes the user it made."""
    name = f"inbox-pg-t{secrets.token_hex(4)}"
    yield name
    if os.geteuid() == 0:
        subprocess.run(["userdel", name], capture_output=True)


def test_processes_starting_at_once_without_the_service_user_all_succeed(tmp_path, fresh_service_user):
    # The first start on a new machine: pytest-xdist workers, `scripts/serve` and a user's own CLI commands
    # may all start an embedded server in the same moment, none finding the service user.
    data_dirs = [tmp_path / f"data-{n}" for n in range(8)]
    results = _start_at_once(data_dirs, tmp_path / "go", fresh_service_user)
    assert [r.returncode for r in results] == [0] * 8, "\n".join(r.stderr for r in results if r.returncode)
    if os.geteuid() != 0:
        return  # a normal user runs the server as itself: there is no service user to make
    entry = pwd.getpwnam(fresh_service_user)
    for path in data_dirs:
        assert (path / "pg").stat().st_uid == entry.pw_uid

    # The user is removed and made again with another uid (a machine rebuilt around its data): every cluster
    # is handed to the name's current uid at the next start instead of failing on the old one.
    subprocess.run(["userdel", fresh_service_user], check=True)
    decoy = f"inbox-pg-d{secrets.token_hex(4)}"
    subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", decoy], check=True)
    try:
        results = _start_at_once(data_dirs[:2], tmp_path / "go-again", fresh_service_user)
    finally:
        subprocess.run(["userdel", decoy], capture_output=True)
    assert [r.returncode for r in results] == [0] * 2, "\n".join(r.stderr for r in results if r.returncode)
    new_uid = pwd.getpwnam(fresh_service_user).pw_uid
    assert new_uid != entry.pw_uid
    for path in data_dirs[:2]:
        assert (path / "pg").stat().st_uid == new_uid
