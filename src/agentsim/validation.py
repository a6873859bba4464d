"""Argument checks for doubles: validate where the argument is given, with a
typed error naming the parameter, the value and what is accepted::

    from agentsim.validation import positive, whole

    class MyDouble:
        def __init__(self, *, rate: float, retries: int = 0) -> None:
            self.rate = positive("rate", rate)
            self.retries = whole("retries", retries)

Every check raises :class:`agentsim.SimulationConfigError` (a
:class:`agentsim.UsageError`). Delay specs have their own:
:func:`agentsim.timing.as_delay`.
"""

from ._kernel.ownership import OneSimulation as OneSimulation
from ._kernel.validation import limit as limit
from ._kernel.validation import non_negative as non_negative
from ._kernel.validation import number as number
from ._kernel.validation import positive as positive
from ._kernel.validation import whole as whole

__all__ = ["OneSimulation", "limit", "non_negative", "number", "positive", "whole"]
