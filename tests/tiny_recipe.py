"""The one-config recipe on FUNSD that the safety and hardening tests build (one document per shard)."""

TINY = """\
name: tiny
version: 1.0.0
source: {kind: funsd}
splits: [test]
shard_size: 1
configs:
  plain: []
"""

