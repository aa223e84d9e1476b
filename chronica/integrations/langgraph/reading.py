"""Reading checkpoints back: a checkpoint's row with its channel values and pending
writes, for many checkpoints in a few queries per thread."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langgraph.checkpoint.base import CheckpointTuple, writes_sort_key

from .lists import MessageLists
from .models import LangGraphBlob, LangGraphCheckpoint, LangGraphWrite
from .rows import MESSAGES, Rows, positions_of

__all__ = ["read_tuples"]


def read_tuples(
    serde: Any, lists: MessageLists, checkpoints: Sequence[LangGraphCheckpoint]
) -> list[CheckpointTuple]:
    """The checkpoints with their channel values and pending writes, in three
    queries per thread whatever their number (four with messages)."""
    if not checkpoints:
        return []
    rows = Rows()
    loaded = [(row, serde.loads_typed((row.type, bytes(row.checkpoint)))) for row in checkpoints]
    blobs: dict[tuple[str, str, str, str], tuple[str, bytes | None]] = {}
    writes: dict[tuple[str, str, str], list[Any]] = {}
    messages: dict[str, dict[int, Any]] = {}
    for thread_id in {row.thread_id for row in checkpoints}:
        mine = [(row, cp) for row, cp in loaded if row.thread_id == thread_id]
        versions = {str(v) for _, cp in mine for v in cp["channel_versions"].values()}
        found = rows.objects(LangGraphBlob).filter(
            thread_id=thread_id,
            checkpoint_ns__in={row.checkpoint_ns for row, _ in mine},
            version__in=versions,
        )
        for ns, channel, version, type_, blob in found.values_list(
            "checkpoint_ns", "channel", "version", "type", "blob"
        ):
            blobs[(thread_id, ns, channel, version)] = (
                type_,
                None if blob is None else bytes(blob),
            )
        found_writes = rows.objects(LangGraphWrite).filter(
            thread_id=thread_id, checkpoint_id__in={row.checkpoint_id for row, _ in mine}
        )
        for (
            ns,
            checkpoint_id,
            task_id,
            task_path,
            idx,
            channel,
            type_,
            blob,
        ) in found_writes.values_list(
            "checkpoint_ns",
            "checkpoint_id",
            "task_id",
            "task_path",
            "idx",
            "channel",
            "type",
            "blob",
        ):
            writes.setdefault((thread_id, ns, checkpoint_id), []).append(
                (writes_sort_key(task_path, task_id, idx), task_id, channel, type_, blob)
            )
        references = [
            blob
            for (t, _, _, _), (type_, blob) in blobs.items()
            if t == thread_id and type_ == MESSAGES and blob is not None
        ]
        if references:
            messages[thread_id] = lists.load(rows, thread_id, references, serde=serde)
    tuples = []
    for row, cp in loaded:
        values: dict[str, Any] = {}
        for channel, version in cp["channel_versions"].items():
            stored = blobs.get((row.thread_id, row.checkpoint_ns, channel, str(version)))
            if stored is None or stored[0] == "empty":
                continue
            type_, blob = stored
            if type_ == MESSAGES:
                assert blob is not None
                by_position = messages[row.thread_id]
                values[channel] = [by_position[p] for p in positions_of(blob)]
            elif blob is not None:
                values[channel] = serde.loads_typed((type_, blob))
        pending = sorted(
            writes.get((row.thread_id, row.checkpoint_ns, row.checkpoint_id), []),
            key=lambda w: w[0],
        )
        tuples.append(
            CheckpointTuple(
                config={
                    "configurable": {
                        "thread_id": row.thread_id,
                        "checkpoint_ns": row.checkpoint_ns,
                        "checkpoint_id": row.checkpoint_id,
                    }
                },
                checkpoint={**cp, "channel_values": values},  # type: ignore[typeddict-item]
                metadata=row.metadata,
                parent_config=(
                    {
                        "configurable": {
                            "thread_id": row.thread_id,
                            "checkpoint_ns": row.checkpoint_ns,
                            "checkpoint_id": row.parent_checkpoint_id,
                        }
                    }
                    if row.parent_checkpoint_id
                    else None
                ),
                pending_writes=[
                    (task_id, channel, serde.loads_typed((type_, bytes(blob))))
                    for _, task_id, channel, type_, blob in pending
                ],
            )
        )
    return tuples
