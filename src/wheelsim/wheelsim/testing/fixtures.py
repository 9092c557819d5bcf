"""pytest fixtures shared by the package tests and the top-level system tests (needs pytest)."""

import pytest

from wheelsim.ros.dds_domain import loopback_domain


@pytest.fixture
def ros_domain_id():
    """A ROS domain ID reserved for this test, exported in os.environ for child processes."""
    with loopback_domain() as domain_id:
        yield domain_id
