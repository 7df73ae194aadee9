"""write(questions=...) against the real daemon."""

from __future__ import annotations

import pytest

import ctxd


def test_write_questions_and_their_limit(client: ctxd.Client) -> None:
    r = client.write(
        "agent:/q/kitchen.md",
        "The kitchen opens at half past eleven.\n",
        questions=["When is lunch served?", "Where can I eat?"],
    )
    assert r.created
    # The limit (default 32) shows the keyword reaches the daemon.
    with pytest.raises(ctxd.InvalidArgumentError) as ei:
        client.write("agent:/q/many.md", "x\n", questions=[f"Question {i}?" for i in range(33)])
    assert "max_questions_per_item" in ei.value.hint and "--question" in ei.value.hint
