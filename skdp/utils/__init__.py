"""Layer-0 helpers: validation, random streams, the sklearn compat shim, discovery.

Nothing here imports torch at module import time (``skdp.utils._torch`` does, and is
imported only by torch-using layers).
"""
