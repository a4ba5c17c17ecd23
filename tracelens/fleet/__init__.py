"""Many logs at once: which files are logs (:mod:`~tracelens.fleet.sniff`), the diagnosis of one
log as a result a parent process merges (:mod:`~tracelens.fleet.work`), run on a process pool
(:mod:`~tracelens.fleet.pool`) or a Ray Data dataset (:mod:`~tracelens.fleet.raydata`), one
row per log in Parquet (:mod:`~tracelens.fleet.results`), and the counts a platform team reads
first (:mod:`~tracelens.fleet.top`)."""
