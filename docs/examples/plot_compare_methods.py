"""
Compare two methods with ``compare``
====================================

``segensemble bench`` segments, fuses and scores a whole dataset; ``compare``
puts several scored folders side by side (a table and the precision/recall
figure). Here the default recipe's consensus method is compared with plain
voting on three images of the built-in synthetic dataset; on the command line::

    segensemble bench --limit 3 --out a
    segensemble bench --limit 3 -m vote --out b
    segensemble compare a b --out cmp
"""

import tempfile
from pathlib import Path

import matplotlib.pyplot as plt

from segensemble.batch.bench import BenchConfig, run_bench
from segensemble.batch.compare import compare_results
from segensemble.pipeline.recipes import load_recipe

work = Path(tempfile.mkdtemp())
recipe = load_recipe("default")
run_bench(work / "default", config=BenchConfig.from_recipe(recipe), synthetic_images=3)
run_bench(work / "vote", config=BenchConfig.from_recipe(recipe.with_overrides(method="vote")), synthetic_images=3)
rows = compare_results([work / "default", work / "vote"], labels=["default", "vote"], out_dir=work / "cmp")
for name, row in rows.items():
    print(name, {k: round(v, 3) for k, v in row.items() if isinstance(v, float)})

image = plt.imread(work / "cmp" / "compare.png")
fig, ax = plt.subplots(figsize=(6, 6))
ax.imshow(image)
ax.axis("off")
plt.show()
