"""A recipe's build, step by step: plan, run the documents, aggregate, write the card, commit.

- :mod:`dogood.pipeline.plan`: check the arguments, open the sources, make and prepare the chains;
- :mod:`dogood.pipeline.worker`: one document through every config's chain, to rows and statistics
  (:mod:`dogood.pipeline.stats`);
- :mod:`dogood.pipeline.pool`: the worker over the documents in this process or a process pool, results in
  document order;
- :mod:`dogood.pipeline.ray_data`: whole shards read, shifted and written by Ray actors (``--ray``);
- :mod:`dogood.pipeline.shards`: the resumable work folder and the Parquet shards written into it;
- :mod:`dogood.pipeline.aggregate`: the shards' records summed per config and split;
- :mod:`dogood.pipeline.card`: previews, photo credits, the card and ``dogood_build.json``;
- :mod:`dogood.pipeline.build`: :func:`~dogood.pipeline.build.build`, which runs them in turn and commits.
"""
