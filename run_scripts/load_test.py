#!/usr/bin/env python3
"""Load test of ``rnnpb-nmt serve`` (issue 44): N concurrent clients, each request one test-set sentence,
against the batching server and against one that translates one request at a time (``--max_batch=1``),
beside ``--do_testing``'s translation of the same sentences (one ``Translator.translate`` over the list).

    python3 run_scripts/load_test.py --working_dir DIR --test_set FILE [--clients 1,8,32] [--requests 256]
        [--max_seconds 120] [--out record.json]

Loopback only: the script starts each server itself on a free port of 127.0.0.1 (under ``timeout``, so
that it stops even if this script dies), and stops it with SIGTERM. Each client count sends at most
``--requests`` requests and stops sending after ``--max_seconds``. Prints a table and, as its last line,
the JSON record; ``run_scripts/benchmark.py --part=serving`` records its figures as benchmark keys.
"""

import argparse
import asyncio
import json
import math
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODES = {"batched": [], "one_at_a_time": ["--max_batch=1"]}  # server flags of each mode


def start_server(working_dir, flags, log, lifetime):
    """``rnnpb-nmt serve`` on a free loopback port, killed by ``timeout`` after ``lifetime`` seconds at
    the latest: (process, its URL). ``log``: an open file for the server's stderr."""
    proc = subprocess.Popen(["timeout", str(int(lifetime)), sys.executable, os.path.join(ROOT, "nmt.py"), "serve",
                             f"--working_dir={working_dir}", "--host=127.0.0.1", "--port=0", *flags],
                            stdout=subprocess.PIPE, stderr=log, text=True, cwd=ROOT)
    line = proc.stdout.readline()
    if " at http://" not in line:
        proc.kill()
        proc.wait()
        log.seek(0)
        raise RuntimeError(f"the server did not start: {log.read()[-2000:]}")
    return proc, line.rsplit(" at ", 1)[1].strip()


def stop_server(proc):
    """SIGTERM, as a service manager stops it; its exit status (0: a clean shutdown)."""
    proc.send_signal(signal.SIGTERM)
    return proc.wait(timeout=120)


def percentile(values, q):
    """The ``q``-th percentile (nearest rank) of ``values``, or None for none."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)] if ordered else None


async def run_clients(url, sentences, clients, max_seconds):
    """``clients`` concurrent clients sending ``sentences`` one per request, each the next one not yet
    sent, until all are sent or ``max_seconds`` have passed: sentences per second, latency, errors."""
    import aiohttp

    latencies, errors, todo = [], [], iter(sentences)
    timeout = aiohttp.ClientTimeout(total=max_seconds)
    started = time.perf_counter()

    async def client(session):
        for sentence in todo:
            if time.perf_counter() - started > max_seconds:
                return
            sent = time.perf_counter()
            try:
                async with session.post(f"{url}/translate", json={"text": [sentence]}) as response:
                    body = await response.json()
                    if response.status != 200 or len(body["translations"]) != 1:
                        errors.append(f"{response.status}: {body.get('error')}")
                        continue
            except (aiohttp.ClientError, asyncio.TimeoutError, ValueError) as e:
                errors.append(f"{type(e).__name__}: {e}")
                continue
            latencies.append(time.perf_counter() - sent)

    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=clients), timeout=timeout) as session:
        await asyncio.gather(*(client(session) for _ in range(clients)))
    seconds = time.perf_counter() - started
    return {"clients": clients, "answered": len(latencies), "errors": len(errors), "first_errors": errors[:3],
            "seconds": seconds, "sentences_per_second": len(latencies) / seconds,
            "p50_ms": 1000 * percentile(latencies, 50) if latencies else None,
            "p99_ms": 1000 * percentile(latencies, 99) if latencies else None}


def serve_and_load(working_dir, flags, sentences, client_counts, max_seconds, scratch):
    """One server of ``flags``: warmed up by one request (which traces the search), then each client
    count in turn; its figures, and whether it shut down cleanly."""
    lifetime = 300 + len(client_counts) * (max_seconds + 60)
    with open(os.path.join(scratch, f"server{len(os.listdir(scratch))}.log"), "w+", encoding="utf-8") as log:
        proc, url = start_server(working_dir, flags, log, lifetime)
        try:
            asyncio.run(run_clients(url, sentences[:1], 1, max_seconds))
            runs = [asyncio.run(run_clients(url, sentences, n, max_seconds)) for n in client_counts]
        finally:
            status = stop_server(proc)
    return {"server_flags": flags, "runs": runs, "exit_status": status}


def do_testing_speed(working_dir, sentences, scratch):
    """Sentences per second of ``--do_testing``'s translation of ``sentences`` (``prediction.test``:
    read, prepared, translated in one ``Translator.translate`` call; its ``testing_time``), after 8
    sentences translated untimed (tracing), on the same loaded model settings as the server's."""
    from rnnpb_nmt import api
    from rnnpb_nmt.infer import prediction

    model = api.load(working_dir)
    test_set = os.path.join(scratch, "sentences.txt")
    with open(test_set, "w", encoding="utf-8") as f:
        f.writelines(sentence + "\n" for sentence in sentences)
    model.translate(sentences[:8])
    stats = prediction.test(model.translator, model.task, test_set, scratch, log=lambda m: None)
    return stats["sentences"] / stats["testing_time"]


def load_test(working_dir, test_set, client_counts, requests, max_seconds):
    """The record: each mode's runs, and ``--do_testing``'s speed on the same sentences."""
    with open(test_set, encoding="utf-8") as f:
        lines = [line.strip() for line in f if line.strip()]
    if not lines:
        raise SystemExit(f"error: --test_set={test_set}: no sentences")
    sentences = [lines[i % len(lines)] for i in range(requests)]
    record = {"working_dir": working_dir, "test_set": test_set, "requests": requests, "max_seconds": max_seconds,
              "clients": client_counts}
    with tempfile.TemporaryDirectory(prefix="load_test.") as scratch:
        for mode, flags in MODES.items():
            record[mode] = serve_and_load(working_dir, flags, sentences, client_counts, max_seconds, scratch)
        record["do_testing_sentences_per_second"] = do_testing_speed(working_dir, sentences, scratch)
    return record


def benchmark_keys(record):
    """The record's figures as flat ``benchmark.py`` keys (``--part=serving``)."""
    keys = {"serving_do_testing_sentences_per_second": record["do_testing_sentences_per_second"],
            "serving_errors": sum(run["errors"] for mode in MODES for run in record[mode]["runs"])}
    for mode in MODES:
        for run in record[mode]["runs"]:
            for figure in ("sentences_per_second", "p50_ms", "p99_ms"):
                keys[f"serving_{mode}_{figure}_c{run['clients']}"] = run[figure]
    for batched, alone in zip(record["batched"]["runs"], record["one_at_a_time"]["runs"]):
        keys[f"serving_batching_speedup_c{batched['clients']}"] = \
            batched["sentences_per_second"] / alone["sentences_per_second"] if alone["sentences_per_second"] else None
    return keys


def milliseconds(value):
    return "–" if value is None else f"{value:.0f}"


def table(record):
    lines = ["| mode | clients | sentences/s | p50 ms | p99 ms | errors |", "|---|---|---|---|---|---|"]
    for mode in MODES:
        for run in record[mode]["runs"]:
            lines.append(f"| {mode} | {run['clients']} | {run['sentences_per_second']:.1f} | "
                         f"{milliseconds(run['p50_ms'])} | {milliseconds(run['p99_ms'])} | {run['errors']} |")
    lines.append(f"| --do_testing (one batch call) | – | {record['do_testing_sentences_per_second']:.1f} | – | – | – |")
    return "\n".join(lines)


def client_counts(value):
    try:
        counts = [int(n) for n in value.split(",")]
    except ValueError:
        counts = []
    if not counts or min(counts) < 1:
        raise argparse.ArgumentTypeError(f"{value!r}: give client counts such as 1,8,32")
    return counts


def positive(kind):
    def parse(value):
        number = kind(value)
        if number <= 0:
            raise argparse.ArgumentTypeError(f"{value}: must be > 0")
        return number
    return parse


def build_parser():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--working_dir", required=True, help="the trained run to serve")
    parser.add_argument("--test_set", required=True, help="raw sentences, one a line (cycled through)")
    parser.add_argument("--clients", type=client_counts, default=[1, 8, 32], help="concurrent client counts")
    parser.add_argument("--requests", type=positive(int), default=256, help="requests (sentences) per client count")
    parser.add_argument("--max_seconds", type=positive(float), default=120.0,
                        help="per client count and mode: no request is sent after this")
    parser.add_argument("--out", help="also write the JSON record here")
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    if not os.path.isdir(args.working_dir) or not os.path.isfile(args.test_set):
        raise SystemExit(f"error: --working_dir={args.working_dir} or --test_set={args.test_set} does not exist")
    record = {"command": shlex.join(["python3", "run_scripts/load_test.py", *(sys.argv[1:] if argv is None else argv)]),
              **load_test(args.working_dir, args.test_set, args.clients, args.requests, args.max_seconds)}
    print(table(record))
    if args.out:
        from rnnpb_nmt.data.files import write_json
        write_json(args.out, record)
    print(json.dumps(record))
    return record


if __name__ == "__main__":
    main()
