"""vehicle_sim's world on ROS: the map in (or out), ``scan``, ``footprint`` and ``collision`` out,
and the collision guard around the vehicle's steps.

- **Map**: read from ``world.map_yaml`` at start-up (a bad file stops the node with the reason),
  or else taken from the ``map`` topic (transient local, reliable, as Nav2's map_server serves
  it; every new map replaces the last). A grid in another frame is used when static transforms
  join it to the map frame (:class:`wheelsim.ros.inputs.MapPoses`), else it waits, with a
  throttled warning, until they do. No map: no scan and no collisions.
- **map** out: a map read from the file is published on ``map`` (nav_msgs/OccupancyGrid)
  unless ``world.publish_map`` is false, as map_server publishes it (reliable, transient
  local, depth 1; the file's cell values, resolution and origin), in the full map frame
  (``frame_prefix + map_frame``), once, stamped with the simulated time the simulation starts
  at (:meth:`SimWorld.publish_map`). Live, other nodes publishing on ``map`` too (a map
  server) are warned about.
- **scan** (sensor_msgs/LaserScan, sensor-data QoS: best effort, volatile, depth 5, as a lidar
  driver publishes): cast from the pose at the simulated time it is stamped with
  (:class:`wheelsim.core.world.scanner.LaserScanner`), frame ``frame_prefix + scan.frame_id``.
- **footprint** (geometry_msgs/PolygonStamped): the collision footprint in the base frame,
  stamped and published with every scan time (``scan.rate``), so RViz draws it where the
  vehicle is.
- **collision** (geometry_msgs/PointStamped, map frame): once per collision, at the simulated
  time of the contact step, the centre of the obstacle cell touched; a warning (throttled) says
  the same and ``/diagnostics`` counts collisions and shows the last one (over every map the
  node has used). Published from the moment ``world.collisions`` is first true: with collisions
  off the topic has no publisher (a bag then has no ``collision`` topic: no count known).

The map callback runs under ``lock``, the lock of the node's state (its wall-clock ticker steps
and scans in another thread).
"""

from __future__ import annotations

import threading

from geometry_msgs.msg import PointStamped, PolygonStamped
from nav_msgs.msg import OccupancyGrid
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import LaserScan

from wheelsim.core.units import NS_PER_S
from wheelsim.core.vehicle.config import VehicleConfig
from wheelsim.core.vehicle.model import Vehicle
from wheelsim.core.vehicle_sim.config import VehicleSimSettings
from wheelsim.core.vehicle_sim.randomness import random_stream
from wheelsim.core.vehicle_sim.timeline import Timeline
from wheelsim.core.world.collision import Contact
from wheelsim.core.world.footprint import footprint_of
from wheelsim.core.world.guard import CollisionGuard
from wheelsim.core.world.map_file import load_map_parameter
from wheelsim.core.world.occupancy import MapError, OccupancyMap
from wheelsim.core.world.scanner import LaserScanner
from wheelsim.ros import qos
from wheelsim.ros.conversions import time_msg
from wheelsim.ros.inputs import MapPoses
from wheelsim.ros.map_messages import (
    footprint_polygon,
    laser_scan,
    occupancy_grid,
    occupancy_map,
    point_stamped,
)
from wheelsim.ros.other_publishers import OtherPublishers
from wheelsim.ros.seam import NodeSeam


class SimWorld:
    """The map, laser, footprint and collision guard of one vehicle_sim node."""

    def __init__(self, seam: NodeSeam, settings: VehicleSimSettings, vehicle: VehicleConfig,
                 map_poses: MapPoses, lock: threading.RLock) -> None:
        self._seam = seam
        self._lock = lock
        self._map_poses = map_poses
        self.settings = settings
        self.footprint = footprint_of(settings.footprint, vehicle)
        self.scanner = LaserScanner(settings.scan, random_stream(settings.seed, 'scan_noise'))
        self._scan_frame = settings.frame_prefix + settings.scan.frame_id
        self._base_frame = settings.full_base_frame
        self._map_frame = settings.full_map_frame
        self.world: OccupancyMap | None = None
        self.guard: CollisionGuard | None = None
        # the collisions with the maps used before (each map gets a guard of its own)
        self._earlier_collisions = 0
        self._earlier_contact: Contact | None = None
        self.map_source = ''
        self._pending_map: OccupancyGrid | None = None
        self.scans = 0
        self._scan = seam.create_publisher(LaserScan, 'scan', qos_profile_sensor_data)
        self._footprint = seam.create_publisher(PolygonStamped, 'footprint', qos.DEFAULT)
        # The footprint is fixed in the base frame: one message, stamped again at each scan.
        self._footprint_message = footprint_polygon(self.footprint, self._base_frame, 0)
        self._collision = None  # created once collisions are on (a bag then holds the topic)
        self._publish_collisions_if_on()
        self._map_publisher = None
        self._other_map_publishers: OtherPublishers | None = None
        if settings.world.map_yaml:
            map_file = load_map_parameter(settings.world.map_yaml)
            if map_file.ignored:  # as map_server ignores them; a typo would go unseen
                seam.logger.warning(f'map {map_file.yaml_path}: ignoring keys map_server does '
                                    f'not read: {", ".join(map_file.ignored)}')
            self._use(map_file.occupancy_map(settings.world.occupied_threshold),
                      str(map_file.yaml_path))
            if settings.world.publish_map:
                self._map_publisher = seam.create_publisher(OccupancyGrid, 'map', qos.LATCHED)
                self._other_map_publishers = OtherPublishers(
                    seam, self._map_publisher.topic_name,
                    f', which publishes world.map_yaml ({self.map_source}) there: subscribers get '
                    'whichever map came last; set world.publish_map false when a map server '
                    'serves the map')
        else:
            seam.create_subscription(OccupancyGrid, 'map', self._on_map, qos.LATCHED)

    def _use(self, world: OccupancyMap, source: str) -> None:
        if self.guard is not None:  # found in review: a new map zeroed the count
            self._earlier_collisions += self.guard.collisions
            self._earlier_contact = self.guard.last_contact or self._earlier_contact
        self.world, self.map_source = world, source
        self.guard = CollisionGuard(world, self.footprint)
        self._seam.logger.info(
            f'map from {source}: {world.width} x {world.height} cells of {world.resolution_m:g} m'
            f'; scan {"on" if self.settings.scan.enabled else "off"}, collisions '
            f'{"on" if self.settings.world.collisions else "off"}')
        if world.origin[2] != 0.0:
            self._seam.logger.warning(
                f'map from {source}: its origin has a yaw of {world.origin[2]:g} rad, which this '
                "world turns the grid by; Nav2's costmaps and AMCL ignore an origin's yaw "
                '(navigation2 1.3.13 and 1.4.2), so their map is this one unturned: for Nav2, '
                'give the map a yaw of 0')

    @property
    def publishes_map(self) -> bool:
        """Whether this node publishes its map (read from world.map_yaml, world.publish_map)."""
        return self._map_publisher is not None

    def publish_map(self, stamp_ns: int) -> None:
        """Publish the map read from world.map_yaml on ``map`` as map_server does (its cell
        values, resolution [m/cell] and origin), frame the full map frame, ``header.stamp``
        and ``info.map_load_time`` ``stamp_ns`` [ns, simulated time]; nothing unless
        :attr:`publishes_map`. The publisher is transient local: subscribers that come later
        still get it."""
        if self._map_publisher is not None:
            self._map_publisher.publish(occupancy_grid(self.world, self._map_frame, stamp_ns))

    def check_map_publishers(self) -> None:
        """Live, when :attr:`publishes_map`: warn when other nodes (a map server) publish on
        the map topic too, naming them, each time that set of nodes changes. Subscribers would
        get whichever map came last: one of the two must go (world.publish_map false, or no
        map server)."""
        if self._other_map_publishers is not None:
            self._other_map_publishers.check()

    def _on_map(self, msg: OccupancyGrid) -> None:
        with self._lock:  # found in review: raced the ticker's scans for the pending map
            self._pending_map = msg
            self._take_pending_map()

    def _take_pending_map(self) -> None:
        """Use the last received map once its frame can be placed in the map frame."""
        msg = self._pending_map
        map_T_frame = self._map_poses.map_T(msg.header.frame_id, 'map')
        if map_T_frame is None:
            return  # warned (throttled); tried again at the next scan time
        self._pending_map = None
        try:
            world = occupancy_map(msg, self.settings.world.occupied_threshold, map_T_frame)
        except MapError as err:
            self._map_poses.warnings.warn('map invalid', f'map ignored: {err}')
            return
        self._use(world, f'the map topic ({msg.header.frame_id or "no frame"})')

    def update(self, settings: VehicleSimSettings) -> None:
        """Live parameter change: scan angles, ranges, noise, rate; collisions on or off."""
        self.settings = settings
        self.scanner.update(settings.scan)
        self._publish_collisions_if_on()

    def _publish_collisions_if_on(self) -> None:
        """Create the ``collision`` publisher once collisions are on: without it a recorded bag
        has no ``collision`` topic, so its reader knows no count (not 0) of a run with
        collisions off."""
        if self.settings.world.collisions and self._collision is None:
            self._collision = self._seam.create_publisher(PointStamped, 'collision', qos.DEFAULT)

    def step(self, vehicle: Vehicle, n_steps: int, timeline: Timeline) -> None:
        """Step the vehicle the ``n_steps`` that ``timeline`` has just advanced by, guarded
        when there is a map and collisions are on."""
        if self.guard is None or not self.settings.world.collisions:
            vehicle.step(n_steps)
            return
        contact = self.guard.step(vehicle, n_steps)
        if contact is not None:
            step = timeline.step - n_steps + self.guard.last_contact_step
            self._report(contact, timeline.time_ns(step))

    def _report(self, contact: Contact, stamp_ns: int) -> None:
        self._collision.publish(point_stamped(contact.x_m, contact.y_m, self._map_frame,
                                              stamp_ns))
        self._map_poses.warnings.warn('collision', (
            f'collision at t={stamp_ns / NS_PER_S:.3f} s: the footprint touched the obstacle '
            f'cell at x={contact.x_m:.3f} m, y={contact.y_m:.3f} m ({self._map_frame}); the '
            f'vehicle stopped ({self.collisions} collisions so far)'))

    @property
    def collisions(self) -> int:
        """The collisions so far, with every map used."""
        return self._earlier_collisions + (0 if self.guard is None else self.guard.collisions)

    @property
    def last_contact(self) -> Contact | None:
        """The latest collision's contact, with whichever map; None before the first."""
        if self.guard is not None and self.guard.last_contact is not None:
            return self.guard.last_contact
        return self._earlier_contact

    def publish(self, stamp_ns: int, base_pose: tuple[float, float, float]) -> None:
        """At a scan time: the footprint, and the scan cast from ``base_pose`` if there is a
        map and the scan is on."""
        time_msg(stamp_ns, self._footprint_message.header.stamp)
        self._footprint.publish(self._footprint_message)
        if self._pending_map is not None:
            self._take_pending_map()
        if self.world is None or not self.settings.scan.enabled:
            return
        ranges = self.scanner.scan(self.world, base_pose)
        self._scan.publish(laser_scan(self.settings.scan, self._scan_frame, stamp_ns, ranges))
        self.scans += 1

    def diagnostics(self) -> dict[str, object]:
        """Values for /diagnostics."""
        guard = self.guard
        values: dict[str, object] = {
            'map': (f'{self.world.width} x {self.world.height} cells of '
                    f'{self.world.resolution_m:g} m from {self.map_source}'
                    if self.world is not None else 'none yet'),
            'scans published': self.scans,
            'collisions': self.collisions,
        }
        contact = self.last_contact
        if contact is not None:
            values['last collision at'] = f'x={contact.x_m:.3f} m, y={contact.y_m:.3f} m'
        if guard is not None and guard.stuck:
            values['footprint overlaps an obstacle'] = 'yes: not held until it is clear'
        return values
