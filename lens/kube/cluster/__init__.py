"""The cluster as `lens jobs` sees it: watch caches of nodes and pods, and what is computed
from them (node facts, GPU allocation, GPU pods and workloads that ended unseen)."""
