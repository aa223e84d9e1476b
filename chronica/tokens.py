"""Token counts for budgeted windows (``get_acta(max_tokens=...)``).

A count is taken once, when an actum is recorded, by the Chronicarius's
``token_counter`` (``CHRONICA["TOKEN_COUNTER"]``), and kept with the actum.
"""

from __future__ import annotations

from .validation.jsondata import dumps_data
from .values import Actum

__all__ = ["FRAMING_TOKENS", "content_tokens", "estimate_tokens"]

FRAMING_TOKENS = 4
"""What a chat model spends on the frame of one item (its role and separators)."""

# The ratio measured against OpenAI's o200k_base and cl100k_base vocabularies on the
# demo's acta (benchmarks/token_error.py; the figures are in BENCHMARKS.md): 4 bytes a
# token undercounted, 3.5 is close.
BYTES_PER_TOKEN_TIMES_2 = 7


def estimate_tokens(actum: Actum) -> int:
    """The default counter: an estimate that needs no tokenizer and no download.

    ``4 + ceil(b / 3.5)``, where ``b`` is the number of UTF-8 bytes of what a model is
    given for the actum: the JSON of ``data`` when it has data (an agent framework's
    item), else ``content``. Acta stored without a count (written before counts
    existed, or by a writer that knows only the original columns) are estimated by
    the database with the same formula over ``content``.
    """
    return content_tokens(actum.content if actum.data is None else dumps_data(actum.data))


def content_tokens(text: str) -> int:
    """``4 + ceil(UTF-8 bytes of text / 3.5)``: the estimate of one actum's text."""
    size = len(text) if text.isascii() else len(text.encode())
    return FRAMING_TOKENS + -(-2 * size // BYTES_PER_TOKEN_TIMES_2)
