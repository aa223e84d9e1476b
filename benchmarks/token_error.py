"""How far chronica's default token counter is from a real tokenizer on the demo's acta.

``python -m benchmarks.token_error`` (needs the ``bench`` group: ``bpe-openai``).

The real counts come from OpenAI's own BPE vocabularies, ``o200k_base`` (GPT-4o and
later) and ``cl100k_base`` (GPT-4, GPT-3.5), as shipped inside the ``bpe-openai`` wheel:
nothing is downloaded at run time. The script checks the SHA-256 of each bundled
vocabulary against the hash tiktoken pins for it before counting.

An actum is counted as one chat message the way OpenAI documents it for its chat
models: 3 tokens of frame per message, plus the tokens of its role, plus the tokens of
its content (a request adds 3 more for the reply's priming, once, not per actum).
The default counter's estimate is ``4 + ceil(UTF-8 bytes / 3.5)``.
"""

from __future__ import annotations

import gzip
import hashlib
import math
from importlib import resources
from typing import Any

from chronica import ActorKind, Actum, ActumKind
from chronica.tokens import FRAMING_TOKENS, estimate_tokens

# The hashes tiktoken (tiktoken_ext/openai_public.py) pins for these files.
VOCABULARY_SHA256 = {
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
}
TOKENS_PER_MESSAGE = 3


def demo_acta() -> list[Actum]:
    """The dinner-friday session of the demo (example_project/dinner/scenario.py): the
    seven acta before the booking agent's turn, its reply, and the reworded reply."""
    from example_project.dinner import scenario

    acta = scenario.seven_acta("dinner-friday")
    acta.append(scenario.booking_reply("dinner-friday"))
    acta.append(scenario.booking_reply("dinner-friday", scenario.BOOKING_REPLY_REWORDED))
    return acta


def role(actum: Actum) -> str:
    """The chat role a model would see the actum in."""
    if actum.kind is ActumKind.TOOL_RESPONSE:
        return "tool"
    return "user" if actum.actor_kind is ActorKind.HUMAN else "assistant"


def encoding(name: str) -> Any:
    """The bundled encoding ``name``, after checking its vocabulary file's hash."""
    import bpe_openai

    packed = resources.files("bpe_openai.data").joinpath(f"{name}.tiktoken.gz").read_bytes()
    digest = hashlib.sha256(gzip.decompress(packed)).hexdigest()
    if digest != VOCABULARY_SHA256[name]:
        raise SystemExit(f"bpe-openai's {name} is not OpenAI's vocabulary (sha256 {digest})")
    return bpe_openai.get_encoding(name)


def table() -> str:
    encodings = {name: encoding(name) for name in VOCABULARY_SHA256}
    head = ["#", "kind", "role", "bytes", "estimate"]
    for name in encodings:
        head += [name, "error"]
    lines = [head]
    totals = {"bytes": 0, "estimate": 0} | dict.fromkeys(encodings, 0)
    content_tokens = dict.fromkeys(encodings, 0)
    per_actum_errors: dict[str, list[float]] = {name: [] for name in encodings}
    acta = demo_acta()
    for i, actum in enumerate(acta, 1):
        size = len(actum.content.encode())
        estimate = estimate_tokens(actum)
        line = [str(i), actum.kind.value, role(actum), str(size), str(estimate)]
        totals["bytes"] += size
        totals["estimate"] += estimate
        for name, enc in encodings.items():
            content = len(enc.encode(actum.content))
            real = TOKENS_PER_MESSAGE + len(enc.encode(role(actum))) + content
            error = (estimate - real) / real
            per_actum_errors[name].append(error)
            content_tokens[name] += content
            totals[name] += real
            line += [str(real), f"{error:+.0%}"]
        lines.append(line)
    total = ["all", "", "", str(totals["bytes"]), str(totals["estimate"])]
    for name in encodings:
        real = totals[name]
        total += [str(real), f"{(totals['estimate'] - real) / real:+.0%}"]
    lines.append(total)

    widths = [max(len(line[c]) for line in lines) for c in range(len(head))]
    out = [
        "| " + " | ".join(cell.rjust(w) for cell, w in zip(line, widths, strict=True)) + " |"
        for line in lines
    ]
    out.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    out.append("")
    for name in encodings:
        errors = per_actum_errors[name]
        bytes_per_token = totals["bytes"] / content_tokens[name]
        out.append(
            f"{name}: per-actum error {min(errors):+.0%} to {max(errors):+.0%},"
            f" mean {sum(errors) / len(errors):+.0%}; content bytes per token"
            f" {bytes_per_token:.2f}"
        )
    out.append("")
    out.append("4 + ceil(bytes / d) against o200k_base, by divisor d (total; per actum):")
    real = [
        TOKENS_PER_MESSAGE
        + len(encodings["o200k_base"].encode(role(a)))
        + len(encodings["o200k_base"].encode(a.content))
        for a in acta
    ]
    for divisor in (3.0, 3.5, 4.0):
        guesses = [FRAMING_TOKENS + math.ceil(len(a.content.encode()) / divisor) for a in acta]
        errors = [(g - r) / r for g, r in zip(guesses, real, strict=True)]
        out.append(
            f"  d = {divisor}: {sum(guesses)} tokens,"
            f" {(sum(guesses) - sum(real)) / sum(real):+.1%};"
            f" {min(errors):+.0%} to {max(errors):+.0%}"
        )
    return "\n".join(out)


if __name__ == "__main__":
    print(table())
