
"""Robots around vehicle_sim: two side by side (namespace plus frame_prefix), and the
robot_state_publisher that shows its vehicle."""

from __future__ import annotations

import math

import pytest
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import Twist
from nav_msgs.msg import Odometry
from rcl_interfaces.srv import SetParameters
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from urdf_parser_py.urdf import URDF

from wheelsim.ros import qos
from wheelsim.testing.processes import NodeProcess, Probe

ROBOTS = {'r1': {'model': 'bicycle', 'initial_pose.y': 0.0},
          'r2': {'model': 'omni', 'initial_pose.y': 3.0}}


def test_two_robots_run_side_by_side_without_collisions(ros_domain_id):
    probe = Probe()
    nodes = [NodeProcess('wheelsim.nodes.vehicle_sim', {**params, 'frame_prefix': f'{name}/'},
                         namespace=f'/{name}') for name, params in ROBOTS.items()]
    try:
        odom = {name: probe.record(Odometry, f'/{name}/ground_truth') for name in ROBOTS}
        joints = {name: probe.record(JointState, f'/{name}/joint_states') for name in ROBOTS}
        urdf = {name: probe.record(String, f'/{name}/robot_description', qos.LATCHED)
                for name in ROBOTS}
        diagnostics = probe.record(DiagnosticArray, '/diagnostics')
        command = probe.publisher(Twist, '/r1/cmd_vel')
        assert probe.spin_until(lambda: all(odom.values()) and all(urdf.values()), 30.0)
        forward = Twist()
        forward.linear.x = 1.0
        for _ in range(30):
            command.publish(forward)
            probe.spin_for(0.05)
        probe.spin_for(1.0)
        # Everything published until now (a busy probe lags).
        assert probe.catch_up([*odom.values(), diagnostics]), [n.output()[-2000:] for n in nodes]
    finally:
        codes = [node.stop() for node in nodes]
        probe.close()
    assert codes == [0, 0]
    assert odom['r1'][-1].pose.pose.position.x > 0.1  # only r1 was commanded
    assert odom['r2'][-1].pose.pose.position.x == 0.0
    assert odom['r2'][-1].pose.pose.position.y == 3.0
    for name in ROBOTS:
        last = odom[name][-1]
        assert (last.header.frame_id, last.child_frame_id) == (f'{name}/map', f'{name}/base_link')
        robot = URDF.from_xml_string(urdf[name][-1].data)
        assert all(link.name.startswith(f'{name}/') for link in robot.links)
        movable = {joint.name for joint in robot.joints if joint.type != 'fixed'}
        assert set(joints[name][-1].name) == movable
    assert len(joints['r1'][-1].name) == 6  # four wheels and two steering joints
    assert len(joints['r2'][-1].name) == 4  # four mecanum wheels
    names = {array.status[0].name for array in diagnostics}
    assert names == {'/r1/vehicle_sim: simulation', '/r2/vehicle_sim: simulation'}


def test_a_live_vehicle_change_updates_robot_state_publisher(ros_domain_id):
    """After a live vehicle change vehicle_sim sets robot_state_publisher's robot_description
    (which real robot_state_publisher 3.3/3.4 republishes), so the two never disagree."""
    from rclpy.node import Node

    probe = Probe()
    try:
        fake_rsp = Node('robot_state_publisher', context=probe.context)
        fake_rsp.declare_parameter('robot_description', '')
        probe.executor.add_node(fake_rsp)
        with NodeProcess('wheelsim.nodes.vehicle_sim', {'model': 'bicycle'}) as sim:
            descriptions = probe.record(String, 'robot_description', qos.LATCHED)
            assert probe.spin_until(lambda: descriptions, 20), sim.output()
            original = URDF.from_xml_string(descriptions[-1].data)
            client = probe.node.create_client(SetParameters, 'vehicle_sim/set_parameters')
            assert client.wait_for_service(timeout_sec=60)
            limit = 'model_params.bicycle.steering_actuator.max_position'  # a URDF joint limit
            change = Parameter(limit, value=0.4).to_parameter_msg()
            future = client.call_async(SetParameters.Request(parameters=[change]))
            assert probe.spin_until(future.done, 60) and future.result().results[0].successful

            def synced():
                text = fake_rsp.get_parameter('robot_description').value
                return bool(text) and text == descriptions[-1].data != original.to_xml_string()

            assert probe.spin_until(synced, 60), sim.output()
            from wheelsim.core.vehicle.config import vehicle_config_from_params
            from wheelsim.core.vehicle_sim.config import VehicleSimSettings
            from wheelsim.core.vehicle_sim.description import vehicle_sim_urdf

            expected = vehicle_sim_urdf(
                vehicle_config_from_params({'model': 'bicycle', limit: 0.4}), VehicleSimSettings())
            assert fake_rsp.get_parameter('robot_description').value == expected
            # vehicle_description follows too: the planner's curvature bound and the
            # controller's steering limit change with the steering.
            from wheelsim.core.vehicle.description import parse_description

            vehicles = probe.record(String, 'vehicle_description', qos.LATCHED)
            assert probe.spin_until(
                lambda: vehicles and parse_description(vehicles[-1].data).max_steering_angle
                == 0.4, 60), sim.output()
            described = parse_description(vehicles[-1].data)
            assert described.model == 'bicycle' and described.urdf == expected
            assert described.max_curvature == pytest.approx(math.tan(0.4) / 2.0)
            assert (described.drive.dead_time, described.drive.time_constant) == (0.2, 0.4)
    finally:
        probe.close()
