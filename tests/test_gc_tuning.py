"""mockbroker/gc_tuning.py: what the command line does to keep the log out of garbage collections, and that an
in-process broker leaves the user's collector alone. Structural checks only, never a time."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator

import pytest

from mockbroker.gc_tuning import FreezeSurvivors, freeze_now
from mockbroker.protocol.records.batch import RecordBatch
from mockbroker.protocol.records.builder import RecordInput, build_batch
from mockbroker.server import MockBroker
from mockbroker.state.log.partition_log import PartitionLog


@pytest.fixture
def unfrozen() -> Iterator[None]:
    """Every test starts and ends with nothing frozen (a freeze is process-wide)."""
    gc.unfreeze()
    yield
    gc.unfreeze()


def tracked(obj: object) -> bool:
    """Whether a collection would visit obj (frozen objects are not in gc.get_objects())."""
    return any(o is obj for o in gc.get_objects())


def test_an_in_process_broker_leaves_the_collector_alone(unfrozen: None) -> None:
    callbacks, thresholds = list(gc.callbacks), gc.get_threshold()
    with MockBroker(port=0).run_in_thread() as broker:
        broker.create_topic("t", 1)
    assert gc.get_freeze_count() == 0
    assert gc.callbacks == callbacks
    assert gc.get_threshold() == thresholds


def test_freeze_now_takes_stored_batches_out_of_collections(unfrozen: None) -> None:
    log = PartitionLog("t", 0)
    stored = log.append(RecordBatch(memoryview(bytearray(build_batch([RecordInput(b"k", b"v")])))), 0)
    assert tracked(stored)  # a StoredBatch is a tracked object: every full collection visits it
    freeze_now()
    assert gc.get_freeze_count() > 0
    assert not tracked(stored)
    assert bytes(log.read(0, 1 << 20, min_one=True)[0][0]) == bytes(stored.data)  # served as before


async def test_survivors_of_a_collection_are_frozen_on_the_loop(unfrozen: None) -> None:
    freezer = FreezeSurvivors(asyncio.get_running_loop()).install()
    try:
        survivor = [object()]  # a tracked container that outlives the collection
        gc.collect(0)  # a young collection alone schedules nothing
        await asyncio.sleep(0)
        assert freezer.freezes == 0
        gc.collect(1)
        assert freezer.freezes == 0  # not inside the collector: on the loop
        for _ in range(100):
            if freezer.freezes:
                break
            await asyncio.sleep(0)
        assert freezer.freezes == 1  # its own collection(1) scheduled no second freeze
        assert not tracked(survivor)
    finally:
        freezer.uninstall()
    assert freezer._on_gc not in gc.callbacks


CLI_CHILD = """
import asyncio, gc, os, signal, sys
import mockbroker.cli as cli
serve = cli.serve
async def checked(settings):
    async def check():
        while not gc.get_freeze_count():
            await asyncio.sleep(0.01)
        freezers = [cb for cb in gc.callbacks if type(getattr(cb, "__self__", None)).__name__ == "FreezeSurvivors"]
        print("frozen", len(freezers), flush=True)
        os.kill(os.getpid(), signal.SIGTERM)
    task = asyncio.ensure_future(check())
    code = await serve(settings)
    print("callbacks after stop", len([cb for cb in gc.callbacks if hasattr(cb, "__self__")]), flush=True)
    return code
cli.serve = checked
sys.exit(cli.main(["--port", "0", "--no-env"]))
"""


def test_the_command_line_freezes_at_start_and_installs_the_freezer() -> None:
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", CLI_CHILD], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    lines = [line for line in out.stdout.splitlines() if not line.startswith("mockbroker ")]
    assert lines == ["frozen 1", "callbacks after stop 0"]
