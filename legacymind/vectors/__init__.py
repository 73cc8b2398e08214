"""Vectors: nearest-neighbour search (``search``), the HNSW indexes (``indexes``), bulk vector
writes (``writes``) and re-embedding every embedded table (``reembed``)."""
