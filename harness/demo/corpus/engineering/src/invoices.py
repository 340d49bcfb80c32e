"""Render invoices as plain text for the email channel."""

from __future__ import annotations

from collections.abc import Iterable


def render_invoice(customer: str, lines: Iterable[tuple[str, int]]) -> str:
    """One invoice: a header, one line per item, and the total in euro."""
    out = [f"Invoice for {customer}", ""]
    total = 0
    for label, cents in lines:
        total += cents
        out.append(f"{label:<40} {cents / 100:>10.2f} EUR")
    out.append("")
    out.append(f"{'Total':<40} {total / 100:>10.2f} EUR")
    return "\n".join(out)


if __name__ == "__main__":
    print(render_invoice("Costa Design", [("Pro plan, 14 seats", 16800)]))
