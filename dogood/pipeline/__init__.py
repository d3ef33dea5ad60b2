"""A recipe's build, step by step: plan, run the documents, aggregate, write the card, commit.

- :mod:`dogood.pipeline.plan`: check the arguments, open the sources, make and prepare the chains;
- :mod:`dogood.pipeline.worker`: one document through its configs' chains, to rows, statistics and previews
  (:mod:`dogood.pipeline.stats`): every per-config measure runs there (``measure_config``);
- :mod:`dogood.pipeline.pool`: the worker over the documents in this process or a process pool (units of a
  document and a group of configs when documents are few), results in document order;
- :mod:`dogood.pipeline.ray_data`: whole shards read, shifted and written by Ray actors (``--ray``);
- :mod:`dogood.pipeline.shards`: the resumable work folder and the Parquet shards written into it;
- :mod:`dogood.pipeline.aggregate`: the shards' records summed per config and split;
- :mod:`dogood.pipeline.card`: previews, photo credits, the card and ``dogood_build.json``;
- :mod:`dogood.pipeline.build`: :func:`~dogood.pipeline.build.build`, which runs them in turn and commits;
- :mod:`dogood.pipeline.timeline`: when each step ran, in the driver and the workers (``bench_build.py --timeline``).
"""
