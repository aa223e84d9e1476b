"""chronica's benchmarks: ``make bench`` (``python -m benchmarks``), never part of ``make test``.

Every figure is chronica next to a floor, the same work done with psycopg
directly, measured in alternating rounds on the same database so that the noise
of a shared machine hits both; the ratios are what count.
"""
