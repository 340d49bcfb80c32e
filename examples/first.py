"""A first program: run the example thinker on the embedded model, print the answer and its cost.

python examples/first.py (from any folder: the example thinker ships with harness)
"""

from harness import run_sync
from harness.demo import triage

note = triage.Note("pay the invoice today; water the plants; call the bank now")
result = run_sync(triage.Triage, note, model="embedded")
for verdict in result.items:
    print(result.ref(verdict), verdict.note, "(urgent)" if verdict.urgent else "")
print(result.usage)  # decisions, input tokens, cost, model and wall time
print("cost:", result.usage.cost_text)  # the embedded model runs here: it has no price
