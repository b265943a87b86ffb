import os
import sys

# The rule tests share a small position builder (tests/maori_pos.py).
sys.path.insert(0, os.path.dirname(__file__))
