"""The dinner-friday session, as the person and the three agents write it.

A copy of the scenario chronica's own tests use: an example app keeps its data.
"""

from chronica import ActorKind, Actum, ActumKind

CHRONICUM = "dinner-friday"
BOOKING_REPLY_KEY = "booking-reply-1"

M, T, REQ, RES = (
    ActumKind.MESSAGE,
    ActumKind.THOUGHT,
    ActumKind.TOOL_REQUEST,
    ActumKind.TOOL_RESPONSE,
)
H, A = ActorKind.HUMAN, ActorKind.AGENT

SEVEN = [
    (M, H, "ardian", "Find us a quiet table for four in Kemang on Friday at 7pm."),
    (T, A, "concierge", "Search first, then hand the booking over."),
    (REQ, A, "search", '{"area":"Kemang","party":4,"quiet":true}'),
    (RES, A, "search", '[{"name":"Rumah Teduh","table":true},{"name":"Kayu Manis","table":true}]'),
    (M, A, "search", "Rumah Teduh and Kayu Manis both have a quiet table for four at 7pm."),
    (M, H, "ardian", "Rumah Teduh."),
    (M, A, "concierge", "Book Rumah Teduh for four at 7pm on Friday under Ardian."),
]
BOOKING_REPLY = "A table for four at Rumah Teduh on Friday at 7pm is held. Confirmation RT-4821."
BOOKING_REPLY_REWORDED = (
    "All set. A table for four at Rumah Teduh on Friday at 7pm, confirmation RT-4821."
)


def seven_acta(chronicum_id: str) -> list[Actum]:
    """The seven acta before the booking agent's turn, oldest first."""
    return [
        Actum(chronicum_id=chronicum_id, kind=k, actor_kind=ak, actor=actor, content=content)
        for k, ak, actor, content in SEVEN
    ]


def booking_reply(chronicum_id: str, content: str = BOOKING_REPLY) -> Actum:
    """The booking agent's reply to the concierge."""
    return Actum(chronicum_id=chronicum_id, kind=M, actor_kind=A, actor="booking", content=content)


# Friday afternoon, the same session: ardian asks once more, and an agent on each
# framework takes its turn (example_project/dinner/frameworks.py).
BIRTHDAY = "It's Rafa's birthday on Friday: can Rumah Teduh bring out a cake?"
CONCIERGE_BIRTHDAY = "Happy birthday to Rafa! search finds a cake; booking tells Rumah Teduh."
CAKE_SHOP = "Toko Kue Manis"
CAKE_ANSWER = f"{CAKE_SHOP} in Kemang bakes a chocolate cake for four by Friday."
BOOKING_CAKE = (
    f"Rumah Teduh will bring out {CAKE_SHOP}'s cake after dinner. Confirmation RT-4821, updated."
)
REMINDER = "Reminder set: collect the cake from Toko Kue Manis on Friday at 5pm."
