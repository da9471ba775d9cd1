"""Mappings between dialects: a program of one dialect to the program a compiler could emit in
another (``tileir_ptx``: Tile IR token graphs to PTX threads)."""
