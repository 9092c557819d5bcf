"""localization: drifting odometry, a map pose estimate and the REP-105 chain from ground truth.

For every ``ground_truth`` message (nav_msgs/Odometry from vehicle_sim: true pose in the map
frame, true body twist) this node publishes, all stamped with the ground truth's stamp (with
``odometry_source: joint_states`` once the ``joint_states`` of the same stamp have come too, whose
wheel encoders the odometry integrates):

- ``odom`` (nav_msgs/Odometry, frame odom, child base_link): the wheel odometry with the
  covariance of its error and the (optionally noisy) body twist with its covariance;
- ``pose`` (PoseWithCovarianceStamped, map frame): the estimate, as AMCL's ``amcl_pose``;
- ``/tf``: ``map -> odom`` and ``odom -> base_link``, which compose exactly to ``pose``
  (``odom -> base_link`` only with ``publish_map_to_odom: false``, beside Nav2's AMCL).

The numbers come from :class:`wheelsim.core.localization.model.Localization` (modes, noise
models and the meaning of every parameter: docs/localization.md). The node never reads its own
clock, so it behaves the same with wall time, ``use_sim_time`` and in lock-step runs.
``initialpose`` resets the estimate at the next ground-truth sample. With wheel encoders and
``encoders.model`` auto, the odometry takes vehicle_sim's geometry from its
``vehicle_description`` and nothing is published before that has come; with a model given, the
``encoders.*`` geometry that differs from vehicle_sim's is warned of once: that odometry is a
mis-calibrated robot's, on purpose or not.

Covariances are 6x6 over ``(x, y, z, roll, pitch, yaw)``; the planar model fills the ``x``, ``y``,
``yaw`` rows and columns and leaves ``z``, roll and pitch at 0 (exact: the motion is planar).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, NoReturn

from geometry_msgs.msg import PoseWithCovarianceStamped
from nav_msgs.msg import Odometry
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage

from wheelsim.core.localization.config import LocalizationConfig, unused_parameters
from wheelsim.core.localization.model import TELEPORT_TO_RESET
from wheelsim.core.localization.model import Localization as LocalizationModel
from wheelsim.core.localization.wheel_encoders import (
    AUTO,
    USED_GEOMETRY,
    geometry_mismatches,
    with_vehicle,
)
from wheelsim.core.params import ParamSpec, from_flat, specs
from wheelsim.core.vehicle.description import (
    DescriptionError,
    VehicleDescription,
    parse_description,
)
from wheelsim.ros import qos, vehicle_description
from wheelsim.ros.conversions import (
    PLANAR_DIAGONAL_FLAT,
    covariance6,
    fill_planar_zw,
    fill_twist_parts,
    odometry,
    odometry_sample,
    planar_covariance,
    pose_with_covariance_stamped,
    stamp_ns,
    time_msg,
    transform_stamped,
)
from wheelsim.ros.inputs import MapPoses, rotate_planar_covariance
from wheelsim.ros.node_main import run_node
from wheelsim.ros.parameters import NodeParameters
from wheelsim.ros.seam import NodeSeam


def _waits_for_vehicle(config: LocalizationConfig) -> bool:
    """Whether the odometry takes its wheel geometry from vehicle_description."""
    return config.odometry_source == 'joint_states' and config.encoders.model == AUTO


def parameter_specs() -> list[ParamSpec]:
    """Every parameter the node declares (for the headless runner and the docs)."""
    return specs(LocalizationConfig)


def check_parameters(values: Mapping[str, Any]) -> None:
    """Raise ParameterError unless ``values`` (dotted names) make a valid configuration."""
    from_flat(LocalizationConfig, values)


class Localization:
    """The localization node, on ``seam`` (:mod:`wheelsim.ros.seam`)."""

    name = 'localization'

    def __init__(self, seam: NodeSeam) -> None:
        self.seam = seam
        self.params = NodeParameters(seam)
        self._settings = self.params.declare_config(LocalizationConfig, self._on_settings)
        self.params.freeze('use_sim_time', 'the outputs carry the stamps of ground_truth, never '
                                           "this node's clock: it would change nothing")
        self.params.report_unknown()
        config = self.config
        for key, reason in unused_parameters(config.mode, config.odometry_source).items():
            for name, value in self.params.freeze_unused(key, reason).items():
                self.seam.logger.warning(f'{name} = {value!r} has no effect: {reason}')
        self.map_frame = config.full_map_frame
        self.odom_frame = config.full_odom_frame
        self.base_frame = config.full_base_frame
        self._vehicle: VehicleDescription | None = None  # with encoders: vehicle_sim's
        # With encoders.model auto the model is made once vehicle_sim's description has come.
        self.localization: LocalizationModel | None = (
            None if _waits_for_vehicle(config) else LocalizationModel(config))
        self._odom = self.seam.create_publisher(Odometry, 'odom', qos.DEFAULT)
        self._pose = self.seam.create_publisher(PoseWithCovarianceStamped, 'pose', qos.DEFAULT)
        self._tf = self.seam.create_publisher(TFMessage, '/tf', qos.TF)
        # The same message objects are filled for every ground-truth sample (building them costs
        # more than filling them): a published message is valid until the next one. Their frames
        # are written here once; per sample only the stamp and the numbers change. The four
        # headers share one stamp object: one to fill per sample.
        zero = (0.0, 0.0, 0.0)
        odom = odometry(0, self.odom_frame, self.base_frame, zero, zero)
        pose = pose_with_covariance_stamped(0, self.map_frame, zero)
        transforms = [transform_stamped(0, self.map_frame, self.odom_frame, zero),
                      transform_stamped(0, self.odom_frame, self.base_frame, zero)]
        self._messages = (odom, pose, TFMessage(
            transforms=transforms if config.publish_map_to_odom else transforms[1:]))
        self._stamp = odom.header.stamp
        for msg in (pose, *transforms):
            msg.header.stamp = self._stamp
        map_to_odom, odom_to_base = (transform.transform for transform in transforms)
        # position and orientation of odom, pose, map -> odom and odom -> base, for
        # fill_planar_zw; then the numbers of the odom twist and of the covariances
        self._planar_parts = (
            odom.pose.pose.position, odom.pose.pose.orientation,
            pose.pose.pose.position, pose.pose.pose.orientation,
            map_to_odom.translation, map_to_odom.rotation,
            odom_to_base.translation, odom_to_base.rotation,
        )
        self._twist_parts = (odom.twist.twist.linear, odom.twist.twist.angular)
        self._covariances = (odom.pose.covariance, pose.pose.covariance)
        self._twist_variances = None  # those in the odom message, set at its first publication
        self.seam.create_subscription(Odometry, 'ground_truth', self._on_ground_truth, qos.DEFAULT)
        # With wheel encoders, each ground-truth sample waits for the joint_states of its time.
        self._waiting: list[tuple[int, tuple, tuple]] = []
        self._geometry_warned: set[str] = set()
        if config.odometry_source == 'joint_states':
            self.seam.create_subscription(
                JointState, 'joint_states', self._on_joint_states, qos.DEFAULT
            )
            self.seam.create_subscription(
                String, vehicle_description.TOPIC, self._on_vehicle_description, qos.LATCHED)
        self._map_poses = MapPoses(seam, self.map_frame)
        self.seam.create_subscription(
            PoseWithCovarianceStamped, 'initialpose', self._on_initial_pose, qos.DEFAULT
        )
        chain = (f'{self.map_frame} -> {self.odom_frame} -> {self.base_frame}'
                 if config.publish_map_to_odom else
                 f'{self.odom_frame} -> {self.base_frame} ({self.map_frame} -> '
                 f'{self.odom_frame} left to another node)')
        encoders = ''
        if config.odometry_source == 'joint_states':
            encoders = ', odometry from the wheel encoders of joint_states' + (
                ' (their geometry from vehicle_description)' if _waits_for_vehicle(config)
                else '')
        self.seam.logger.info(
            f'mode {config.mode}, seed {config.seed}: {chain} from ground_truth{encoders}')

    @property
    def config(self) -> LocalizationConfig:
        """The current validated configuration."""
        return self._settings.config

    def _on_settings(self, new: LocalizationConfig, _old: LocalizationConfig) -> None:
        if self.localization is not None:
            self.localization.update_config(self._resolved(new))
        self._check_geometry()

    def _resolved(self, config: LocalizationConfig,
                  vehicle: VehicleDescription | None = None) -> LocalizationConfig:
        """``config`` with encoders.model auto made the geometry of ``vehicle`` (default: the
        one in use; :func:`with_vehicle`). DescriptionError if its URDF gives no wheel radius.
        encoders.model is read only, so a config that waits for the vehicle always did."""
        if not _waits_for_vehicle(config):
            return config
        return replace(config, encoders=with_vehicle(config.encoders, vehicle or self._vehicle))

    def _use_vehicle(self, vehicle: VehicleDescription) -> None:
        """With encoders.model auto: the odometry with ``vehicle``'s geometry from now on, or,
        if its URDF gives no wheel radius, the one before kept (none: still waiting)."""
        try:
            config = self._resolved(self.config, vehicle)
        except DescriptionError as err:
            self.seam.logger.error(
                f'vehicle_description gives no wheel radius ({err}): odometry from joint_states '
                + ('keeps the geometry before' if self.localization is not None else
                   'waits for one that does (or set encoders.model and the geometry)'),
                throttle_duration_sec=10.0)
            return
        self._vehicle = vehicle
        encoders = config.encoders
        if self.localization is None:
            self.localization = LocalizationModel(config)
        elif encoders != self.localization.config.encoders:
            self.localization.update_config(config, new_vehicle=True)
        else:
            return
        geometry = ', '.join(f'{name} {getattr(encoders, name):g} m'
                             for name in USED_GEOMETRY[encoders.model])
        self.seam.logger.info(f'odometry from the wheel encoders of the {encoders.model} '
                              f'vehicle: {geometry} (vehicle_description)')

    def _on_vehicle_description(self, msg: String) -> None:
        try:
            vehicle = parse_description(msg.data)
        except DescriptionError as err:
            self.seam.logger.warning(f'vehicle_description ignored: {err}',
                                     throttle_duration_sec=10.0)
            return
        if _waits_for_vehicle(self.config):
            self._use_vehicle(vehicle)
        else:
            self._vehicle = vehicle
            self._check_geometry()

    def _check_geometry(self) -> None:
        """Warn once of each ``encoders.*`` that differs from the vehicle's geometry."""
        if self._vehicle is None:
            return
        for text in geometry_mismatches(self.config.encoders, self._vehicle):
            if text not in self._geometry_warned:
                self._geometry_warned.add(text)
                self.seam.logger.warning(
                    f'odometry from joint_states computes with {text}: it is a mis-calibrated '
                    "robot's (set encoders.* to vehicle_sim's values for a calibrated one)")

    def _on_ground_truth(self, msg: Odometry) -> None:
        frame, stamp, pose, twist = odometry_sample(msg)
        frame = frame.lstrip('/')
        if frame and frame != self.map_frame:
            self.seam.logger.warning(
                f'ground_truth header.frame_id is "{frame}", expected "{self.map_frame}" '
                '(frame_prefix/map_frame differ from vehicle_sim?); taken as the map frame',
                throttle_duration_sec=10.0,
            )
        if self.localization is None:
            self.seam.logger.info(
                'ground_truth not used yet: encoders.model auto waits for vehicle_description '
                '(the wheel geometry)', throttle_duration_sec=5.0)
            return
        if self.localization.encoders is None:
            self._step(stamp, pose, twist)
            return
        self._waiting.append((stamp, pose, twist))
        if len(self._waiting) > 1:  # its joint_states did not come: go on without them
            self.seam.logger.warning(
                'no joint_states for a ground_truth stamp: odometry takes the wheels as '
                'last seen', throttle_duration_sec=5.0,
            )
            self._step(*self._waiting.pop(0))
        self._step_ready()

    def _on_joint_states(self, msg: JointState) -> None:
        if self.localization is None:  # waiting for the vehicle's geometry
            return
        try:
            self.localization.encoders.update(stamp_ns(msg.header.stamp), msg.name, msg.position)
        except ValueError as err:
            self.seam.logger.error(f'joint_states ignored: {err}', throttle_duration_sec=5.0)
            return
        self._step_ready()

    def _step_ready(self) -> None:
        while self._waiting and self.localization.ready(self._waiting[0][0]):
            self._step(*self._waiting.pop(0))

    def _step(self, stamp: int, pose, twist) -> None:
        resetting = self.localization.reset_requested
        try:
            event = self.localization.advance(stamp, pose, twist)
        except ValueError as err:
            self.seam.logger.error(
                f'ground_truth message ignored: {err}', throttle_duration_sec=5.0
            )
            return
        if event is not None:
            self._log_event(event, resetting)
        self._publish(stamp)

    def _log_event(self, event: str, resetting: bool) -> None:
        """Log the model's ``event``; ``resetting``: the sample applied ``initialpose``."""
        notes = self._map_poses.warnings
        if event in ('teleport', TELEPORT_TO_RESET):
            restart = ('; estimate reset from initialpose' if resetting else
                       '; the EKF starts again from initialpose'
                       if event == TELEPORT_TO_RESET else
                       '; the EKF starts again from the pose fix at the new place'
                       if self.config.mode == 'ekf' else '')
            notes.info('teleport', (
                'ground truth jumped further than its twist explains (a teleport): odometry '
                f'stays continuous, {self.map_frame} -> {self.odom_frame} absorbs the jump'
                + restart))
        elif event == 'time_jump':
            notes.warn('time back', (
                'ground truth stamp went back in time: localization restarted at the vehicle'))
        elif event == 'reset':
            notes.info('reset', 'estimate reset from initialpose')
        elif event == 'ekf_restart':
            notes.warn('ekf restart', (
                'the EKF state stopped being finite or a correction failed numerically (an '
                'extreme initialpose covariance?): restarted from the pose fix of this sample'))

    def _publish(self, stamp: int) -> None:
        """Publish the model's outputs of the sample at ``stamp`` [ns]."""
        model = self.localization
        odom, pose, tf = self._messages
        time_msg(stamp, self._stamp)
        # the order of model.output: odom_T_base, map_T_base, map_T_odom (x, y, yaw, qz, qw
        # each), the body twist
        (odom_x, odom_y, _, odom_qz, odom_qw, map_x, map_y, _, map_qz, map_qw, map_odom_x,
         map_odom_y, _, map_odom_qz, map_odom_qw, vx, vy, wz) = model.output.tolist()
        (odom_position, odom_orientation, pose_position, pose_orientation, map_to_odom_position,
         map_to_odom_orientation, odom_to_base_position, odom_to_base_orientation) = (
            self._planar_parts)
        fill_planar_zw(odom_position, odom_orientation, odom_x, odom_y, odom_qz, odom_qw)
        fill_planar_zw(pose_position, pose_orientation, map_x, map_y, map_qz, map_qw)
        fill_planar_zw(map_to_odom_position, map_to_odom_orientation, map_odom_x, map_odom_y,
                     map_odom_qz, map_odom_qw)
        fill_planar_zw(odom_to_base_position, odom_to_base_orientation, odom_x, odom_y, odom_qz,
                     odom_qw)
        linear, angular = self._twist_parts
        fill_twist_parts(linear, angular, vx, vy, wz)
        odom_covariance, pose_covariance = self._covariances
        covariance6(model.odom_covariance, odom_covariance)
        covariance6(model.map_covariance, pose_covariance)
        if model.twist_variances is not self._twist_variances:  # they change with parameters
            odom.twist.covariance[PLANAR_DIAGONAL_FLAT] = model.twist_variances  # independent
            self._twist_variances = model.twist_variances
        self._tf.publish(tf)
        self._odom.publish(odom)
        self._pose.publish(pose)

    def _on_initial_pose(self, msg: PoseWithCovarianceStamped) -> None:
        pose = self._map_poses.pose(msg.pose.pose, msg.header.frame_id, 'initialpose')
        if pose is None:
            return
        map_T_frame = self._map_poses.map_T(msg.header.frame_id, 'initialpose')
        covariance = rotate_planar_covariance(planar_covariance(msg.pose.covariance),
                                              map_T_frame[2])
        if self.localization is None:
            self.seam.logger.warning('initialpose ignored: encoders.model auto waits for '
                                     'vehicle_description (the wheel geometry)')
            return
        try:
            self.localization.request_reset(pose, covariance)
        except ValueError as err:
            self._map_poses.warnings.warn('initialpose invalid', f'initialpose ignored: {err}')


def main(args=None) -> NoReturn:
    run_node(Localization, args)



if __name__ == '__main__':  # python -m wheelsim.nodes.localization
    main()
