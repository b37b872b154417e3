"""Agreement between clusterings (Jaccard index, ensemble stability, NMI): :mod:`segensemble.stability`.

They live in the base layer, where the consensus methods that use them can reach them; the evaluation
package offers them beside the benchmark's measures.
"""

from segensemble.stability import ensemble_stability, jaccard_index, normalized_mutual_information

__all__ = ["jaccard_index", "ensemble_stability", "normalized_mutual_information"]
