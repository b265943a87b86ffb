"""The engine contract every game fills (contract.pxd), its Python face (game.py), the state
codec (codec.py) and named action spaces (actions.py). Names no game."""
