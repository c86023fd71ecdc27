"""A small in-memory order book standing in for an outside order system."""

import itertools
import threading
from dataclasses import dataclass, field

SEED_ORDERS = {
    "ord_1001": ("shipped", 4200),
    "ord_1002": ("processing", 1250),
    "ord_1003": ("cancelled", 999),
}


@dataclass
class StoredOrder:
    order_id: str
    status: str
    total_cents: int
    notes: list[str] = field(default_factory=list)


class OrderBook:
    """Thread-safe, because tools may run concurrently."""

    def __init__(self):
        self._lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        with self._lock:
            self._orders = {
                order_id: StoredOrder(order_id, status, total)
                for order_id, (status, total) in SEED_ORDERS.items()
            }
            self._note_ids = itertools.count(1)

    def get(self, order_id: str) -> StoredOrder | None:
        with self._lock:
            order = self._orders.get(order_id)
            return None if order is None else StoredOrder(**vars(order) | {"notes": [*order.notes]})

    def add_note(self, order_id: str, text: str) -> tuple[str, int] | None:
        """Append a note; return its id and the order's note count, or None for an unknown order."""
        with self._lock:
            order = self._orders.get(order_id)
            if order is None:
                return None
            order.notes.append(text)
            return f"note_{next(self._note_ids)}", len(order.notes)


ORDER_BOOK = OrderBook()
