"""Requests of many clients translated together: a bounded queue and the coroutine that batches it.

One ``translate`` call over 32 sentences costs little more than over one (the search runs the
whole batch at once), so the server answers concurrent clients faster by grouping their requests
than by translating them one after another. Translation runs in one worker thread: TensorFlow
releases the GIL, so the event loop keeps accepting and refusing requests meanwhile, and the
requests that arrive during a batch make up the next one.
"""

import asyncio
import collections
import concurrent.futures
import functools
import typing


class QueueFull(Exception):
    """More sentences would wait than the queue holds (the server answers 503)."""


class Request(typing.NamedTuple):
    lines: list
    nbest: int
    options: dict  # translate's other keyword arguments (the server's: ``reverse``, the direction)
    future: asyncio.Future


class Batcher:
    """Groups waiting requests into ``translate`` calls of at most ``max_batch`` sentences.

    ``translate(lines, nbest=k, scores=True, **options)`` is a model's (``rnnpb_nmt.load``'s contract):
    per line its ``k`` best ``Translation``s. A batch holds whole requests of the same options (the
    server's: one direction), in arrival order; a request larger than ``max_batch`` goes alone
    (``translate`` cuts it into its own batches). A batch searches the largest n-best of its
    requests and each request gets its own first n: the beam search does not depend on n. While
    fewer than ``max_batch`` sentences wait, the batcher waits up to ``wait_seconds`` for more. A
    batch that fails is translated again request by request, so that only the request that fails
    gets the error. ``log`` gets one line per batch.
    """

    def __init__(self, translate, max_batch, wait_seconds, max_queue, log=None):
        self.translate, self.max_batch, self.wait_seconds, self.max_queue = translate, max_batch, wait_seconds, max_queue
        self.log = log or (lambda line: None)
        self.waiting = 0  # sentences queued and not yet in a batch
        self._pending = collections.deque()
        self._arrived = asyncio.Event()
        self._worker = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="translate")
        self._task = None

    def start(self):
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def close(self):
        """Stop batching (the server calls it once every request has been answered), and let a
        translation still running finish."""
        if self._task:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        for request in self._pending:
            request.future.cancel()
        self._worker.shutdown(wait=True)

    def submit(self, lines, nbest=1, **options):
        """Queue a request; its future gets, per line, its ``nbest`` best ``Translation``s, translated
        with ``options`` (``translate``'s keyword arguments, e.g. ``reverse=True``). Raises
        ``QueueFull`` when its sentences would make more than ``max_queue`` wait."""
        if self.waiting + len(lines) > self.max_queue:
            raise QueueFull(f"the queue is full ({self.waiting} sentences waiting, at most {self.max_queue}): "
                            "try again shortly")
        future = asyncio.get_running_loop().create_future()
        self._pending.append(Request(list(lines), nbest, options, future))
        self.waiting += len(lines)
        self._arrived.set()
        return future

    async def _run(self):
        while True:
            await self._gather()
            batch = self._take()
            if batch:
                await self._translate(batch)

    async def _gather(self):
        """Wait for a request, then up to ``wait_seconds`` for a full batch."""
        while not self._pending:
            self._arrived.clear()
            await self._arrived.wait()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.wait_seconds
        while self.waiting < self.max_batch and loop.time() < deadline:
            self._arrived.clear()
            try:
                await asyncio.wait_for(self._arrived.wait(), deadline - loop.time())
            except asyncio.TimeoutError:
                break

    def _take(self):
        """The next batch: the first live request, and those after it of its options while the
        batch stays within ``max_batch`` sentences; requests whose client has gone are dropped."""
        batch, kept, size = [], collections.deque(), 0
        for request in self._pending:
            if request.future.done():  # cancelled: the client went away
                self.waiting -= len(request.lines)
            elif not batch or (request.options == batch[0].options and size + len(request.lines) <= self.max_batch):
                batch.append(request)
                size += len(request.lines)
                self.waiting -= len(request.lines)
            else:
                kept.append(request)
        self._pending = kept
        return batch

    async def _translate(self, batch):
        """Translate ``batch`` in the worker thread and answer each of its requests."""
        lines = [line for request in batch for line in request.lines]
        nbest = max(request.nbest for request in batch)
        self.log(f"translating a batch of {len(batch)} request(s), {len(lines)} sentence(s)")
        call = functools.partial(self.translate, lines, nbest=nbest, scores=True, **batch[0].options)
        try:
            found = await asyncio.get_running_loop().run_in_executor(self._worker, call)
        except Exception as error:  # the server answers it with a 4xx or a 500
            if len(batch) > 1:  # which request fails? Each alone: the others are answered
                for request in batch:
                    await self._translate([request])
                return
            if not batch[0].future.done():
                batch[0].future.set_exception(error)
            return
        start = 0
        for request in batch:
            if not request.future.done():
                request.future.set_result([hypotheses[:request.nbest]
                                           for hypotheses in found[start:start + len(request.lines)]])
            start += len(request.lines)
