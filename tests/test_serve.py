"""``rnnpb-nmt serve`` (issue 44): real HTTP requests to a server on a free loopback port answer what the
command line answers, alone and batched with other clients' requests; bad requests are 4xx with a
one-line reason and the server goes on answering; SIGTERM answers the request in flight, then exits 0.

Every server a test starts listens on 127.0.0.1 only and runs under ``timeout`` (LIFETIME), so that it
stops even if the tests die; a fixture's ``finally`` stops it with SIGTERM.
"""

import asyncio
import http.client
import json
import re
import signal
import subprocess
import sys
import threading
import time
import types

import pytest
import tensorflow as tf

from rnnpb_nmt import load
from rnnpb_nmt.infer.prediction import Translation
from rnnpb_nmt.serving import server as serving
from rnnpb_nmt.serving.batching import Batcher, QueueFull
from rnnpb_nmt.serving.export import version_of

from helpers import ROOT, cli_in_process, untrained_working_dir

import load_test


# Long enough for a module's tests on busy cores: the module's server outlived 600 s when the suite
# shared its 2 cores with two experiments, and a server the timeout stops fails the tests.
LIFETIME = 3600


class Server:
    """``nmt.py serve ARGS --port=0`` in a subprocess; its port read from the line it prints when ready."""

    def __init__(self, folder, *args):
        self.log = folder / "server.log"
        with open(self.log, "w", encoding="utf-8") as err:
            self.proc = subprocess.Popen(["timeout", str(LIFETIME), sys.executable, str(ROOT / "nmt.py"), "serve", "--port=0",
                                          *map(str, args)], stdout=subprocess.PIPE, stderr=err, text=True, cwd=ROOT)
        self.ready = self.proc.stdout.readline()
        if " at http://127.0.0.1:" not in self.ready:
            self.stop()
            raise AssertionError(f"the server did not start: {self.log.read_text()[-3000:]}")
        self.port = int(self.ready.rsplit(":", 1)[1])

    def request(self, method, path, body=None, **options):
        """(status, the JSON answer, the headers) of one request on a new connection."""
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=300)
        try:
            connection.request(method, path, body=body, **options)
            response = connection.getresponse()
            return response.status, json.loads(response.read()), response.headers
        finally:
            connection.close()

    def translate(self, **fields):
        status, answer, _ = self.request("POST", "/translate", json.dumps(fields).encode())
        assert status == 200, answer
        return answer

    def wait_for_log(self, text):
        """Until the server's log holds ``text`` (a bounded wait, not a timing assertion)."""
        for _ in range(3000):
            if text in self.log.read_text(encoding="utf-8"):
                return
            time.sleep(0.1)
        raise AssertionError(f"the server never logged {text!r}: {self.log.read_text()[-3000:]}")

    def stop(self):
        """SIGTERM (``timeout`` passes it on); the exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise


@pytest.fixture(scope="module")
def sources(demo_data):
    return (demo_data / "test.en").read_text(encoding="utf-8").splitlines()


@pytest.fixture(scope="module")
def server(trained_encdec, tmp_path_factory):
    """The trained seq-to-seq served with a beam of 3, batches of up to 16 sentences."""
    running = Server(tmp_path_factory.mktemp("server"), f"--working_dir={trained_encdec}", "--beam_size=3",
                     "--max_batch=16", "--batch_wait_ms=20")
    try:
        yield running
    finally:
        assert running.stop() == 0


@pytest.fixture(scope="module")
def expected(trained_encdec, sources):
    """Per test sentence its 3 best translations, from the Python API in this process."""
    return load(str(trained_encdec), beam_size=3).translate(sources, nbest=3)


def assert_same(answered, hypotheses):
    """An answer's n-best list is the API's: the same texts, the same scores."""
    assert [h["text"] for h in answered] == [h.text for h in hypotheses]
    assert [h["score"] for h in answered] == pytest.approx([h.score for h in hypotheses], abs=1e-4)


@pytest.mark.long
def test_the_answers_are_the_command_lines(server, trained_encdec, sources, capsys, tmp_path):
    status, health, _ = server.request("GET", "/health")
    best = json.loads((trained_encdec / "training_stats.json").read_text())["best_epoch"]
    assert status == 200 and sorted(health) == ["model", "status", "version"]
    assert (health["status"], health["model"]) == ("ok", "wd")
    # export.version_of's form: the best epoch and 12 hex digits of the weights' digest
    assert re.fullmatch(rf"epoch-{best}-[0-9a-f]{{12}}", health["version"]), health
    assert f"serving wd {health['version']} at " in server.ready
    (tmp_path / "ten.en").write_text("\n".join(sources[:10]) + "\n", encoding="utf-8")
    common = ["translate", f"--working_dir={trained_encdec}", "-i", tmp_path / "ten.en", "--beam_size=3"]
    status, best, _ = cli_in_process(common, capsys)
    assert status == 0
    answer = server.translate(text=sources[:10])
    assert (answer["model"], answer["version"]) == ("wd", health["version"])
    assert [found[0]["text"] for found in answer["translations"]] == best.splitlines()
    assert all(len(found) == 1 and set(found[0]) == {"text", "score"} for found in answer["translations"])
    status, nbest, _ = cli_in_process([*common, "--nbest=3"], capsys)
    rows = [line.split(" ||| ") for line in nbest.splitlines()]
    answer = server.translate(text=sources[:10], nbest=3, token_scores=True)
    listed = [(str(n), h["text"]) for n, found in enumerate(answer["translations"]) for h in found]
    assert status == 0 and listed == [tuple(row[:2]) for row in rows]
    scores = [h["score"] for found in answer["translations"] for h in found]
    assert scores == pytest.approx([float(row[2]) for row in rows], abs=1e-3)
    for found in answer["translations"]:
        assert all(sum(h["token_scores"]) == pytest.approx(h["score"], abs=1e-3) for h in found)


@pytest.mark.long
def test_concurrent_clients_get_the_translations_they_would_get_alone(server, sources, expected):
    answers, logged = [None] * len(sources), len(server.log.read_text().splitlines())

    def ask(i):  # a client: one sentence, its own n-best
        answers[i] = server.translate(text=[sources[i]], nbest=1 + i % 3)["translations"]

    clients = [threading.Thread(target=ask, args=(i,)) for i in range(len(sources))]
    for client in clients:
        client.start()
    for client in clients:
        client.join(timeout=600)
    for i, answer in enumerate(answers):
        assert answer is not None and len(answer) == 1
        assert_same(answer[0], expected[i][:1 + i % 3])
    batches = server.log.read_text().splitlines()[logged:]  # "translating a batch of R request(s), S sentence(s)"
    assert sum(int(line.split()[-2]) for line in batches) == len(sources)  # each sentence once, whatever the grouping


def test_changing_one_weight_changes_the_version(tmp_path):
    model = untrained_working_dir(tmp_path, ROOT / "tests" / "fixtures" / "tiny_corpus", model="encdec")
    trained = types.SimpleNamespace(translator=types.SimpleNamespace(model=model), working_dir=str(tmp_path))
    before = version_of(trained)
    assert re.fullmatch(r"epoch-0-[0-9a-f]{12}", before)  # no epoch finished yet: no training_stats.json
    weight = model.trainable_variables[0]
    weight.assign(tf.tensor_scatter_nd_add(weight, [[0] * weight.shape.rank], [1.0]))  # its first element
    after = version_of(trained)
    assert after.startswith("epoch-0-") and after != before


TEN_MB = 10 * 1024 * 1024
BAD_REQUESTS = [  # (method, path, body, other request options, status, the reason begins with)
    ("POST", "/translate", b'{"text": ["a", ', {}, 400, "request body is not JSON ("),
    ("POST", "/translate", b"", {}, 400, "request body is not JSON ("),
    ("POST", "/translate", b"[" * 100_000 + b"]" * 100_000, {}, 400, "request body is not JSON this server reads "),
    ("POST", "/translate", b'["a sentence"]', {}, 400, "request body must be a JSON object"),
    ("POST", "/translate", b'{"text": ["caf\xe9"]}', {}, 400, "request body is not valid UTF-8 (byte 14)"),
    ("POST", "/translate", b'{"nbest": 2}', {}, 400, 'missing field "text"'),
    ("POST", "/translate", b'{"text": "one string"}', {}, 400, '"text" must be a list of strings'),
    ("POST", "/translate", b'{"text": ["a", 7]}', {}, 400, '"text" must be a list of strings'),
    ("POST", "/translate", b'{"text": []}', {}, 400, '"text" is an empty list'),
    ("POST", "/translate", b'{"text": ["a", "b\\nc"]}', {}, 400, '"text"[1] holds a line break: give one sentence'),
    ("POST", "/translate", b'{"text": ["a\\u0000b"]}', {}, 400, '"text"[0] holds a NUL character: binary data'),
    ("POST", "/translate", b'{"text": ["\\ud800"]}', {}, 400, '"text"[0] holds a lone surrogate (character 0)'),
    ("POST", "/translate", b'{"text": ["a"], "nbest": 4}', {}, 400, '"nbest" must be an integer from 1 to 3'),
    ("POST", "/translate", b'{"text": ["a"], "nbest": "2"}', {}, 400, '"nbest" must be an integer from 1 to 3'),
    ("POST", "/translate", b'{"text": ["a"], "nbest": true}', {}, 400, '"nbest" must be an integer from 1 to 3'),
    ("POST", "/translate", b'{"text": ["a"], "reverse": "yes"}', {}, 400, '"reverse" must be true or false'),
    ("POST", "/translate", b'{"text": ["a"], "reverse": true}', {}, 400, '"reverse": model wd translates one way'),
    ("POST", "/translate", b'{"text": ["a"], "beam": 2}', {}, 400, "unknown field(s) beam (the fields: text, "),
    ("POST", "/translate", json.dumps({"text": ["a"] * 100_000}).encode(), {}, 413,
     '"text" has 100000 sentences, more than --max_sentences=1000'),
    ("POST", "/translate", json.dumps({"text": ["a " * 600]}).encode(), {}, 413,
     '"text"[0] has 1200 characters, more than --max_sentence_chars=1000'),
    ("POST", "/translate", b"[" * TEN_MB, {}, 413, f"request body of {TEN_MB} bytes, more than --max_request_bytes="),
    ("POST", "/translate", (b"[" * 65536 for _ in range(160)), {"encode_chunked": True}, 413,
     "request body larger than --max_request_bytes=1048576"),
    ("GET", "/translations", None, {}, 404, "no such path: /translations (the paths: POST /translate, GET /health)"),
    ("GET", "/translate", None, {}, 405, "GET /translate: method not allowed (allowed: POST)"),
    ("POST", "/health", b"{}", {}, 405, "POST /health: method not allowed (allowed: GET"),
]


@pytest.mark.long
def test_bad_requests_are_4xx_with_a_one_line_reason_and_the_server_goes_on(server, sources, expected):
    for method, path, body, options, status, reason in BAD_REQUESTS:
        answered, answer, headers = server.request(method, path, body, **options)
        assert (answered, list(answer)) == (status, ["error"]), (reason, answered, answer)
        assert answer["error"].startswith(reason) and "\n" not in answer["error"], answer
        assert headers["Content-Type"].startswith("application/json")
        if status == 405:
            assert headers["Allow"]
    assert server.request("GET", "/health")[0] == 200
    assert_same(server.translate(text=[sources[0]], nbest=3)["translations"][0], expected[0])


@pytest.mark.long
def test_an_address_in_use_is_a_one_line_error_naming_it(server, trained_encdec, capsys):
    status, out, err = cli_in_process(["serve", f"--working_dir={trained_encdec}", f"--port={server.port}"], capsys)
    assert (status, out) == (1, "") and len(err.splitlines()) == 1, err
    assert err.startswith(f"error: --host=127.0.0.1 --port={server.port}: cannot listen (")
    assert server.request("GET", "/health")[0] == 200  # the server holding the port goes on


@pytest.mark.long
def test_sigterm_answers_the_request_in_flight_then_exits_0(trained_encdec, sources, tmp_path):
    running = Server(tmp_path, f"--working_dir={trained_encdec}", "--beam_size=3")
    answers = []
    try:
        client = threading.Thread(target=lambda: answers.append(running.translate(text=sources * 4, nbest=3)))
        client.start()
        running.wait_for_log(f"translating a batch of 1 request(s), {4 * len(sources)} sentence(s)")
        running.proc.send_signal(signal.SIGTERM)
        running.proc.send_signal(signal.SIGTERM)  # a second one (impatience) changes nothing
        client.join(timeout=600)
    finally:
        status = running.stop()
    assert status == 0 and running.log.read_text().splitlines()[-1] == "stopped"
    assert len(answers) == 1 and len(answers[0]["translations"]) == 4 * len(sources)
    with pytest.raises(ConnectionRefusedError):
        running.request("GET", "/health")


async def until(condition):
    """Wait, bounded, until ``condition()`` holds (the batcher has reached a state)."""
    for _ in range(30000):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the batcher never got there")


def test_a_full_queue_is_503_and_a_failed_translation_500_and_the_server_goes_on(trained_encdec, sources):
    from aiohttp.test_utils import TestClient, TestServer

    served = serving.load_working_dir(str(trained_encdec), beam_size=1)  # greedy search
    started, go = threading.Event(), threading.Event()

    def held(lines, **settings):  # the model's translation, once the test lets it go
        started.set()
        go.wait(300)
        if "out of memory" in lines:
            raise RuntimeError("out of memory\nsecond line")
        return served.model.translate(lines, **settings)

    limits = serving.Limits(max_request_bytes=1 << 20, max_sentences=2, max_sentence_chars=200, max_queue=2,
                            max_batch=2, batch_wait_ms=0)
    app = serving.make_app(served._replace(model=types.SimpleNamespace(translate=held)), limits)

    async def scenario():
        async with TestClient(TestServer(app, host="127.0.0.1")) as client:
            batcher = app[serving.BATCHER]
            first = asyncio.ensure_future(client.post("/translate", json={"text": sources[:1]}))
            await until(started.is_set)
            second = asyncio.ensure_future(client.post("/translate", json={"text": sources[1:3]}))
            await until(lambda: batcher.waiting == 2)
            refused = await client.post("/translate", json={"text": sources[3:4]})
            assert (refused.status, refused.headers["Retry-After"]) == (503, "1")
            assert (await refused.json())["error"].startswith("the queue is full (2 sentences waiting, at most 2)")
            go.set()
            answers = [await (await response).json() for response in (first, second)]
            failed = await client.post("/translate", json={"text": ["out of memory"]})
            assert failed.status == 500
            assert await failed.json() == {"error": "translation failed: RuntimeError: out of memory"}
            health = await client.get("/health")
            return answers, health.status

    answers, health = asyncio.run(scenario())
    greedy = served.model.translate(sources[:3], scores=True)
    assert health == 200
    for answer, alone in zip([*answers[0]["translations"], *answers[1]["translations"]], greedy, strict=True):
        assert_same(answer, alone)


def echo(lines, nbest, scores, calls, reverse=False):
    """A translation that says what it was asked: per line ``nbest`` marked copies, best first."""
    calls.append((list(lines), nbest, reverse))
    if "fail" in lines:
        raise ValueError("no")
    return [[Translation(f"{'<' if reverse else '>'}{line}{k}", -k, []) for k in range(nbest)] for line in lines]


def test_the_batcher_groups_whole_requests_of_one_direction_up_to_max_batch_and_isolates_a_failure():
    calls = []

    async def scenario():
        batcher = Batcher(lambda lines, **kw: echo(lines, calls=calls, **kw), max_batch=3, wait_seconds=0,
                          max_queue=7)
        futures = [batcher.submit(["a"]), batcher.submit(["b", "c"], nbest=2), batcher.submit(["d"], reverse=True),
                   batcher.submit(["e"]), batcher.submit(["f", "g"])]
        with pytest.raises(QueueFull, match=r"^the queue is full \(7 sentences waiting, at most 7\)"):
            batcher.submit(["h"])
        batcher.start()
        found = await asyncio.gather(*futures)
        late = await batcher.submit(["i", "j", "k", "l"])  # more than max_batch: alone
        passing, failing = batcher.submit(["x"]), batcher.submit(["fail"])  # one batch, which fails
        assert [t.text for t in (await passing)[0]] == [">x0"]
        with pytest.raises(ValueError):
            await failing
        after = await batcher.submit(["m"])
        await batcher.close()
        return found, late, after

    found, late, after = asyncio.run(scenario())
    assert calls == [(["a", "b", "c"], 2, False), (["d"], 1, True), (["e", "f", "g"], 1, False),
                     (["i", "j", "k", "l"], 1, False), (["x", "fail"], 1, False), (["x"], 1, False), (["fail"], 1, False),
                     (["m"], 1, False)]
    texts = [[[t.text for t in hypotheses] for hypotheses in request] for request in (*found, late, after)]
    assert texts == [[[">a0"]], [[">b0", ">b1"], [">c0", ">c1"]], [["<d0"]], [[">e0"]], [[">f0"], [">g0"]],
                     [[">i0"], [">j0"], [">k0"], [">l0"]], [[">m0"]]]


@pytest.mark.parametrize("args, message", [
    ([], "one of the arguments --working_dir --saved_model is required"),
    (["--working_dir=a", "--saved_model=b"], "not allowed with argument"),
    (["--saved_model=b", "--beam_size=3"], "--beam_size: only with --working_dir"),
    (["--working_dir=a", "--max_sentences=5", "--max_queue=2"], "--max_sentences=5 is more than --max_queue=2"),
    (["--working_dir=a", "--max_batch=0"], "--max_batch=0: must be at least 1"),
    (["--working_dir=a", "--max_bach=2"], "did you mean --max_batch?"),
    (["--working_dir=a", "--batch_wait_ms=inf"], "--batch_wait_ms and --shutdown_timeout must be finite"),
    (["--working_dir=a", "--shutdown_timeout=nan"], "--batch_wait_ms and --shutdown_timeout must be finite"),
])
def test_bad_flags_are_one_line_errors(args, message, capsys):
    status, _, err = cli_in_process(["serve", *args], capsys)
    assert status == 2 and len(err.splitlines()) == 1 and message in err, err


def test_a_directory_without_a_run_is_a_one_line_error(capsys, tmp_path):
    status, out, err = cli_in_process(["serve", f"--working_dir={tmp_path}", "--port=0"], capsys)
    assert (status, out) == (1, "") and err.startswith("error: ") and len(err.splitlines()) == 1, err


@pytest.mark.long
def test_an_export_serves_what_its_run_serves(server, trained_encdec, sources, expected, capsys, tmp_path):
    status, _, err = cli_in_process(["export", f"--working_dir={trained_encdec}", f"--out={tmp_path / 'export'}",
                                     "--beam_size=3"], capsys)
    assert status == 0, err
    exported = Server(tmp_path, f"--saved_model={tmp_path / 'export'}")
    try:
        assert exported.request("GET", "/health")[1] == server.request("GET", "/health")[1]
        answer = exported.translate(text=sources[:6], nbest=3)["translations"]
    finally:
        assert exported.stop() == 0
    for found, hypotheses in zip(answer, expected[:6], strict=True):
        assert_same(found, hypotheses)


@pytest.mark.long
def test_the_load_test_reports_both_servers_and_do_testing(trained_encdec, demo_data):
    record = load_test.main([f"--working_dir={trained_encdec}", f"--test_set={demo_data / 'test.en'}",
                             "--clients=1,4", "--requests=8", "--max_seconds=300"])
    assert record["command"].startswith("python3 run_scripts/load_test.py --working_dir=")
    for mode in ("batched", "one_at_a_time"):
        assert record[mode]["exit_status"] == 0 and [run["clients"] for run in record[mode]["runs"]] == [1, 4]
        for run in record[mode]["runs"]:
            assert (run["answered"], run["errors"]) == (8, 0)
            assert 0 < run["p50_ms"] <= run["p99_ms"] and run["sentences_per_second"] > 0
    assert record["one_at_a_time"]["server_flags"] == ["--max_batch=1"]
    keys = load_test.benchmark_keys(record)
    assert keys["serving_errors"] == 0 and keys["serving_do_testing_sentences_per_second"] > 0
    assert keys["serving_batching_speedup_c4"] == pytest.approx(
        keys["serving_batched_sentences_per_second_c4"] / keys["serving_one_at_a_time_sentences_per_second_c4"])


@pytest.mark.slow  # starts the benchmark script (TensorFlow and every model family)
def test_the_benchmarks_serving_part_needs_one_run_and_a_test_set():
    proc = subprocess.run([sys.executable, str(ROOT / "run_scripts" / "benchmark.py"), "--part=serving",
                           "--working_dirs=a,b", "--test_set=x"], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert proc.returncode == 2 and proc.stderr.endswith("--part=serving needs one --working_dirs and --test_set\n")
