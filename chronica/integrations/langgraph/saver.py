"""LangGraph's checkpoints kept in chronica: ``ChronicaSaver``.

``pip install "chronica[langgraph]"``, add ``"chronica.integrations.langgraph"`` to
``INSTALLED_APPS`` and ``migrate`` (no ``setup()``: the tables come from Django's
migrations), then compile a graph with it::

    graph = builder.compile(checkpointer=ChronicaSaver())
    graph.invoke(inputs, {"configurable": {"thread_id": chronicum_id, "user_id": owner_id}})

A thread is the chronicum of the same ID, under its owner: ``owner_id=``, else the
config's ``configurable.user_id``, else ``EmptyOwnerID``. Another owner's thread reads
as missing; writing to it raises ``ChronicumNotFound``. Every message of a list of
messages in the graph's state (``add_messages``) is recorded once as acta of that
chronicum (``messages.py``), and a checkpoint keeps such a list as references to them.
"""

from __future__ import annotations

import builtins
import random
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any, TypeVar

from django.db import IntegrityError
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    get_checkpoint_id,
    get_serializable_checkpoint_metadata,
)

from chronica import ChronicaError, ChronicumExists, ChronicumNotFound, EmptyOwnerID, services

from .copying import copy_thread_rows
from .lists import MessageLists
from .messages import is_message_list
from .models import LangGraphBlob, LangGraphCheckpoint, LangGraphWrite
from .reading import read_tuples
from .redaction import track
from .rows import MESSAGES, Rows, closes_its_connection
from .runs import in_sync_thread, this_run

__all__ = ["CheckpointConflict", "ChronicaSaver"]

_T = TypeVar("_T")
# Checkpoints LangGraph writes beside a sibling on purpose (time travel, update_state).
_FORK_SOURCES = frozenset({"fork", "update"})


class CheckpointConflict(ChronicaError):
    """Another writer put a checkpoint on the same parent first (two runs of one thread
    at once): nothing of this ``put`` was written. Read the thread again and retry."""


class ChronicaSaver(BaseCheckpointSaver[str]):
    """A LangGraph checkpointer on chronica (see the module's docstring).

    ``agent``/``user_actor``: the actor of AI/human messages with no ``name`` (default
    user: the owner); ``identity``: an agent credential's, attesting the graph's acta.
    """

    def __init__(
        self,
        owner_id: str | None = None,
        *,
        agent: str = "langgraph",
        user_actor: str | None = None,
        identity: services.Identity | None = None,
        serde: Any = None,
    ) -> None:
        super().__init__(serde=serde)
        if owner_id is not None and (not isinstance(owner_id, str) or not owner_id):
            raise EmptyOwnerID("owner_id must be a non-empty string (or None)")
        self.owner_id = owner_id
        self.agent = agent
        self.user_actor = user_actor
        self.identity = identity
        self._claimed: set[tuple[str, str]] = set()
        self._lists = track(MessageLists())

    def __repr__(self) -> str:
        return f"<ChronicaSaver owner_id={self.owner_id!r}>"

    # -- whose thread -----------------------------------------------------------------

    def _owner(self, config: RunnableConfig | None = None) -> str:
        if self.owner_id is not None:
            return self.owner_id
        owner = ((config or {}).get("configurable") or {}).get("user_id")
        if isinstance(owner, str) and owner:
            return owner
        raise EmptyOwnerID(
            "ChronicaSaver needs an owner: ChronicaSaver(owner_id=...) or"
            ' config["configurable"]["user_id"]'
        )

    def _claim(self, owner_id: str, thread_id: str) -> None:
        """The thread's chronicum, created for ``owner_id`` if missing; someone else's
        raises ``ChronicumNotFound`` (as a missing one would to any other call)."""
        if (owner_id, thread_id) in self._claimed:
            return
        try:
            services.get_chronicum(owner_id, thread_id)
        except ChronicumNotFound:
            try:
                services.create_chronicum(owner_id, thread_id)
            except ChronicumExists:
                # Taken since: by a writer of the same owner (LangGraph puts a checkpoint
                # and a task's writes at once), or by someone else (not found).
                services.get_chronicum(owner_id, thread_id)

    # -- writing ----------------------------------------------------------------------

    @closes_its_connection
    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        owner_id = self._owner(config)
        configurable = config["configurable"]
        thread_id = str(configurable["thread_id"])
        checkpoint_ns = configurable.get("checkpoint_ns", "")
        parent_id = configurable.get("checkpoint_id")
        copy = checkpoint.copy()
        values: dict[str, Any] = copy.pop("channel_values")  # type: ignore[misc]
        type_, serialized = self.serde.dumps_typed(copy)
        stored_metadata = get_serializable_checkpoint_metadata(config, metadata)
        run_id = stored_metadata.get("run_id")
        rows = Rows()
        run = this_run()
        fork = (
            metadata.get("source") in _FORK_SOURCES
            or parent_id is None
            or run.heads.get((thread_id, checkpoint_ns)) != parent_id
        )

        adds_messages = any(
            channel in values and is_message_list(values[channel]) for channel in new_versions
        )

        def write(fork: bool) -> None:
            if adds_messages:
                rows.lock_thread(thread_id)
            self._claim(owner_id, thread_id)
            blobs = [
                LangGraphBlob(
                    owner_id=owner_id,
                    thread_id=thread_id,
                    checkpoint_ns=checkpoint_ns,
                    channel=channel,
                    version=str(version),
                    **self._blob(rows, owner_id, thread_id, values, channel),
                )
                for channel, version in new_versions.items()
            ]
            rows.objects(LangGraphBlob).bulk_create(blobs, ignore_conflicts=True)
            rows.objects(LangGraphCheckpoint).bulk_create(
                [
                    LangGraphCheckpoint(
                        owner_id=owner_id,
                        thread_id=thread_id,
                        checkpoint_ns=checkpoint_ns,
                        checkpoint_id=checkpoint["id"],
                        parent_checkpoint_id=parent_id,
                        fork=fork,
                        run_id=None if run_id is None else str(run_id),
                        type=type_,
                        checkpoint=serialized,
                        metadata=stored_metadata,
                    )
                ],
                update_conflicts=True,
                unique_fields=["thread_id", "checkpoint_ns", "checkpoint_id"],
                update_fields=["type", "checkpoint", "metadata", "run_id"],
            )

        try:
            rows.in_transaction(lambda: write(fork))
        except IntegrityError as exc:
            sibling = (
                rows.objects(LangGraphCheckpoint)
                .filter(
                    thread_id=thread_id,
                    checkpoint_ns=checkpoint_ns,
                    parent_checkpoint_id=parent_id,
                    fork=False,
                )
                .values_list("checkpoint_id", flat=True)
                .first()
            )
            if fork or sibling not in run.written:
                raise CheckpointConflict(
                    f"thread {thread_id!r} (namespace {checkpoint_ns!r}): another writer put"
                    f" a checkpoint after {parent_id!r} first; nothing was written"
                ) from exc
            # A sibling this run put itself (subgraphs sharing a namespace): a branch.
            rows.in_transaction(lambda: write(True))
        self._claimed.add((owner_id, thread_id))
        run.wrote(thread_id, checkpoint_ns, checkpoint["id"])
        return {
            "configurable": {
                "thread_id": thread_id,
                "checkpoint_ns": checkpoint_ns,
                "checkpoint_id": checkpoint["id"],
            }
        }

    def _blob(
        self, rows: Rows, owner_id: str, thread_id: str, values: dict[str, Any], channel: str
    ) -> dict[str, Any]:
        if channel not in values:
            return {"type": "empty", "blob": None}
        value = values[channel]
        if not is_message_list(value):
            type_, blob = self.serde.dumps_typed(value)
            return {"type": type_, "blob": blob}
        blob = self._lists.refs(
            rows,
            owner_id,
            thread_id,
            value,
            serde=self.serde,
            agent=self.agent,
            user_actor=self.user_actor or owner_id,
            identity=self.identity,
        )
        return {"type": MESSAGES, "blob": blob}

    @closes_its_connection
    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        owner_id = self._owner(config)
        configurable = config["configurable"]
        thread_id = str(configurable["thread_id"])
        checkpoint_ns = configurable.get("checkpoint_ns", "")
        checkpoint_id = configurable["checkpoint_id"]
        new = []
        for i, (channel, value) in enumerate(writes):
            type_, blob = self.serde.dumps_typed(value)
            new.append(
                LangGraphWrite(
                    owner_id=owner_id,
                    thread_id=thread_id,
                    checkpoint_ns=checkpoint_ns,
                    checkpoint_id=checkpoint_id,
                    task_id=task_id,
                    task_path=task_path,
                    idx=WRITES_IDX_MAP.get(channel, i),
                    channel=channel,
                    type=type_,
                    blob=blob,
                )
            )
        rows = Rows()
        unique = ["thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "idx"]

        def write() -> None:
            self._claim(owner_id, thread_id)
            if all(channel in WRITES_IDX_MAP for channel, _ in writes):
                # Special writes (an error, an interrupt...) replace the task's last one.
                rows.objects(LangGraphWrite).bulk_create(
                    new,
                    update_conflicts=True,
                    unique_fields=unique,
                    update_fields=["channel", "type", "blob", "task_path"],
                )
            else:
                rows.objects(LangGraphWrite).bulk_create(new, ignore_conflicts=True)

        rows.in_transaction(write)
        self._claimed.add((owner_id, thread_id))

    # -- reading ----------------------------------------------------------------------

    @closes_its_connection
    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        owner_id = self._owner(config)
        configurable = config["configurable"]
        found = (
            Rows()
            .objects(LangGraphCheckpoint)
            .filter(
                owner_id=owner_id,
                thread_id=str(configurable["thread_id"]),
                checkpoint_ns=configurable.get("checkpoint_ns", ""),
            )
        )
        if checkpoint_id := get_checkpoint_id(config):
            found = found.filter(checkpoint_id=checkpoint_id)
        row = found.order_by("-checkpoint_id").first()
        if row is None:
            return None
        if not checkpoint_id:
            this_run().heads[(row.thread_id, row.checkpoint_ns)] = row.checkpoint_id
        return self._tuples([row])[0]

    @closes_its_connection
    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        owner_id = self._owner(config)
        found = Rows().objects(LangGraphCheckpoint).filter(owner_id=owner_id)
        if config is not None:
            configurable = config["configurable"]
            found = found.filter(thread_id=str(configurable["thread_id"]))
            if configurable.get("checkpoint_ns") is not None:
                found = found.filter(checkpoint_ns=configurable["checkpoint_ns"])
            if checkpoint_id := get_checkpoint_id(config):
                found = found.filter(checkpoint_id=checkpoint_id)
        if before is not None and (before_id := get_checkpoint_id(before)):
            found = found.filter(checkpoint_id__lt=before_id)
        found = found.order_by("-checkpoint_id")
        if limit is not None and limit <= 0:
            return iter(())
        if not filter:
            chosen = list(found if limit is None else found[:limit])
        else:
            chosen = []
            for row in found.iterator(chunk_size=200):
                if all(row.metadata.get(key) == value for key, value in filter.items()):
                    chosen.append(row)
                    if limit is not None and len(chosen) >= limit:
                        break
        return iter(self._tuples(chosen))

    def _tuples(self, checkpoints: Sequence[LangGraphCheckpoint]) -> builtins.list[CheckpointTuple]:
        return read_tuples(self.serde, self._lists, checkpoints)

    # -- deleting, pruning ------------------------------------------------------------

    @closes_its_connection
    def delete_thread(self, thread_id: str) -> None:
        """Delete the thread's checkpoints and writes. Its acta stay: the session is
        the owner's and every agent's (``services.delete_chronicum`` deletes it)."""
        owner_id = self._owner()
        rows = Rows()
        rows.in_transaction(lambda: rows.delete_threads(owner_id, [str(thread_id)]))
        self._lists.forget([str(thread_id)])

    @closes_its_connection
    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete the checkpoints (and their writes) of these runs, in every thread of
        the owner."""
        if not run_ids:
            return
        owner_id = self._owner()
        rows = Rows()

        def delete() -> None:
            doomed = rows.objects(LangGraphCheckpoint).filter(
                owner_id=owner_id, run_id__in=[str(r) for r in run_ids]
            )
            rows.delete_checkpoints(
                list(doomed.values_list("thread_id", "checkpoint_ns", "checkpoint_id"))
            )

        rows.in_transaction(delete)

    @closes_its_connection
    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """``"keep_latest"``: keep the newest checkpoint of each namespace of each thread
        (with its writes and channel values); ``"delete"``: delete the threads' rows."""
        if strategy not in ("keep_latest", "delete"):
            raise ValueError(f"unknown prune strategy {strategy!r}: 'keep_latest' or 'delete'")
        if not thread_ids:
            return
        owner_id = self._owner()
        threads = [str(t) for t in thread_ids]
        rows = Rows()

        def prune() -> None:
            if strategy == "delete":
                rows.delete_threads(owner_id, threads)
                self._lists.forget(threads)
                return
            found = rows.objects(LangGraphCheckpoint).filter(
                owner_id=owner_id, thread_id__in=threads
            )
            newest: dict[tuple[str, str], str] = {}
            doomed = []
            for thread_id, ns, checkpoint_id in found.order_by("-checkpoint_id").values_list(
                "thread_id", "checkpoint_ns", "checkpoint_id"
            ):
                if (thread_id, ns) in newest:
                    doomed.append((thread_id, ns, checkpoint_id))
                else:
                    newest[(thread_id, ns)] = checkpoint_id
            rows.delete_checkpoints(doomed)
            self._drop_unused_blobs(rows, owner_id, threads)

        rows.in_transaction(prune)

    def _drop_unused_blobs(self, rows: Rows, owner_id: str, threads: Sequence[str]) -> None:
        for thread_id in threads:
            kept: set[tuple[str, str, str]] = set()
            for ns, type_, stored in (
                rows.objects(LangGraphCheckpoint)
                .filter(owner_id=owner_id, thread_id=thread_id)
                .values_list("checkpoint_ns", "type", "checkpoint")
            ):
                cp = self.serde.loads_typed((type_, bytes(stored)))
                kept.update((ns, ch, str(v)) for ch, v in cp["channel_versions"].items())
            blobs = rows.objects(LangGraphBlob).filter(owner_id=owner_id, thread_id=thread_id)
            unused = [
                pk
                for pk, ns, channel, version in blobs.values_list(
                    "pk", "checkpoint_ns", "channel", "version"
                )
                if (ns, channel, version) not in kept
            ]
            for start in range(0, len(unused), 500):
                rows.objects(LangGraphBlob).filter(pk__in=unused[start : start + 500]).delete()

    @closes_its_connection
    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy the thread's checkpoints, writes and messages to a new thread, whose
        chronicum is a fork of the source's (``services.fork_chronicum``: the session's
        acta copied, in order). A missing source (or another owner's) is
        ``ChronicumNotFound``; a target that is taken, ``ChronicumExists``."""
        owner_id = self._owner()
        rows = Rows()
        source, target = str(source_thread_id), str(target_thread_id)
        rows.in_transaction(lambda: copy_thread_rows(rows, owner_id, source, target))

    # -- asyncio --------------------------------------------------------------------

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return await in_sync_thread(self.get_tuple)(config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        found = await in_sync_thread(
            lambda: list(self.list(config, filter=filter, before=before, limit=limit))
        )()
        for item in found:
            yield item

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return await in_sync_thread(self.put)(config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        await in_sync_thread(self.put_writes)(config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        await in_sync_thread(self.delete_thread)(thread_id)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        await in_sync_thread(self.delete_for_runs)(run_ids)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await in_sync_thread(self.copy_thread)(source_thread_id, target_thread_id)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        await in_sync_thread(self.prune)(thread_ids, strategy=strategy)

    def get_next_version(self, current: str | None, channel: None) -> str:
        if current is None:
            current_v = 0
        elif isinstance(current, int):
            current_v = current
        else:
            current_v = int(current.split(".")[0])
        return f"{current_v + 1:032}.{random.random():016}"
