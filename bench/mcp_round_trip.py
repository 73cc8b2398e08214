"""MCP round trip: ``legacymind_search`` as an MCP tool call over stdio and over Streamable HTTP,
against the same search over REST (``POST /api/v1/search``), paired in one run.

One gunicorn (the repo's gunicorn.conf.py, one worker process) serves REST and /mcp on the
bench database (``bench_mcp``: ``--entities`` KG entities, hash embeddings); ``manage.py mcp``
serves stdio. Each round sends the same query four ways, in a rotating order: REST, a raw
JSON-RPC ``tools/call`` POST to /mcp as a handshake-era client sends it (protocol 2025-06-18:
what the server adds), the SDK's client over HTTP (it speaks 2026-07-28, the SDK's own
single-exchange path on the server), and the SDK's client over stdio (what an agent sees). The
figure is the p50 of each, and the p50 of the per-round differences against REST.

Wall-clock times swing with the machine's load (other processes take the two CPUs in turn),
so the run also measures, for the three ways that reach gunicorn, the CPU time its worker
process spent on each request (all its threads' run time from ``/proc/<pid>/task/*/schedstat``,
read before and after the request): what the server itself spends, load or not. PostgreSQL's
work is not in it, and is the same query each way.

    python bench/mcp_round_trip.py [--rounds 300] [--entities 2000] [--write docs/benchmarks.md]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path

# This file is named like the SDK's package: import the SDK before bench/ is searched first.
_BENCH = sys.path.pop(0)
from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.shared._httpx_utils import create_mcp_http_client  # noqa: E402

sys.path.insert(0, _BENCH)
os.environ.setdefault("BENCH_DATABASE_NAME", "bench_mcp")
os.environ["EMBEDDING_PROVIDER"] = "hash"
os.environ["EMBEDDING_DIM"] = "384"

from _common import ROOT, gunicorn_start, percentile, use_bench_database  # noqa: E402
from _docs import run_prepend  # noqa: E402
from _think_load import bench_token, child_env  # noqa: E402

USER = "mcp-bench"
WORDS = [
    "harbour",
    "ledger",
    "billing",
    "ferry",
    "crane",
    "postgres",
    "invoice",
    "tide",
    "pier",
    "kernel",
]


def seed(entities: int) -> None:
    from django.contrib.auth.models import User
    from django.db import transaction

    from kg.models import Entity
    from kg.services import entity_upsert

    if Entity.objects.count() >= entities:
        return
    viewer = User.objects.get(username=USER)
    with transaction.atomic():
        for i in range(Entity.objects.count(), entities):
            name = f"{WORDS[i % 10]} {WORDS[(i // 10) % 10]} {i}"
            entity_upsert(name=name, entity_type="concept", viewer=viewer)


def worker_pid(master: int) -> int:
    """gunicorn's one worker process: the child of ``master``."""
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == master:
                return int(entry)
    raise SystemExit("gunicorn has no worker process")


def cpu_ns(pid: int) -> int:
    """The run time of all of ``pid``'s threads so far, in nanoseconds."""
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            total += int(Path(f"/proc/{pid}/task/{tid}/schedstat").read_text().split()[0])
        except (OSError, ValueError):
            continue  # a thread that ended meanwhile
    return total


SERVED = ("rest", "mcp_http_raw", "mcp_http_sdk")  # the ways whose requests gunicorn serves


async def measure(
    base: str, token: str, rounds: int, worker: int
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    import httpx

    auth = {"Authorization": f"Bearer {token}"}
    rest_auth = {"Authorization": f"Token {token}"}  # the REST API's scheme
    stdio = StdioServerParameters(
        command=sys.executable, args=["manage.py", "mcp", "--user", USER], cwd=str(ROOT),
        env={**child_env(), "EMBEDDING_PROVIDER": "hash"},
    )  # fmt: skip
    async with (
        httpx.AsyncClient(headers=auth, timeout=30) as raw,
        create_mcp_http_client(headers=auth) as http,
        Client(streamable_http_client(f"{base}/mcp", http_client=http)) as over_http,
        Client(stdio, read_timeout_seconds=60) as over_stdio,
    ):
        args = lambda i: {"query": f"{WORDS[i % 10]} {WORDS[(i * 7) % 10]}"}  # noqa: E731

        async def rest(i: int) -> None:
            answer = await raw.post(f"{base}/api/v1/search", json=args(i), headers=rest_auth)
            assert answer.status_code == 200, answer.text

        async def mcp_raw(i: int) -> None:
            call = {"jsonrpc": "2.0", "id": i, "method": "tools/call",
                    "params": {"name": "legacymind_search", "arguments": args(i)}}  # fmt: skip
            headers = {"Accept": "application/json, text/event-stream",
                       "MCP-Protocol-Version": "2025-06-18"}  # fmt: skip
            answer = await raw.post(f"{base}/mcp", json=call, headers=headers)
            assert answer.status_code == 200 and "structuredContent" in answer.text, answer.text

        async def sdk_http(i: int) -> None:
            result = await over_http.call_tool("legacymind_search", args(i))
            assert not result.is_error

        async def sdk_stdio(i: int) -> None:
            result = await over_stdio.call_tool("legacymind_search", args(i))
            assert not result.is_error

        ways: dict[str, Callable[[int], Awaitable[None]]] = {
            "rest": rest, "mcp_http_raw": mcp_raw, "mcp_http_sdk": sdk_http,
            "mcp_stdio_sdk": sdk_stdio,
        }  # fmt: skip
        times: dict[str, list[float]] = {name: [] for name in ways}
        cpu: dict[str, list[float]] = {name: [] for name in SERVED}
        names = list(ways)
        for i in range(-20, rounds):  # 20 warm-up rounds, not counted
            order = names[i % 4 :] + names[: i % 4]
            for name in order:
                used = cpu_ns(worker)
                start = time.perf_counter()
                await ways[name](i)
                elapsed = (time.perf_counter() - start) * 1000
                if i >= 0:
                    times[name].append(elapsed)
                    if name in cpu:
                        cpu[name].append((cpu_ns(worker) - used) / 1e6)
        return times, cpu


def report(times: dict[str, list[float]], cpu: dict[str, list[float]], entities: int) -> list[str]:
    rest = times["rest"]
    lines = [
        "## MCP round trip: `legacymind_search` over MCP against REST (`bench/mcp_round_trip.py`)",
        "",
        f"{len(rest)} paired rounds, {entities} KG entities, hash embeddings, gunicorn with one "
        "gthread worker for REST and /mcp; stdio is `manage.py mcp` driven by the SDK's client.",
        "",
        "| way | p50 ms | p95 ms | p50 of (way - REST) per round, ms |",
        "|---|---|---|---|",
    ]
    for name, values in times.items():
        diffs = [v - r for v, r in zip(values, rest, strict=True)]
        delta = "-" if name == "rest" else f"{percentile(diffs, 50):+.2f}"
        lines.append(
            f"| {name} | {percentile(values, 50):.2f} | {percentile(values, 95):.2f} | {delta} |"
        )
    lines += [
        "",
        "The gunicorn worker's CPU time per request (all its threads), ms:",
        "",
        "| way | p50 | p95 | p50 of (way - REST) per round |",
        "|---|---|---|---|",
    ]
    for name, values in cpu.items():
        diffs = [v - r for v, r in zip(values, cpu["rest"], strict=True)]
        delta = "-" if name == "rest" else f"{percentile(diffs, 50):+.2f}"
        lines.append(
            f"| {name} | {percentile(values, 50):.2f} | {percentile(values, 95):.2f} | {delta} |"
        )
    load = os.getloadavg()
    lines += [
        "",
        f"Load average at the end of the run: {load[0]:.1f} (1 min), {load[1]:.1f} (5 min).",
    ]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--entities", type=int, default=2000)
    parser.add_argument("--write", type=Path)
    options = parser.parse_args()
    use_bench_database()
    token = bench_token(USER)
    seed(options.entities)
    env = {**child_env(), "EMBEDDING_PROVIDER": "hash"}
    server, base = gunicorn_start("--workers", "1", env=env)
    try:
        times, cpu = asyncio.run(measure(base, token, options.rounds, worker_pid(server.pid)))
    finally:
        server.terminate()
        server.wait(timeout=30)
    lines = report(times, cpu, options.entities)
    print("\n".join(lines))
    if options.write:
        when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        run_prepend(
            options.write,
            section="MCP round trip: `legacymind_search` over MCP against REST (`bench/mcp_round_trip.py`)",
            title=f"Run of {when}",
            lines=lines,
        )


if __name__ == "__main__":
    main()
