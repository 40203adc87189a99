"""What /metrics says of the node it reached (inbox_node_info, its start, its liveness lock), and the figures a node
reads back from its own metrics for GET /ops/cluster."""

from __future__ import annotations

import re

from inbox_actors.monitoring.metrics import ServiceMetrics


def lines(metrics: ServiceMetrics, name: str) -> list[str]:
    return re.findall(rf"^{name}(?:\{{.*\}})? .*$", metrics.exposition().decode(), re.M)


def test_the_node_info_names_the_node_once_it_is_named_and_follows_a_new_name():
    metrics = ServiceMetrics()
    metrics.node_identified("", 1_700_000_000.0, None)
    assert lines(metrics, "inbox_node_info") == []                      # not named yet (not listening)
    metrics.node_identified("http://10.0.0.7:8080", 1_700_000_000.0, None)
    assert lines(metrics, "inbox_node_info") == ['inbox_node_info{node="http://10.0.0.7:8080"} 1.0']
    assert lines(metrics, "inbox_node_start_time_seconds") == ["inbox_node_start_time_seconds 1.7e+09"]
    metrics.node_identified("http://10.0.0.8:8080", 1_700_000_000.0, None)
    assert lines(metrics, "inbox_node_info") == ['inbox_node_info{node="http://10.0.0.8:8080"} 1.0']


def test_the_liveness_lock_series_is_a_cluster_nodes_only():
    metrics = ServiceMetrics()
    metrics.node_identified("http://a", 0.0, None)
    assert lines(metrics, "inbox_node_liveness_lock_held") == []         # a node alone holds none
    metrics.node_identified("http://a", 0.0, True)
    assert lines(metrics, "inbox_node_liveness_lock_held") == ["inbox_node_liveness_lock_held 1.0"]
    metrics.node_identified("http://a", 0.0, False)
    assert lines(metrics, "inbox_node_liveness_lock_held") == ["inbox_node_liveness_lock_held 0.0"]


def test_the_relay_counts_and_the_skew_read_back_for_the_ops_view():
    metrics = ServiceMetrics()
    assert metrics.node_request_counts() == {"relayed": 0, "taken": 0, "unreachable": 0}
    assert metrics.clock_skew_reading() is None
    metrics.node_request("relayed")
    metrics.node_request("relayed")
    metrics.node_request("unreachable")
    assert metrics.node_request_counts() == {"relayed": 2, "taken": 0, "unreachable": 1}
    metrics.clock_skew_measured(-0.25)
    skew, age = metrics.clock_skew_reading()
    assert skew == -0.25 and 0 <= age < 1
    # The series keep their names and labels: the node is told by inbox_node_info, not a label on each.
    assert lines(metrics, "inbox_node_requests_total") == ['inbox_node_requests_total{way="relayed"} 2.0',
                                                         'inbox_node_requests_total{way="taken"} 0.0',
                                                         'inbox_node_requests_total{way="unreachable"} 1.0']
