"""``vehicle_description``: vehicle_sim describes its vehicle once; planner and controller listen.

The topic (relative: it follows the namespace) carries a std_msgs/String with the JSON document
of :mod:`wheelsim.core.vehicle.description`, reliable and transient local with depth 1, so a
node started later still gets it. vehicle_sim publishes it at start-up and after every live
change of a vehicle parameter.

:class:`VehicleDefaults` is the listening side shared by planner and controller: it keeps the
node's declared configuration (whose "from the vehicle" parameters hold their sentinel values),
resolves it with the latest description, warns once per explicit parameter that contradicts the
vehicle, and says (throttled) which parameters still wait for a description. A parameter the
vehicle cannot have at all (the planner's ``holonomic`` for a vehicle that is not omni) is an
error: logged, and the node waits for parameters that fit (:meth:`VehicleDefaults.check`
refuses such a live change, and one setting a parameter back to "from the vehicle" before any
description came to a node running on given values).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from std_msgs.msg import String

from wheelsim.core.params import ParameterError, to_flat
from wheelsim.core.vehicle.description import (
    DescriptionError,
    VehicleDescription,
    parse_description,
)
from wheelsim.ros import qos
from wheelsim.ros.seam import NodeSeam

TOPIC = 'vehicle_description'
WAIT_LOG_PERIOD_S = 10.0
ConfigT = TypeVar('ConfigT')


class VehicleDescriptionPublisher:
    """vehicle_sim's side: the latched ``vehicle_description`` topic."""

    def __init__(self, seam: NodeSeam) -> None:
        self._publisher = seam.create_publisher(String, TOPIC, qos.LATCHED)

    def publish(self, description: VehicleDescription) -> None:
        self._publisher.publish(String(data=description.to_json()))


class VehicleDefaults(Generic[ConfigT]):
    """A node's configuration completed from the vehicle description (see the module doc).

    ``resolve(config, description)`` returns the completed configuration and the messages about
    contradicting parameters; ``waiting(config)`` the parameters a description would set.
    ``on_resolved(config)`` is called whenever the completed configuration changes.
    """

    def __init__(
        self,
        seam: NodeSeam,
        declared: ConfigT,
        resolve: Callable[[ConfigT, VehicleDescription], tuple[ConfigT, list[str]]],
        waiting: Callable[[ConfigT], list[str]],
        on_resolved: Callable[[ConfigT], None],
    ) -> None:
        self._seam = seam
        self._resolve, self._waiting, self._on_resolved = resolve, waiting, on_resolved
        self._description: VehicleDescription | None = None
        self._warned: set[str] = set()
        self.config: ConfigT | None = None
        self.problem: str | None = None  # why the declared parameters do not fit the vehicle
        self.declare(declared)
        seam.create_subscription(String, TOPIC, self._on_message, qos.LATCHED)

    @property
    def description(self) -> VehicleDescription | None:
        """The latest vehicle description received, or None."""
        return self._description

    def declare(self, declared: ConfigT) -> None:
        """A new declared configuration (start-up, a live parameter change)."""
        self._declared = declared
        self._update()

    def waiting_for(self) -> list[str]:
        """The parameters still waiting for a description (empty once one came: resolved, or
        refused with an error)."""
        if self.config is not None or self._description is not None:
            return []
        return self._waiting(self._declared)

    def log_waiting(self) -> None:
        """Say (at most every 10 s) what waits for the description."""
        names = self.waiting_for()
        if names:
            self._seam.logger.info(
                f'waiting for {TOPIC} (from vehicle_sim) to set {", ".join(names)}; set them '
                'as parameters when no vehicle_sim runs', throttle_duration_sec=WAIT_LOG_PERIOD_S)

    def _on_message(self, msg: String) -> None:
        try:
            description = parse_description(msg.data)
        except DescriptionError as err:
            self._seam.logger.warning(f'{TOPIC} ignored: {err}',
                                      throttle_duration_sec=WAIT_LOG_PERIOD_S)
            return
        if description == self._description:
            return
        self._description = description
        self._update()

    def _update(self) -> None:
        if self._description is None:
            resolved = None if self._waiting(self._declared) else self._declared
        else:
            try:
                resolved, messages = self._resolve(self._declared, self._description)
            except ParameterError as err:  # a parameter the vehicle cannot have (holonomic)
                self.config = None
                self.problem = f'{err} for the vehicle on {TOPIC}'
                self._seam.logger.error(f'{self.problem}: waiting for parameters that fit it')
                return
            for message in messages:
                if message not in self._warned:  # once each
                    self._warned.add(message)
                    self._seam.logger.warning(message)
        self.problem = None
        if resolved is not None and resolved != self.config:
            self.config = resolved
            self._on_resolved(resolved)

    def check(self, declared: ConfigT) -> None:
        """Raise :class:`ParameterError` if ``declared`` cannot be completed for the vehicle
        described, or, with no description yet, if it sets a parameter back to "from the
        vehicle" while the node runs on given values (it would go on with the old value): a
        live change is refused then."""
        if self._description is not None:
            self._resolve(declared, self._description)
            return
        if self.config is None:  # still waiting: one more parameter to wait for changes nothing
            return
        waiting = self._waiting(declared)
        if waiting:
            name = waiting[0]
            raise ParameterError(name, to_flat(declared)[name],
                                 f'"from the vehicle" needs a description on {TOPIC} (from '
                                 'vehicle_sim), and none has come: give a value')
