"""Count requests and answers per operation, so tests can assert on the wire.

"The refusal came back after exactly one request" and "no request was lost or
answered twice" are claims about what reached the server; only the server can
count them. The middleware is outermost but for the `Host` check (a
misdirected request is nobody's operation), so it also sees injected faults.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from e2b_local_api.http.operations import operation_for


@dataclass
class RequestStats:
    received: Counter[str] = field(default_factory=Counter)
    # operation -> status -> count
    answered: dict[str, Counter[int]] = field(default_factory=dict)
    answered_twice: int = 0
    in_flight: int = 0

    def reset(self) -> None:
        self.received.clear()
        self.answered.clear()
        self.answered_twice = 0

    def snapshot(self) -> dict[str, object]:
        answered = {
            op: {str(status): n for status, n in sorted(statuses.items())}
            for op, statuses in sorted(self.answered.items())
        }
        totals = {op: sum(statuses.values()) for op, statuses in self.answered.items()}
        return {
            "received": dict(sorted(self.received.items())),
            "answered": answered,
            "answered_total": dict(sorted(totals.items())),
            "answered_twice": self.answered_twice,
            "in_flight": self.in_flight,
        }


class StatsMiddleware:
    def __init__(self, app: ASGIApp, stats: RequestStats) -> None:
        self.app = app
        self.stats = stats

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        operation = operation_for(scope["method"], scope["path"]) if scope["type"] == "http" else None
        if operation is None:
            await self.app(scope, receive, send)
            return
        stats = self.stats
        stats.received[operation] += 1
        stats.in_flight += 1
        starts = 0

        async def counting_send(message: Message) -> None:
            nonlocal starts
            if message["type"] == "http.response.start":
                starts += 1
                if starts > 1:
                    stats.answered_twice += 1
                stats.answered.setdefault(operation, Counter())[message["status"]] += 1
            await send(message)

        try:
            await self.app(scope, receive, counting_send)
        finally:
            stats.in_flight -= 1
