"""One folder a game: its engine (engine.pyx, with its own agent code as included files), its
rule options (options.toml) and its component data (data/)."""
