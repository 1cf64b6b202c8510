"""Remote subagents on a real Ray: a head node with no CPU (so no subagent runs there) and two worker nodes,
started once per test session with Ray's own `ray.cluster_utils.Cluster`. Without Ray installed the tests skip,
naming the extra; with `AGENTCLI_RAY_REQUIRED=1` (CI) they fail instead."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

REQUIRED = os.environ.get("AGENTCLI_RAY_REQUIRED") == "1"


@pytest.fixture(scope="session")
def ray_cluster_utils() -> Any:
    """Ray's `cluster_utils` (a test that starts a cluster of its own); skips, or fails in CI, without Ray."""
    try:
        from ray import cluster_utils
    except ImportError:
        if REQUIRED:
            pytest.fail("Ray is not installed: pip install -e '.[ray]'")
        pytest.skip("Ray is not installed (pip install -e '.[ray]')")
    return cluster_utils


@pytest.fixture(scope="session")
def cluster(ray_cluster_utils: Any) -> Iterator[Any]:
    import ray

    found = ray_cluster_utils.Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False})
    found.add_node(num_cpus=4)
    found.add_node(num_cpus=4)
    found.wait_for_nodes()
    try:
        yield found
    finally:
        if ray.is_initialized():
            ray.shutdown()
        found.shutdown()
