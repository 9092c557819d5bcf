"""pytest fixtures shared by the package tests and the top-level system tests (needs pytest)."""

import os

import pytest

from wheelsim.dds_domain import require_loopback_dds, reserved_domain_id


@pytest.fixture
def ros_domain_id():
    """A ROS domain ID reserved for this test, exported in os.environ for child processes."""
    require_loopback_dds()
    previous = os.environ.get('ROS_DOMAIN_ID')
    with reserved_domain_id() as domain_id:
        os.environ['ROS_DOMAIN_ID'] = str(domain_id)
        try:
            yield domain_id
        finally:
            if previous is None:
                os.environ.pop('ROS_DOMAIN_ID', None)
            else:
                os.environ['ROS_DOMAIN_ID'] = previous
