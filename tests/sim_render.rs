//! The renderer against the truth: a truth point projected through the truth
//! camera lands on the rendered item (colour check), and stacked items are drawn
//! in order of height. Small images, no noise, so the check is exact enough.
#![cfg(feature = "opencv")]

use fishtrack::model::ItemId;
use fishtrack::sim::camera::SimCamera;
use fishtrack::sim::scenario::RenderSpec;
use fishtrack::sim::{simulate, Scenario, SimOptions, Truth};
use fishtrack::vision::render::Renderer;
use nalgebra::{Matrix3, Point3, Vector3};
use opencv::core::{Mat, Vec3b};
use opencv::prelude::*;

fn quiet() -> RenderSpec {
    RenderSpec {
        hand: false,
        noise_sigma: 0.0,
        subframes: 1,
        exposure_drift: 0.0,
        shutter: 0.5,
    }
}

fn camera(t: &Truth) -> SimCamera {
    SimCamera {
        intrinsics: t.camera.clone(),
        rotation: Matrix3::from_fn(|r, c| t.extrinsics.rotation[r][c]),
        translation: Vector3::from(t.extrinsics.translation_mm),
    }
}

fn pixel(img: &Mat, cam: &SimCamera, p: Point3<f64>) -> [f64; 3] {
    let q = cam.project(p).unwrap();
    let v = img
        .at_2d::<Vec3b>(q.y.round() as i32, q.x.round() as i32)
        .unwrap();
    [v[0] as f64, v[1] as f64, v[2] as f64]
}

fn close(a: [f64; 3], b: [f64; 3], tol: f64) -> bool {
    (0..3).all(|i| (a[i] - b[i]).abs() <= tol)
}

#[test]
fn truth_points_land_on_the_rendered_items() {
    let mut s = Scenario::built_in("single-shot").unwrap();
    s.render = quiet();
    let opts = SimOptions {
        seed: 2,
        size: [480, 270],
        ..SimOptions::default()
    };
    let truth = simulate(&s, &opts).unwrap();
    let cam = camera(&truth);
    let mut r = Renderer::new(&truth, &s.render, 2).unwrap();
    let shot = &truth.shots[0];
    let f = &truth.frames[shot.rest_frame as usize + 1];
    let img = r
        .render_frame(truth.frames.get(f.frame as usize - 1), f, 30.0)
        .unwrap();
    let fish = f.items[&ItemId::fish(0)];
    let th = fish.theta.unwrap();
    // A point on the tag between the hole and the number, on its top face.
    let (u, v) = (22.0, 9.0);
    let p = Point3::new(
        fish.x + th.cos() * u - th.sin() * v,
        fish.y + th.sin() * u + th.cos() * v,
        2.5,
    );
    let red = [0x28 as f64, 0x27 as f64, 0xd6 as f64]; // #d62728 in BGR
    let got = pixel(&img, &cam, p);
    assert!(
        close(got, red, 30.0),
        "fish pixel {got:?}, expected about {red:?}"
    );
    // Where the fish is not, the table is not red.
    let away = Point3::new(fish.x + th.cos() * 150.0, fish.y + th.sin() * 150.0, 0.0);
    let bg = pixel(&img, &cam, away);
    assert!(
        !close(bg, red, 30.0),
        "table pixel {bg:?} looks like the fish"
    );
    // The coin: brass at its centre.
    let coin = f.items[&ItemId::coin(0)];
    let got = pixel(&img, &cam, Point3::new(coin.x, coin.y, 1.2));
    assert!(close(got, [70.0, 140.0, 190.0], 30.0), "coin pixel {got:?}");
}

#[test]
fn a_fish_on_a_fish_is_drawn_on_top() {
    let mut s = Scenario::built_in("stacking").unwrap();
    s.render = quiet();
    let opts = SimOptions {
        seed: 1,
        size: [640, 360],
        ..SimOptions::default()
    };
    let truth = simulate(&s, &opts).unwrap();
    assert!(truth.shots[0]
        .stacking
        .iter()
        .any(|st| st.top == ItemId::fish(2) && st.under == ItemId::fish(1)));
    let cam = camera(&truth);
    let mut r = Renderer::new(&truth, &s.render, 1).unwrap();
    let f = &truth.frames[0];
    let img = r.render_frame(None, f, 30.0).unwrap();
    // A point inside both fish outlines (not in a hole): it must show the top fish (green).
    let fp = fishtrack::geometry::FishFootprint::new(&truth.game.items);
    let a = fp.placed(&f.items[&ItemId::fish(1)].pose());
    let b = fp.placed(&f.items[&ItemId::fish(2)].pose());
    let mut found = false;
    'outer: for i in 0..60 {
        for j in 0..40 {
            let p = fishtrack::geometry::Point::new(600.0 + i as f64 * 2.0, 380.0 + j as f64 * 2.0);
            let inside = |f: &fishtrack::geometry::PlacedFish| {
                fishtrack::geometry::shapes::point_in_polygon(p, &f.outline)
                    && fishtrack::geometry::shapes::boundary_distance(p, &f.outline) > 4.0
                    && (p - f.hole.center).norm() > 14.0
                    && (p - f.hole.center - (f.outline[0] - f.hole.center) * 0.0).norm() > 0.0
            };
            let far_from_number = |f: &fishtrack::geometry::PlacedFish| {
                let d = p - f.hole.center;
                let th = f.outline[1] - f.outline[0];
                let _ = th;
                d.norm() < 25.0 || d.norm() > 48.0
            };
            if inside(&a) && inside(&b) && far_from_number(&b) {
                let top_z = f.items[&ItemId::fish(2)].z + 2.5;
                let got = pixel(&img, &cam, Point3::new(p.x, p.y, top_z));
                let green = [0x2c as f64, 0xa0 as f64, 0x2c as f64];
                assert!(
                    close(got, green, 35.0),
                    "overlap pixel {got:?} is not the top (green) fish"
                );
                found = true;
                break 'outer;
            }
        }
    }
    assert!(found, "the stacking scene has no overlap of the two fish");
}
