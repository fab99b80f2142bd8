//! Simulation output (`cpbench_harness::simout`): VTK files read back with vtkio, PNG
//! snapshots, their colour scale and the drawn outline of an ellipsoid.

use cpbench_granular::Simulation;
use cpbench_granular::Snapshot;
use cpbench_harness::generate::RegistrySolver;
use cpbench_harness::simout::{
    human_number, projected_ellipse, speed_colour, write_snapshot, write_snapshots, write_vtk_step,
    SnapshotFrame, SNAPSHOT_SIZE, VIRIDIS,
};
use cpbench_solvers::ExecSettings;
use plotters::style::RGBColor;
use std::path::Path;
use vtkio::model::{Attribute, CellType, DataSet, Vtk};
use vtkio::model::{DataArray, Piece};

/// The settled 250-sphere fill (`tests/fixtures/generated/fill-5_settled.json`) stepped
/// once with APGD: every body and ~900 contacts.
fn settled_fill5() -> Simulation {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/generated/fill-5_settled.json"
    ))
    .unwrap();
    let mut sim = Snapshot::from_json(&text).unwrap().restore(false).unwrap();
    let mut solver = RegistrySolver::new(
        "apgd",
        None,
        ExecSettings {
            tol: 1e-4,
            max_iter: 500,
            ..Default::default()
        },
    )
    .unwrap();
    sim.step(&mut solver).unwrap();
    sim
}

/// A point array as read back: name, components, values.
type Array = (String, usize, Vec<f64>);

/// `(points, point arrays)` of a legacy UNSTRUCTURED_GRID file, read with vtkio's reader.
fn read_back(path: &Path) -> (Vec<f64>, Vec<Array>) {
    let vtk = Vtk::import(path).unwrap();
    let DataSet::UnstructuredGrid { pieces, .. } = vtk.data else {
        panic!("not UNSTRUCTURED_GRID")
    };
    let Piece::Inline(p) = &pieces[0] else {
        panic!("not inline")
    };
    let pts = p.points.cast_into::<f64>().unwrap();
    assert_eq!(p.cells.num_cells(), pts.len() / 3);
    assert!(p.cells.types.iter().all(|&t| t == CellType::Vertex));
    let arrays = p
        .data
        .point
        .iter()
        .map(|a| match a {
            Attribute::DataArray(DataArray { name, elem, data }) => (
                name.clone(),
                elem.num_comp() as usize,
                data.cast_into::<f64>().unwrap(),
            ),
            other => panic!("{other:?}"),
        })
        .collect();
    (pts, arrays)
}

#[test]
fn vtk_files_read_back_with_bodies_radii_and_forces() {
    let sim = settled_fill5();
    let dir = tempfile::tempdir().unwrap();
    let [b, c] = write_vtk_step(&sim, "fill-5", dir.path()).unwrap();
    assert_eq!(b, dir.path().join("vtk/bodies_0601.vtk"));
    assert_eq!(c, dir.path().join("vtk/contacts_0601.vtk"));
    let (pts, arrays) = read_back(&b);
    let bodies = &sim.world().bodies;
    assert_eq!(pts.len(), 3 * bodies.len());
    assert_eq!(bodies.len(), 250);
    assert_eq!(
        pts[3..6],
        [bodies[1].pos.x, bodies[1].pos.y, bodies[1].pos.z]
    );
    let get = |arrays: &[Array], n: &str| arrays.iter().find(|a| a.0 == n).cloned().unwrap();
    let radius = get(&arrays, "radius");
    assert_eq!((radius.1, radius.2.len()), (1, 250));
    assert!(radius.2.iter().all(|&r| r == 0.4));
    let vel = get(&arrays, "velocity");
    assert_eq!((vel.1, vel.2.len()), (3, 750));
    assert_eq!(vel.2[3 * 7 + 1], bodies[7].vel.y);
    assert_eq!(get(&arrays, "id").2[249], 249.0);
    // contacts: one point per contact, forces balance the weight of the settled pile
    let (cpts, carr) = read_back(&c);
    let nc = sim.contacts().len();
    assert!(nc > 500, "{nc} contacts");
    assert_eq!(cpts.len(), 3 * nc);
    let force = get(&carr, "force");
    assert_eq!((force.1, force.2.len()), (3, 3 * nc));
    let fnorm = get(&carr, "normal_force");
    assert!(fnorm.2.iter().all(|&f| f >= -1e-9));
    // the floor carries the pile: the upward force of the planes on the spheres is about
    // the weight (250 x 1 kg x 9.81), the settled pile barely moving
    let body_b = get(&carr, "body_b");
    let mut up = 0.0;
    for (k, &bb) in body_b.2.iter().enumerate() {
        if bb < 0.0 {
            // the force on the plane is force; the sphere feels -force
            up -= force.2[3 * k + 1];
        }
    }
    let weight: f64 = bodies.iter().map(|b| b.mass * 9.81).sum();
    assert!(
        (up / weight - 1.0).abs() < 0.05,
        "floor {up} N vs weight {weight} N"
    );
}

/// Numbers for people: three significant digits, scientific only far from 1.
#[test]
fn numbers_for_people() {
    let cases = [
        (41.59, "41.6"),
        (1392.4, "1392"),
        (0.0123, "0.0123"),
        (0.75, "0.750"),
        (4.9, "4.90"),
        (1.234e-5, "1.23e-5"),
        (4.567e6, "4.57e6"),
        (0.0, "0"),
    ];
    for (v, want) in cases {
        assert_eq!(human_number(v), want, "{v}");
    }
}

/// One colour scale for a run: the frames of a run are drawn against the fastest body of
/// all frames (a frame at half the speed is darker), and the scale's ends are viridis'.
#[test]
fn frames_share_one_colour_scale() {
    let sim = settled_fill5();
    let fast = SnapshotFrame::of(&sim);
    let mut slow = fast.clone();
    slow.step += 1;
    for b in &mut slow.bodies {
        b.vel *= 0.5;
    }
    let smax = fast.max_speed();
    assert!(smax > 0.0);
    assert!((slow.max_speed() - 0.5 * smax).abs() <= 1e-12 * smax);
    let c = |s: f64| speed_colour(s, smax);
    let (lo, hi) = (VIRIDIS[0], VIRIDIS[8]);
    assert_eq!(c(0.0), RGBColor(lo.0, lo.1, lo.2));
    assert_eq!(c(smax), RGBColor(hi.0, hi.1, hi.2));
    assert_eq!(c(0.5 * smax), RGBColor(33, 145, 140));
    let dir = tempfile::tempdir().unwrap();
    let paths = write_snapshots(&[fast, slow], "fill-5", dir.path()).unwrap();
    assert_eq!(paths.len(), 2);
    assert!(paths.iter().all(|p| p.exists()));
}

#[test]
fn snapshot_png_is_drawn() {
    let sim = settled_fill5();
    let dir = tempfile::tempdir().unwrap();
    let p = write_snapshot(&sim, "fill-5", dir.path()).unwrap();
    assert_eq!(p, dir.path().join("snapshots/step_0601.png"));
    let bytes = std::fs::read(&p).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    // width and height from the IHDR chunk
    let w = u32::from_be_bytes(bytes[16..20].try_into().unwrap());
    let h = u32::from_be_bytes(bytes[20..24].try_into().unwrap());
    assert_eq!((w, h), SNAPSHOT_SIZE);
}

/// Ellipsoid scenes add the `shape` tensor `R diag(a, b, c) R^T`: symmetric, trace
/// `a + b + c`, and `shape . (R e_x) = a (R e_x)` for each body.
/// The drawn outline of an ellipsoid is its shadow: for semi-axes (0.3, 0.2, 0.1) rotated
/// about z, the outline's extent along x equals the largest projection sqrt(Q_xx) of any
/// surface point (support function), and along y sqrt(Q_yy); axis-aligned it is (a, b).
#[test]
fn projected_ellipse_is_the_shadow() {
    use cpbench_granular::ellipsoid::Ellipsoid;
    use cpbench_granular::nalgebra::{UnitQuaternion, Vector3};
    let e = Ellipsoid::new(Vector3::new(0.3, 0.2, 0.1), 1.0).unwrap();
    let q0 = e.shape_matrix(&UnitQuaternion::identity());
    let o = projected_ellipse(&q0, 0, 1);
    assert!((o[0].0 - 0.3).abs() < 1e-15 && (o[8].1 - 0.2).abs() < 1e-15);
    let rot = UnitQuaternion::from_scaled_axis(Vector3::new(0.2, -0.5, 0.9));
    let q = e.shape_matrix(&rot);
    for (a, v) in [(0, 1), (0, 2)] {
        let o = projected_ellipse(&q, a, v);
        let xmax = o.iter().map(|p| p.0).fold(f64::MIN, f64::max);
        let ymax = o.iter().map(|p| p.1).fold(f64::MIN, f64::max);
        // a 32-gon inscribed in the ellipse reaches its extent to within 1 - cos(pi/32)
        let (ex, ey) = (q[(a, a)].sqrt(), q[(v, v)].sqrt());
        assert!(
            xmax <= ex + 1e-15 && xmax > ex * (1.0 - 5e-3),
            "{xmax} vs {ex}"
        );
        assert!(
            ymax <= ey + 1e-15 && ymax > ey * (1.0 - 5e-3),
            "{ymax} vs {ey}"
        );
    }
}

#[test]
fn vtk_of_ellipsoids_carries_the_shape_tensor() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/generated/ellipsoid-fill-3_settled.json"
    ))
    .unwrap();
    let mut sim = Snapshot::from_json(&text).unwrap().restore(false).unwrap();
    sim.detect();
    let dir = tempfile::tempdir().unwrap();
    let [b, _] = write_vtk_step(&sim, "ellipsoid-fill-3", dir.path()).unwrap();
    let (_, arrays) = read_back(&b);
    let shape = arrays.iter().find(|a| a.0 == "shape").cloned().unwrap();
    let bodies = &sim.world().bodies;
    assert_eq!((shape.1, shape.2.len()), (9, 9 * bodies.len()));
    for (k, body) in bodies.iter().enumerate() {
        let t = cpbench_granular::nalgebra::Matrix3::from_column_slice(&shape.2[9 * k..9 * k + 9]);
        assert!((t - t.transpose()).norm() < 1e-15);
        let ax = body.as_ellipsoid().semi_axes;
        assert!((t.trace() - ax.sum()).abs() < 1e-14);
        let ex = body.rot * cpbench_granular::nalgebra::Vector3::x();
        assert!((t * ex - ax.x * ex).norm() < 1e-14);
    }
    // sphere scenes have no tensor (the files of earlier versions)
    let sim = settled_fill5();
    let [b, _] = write_vtk_step(&sim, "fill-5", dir.path()).unwrap();
    assert!(read_back(&b).1.iter().all(|a| a.0 != "shape"));
}
