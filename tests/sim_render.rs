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
    // A gentle flick into the table, so the fish stays on it.
    s.shots = vec![fishtrack::sim::scenario::ShotSpec {
        player: 0,
        speed_mm_s: 400.0,
        direction_deg: 90.0,
        point: None,
    }];
    let opts = SimOptions {
        seed: 2,
        size: [960, 540],
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
    assert!(close(got, [60.0, 175.0, 215.0], 30.0), "coin pixel {got:?}");
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
    // A point of the top fish's tag (between its hole and its number) that lies
    // over the lower fish: it must show the top fish (green).
    let fp = fishtrack::geometry::FishFootprint::new(&truth.game.items);
    let lower = fp.placed(&f.items[&ItemId::fish(1)].pose());
    let top = f.items[&ItemId::fish(2)];
    let th = top.theta.unwrap();
    let p = fishtrack::geometry::Point::new(top.x + 22.0 * th.cos(), top.y + 22.0 * th.sin());
    assert!(
        fishtrack::geometry::shapes::point_in_polygon(p, &lower.outline)
            && fishtrack::geometry::shapes::boundary_distance(p, &lower.outline) > 4.0,
        "the stacking scene has no overlap of the two fish"
    );
    let got = pixel(&img, &cam, Point3::new(p.x, p.y, top.z + 2.5));
    let green = [0x2c as f64, 0xa0 as f64, 0x2c as f64];
    // Lifted fish are lit a little more: allow for it.
    assert!(
        close(got, green, 40.0),
        "overlap pixel {got:?} is not the top (green) fish"
    );
}
