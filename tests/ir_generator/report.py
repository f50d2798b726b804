"""Choosing cases (by op, a seeded sample) and the summary: one row per op version, one column per
outcome, then the failures grouped by message."""

from __future__ import annotations

import random
import re
from collections import Counter, defaultdict

from .run import FAILURES, OUTCOMES, RT_FAILURES


def select(cases, ops: list[str] = (), sample: int | None = None, seed: int = 0) -> list:
    """The cases of ``ops`` (IR types or Type-version, any case; all when empty), or a sample of
    ``sample`` of them spread over the op versions: each version's cases shuffled with ``seed``,
    taken in turns."""
    wanted = {o.lower() for o in ops}
    chosen = [c for c in cases if not wanted or c.ir_type.lower() in wanted or c.family.lower() in wanted]
    if sample is None or sample >= len(chosen):
        return chosen
    rng = random.Random(seed)
    by_family = defaultdict(list)
    for c in chosen:
        by_family[c.family].append(c)
    queues = []
    for family in sorted(by_family):
        group = by_family[family][:]
        rng.shuffle(group)
        queues.append(group)
    rng.shuffle(queues)
    picked = []
    while len(picked) < sample:
        for q in queues:
            if q and len(picked) < sample:
                picked.append(q.pop())
    return picked


def summarize(cases, results: dict) -> str:
    """A markdown table of the outcomes per op version, totals, and the failures grouped by cause."""
    rows = defaultdict(Counter)
    for c in cases:
        rows[c.family][results[c.id]["outcome"]] += 1
    lines = ["| op | " + " | ".join(OUTCOMES) + " |", "|---|" + "---|" * len(OUTCOMES)]
    for family in sorted(rows, key=str.lower):
        lines.append(f"| {family} | " + " | ".join(str(rows[family][o] or "") for o in OUTCOMES) + " |")
    total = Counter(r["outcome"] for r in (results[c.id] for c in cases))
    lines.append("| **all** | " + " | ".join(f"**{total[o]}**" for o in OUTCOMES) + " |")
    groups = defaultdict(list)
    for c in cases:
        r = results[c.id]
        if r["outcome"] in FAILURES + RT_FAILURES:
            groups[(r["outcome"], c.family, _cause(r["message"]))].append(c.id)
    if groups:
        lines += ["", "Failures by cause (outcome, op, message with numbers masked): count, first case"]
        for (kind, family, cause), ids in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1].lower())):
            lines.append(f"- {kind} {family}: {cause} x{len(ids)}: `{ids[0]}`")
    return "\n".join(lines)


def _cause(message: str) -> str:
    text = re.sub(r"/tmp/\S+", "<file>", message)
    text = re.sub(r"-?\d+(\.\d+)?(e-?\d+)?", "#", text)
    return text[:160]
