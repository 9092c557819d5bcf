"""pytest fixtures shared by the package tests and the top-level system tests (needs pytest)."""

import pytest

from wheelsim.ros.dds_domain import loopback_domain
from wheelsim.testing.processes import Probe


@pytest.fixture
def ros_domain_id():
    """A ROS domain ID reserved for this test, exported in os.environ for child processes."""
    with loopback_domain() as domain_id:
        yield domain_id


@pytest.fixture
def probe(ros_domain_id):
    """A :class:`~wheelsim.testing.processes.Probe` on the test's reserved domain, closed after
    the test."""
    probe = Probe()
    yield probe
    probe.close()
