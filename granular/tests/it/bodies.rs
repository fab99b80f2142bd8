//! Rigid bodies (`cpbench_granular::bodies`): mass properties, argument errors and the
//! quaternion update of a spinning body.

use cpbench_granular::nalgebra::{UnitQuaternion, Vector3};
use cpbench_granular::{Body, Plane};

#[test]
fn sphere_mass_properties_and_errors() {
    let b = Body::sphere(Vector3::new(0.0, 1.0, 0.0), 0.5, 2.0).unwrap();
    assert_eq!(b.inertia, Vector3::repeat(0.4 * 2.0 * 0.25));
    assert_eq!(b.q(), [0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0]);
    assert!(Body::sphere(Vector3::zeros(), -1.0, 1.0).is_err());
    assert!(Body::sphere(Vector3::zeros(), 1.0, 0.0).is_err());
    assert!(Body::sphere(Vector3::new(f64::NAN, 0.0, 0.0), 1.0, 1.0).is_err());
    assert!(Plane::new(Vector3::zeros(), Vector3::zeros()).is_err());
}

#[test]
fn quaternion_update_follows_body_frame_rotation() {
    // Constant body-frame spin about z at 1 rad/s for 1 s in 10^4 steps: the quaternion
    // must match the exact rotation to O(h), and stay unit.
    let mut b = Body::sphere(Vector3::zeros(), 1.0, 1.0).unwrap();
    // start tilted so body and world frames differ
    b.rot = UnitQuaternion::from_axis_angle(&Vector3::x_axis(), 0.7);
    let start = b.rot;
    b.omega = Vector3::new(0.0, 0.0, 1.0);
    let n = 10_000;
    for _ in 0..n {
        b.advance_position(1.0 / n as f64);
    }
    // body-frame angular velocity composes on the right: R(t) = R0 * Rz(t)
    let exact = start * UnitQuaternion::from_axis_angle(&Vector3::z_axis(), 1.0);
    let err = b.rot.angle_to(&exact);
    assert!(err < 2e-4, "angle error {err}");
    assert!((b.rot.quaternion().norm() - 1.0).abs() < 1e-15);
    // the world-frame spin axis is the tilted z axis
    let wz = b.omega_world();
    let axis = b.rot * Vector3::z();
    assert!((wz - axis).norm() < 1e-12);
}
