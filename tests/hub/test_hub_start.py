"""The hub tests' own cluster start (helpers/nats_hub.py): a node that cannot start makes the cluster start again
on new ports at once, instead of its two peers waiting out the whole bound for a meta leader that a quorum of
two never elects while the third node is missing."""

from __future__ import annotations

import dataclasses
import socket
import time
from pathlib import Path

import pytest

from helpers.nats_hub import Credentials, NatsHub, _cluster, _started, free_ports
from helpers.slack import bound

pytestmark = pytest.mark.hub


def test_a_clusters_ports_are_all_different():
    # picked one by one, nine ports repeat one in about 1 of 350 picks (bind picks odd ports only, ~14,000 here)
    for _ in range(2000):
        assert len(set(free_ports(9))) == 9


def test_a_cluster_node_whose_port_is_taken_starts_the_cluster_again_on_new_ports(tmp_path: Path):
    with socket.socket() as taken:  # what another worker's server holds
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = int(taken.getsockname()[1])

        def make(attempt: int) -> NatsHub:
            hub = _cluster(tmp_path / f"try-{attempt}", 3, Credentials())
            if attempt == 0:  # hub-b, not hub-a: the first node waited on is one that starts
                b = hub.nodes[1]
                hub.nodes[1] = dataclasses.replace(
                    b, client_port=port, env={**b.env, "HUB_LISTEN": f"127.0.0.1:{port}"}
                )
            return hub

        began = time.monotonic()
        hub = _started(make, bound(20))
        try:
            took = time.monotonic() - began
            assert "address already in use" in (tmp_path / "try-0" / "hub-b.log").read_text()
            assert all(node.healthy() for node in hub.nodes)
            assert port not in {node.client_port for node in hub.nodes}
            # at once: without waiting out the first start's bound
            assert took < bound(20), f"the second start began only after {took:.0f} s"
        finally:
            hub.stop()


def test_a_new_hub_whose_third_node_is_not_up_yet_elects_its_leader_from_two(tmp_path: Path):
    """packaging/nats/cluster.conf as documented: each node's routes name the other two. (With a node listing
    itself, two fresh nodes of three waited for good: JetStream counted four peers and two made no quorum.)"""
    hub = _cluster(tmp_path, 3, Credentials())
    a, b, _c = hub.nodes
    a.start()
    b.start()
    try:
        deadline = time.monotonic() + bound(20)
        while not (a.healthy() and b.healthy()):
            assert time.monotonic() < deadline, a.log.read_text()[-2000:] + b.log.read_text()[-2000:]
            time.sleep(0.2)
    finally:
        a.stop()
        b.stop()
