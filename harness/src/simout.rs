//! Simulation output people can look at: VTK files for ParaView (and any VTK reader) and PNG
//! views of a granular scene, written by `cpbench generate --vtk` / `--snapshots` at exported
//! steps. The layout of the files is documented in `docs/formats.md`.
//!
//! **VTK** (legacy format, version 4.2, binary big-endian, `double` data, an
//! `UNSTRUCTURED_GRID` of `VERTEX` cells, which ParaView, VisIt and meshio read; written with the
//! pure-Rust `vtkio` crate). Per exported step `k` (zero-padded to 4 digits, so ParaView
//! groups each kind into a time series):
//!
//! - `vtk/bodies_{kkkk}.vtk`: one point (and one VERTEX cell) per body at its centre
//!   (m) at the end of the step, with point data `radius` (m), `velocity` (m/s, 3-vector),
//!   `angular_velocity` (rad/s, 3-vector, **world** frame), `id` (body index) and `fixed`
//!   (1 for a fixed body, e.g. the tube wall, 0 otherwise). Render with ParaView's
//!   *Point Gaussian* representation (scale array `radius`, Gaussian radius 1) or a *Glyph*
//!   filter (sphere, scale by `radius`, scale factor 2 since a unit sphere glyph has radius
//!   0.5). Scenes with ellipsoids add the tensor `shape`, `R diag(a, b, c) R^T` (m: its
//!   eigenvectors are the body axes, its eigenvalues the semi-axes): ParaView's *Tensor Glyph*
//!   filter (sphere glyph, extract eigenvalues, scale factor 2) draws each ellipsoid in place.
//! - `vtk/contacts_{kkkk}.vtk`: one point per contact of the step's problem at the
//!   contact point (m; where it was when the problem was assembled, at the start of the step),
//!   with point data `force` (N, world frame: `(gamma_n n + gamma_u u + gamma_w w) / h`, the
//!   force that body `A` exerts on its partner `B` during the step; `A` feels the opposite),
//!   `normal` (unit, from `A` to `B`), `normal_force` (`gamma_n / h`, N), `gap` (m, negative
//!   when overlapping), `body_a` and `body_b` (body indices; `body_b = -1 - p` for plane `p`).
//!   A step without contacts gives a file with no points. In the frictionless mode the
//!   tangential part is zero.
//!
//! **PNG** (`snapshots/step_{kkkk}.png`, 1200 x 640 px): the side view (x right, y up) and the
//! top view (x right, z down the page, seen from above) of the scene, side by side, at one
//! common scale with every sphere a circle of its true radius and every ellipsoid its shadow
//! (the ellipse of the 2x2 block of its shape matrix on the view's axes, a 32-gon); movable
//! bodies are coloured by speed (viridis, from 0 to the fastest movable body of the whole run:
//! one scale for all frames, shown in a colour bar with its unit) and drawn back to front;
//! fixed bodies (the pyramid's base, the tube's wall, a floor of spheres) are grey outlines
//! drawn first. The title gives the label, step, time, the movable bodies (the fixed ones in
//! brackets), contacts and kinetic energy, numbers for people (`41.6 J`).

use crate::error::{HarnessError, Result};
use crate::fsutil::write_atomic;
use cpbench_granular::nalgebra::Matrix3;
use cpbench_granular::narrow::Partner;
use cpbench_granular::Simulation;
use plotters::prelude::*;
use std::path::{Path, PathBuf};
use vtkio::model::{
    Attribute, Attributes, ByteOrder, CellType, Cells, DataSet, IOBuffer, UnstructuredGridPiece,
    Version, VertexNumbers, Vtk,
};

/// Subfolder of the output folder that holds the VTK files.
pub const VTK_DIR: &str = "vtk";
/// Subfolder of the output folder that holds the PNG views.
pub const SNAPSHOT_DIR: &str = "snapshots";

fn vtk_err(path: &Path, e: impl std::fmt::Display) -> HarnessError {
    HarnessError::Plot {
        path: path.to_path_buf(),
        message: format!("writing VTK: {e}"),
    }
}

/// One UNSTRUCTURED_GRID data set: `points` (3 per point), each a VERTEX cell, with `data` on
/// the points. (An unstructured grid rather than POLYDATA so that meshio reads it too.)
fn point_cloud(title: String, points: Vec<f64>, data: Vec<Attribute>) -> Vtk {
    let np = points.len() / 3;
    let mut vertices = Vec::with_capacity(2 * np);
    for i in 0..np as u32 {
        vertices.extend_from_slice(&[1, i]);
    }
    Vtk {
        version: Version::new_legacy(4, 2),
        title,
        byte_order: ByteOrder::BigEndian,
        file_path: None,
        data: DataSet::inline(UnstructuredGridPiece {
            points: IOBuffer::F64(points),
            cells: Cells {
                cell_verts: VertexNumbers::Legacy {
                    num_cells: np as u32,
                    vertices,
                },
                types: vec![CellType::Vertex; np],
            },
            data: Attributes {
                point: data,
                cell: Vec::new(),
            },
        }),
    }
}

fn write_vtk(vtk: Vtk, path: &Path) -> Result<()> {
    let mut bytes = Vec::new();
    vtk.write_legacy(&mut bytes).map_err(|e| vtk_err(path, e))?;
    write_atomic(path, &bytes)
}

/// Write the bodies and contacts of the last step of `sim` as `{out}/vtk/bodies_{step:04}.vtk`
/// and `{out}/vtk/contacts_{step:04}.vtk` (see the module documentation for their content),
/// labelled `label` in the files' titles. Returns the two paths.
///
/// Errors: [`HarnessError::Io`] when the folder or a file cannot be written,
/// [`HarnessError::Plot`] when the VTK writer fails.
pub fn write_vtk_step(sim: &Simulation, label: &str, out: &Path) -> Result<[PathBuf; 2]> {
    let dir = out.join(VTK_DIR);
    std::fs::create_dir_all(&dir).map_err(|e| HarnessError::io(&dir, e))?;
    let step = sim.steps_done();
    let w = sim.world();
    let nb = w.bodies.len();
    let (mut pos, mut radius, mut vel, mut omega): (Vec<f64>, Vec<f64>, Vec<f64>, Vec<f64>) = (
        Vec::with_capacity(3 * nb),
        Vec::with_capacity(nb),
        Vec::with_capacity(3 * nb),
        Vec::with_capacity(3 * nb),
    );
    let (mut id, mut fixed) = (Vec::with_capacity(nb), Vec::with_capacity(nb));
    let ellipsoids = w.bodies.iter().any(|b| !b.is_sphere());
    let mut shape: Vec<f64> = Vec::with_capacity(if ellipsoids { 9 * nb } else { 0 });
    for (i, b) in w.bodies.iter().enumerate() {
        pos.extend(b.pos.iter());
        radius.push(b.radius);
        if ellipsoids {
            // R diag(a, b, c) R^T: eigenvectors the body axes, eigenvalues the semi-axes
            let r = b.rot.to_rotation_matrix().into_inner();
            let t = r
                * cpbench_granular::nalgebra::Matrix3::from_diagonal(&b.as_ellipsoid().semi_axes)
                * r.transpose();
            shape.extend(t.iter());
        }
        vel.extend(b.vel.iter());
        omega.extend(b.omega_world().iter());
        id.push(i as i32);
        fixed.push(i32::from(b.fixed));
    }
    let title = format!("cpbench {label} bodies step {step} t = {} s", sim.time());
    let mut data = vec![
        Attribute::scalars("radius", 1).with_data(radius),
        Attribute::vectors("velocity").with_data(vel),
        Attribute::vectors("angular_velocity").with_data(omega),
        Attribute::scalars("id", 1).with_data(id),
        Attribute::scalars("fixed", 1).with_data(fixed),
    ];
    if ellipsoids {
        data.push(Attribute::tensors("shape").with_data(shape));
    }
    let bodies = point_cloud(title, pos, data);
    let bpath = dir.join(format!("bodies_{step:04}.vtk"));
    write_vtk(bodies, &bpath)?;

    let contacts = sim.contacts();
    let gamma = sim.last_impulses();
    let nc = contacts.len();
    let bs = w.params.block_size();
    let h = w.params.h;
    let (mut pts, mut force, mut normal): (Vec<f64>, Vec<f64>, Vec<f64>) = (
        Vec::with_capacity(3 * nc),
        Vec::with_capacity(3 * nc),
        Vec::with_capacity(3 * nc),
    );
    let (mut fnorm, mut gap, mut ba, mut bb): (Vec<f64>, Vec<f64>, Vec<i32>, Vec<i32>) = (
        Vec::with_capacity(nc),
        Vec::with_capacity(nc),
        Vec::with_capacity(nc),
        Vec::with_capacity(nc),
    );
    for (c, ct) in contacts.iter().enumerate() {
        let g = gamma.get(bs * c..bs * c + bs).unwrap_or(&[]);
        let gn = g.first().copied().unwrap_or(0.0);
        let mut f = gn * ct.n;
        if let &[_, gu, gw] = g {
            f += gu * ct.u + gw * ct.w;
        }
        pts.extend(ct.point.iter());
        force.extend((f / h).iter());
        normal.extend(ct.n.iter());
        fnorm.push(gn / h);
        gap.push(ct.gap);
        ba.push(ct.a as i32);
        bb.push(match ct.b {
            Partner::Body(j) => j as i32,
            Partner::Plane(p) => -1 - p as i32,
        });
    }
    let title = format!("cpbench {label} contacts step {step} t = {} s", sim.time());
    let cvtk = point_cloud(
        title,
        pts,
        vec![
            Attribute::vectors("force").with_data(force),
            Attribute::vectors("normal").with_data(normal),
            Attribute::scalars("normal_force", 1).with_data(fnorm),
            Attribute::scalars("gap", 1).with_data(gap),
            Attribute::scalars("body_a", 1).with_data(ba),
            Attribute::scalars("body_b", 1).with_data(bb),
        ],
    );
    let cpath = dir.join(format!("contacts_{step:04}.vtk"));
    write_vtk(cvtk, &cpath)?;
    Ok([bpath, cpath])
}

/// Size of a snapshot PNG (px).
pub const SNAPSHOT_SIZE: (u32, u32) = (1200, 640);

/// Viridis (van der Walt & Smith, matplotlib 2015) at 9 evenly spaced stops: perceptually
/// uniform, readable for colour-blind readers and in greyscale (its lightness rises monotonically).
/// sRGB `(r, g, b)` from dark purple (`VIRIDIS[0]`, at rest) to yellow (`VIRIDIS[8]`); the
/// snapshots' body colours ([`speed_colour`]) interpolate linearly between neighbouring stops.
pub const VIRIDIS: [(u8, u8, u8); 9] = [
    (68, 1, 84),
    (71, 45, 123),
    (59, 82, 139),
    (44, 114, 142),
    (33, 145, 140),
    (39, 173, 129),
    (94, 201, 98),
    (170, 220, 50),
    (253, 231, 37),
];

/// Colour of a movable body with speed `s` in `[0, smax]` (viridis: dark purple at rest, yellow
/// at `smax`; above `smax` yellow): the [`VIRIDIS`] stops interpolated linearly in sRGB at
/// `s / smax` (m/s over m/s), each channel rounded. `smax <= 0` gives the first stop. The body
/// colour of [`write_snapshot`] and [`write_snapshots`].
pub fn speed_colour(s: f64, smax: f64) -> RGBColor {
    let t = if smax > 0.0 {
        (s / smax).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let x = t * (VIRIDIS.len() - 1) as f64;
    let k = (x.floor() as usize).min(VIRIDIS.len() - 2);
    let f = x - k as f64;
    let (a, b) = (VIRIDIS[k], VIRIDIS[k + 1]);
    let lerp = |p: u8, q: u8| (f64::from(p) + (f64::from(q) - f64::from(p)) * f).round() as u8;
    RGBColor(lerp(a.0, b.0), lerp(a.1, b.1), lerp(a.2, b.2))
}

/// A number for people, three significant digits: plain decimals from 0.001 to 99 999
/// (`41.6`, `0.0123`, `1235`), scientific otherwise (`1.23e-5`, `4.57e6`); `0` as `0`.
pub fn human_number(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let e = v.abs().log10().floor();
    if (-3.0..5.0).contains(&e) {
        let decimals = (2.0 - e).max(0.0) as usize;
        format!("{v:.decimals$}")
    } else {
        format!("{v:.2e}")
    }
}

/// The state of a scene at one view step, kept so that every PNG of a run is drawn with one
/// colour scale ([`write_snapshots`]): step, time (s), kinetic energy (J), contact count and
/// a copy of the bodies.
#[derive(Clone, Debug)]
pub struct SnapshotFrame {
    /// Steps done.
    pub step: u64,
    /// Simulated time, s.
    pub time: f64,
    /// Kinetic energy of the movable bodies, J.
    pub kinetic_energy: f64,
    /// Contacts of the step's problem.
    pub contacts: usize,
    /// The bodies at the end of the step.
    pub bodies: Vec<cpbench_granular::Body>,
}

impl SnapshotFrame {
    /// The frame of `sim` now.
    pub fn of(sim: &Simulation) -> Self {
        Self {
            step: sim.steps_done(),
            time: sim.time(),
            kinetic_energy: sim.kinetic_energy(),
            contacts: sim.contacts().len(),
            bodies: sim.world().bodies.clone(),
        }
    }

    /// The largest speed of a movable body, m/s.
    pub fn max_speed(&self) -> f64 {
        self.bodies
            .iter()
            .filter(|b| !b.fixed)
            .map(|b| b.vel.norm())
            .fold(0.0f64, f64::max)
    }
}

/// Draw the side (x-y) and top (x-z) views of the bodies of `sim` now to
/// `{out}/snapshots/step_{step:04}.png` with the colour scale of this frame alone (see
/// [`write_snapshots`] for the frames of a run). Returns the path.
///
/// Errors: [`HarnessError::Io`] for the folder, [`HarnessError::Plot`] when drawing fails.
pub fn write_snapshot(sim: &Simulation, label: &str, out: &Path) -> Result<PathBuf> {
    let frame = SnapshotFrame::of(sim);
    Ok(write_snapshots(std::slice::from_ref(&frame), label, out)?.remove(0))
}

/// Draw every frame of a run to `{out}/snapshots/step_{step:04}.png` (see the module
/// documentation) with **one** colour scale: speed from 0 to the largest speed of a movable
/// body over all frames, shown in a colour bar, so frames compare. Returns the paths in frame
/// order.
///
/// Errors: [`HarnessError::Io`] for the folder, [`HarnessError::Plot`] when drawing fails.
pub fn write_snapshots(frames: &[SnapshotFrame], label: &str, out: &Path) -> Result<Vec<PathBuf>> {
    crate::plot::register_font();
    let dir = out.join(SNAPSHOT_DIR);
    std::fs::create_dir_all(&dir).map_err(|e| HarnessError::io(&dir, e))?;
    let smax = frames
        .iter()
        .map(SnapshotFrame::max_speed)
        .fold(0.0f64, f64::max);
    frames
        .iter()
        .map(|f| {
            let path = dir.join(format!("step_{:04}.png", f.step));
            draw_snapshot(f, smax, label, &path).map_err(|message| HarnessError::Plot {
                path: path.clone(),
                message,
            })?;
            Ok(path)
        })
        .collect()
}

/// Height of the colour bar strip at the bottom of a snapshot, px.
const BAR_STRIP: u32 = 64;

/// The colour bar: speed 0 to `smax` (m/s) in viridis with 5 labelled ticks.
fn draw_colour_bar<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    smax: f64,
) -> std::result::Result<(), String> {
    let e = |x: DrawingAreaErrorKind<DB::ErrorType>| x.to_string();
    let (w, _) = area.dim_in_pixel();
    let (x0, x1, y0, y1) = (2 * w as i32 / 5, 9 * w as i32 / 10, 6, 22);
    for x in x0..x1 {
        let t = f64::from(x - x0) / f64::from(x1 - x0 - 1);
        area.draw(&Rectangle::new(
            [(x, y0), (x + 1, y1)],
            speed_colour(t * smax, smax).filled(),
        ))
        .map_err(e)?;
    }
    area.draw(&Rectangle::new(
        [(x0, y0), (x1, y1)],
        ShapeStyle::from(&BLACK).stroke_width(1),
    ))
    .map_err(e)?;
    let font = (crate::plot::FAMILY, 15).into_font().color(&BLACK);
    for k in 0..=4 {
        let x = x0 + (x1 - x0) * k / 4;
        area.draw(&PathElement::new(vec![(x, y1), (x, y1 + 4)], BLACK))
            .map_err(e)?;
        let v = smax * f64::from(k) / 4.0;
        let txt = human_number(v);
        let (tw, _) = area.estimate_text_size(&txt, &font).map_err(e)?;
        area.draw(&Text::new(txt, (x - tw as i32 / 2, y1 + 6), font.clone()))
            .map_err(e)?;
    }
    let caption = "speed [m/s], one scale for all frames".to_string();
    let (tw, _) = area.estimate_text_size(&caption, &font).map_err(e)?;
    area.draw(&Text::new(caption, (x0 - 14 - tw as i32, y0), font))
        .map_err(e)?;
    Ok(())
}

fn draw_snapshot(
    frame: &SnapshotFrame,
    smax: f64,
    label: &str,
    path: &Path,
) -> std::result::Result<(), String> {
    let bodies = &frame.bodies;
    let (w, h) = SNAPSHOT_SIZE;
    let root = BitMapBackend::new(path, (w, h)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let movable = bodies.iter().filter(|b| !b.fixed).count();
    let fixed = bodies.len() - movable;
    let title = format!(
        "{label}   step {}   t = {} s   {movable} bodies{}   {} contacts   kinetic energy {} J",
        frame.step,
        human_number(frame.time),
        if fixed > 0 {
            format!(" (+{fixed} fixed wall or floor spheres)")
        } else {
            String::new()
        },
        frame.contacts,
        human_number(frame.kinetic_energy),
    );
    let root = root
        .margin(8, 0, 0, 0)
        .titled(&title, (crate::plot::FAMILY, 22))
        .map_err(|e| e.to_string())?;
    let (_, rh) = root.dim_in_pixel();
    let (root, bar) = root.split_vertically(rh.saturating_sub(BAR_STRIP) as i32);
    draw_colour_bar(&bar, smax)?;
    // bounding box of the bodies (an ellipsoid's half extent along axis k is sqrt(Q_kk))
    let shapes: Vec<Option<Matrix3<f64>>> = bodies
        .iter()
        .map(|b| (!b.is_sphere()).then(|| b.as_ellipsoid().shape_matrix(&b.rot)))
        .collect();
    let (mut lo, mut hi) = ([f64::INFINITY; 3], [f64::NEG_INFINITY; 3]);
    for (b, q) in bodies.iter().zip(&shapes) {
        for k in 0..3 {
            let e = q.map_or(b.radius, |q| q[(k, k)].sqrt());
            lo[k] = lo[k].min(b.pos[k] - e);
            hi[k] = hi[k].max(b.pos[k] + e);
        }
    }
    if bodies.is_empty() {
        (lo, hi) = ([-1.0; 3], [1.0; 3]);
    }
    let panels = root.split_evenly((1, 2));
    // views: (horizontal axis, vertical axis, depth axis, name, vertical grows upward)
    let views = [
        (0usize, 1usize, 2usize, "side view: x right, y up", true),
        (0, 2, 1, "top view: x right, z down, seen from above", false),
    ];
    // one scale for both panels: the largest extent that fits
    let (pw, ph) = panels[0].dim_in_pixel();
    let margin = 30.0;
    let avail = (pw as f64 - 2.0 * margin, ph as f64 - 2.0 * margin - 24.0);
    let mut scale = f64::INFINITY;
    for &(a, v, _, _, _) in &views {
        let ex = (hi[a] - lo[a]).max(1e-9);
        let ey = (hi[v] - lo[v]).max(1e-9);
        scale = scale.min(avail.0 / ex).min(avail.1 / ey);
    }
    for (area, &(a, v, d, name, up)) in panels.iter().zip(&views) {
        area.draw(&Text::new(
            name.to_string(),
            (margin as i32, 4),
            (crate::plot::FAMILY, 18),
        ))
        .map_err(|e| e.to_string())?;
        let cx = margin + 0.5 * (avail.0 - scale * (hi[a] - lo[a]));
        let cy = 24.0 + margin + 0.5 * (avail.1 - scale * (hi[v] - lo[v]));
        let to_px = |x: f64, y: f64| -> (i32, i32) {
            let px = cx + scale * (x - lo[a]);
            let py = if up {
                cy + scale * (hi[v] - y)
            } else {
                cy + scale * (y - lo[v])
            };
            (px.round() as i32, py.round() as i32)
        };
        // frame of the bounding box
        let (x0, y0) = to_px(lo[a], if up { hi[v] } else { lo[v] });
        let (x1, y1) = to_px(hi[a], if up { lo[v] } else { hi[v] });
        area.draw(&Rectangle::new(
            [(x0, y0), (x1, y1)],
            ShapeStyle::from(&RGBColor(180, 180, 180)).stroke_width(1),
        ))
        .map_err(|e| e.to_string())?;
        // back to front: side view looks along -z (largest z nearest), top view from +y
        // fixed bodies (walls made of spheres) first, as outlines, so what they enclose shows
        let mut order: Vec<usize> = (0..bodies.len()).collect();
        order.sort_by(|&i, &j| {
            (!bodies[i].fixed)
                .cmp(&!bodies[j].fixed)
                .then(bodies[i].pos[d].total_cmp(&bodies[j].pos[d]))
        });
        for &i in &order {
            let b = &bodies[i];
            if let Some(q) = &shapes[i] {
                // the ellipsoid's shadow: the ellipse of the 2x2 block of Q on the view's axes
                let outline = projected_ellipse(q, a, v);
                let pts: Vec<(i32, i32)> = outline
                    .iter()
                    .map(|(x, y)| to_px(b.pos[a] + x, b.pos[v] + y))
                    .collect();
                let fill = if b.fixed {
                    RGBColor(150, 150, 150)
                } else {
                    speed_colour(b.vel.norm(), smax)
                };
                area.draw(&Polygon::new(pts.clone(), ShapeStyle::from(&fill).filled()))
                    .map_err(|e| e.to_string())?;
                let mut ring = pts;
                ring.push(ring[0]);
                area.draw(&PathElement::new(
                    ring,
                    ShapeStyle::from(&BLACK).stroke_width(1),
                ))
                .map_err(|e| e.to_string())?;
                continue;
            }
            let c = to_px(b.pos[a], b.pos[v]);
            let r = ((b.radius * scale).round() as i32).max(1) as u32;
            if b.fixed {
                let grey = RGBColor(150, 150, 150);
                area.draw(&Circle::new(c, r, ShapeStyle::from(&grey).stroke_width(1)))
                    .map_err(|e| e.to_string())?;
                continue;
            }
            let fill = speed_colour(b.vel.norm(), smax);
            area.draw(&Circle::new(c, r, ShapeStyle::from(&fill).filled()))
                .map_err(|e| e.to_string())?;
            area.draw(&Circle::new(c, r, ShapeStyle::from(&BLACK).stroke_width(1)))
                .map_err(|e| e.to_string())?;
        }
    }
    root.present().map_err(|e| e.to_string())
}

/// Outline (m, relative to the centre, 32 points) of the orthogonal projection of an
/// ellipsoid of world shape matrix `q` (`{y : y^T Q^-1 y <= 1}`) on the plane of axes `a`
/// (horizontal) and `v` (vertical): the ellipse of the 2x2 block `S` of `Q` on those axes,
/// `L (cos t, sin t)` with `L L^T = S` (Cholesky), `t = 2 pi k / 32` for `k = 0..32`: a 32-gon
/// inscribed in the shadow ellipse. `q` is symmetric positive definite
/// (`Ellipsoid::shape_matrix`, m^2); `a` and `v` are distinct axis indices in `0..3` (an index
/// of 3 or more panics). How the snapshots draw an ellipsoid.
pub fn projected_ellipse(q: &Matrix3<f64>, a: usize, v: usize) -> [(f64, f64); 32] {
    let l11 = q[(a, a)].sqrt();
    let l21 = q[(v, a)] / l11;
    let l22 = (q[(v, v)] - l21 * l21).max(0.0).sqrt();
    std::array::from_fn(|k| {
        let t = 2.0 * std::f64::consts::PI * k as f64 / 32.0;
        let (c, s) = (t.cos(), t.sin());
        (l11 * c, l21 * c + l22 * s)
    })
}
