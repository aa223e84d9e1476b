"""PydanticAI on chronica (extra ``chronica[pydantic-ai]``).

* :class:`ChronicaConversationStore`: a PydanticAI ``ConversationStore`` whose
  conversations are chronica's sessions. Its records live in this Django app's tables:
  add ``"chronica.integrations.pydantic_ai"`` to ``INSTALLED_APPS`` and ``migrate``.
* :class:`ChronicaHistory`: a PydanticAI agent's turn in a session other agents share
  (the OpenAI Agents SDK's, Google ADK's, the API's): its window as
  ``message_history=``, its new messages recorded back. It needs no tables of its own.
"""

from .history import ChronicaHistory
from .messages import actum_of, message_of
from .store import ChronicaConversationStore

__all__ = ["ChronicaConversationStore", "ChronicaHistory", "actum_of", "message_of"]
