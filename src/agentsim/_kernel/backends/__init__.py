"""The event-loop backends: the asyncio loop on virtual time
(``asyncio_loop``, ``asyncio_backend``), trio with a virtual clock and its
batches ordered by the run's chooser (``trio_backend``), the seam between
them and the driver (``backend``), and direct calls of the running backend's
clock and sleeps (``direct_time``)."""
