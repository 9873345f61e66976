"""Cursor pages: tokens carry the last key and the direction; a foreign or reversed token is a 400."""

from __future__ import annotations

import pytest
from e2b_local_api.http.errors import ApiError
from e2b_local_api.state.paging import cut, decode, encode

ITEMS = [(5, 1), (4, 2), (4, 1), (1, 9)]  # newest first, ties on the first part broken by the second


def test_pages_cover_every_item_once() -> None:
    seen: list[tuple[int, int]] = []
    token = None
    while True:
        page = cut(ITEMS, lambda i: i, token, 3, descending=True, width=2)
        seen += page.items
        if page.next_token is None:
            break
        token = page.next_token
    assert seen == ITEMS


def test_the_last_page_has_no_token_and_an_exact_fit_too() -> None:
    assert cut(ITEMS, lambda i: i, None, 4, descending=True, width=2).next_token is None
    assert cut([], lambda i: i, None, 4, descending=True, width=2).items == []


def test_tokens_round_trip() -> None:
    assert decode(encode((12, 3), descending=True), descending=True, width=2) == (12, 3)
    assert decode(encode((7,), descending=False), descending=False, width=1) == (7,)


# "d\uff11.2": a full-width digit, which str.isdigit accepts.
@pytest.mark.parametrize("token", ["", "bogus", "d1", "d1.x", "x1.2", "d1.2.3", "d-1.2", "d\uff11.2"])
def test_tokens_this_server_did_not_issue_are_400s(token: str) -> None:
    with pytest.raises(ApiError) as refused:
        decode(token, descending=True, width=2)
    assert refused.value.status == 400 and refused.value.message.startswith("nextToken: not a token")


def test_a_token_for_the_other_order_is_refused() -> None:
    with pytest.raises(ApiError, match="issued for the other order"):
        decode(encode((1, 2), descending=True), descending=False, width=2)
