"""``rnnpb-nmt serve``: a trained run (``--working_dir``) or an export (``--saved_model``) answering
translation requests over HTTP (aiohttp).

    rnnpb-nmt serve --working_dir runs/en-de --port 8000
    curl -s localhost:8000/translate -d '{"text": ["How are you?"], "nbest": 2}'

``POST /translate`` takes ``{"text": [sentences], "nbest": k, "reverse": false, "token_scores": false}``
and answers ``{"model", "version", "translations": [per sentence its k best {"text", "score"}]}``;
``GET /health`` answers ``{"status": "ok", "model", "version"}``. Requests of concurrent clients are
translated together (``batching``). Every refusal is a 4xx (a 500 for a failed translation) with
a one-line ``{"error": reason}``; SIGTERM or SIGINT stops accepting, answers the requests already
received, and exits 0.
"""

import asyncio
import json
import math
import os
import signal
import sys
import traceback
import typing

from aiohttp import web

from rnnpb_nmt import api, flags
from rnnpb_nmt.errors import UserError
from rnnpb_nmt.serving.batching import Batcher, QueueFull

FIELDS = ("text", "nbest", "reverse", "token_scores")
SIGNALS = (signal.SIGTERM, signal.SIGINT)  # stop serving: answer the requests received, exit 0
BATCHER = web.AppKey("batcher", Batcher)


class Served(typing.NamedTuple):
    """The model behind the server, whichever way it was loaded."""
    model: typing.Any  # .translate(lines, nbest, scores, reverse): rnnpb_nmt.load's contract
    name: str
    version: str
    beam_size: int
    batch_size: int  # the run's --test_batch_size: the default --max_batch
    reversible: bool


class Limits(typing.NamedTuple):
    max_request_bytes: int
    max_sentences: int
    max_sentence_chars: int
    max_queue: int
    max_batch: int
    batch_wait_ms: float


def load_working_dir(working_dir, **settings):
    """A trained run, named after its directory, versioned as its export would be (the checkpoint's
    epoch and a digest of the weights: ``export.version_of``)."""
    from rnnpb_nmt.serving.export import version_of

    trained = api.load(working_dir, **settings)
    inference = trained.config.inference
    return Served(trained, os.path.basename(os.path.normpath(working_dir)), version_of(trained),
                  inference.beam_size, inference.test_batch_size, trained.translator.model.reversible)


def load_saved_model(path):
    """An export of ``rnnpb-nmt export`` (``ExportedModel``), with the settings it was exported with."""
    from rnnpb_nmt.serving.exported import ExportedModel

    model = ExportedModel(path)
    return Served(model, model.name, model.version, model.beam_size, model.info["test_batch_size"], model.reversible)


class Refused(Exception):
    """A request the server answers with ``status`` and a one-line reason."""

    def __init__(self, status, reason):
        super().__init__(reason)
        self.status = status


def error(status, reason, headers=None):
    return web.json_response({"error": reason}, status=status, headers=headers)


@web.middleware
async def one_line_errors(request, handler):
    """aiohttp's own refusals (unknown path, wrong method, too large a body) as one-line JSON."""
    try:
        return await handler(request)
    except web.HTTPException as e:
        if e.status < 400:
            raise
        reasons = {404: f"no such path: {request.path} (the paths: POST /translate, GET /health)",
                   405: f"{request.method} {request.path}: method not allowed (allowed: {e.headers.get('Allow', '')})"}
        headers = {"Allow": e.headers["Allow"]} if "Allow" in e.headers else None
        return error(e.status, reasons.get(e.status, e.reason), headers)


async def read_request(request, served, limits):
    """The checked fields of a translation request: (lines, nbest, reverse, token_scores)."""
    if request.content_length is not None and request.content_length > limits.max_request_bytes:
        raise Refused(413, f"request body of {request.content_length} bytes, more than --max_request_bytes="
                           f"{limits.max_request_bytes}")
    try:
        body = await request.read()
    except web.HTTPRequestEntityTooLarge:
        raise Refused(413, f"request body larger than --max_request_bytes={limits.max_request_bytes}") from None
    try:
        fields = json.loads(body.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise Refused(400, f"request body is not valid UTF-8 (byte {e.start})") from None
    except ValueError as e:
        raise Refused(400, f"request body is not JSON ({e})") from None
    except RecursionError:  # json's decoder recurses once per level of nesting
        raise Refused(400, "request body is not JSON this server reads (nested too deeply)") from None
    if not isinstance(fields, dict):
        raise Refused(400, 'request body must be a JSON object such as {"text": ["a sentence"]}')
    unknown = sorted(set(fields) - set(FIELDS))
    if unknown:
        raise Refused(400, f"unknown field(s) {', '.join(unknown)} (the fields: {', '.join(FIELDS)})")
    return check_text(fields.get("text"), limits), check_nbest(fields.get("nbest", 1), served), \
        check_flag(fields, "reverse", served), check_flag(fields, "token_scores", served)


def check_text(text, limits):
    if text is None:
        raise Refused(400, 'missing field "text" (a list of sentences)')
    if not isinstance(text, list) or not all(isinstance(line, str) for line in text):
        raise Refused(400, '"text" must be a list of strings')
    if not text:
        raise Refused(400, '"text" is an empty list: give at least one sentence')
    if len(text) > limits.max_sentences:
        raise Refused(413, f'"text" has {len(text)} sentences, more than --max_sentences={limits.max_sentences}')
    for i, line in enumerate(text):
        if len(line) > limits.max_sentence_chars:
            raise Refused(413, f'"text"[{i}] has {len(line)} characters, more than --max_sentence_chars='
                               f"{limits.max_sentence_chars}")
        check_line(i, line)
    return text


def check_line(i, line):
    """A sentence is one line of text, as the command line reads them: no line break, no NUL (which
    the command line takes for binary data), no lone surrogate (``"\\ud800"``, which is no UTF-8)."""
    if "\n" in line or "\r" in line:
        raise Refused(400, f'"text"[{i}] holds a line break: give one sentence per string')
    if "\0" in line:
        raise Refused(400, f'"text"[{i}] holds a NUL character: binary data, not text')
    try:
        line.encode("utf-8")
    except UnicodeEncodeError as e:
        raise Refused(400, f'"text"[{i}] holds a lone surrogate (character {e.start}): not text') from None


def check_nbest(nbest, served):
    if isinstance(nbest, bool) or not isinstance(nbest, int) or not 1 <= nbest <= served.beam_size:
        raise Refused(400, f'"nbest" must be an integer from 1 to {served.beam_size} (the beam size), not '
                           f"{json.dumps(nbest)[:40]}")
    return nbest


def check_flag(fields, name, served):
    value = fields.get(name, False)
    if not isinstance(value, bool):
        raise Refused(400, f'"{name}" must be true or false, not {json.dumps(value)[:40]}')
    if name == "reverse" and value and not served.reversible:
        raise Refused(400, f'"reverse": model {served.name} translates one way only')
    return value


def make_app(served, limits, log=None):
    """The aiohttp application of ``served``: its routes, and its batcher, started with the app and
    closed after the last request has been answered."""
    app = web.Application(middlewares=[one_line_errors], client_max_size=limits.max_request_bytes)
    batcher = Batcher(served.model.translate, limits.max_batch, limits.batch_wait_ms / 1000, limits.max_queue, log)
    app[BATCHER] = batcher

    async def run_batcher(app):
        batcher.start()
        yield
        await batcher.close()

    async def health(request):
        return web.json_response({"status": "ok", "model": served.name, "version": served.version})

    async def translate(request):
        try:
            lines, nbest, reverse, token_scores = await read_request(request, served, limits)
            found = await batcher.submit(lines, nbest, reverse=reverse)
        except Refused as e:
            return error(e.status, str(e))
        except QueueFull as e:
            return error(503, str(e), {"Retry-After": "1"})
        except UserError as e:  # the model refuses these sentences
            return error(400, str(e))
        except Exception as e:  # never a traceback to the client; the server's log keeps it
            traceback.print_exc(file=sys.stderr)
            return error(500, f"translation failed: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
        return web.json_response({"model": served.name, "version": served.version, "translations": [
            [{"text": t.text, "score": t.score, **({"token_scores": t.token_scores} if token_scores else {})}
             for t in hypotheses] for hypotheses in found]})

    app.cleanup_ctx.append(run_batcher)
    app.router.add_get("/health", health)
    app.router.add_post("/translate", translate)
    return app


async def serve(app, host, port, shutdown_timeout, ready):
    """Serve ``app`` until SIGTERM or SIGINT, then stop accepting, answer the requests received
    (for up to ``shutdown_timeout`` seconds) and return. ``ready(url)`` once listening."""
    runner = web.AppRunner(app, handle_signals=False, shutdown_timeout=shutdown_timeout, access_log=None)
    await runner.setup()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for number in SIGNALS:
        loop.add_signal_handler(number, stop.set)
    try:
        site = web.TCPSite(runner, host, port)
        try:
            await site.start()
        except OSError as e:  # the address is in use, or cannot be bound
            raise UserError(f"--host={host} --port={port}: cannot listen ({e.strerror or e})") from None
        bound_host, bound_port = runner.addresses[0][:2]
        ready(f"http://{f'[{bound_host}]' if ':' in bound_host else bound_host}:{bound_port}")
        await stop.wait()
    finally:
        await runner.cleanup()
        for number in SIGNALS:  # a second SIGTERM (``timeout`` also signals its process group) must not kill the exit
            loop.remove_signal_handler(number)
            signal.signal(number, signal.SIG_IGN)


def build_parser():
    """``rnnpb-nmt serve``'s flags: the model, where to listen, the limits, and (with --working_dir)
    the translation settings of the command line."""
    parser = flags.Parser(prog=f"{flags.prog()} serve", usage="%(prog)s --working_dir=DIR|--saved_model=DIR [flags]",
                          description="Answer translation requests over HTTP (JSON).",
                          example=f"{flags.prog()} serve --working_dir=runs/bound --port=8000")
    model = parser.add_mutually_exclusive_group(required=True)
    model.add_argument("--working_dir", help="the trained run to serve")
    model.add_argument("--saved_model", help="an export of rnnpb-nmt export to serve (with its exported settings)")
    parser.add_argument("--host", default="127.0.0.1", help="the address to listen on (default: loopback only)")
    parser.add_argument("--port", type=int, default=8000, help="the port (0: a free one, printed when ready)")
    parser.add_argument("--max_batch", type=int,
                        help="sentences translated at once, across requests (default: the run's --test_batch_size; "
                             "1: one request at a time)")
    parser.add_argument("--batch_wait_ms", type=float, default=5.0,
                        help="while fewer than --max_batch sentences wait, how long to wait for more before translating")
    parser.add_argument("--max_request_bytes", type=int, default=1 << 20, help="the largest request body")
    parser.add_argument("--max_sentences", type=int, default=1000, help="the most sentences in one request")
    parser.add_argument("--max_sentence_chars", type=int, default=1000, help="the longest sentence, in characters")
    parser.add_argument("--max_queue", type=int, default=10000,
                        help="the most sentences waiting; more are refused with 503 and Retry-After")
    parser.add_argument("--shutdown_timeout", type=float, default=60.0,
                        help="after SIGTERM, how many seconds the requests received get to be answered")
    parser.add_section("inference")
    return parser


def check_args(parser, args):
    """The flags' ranges, as one-line errors (argparse's exit status 2)."""
    for flag in ("max_batch", "max_request_bytes", "max_sentences", "max_sentence_chars", "max_queue"):
        if getattr(args, flag) is not None and getattr(args, flag) < 1:
            parser.error(f"--{flag}={getattr(args, flag)}: must be at least 1")
    if not (0 <= args.batch_wait_ms < math.inf and 0 <= args.shutdown_timeout < math.inf and 0 <= args.port <= 65535):
        parser.error("--batch_wait_ms and --shutdown_timeout must be finite and >= 0, --port from 0 to 65535")
    if args.max_sentences > args.max_queue:
        parser.error(f"--max_sentences={args.max_sentences} is more than --max_queue={args.max_queue}: "
                     "such a request could never be queued")


def main(argv):
    """``rnnpb-nmt serve``: 0 after a clean shutdown; 1 and a one-line error for a model that does not
    load or an address in use; argparse's 2 for bad flags."""
    parser = build_parser()
    args = parser.parse_args(argv)
    check_args(parser, args)
    settings = flags.inference_settings(vars(args))
    if args.saved_model and settings:
        parser.error(f"--{next(iter(settings))}: only with --working_dir (an export keeps the settings it was "
                     "exported with)")
    try:
        served = load_saved_model(args.saved_model) if args.saved_model else load_working_dir(args.working_dir,
                                                                                                **settings)
        limits = Limits(args.max_request_bytes, args.max_sentences, args.max_sentence_chars, args.max_queue,
                        args.max_batch or served.batch_size, args.batch_wait_ms)
        app = make_app(served, limits, log)
        asyncio.run(serve(app, args.host, args.port, args.shutdown_timeout,
                          lambda url: print(f"serving {served.name} {served.version} at {url}", flush=True)))
    except (UserError, OSError) as e:  # OSError: a model file that cannot be read
        print(f"error: {e}", file=sys.stderr)
        return 1
    log("stopped")
    return 0


def log(line):
    """The server's log (a line per batch): stderr, where it cannot mix with the line that says it is ready."""
    print(line, file=sys.stderr, flush=True)
