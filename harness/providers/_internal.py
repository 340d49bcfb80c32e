"""What other harness packages need of the providers' machinery and users do not:
:func:`cyclic_orders`, the one maker of the option orders a choice is asked in (a logprob
provider asks each choice in several orders; an eval's position-bias probe does the same
through a model). Not for users: the layer test allows ``harness.x._internal``.
"""

from __future__ import annotations

from harness.providers._logprob_reading import cyclic_orders as cyclic_orders

__all__ = ["cyclic_orders"]
