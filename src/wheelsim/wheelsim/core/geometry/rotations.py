"""3-D rotations as KDL (orocos_kinematics_dynamics) and urdfdom compute them, operation for
operation, so that a pose matches robot_state_publisher's to the last bit: a rotation is KDL's
row-major 3x3 matrix (:data:`Matrix`), a quaternion is (x, y, z, w) with KDL's sign (w >= 0
unless the rotation is over 120 degrees, then the largest of x, y, z positive). Angles in
radians, axes unit vectors unless said otherwise."""

from __future__ import annotations

import math

#: A rotation matrix: 9 floats, row by row, as KDL's Rotation holds it.
Matrix = tuple[float, float, float, float, float, float, float, float, float]


def rpy_rotation(roll_rad: float, pitch_rad: float, yaw_rad: float) -> Matrix:
    """The rotation of a URDF origin's ``rpy`` (``Rz(yaw) Ry(pitch) Rx(roll)``) as KDL holds it:
    urdfdom's ``Rotation::setFromRPY`` (a normalised quaternion), then KDL's
    ``Rotation::Quaternion``."""
    phi, the, psi = roll_rad / 2.0, pitch_rad / 2.0, yaw_rad / 2.0
    x = math.sin(phi) * math.cos(the) * math.cos(psi) - math.cos(phi) * math.sin(the) * \
        math.sin(psi)
    y = math.cos(phi) * math.sin(the) * math.cos(psi) + math.sin(phi) * math.cos(the) * \
        math.sin(psi)
    z = math.cos(phi) * math.cos(the) * math.sin(psi) - math.sin(phi) * math.sin(the) * \
        math.cos(psi)
    w = math.cos(phi) * math.cos(the) * math.cos(psi) + math.sin(phi) * math.sin(the) * \
        math.sin(psi)
    norm = math.sqrt(x * x + y * y + z * z + w * w)
    x, y, z, w = x / norm, y / norm, z / norm, w / norm
    x2, y2, z2, w2 = x * x, y * y, z * z, w * w
    return (w2 + x2 - y2 - z2, 2 * x * y - 2 * w * z, 2 * x * z + 2 * w * y,
            2 * x * y + 2 * w * z, w2 - x2 + y2 - z2, 2 * y * z - 2 * w * x,
            2 * x * z - 2 * w * y, 2 * y * z + 2 * w * x, w2 - x2 - y2 + z2)


def rotated(m: Matrix, v) -> tuple[float, float, float]:
    """KDL's ``Rotation * Vector``."""
    return (m[0] * v[0] + m[1] * v[1] + m[2] * v[2], m[3] * v[0] + m[4] * v[1] + m[5] * v[2],
            m[6] * v[0] + m[7] * v[1] + m[8] * v[2])


def kdl_norm(v) -> float:
    """KDL's ``Vector::Norm``: the length, scaled by the largest component."""
    a, b, c = (abs(component) for component in v)
    if a >= b and a >= c:
        return a * math.sqrt(1 + (v[1] / v[0]) ** 2 + (v[2] / v[0]) ** 2) if a else 0.0
    if a >= b or c >= b:  # c is the largest
        return c * math.sqrt(1 + (v[0] / v[2]) ** 2 + (v[1] / v[2]) ** 2)
    return b * math.sqrt(1 + (v[0] / v[1]) ** 2 + (v[2] / v[1]) ** 2)


def rot2(axis, angle_rad: float) -> Matrix:
    """KDL's ``Rotation::Rot2``: the rotation by ``angle_rad`` about the unit ``axis``."""
    ct, st = math.cos(angle_rad), math.sin(angle_rad)
    vt = 1 - ct
    vt0, vt1, vt2 = vt * axis[0], vt * axis[1], vt * axis[2]
    st0, st1, st2 = axis[0] * st, axis[1] * st, axis[2] * st
    vt01, vt02, vt12 = vt0 * axis[1], vt0 * axis[2], vt1 * axis[2]
    return (ct + vt0 * axis[0], -st2 + vt01, st1 + vt02,
            st2 + vt01, ct + vt1 * axis[1], -st0 + vt12,
            -st1 + vt02, st0 + vt12, ct + vt2 * axis[2])


def product(a: Matrix, b: Matrix) -> Matrix:
    """KDL's ``Rotation * Rotation``."""
    return (a[0] * b[0] + a[1] * b[3] + a[2] * b[6], a[0] * b[1] + a[1] * b[4] + a[2] * b[7],
            a[0] * b[2] + a[1] * b[5] + a[2] * b[8], a[3] * b[0] + a[4] * b[3] + a[5] * b[6],
            a[3] * b[1] + a[4] * b[4] + a[5] * b[7], a[3] * b[2] + a[4] * b[5] + a[5] * b[8],
            a[6] * b[0] + a[7] * b[3] + a[8] * b[6], a[6] * b[1] + a[7] * b[4] + a[8] * b[7],
            a[6] * b[2] + a[7] * b[5] + a[8] * b[8])


def kdl_quaternion(m: Matrix) -> tuple[float, float, float, float]:
    """KDL's ``Rotation::GetQuaternion``: (x, y, z, w)."""
    trace = m[0] + m[4] + m[8]
    if trace > 1e-12:
        s = 0.5 / math.sqrt(trace + 1.0)
        return (m[7] - m[5]) * s, (m[2] - m[6]) * s, (m[3] - m[1]) * s, 0.25 / s
    if m[0] > m[4] and m[0] > m[8]:
        s = 2.0 * math.sqrt(1.0 + m[0] - m[4] - m[8])
        return 0.25 * s, (m[1] + m[3]) / s, (m[2] + m[6]) / s, (m[7] - m[5]) / s
    if m[4] > m[8]:
        s = 2.0 * math.sqrt(1.0 + m[4] - m[0] - m[8])
        return (m[1] + m[3]) / s, 0.25 * s, (m[5] + m[7]) / s, (m[2] - m[6]) / s
    s = 2.0 * math.sqrt(1.0 + m[8] - m[0] - m[4])
    return (m[2] + m[6]) / s, (m[5] + m[7]) / s, 0.25 * s, (m[3] - m[1]) / s
