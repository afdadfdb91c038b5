"""A run: settings layered (config, evaluation), the evaluation loop (runner), resume (checkpoint), shards,
progress, the gate and its intervals (gate, stats)."""
