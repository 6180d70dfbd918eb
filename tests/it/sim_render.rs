//! The renderer against the truth: a truth point projected through the truth
//! camera lands on the rendered item (colour check), and stacked items are drawn
//! in order of height. Small images, no noise, so the check is exact enough.
//! Looks: the original one renders the very pixels it did before looks existed,
//! a random look is repeatable by its seed and differs between seeds, the hand
//! casts its shadow, and a random look stays inside its documented ranges.
#![cfg(feature = "opencv")]

use fishtrack::model::ItemId;
use fishtrack::sim::camera::SimCamera;
use fishtrack::sim::look::{Look, TableMaterial};
use fishtrack::sim::scenario::RenderSpec;
use fishtrack::sim::{simulate, Scenario, SimOptions, Truth};
use fishtrack::vision::render::Renderer;
use nalgebra::{Matrix3, Point3, Vector3};
use opencv::core::{Mat, Vec3b};
use opencv::prelude::*;
use proptest::prelude::*;

fn quiet() -> RenderSpec {
    RenderSpec {
        hand: false,
        noise_sigma: 0.0,
        subframes: 1,
        exposure_drift: 0.0,
        shutter: 0.5,
        look: Look::default(),
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

/// FNV-1a over a frame's bytes (BGR, row by row).
fn checksum(img: &Mat) -> u64 {
    img.data_bytes()
        .unwrap()
        .iter()
        .fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
            (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
        })
}

/// Frames 10 (the hand coming in), 30 (fish and hand moving: motion blur) and 45
/// (at rest) of `single-shot` seed 3 at 320x180 in the original look, with noise
/// and exposure drift. The sums are those of `fishtrack simulate --scenario
/// single-shot --seed 3 --size 320x180 --png-frames 10,30,45` built at 56966c1,
/// before looks existed (the PNGs' pixels, BGR): the original look must not move
/// a single byte.
#[test]
fn the_original_look_renders_the_very_pixels_it_did_before_looks() {
    let s = Scenario::built_in("single-shot").unwrap();
    assert!(s.render.look.is_original());
    let opts = SimOptions {
        seed: 3,
        size: [320, 180],
        ..SimOptions::default()
    };
    let truth = simulate(&s, &opts).unwrap();
    let mut r = Renderer::new(&truth, &s.render, truth.seed).unwrap();
    for (f, want) in [
        (10usize, 0xf9d6_624e_4395_1a7bu64),
        (30, 0x7be5_2ed1_7869_fe72),
        (45, 0x9099_0413_8238_a273),
    ] {
        let img = r
            .render_frame(truth.frames.get(f - 1), &truth.frames[f], truth.video.fps)
            .unwrap();
        assert_eq!(
            checksum(&img),
            want,
            "frame {f} of the original look changed"
        );
    }
}

/// Frame 30 of `single-shot` seed 3 (fish and hand moving) at 200x120, in the
/// random look of `look_seed` (or the original), from a fresh renderer.
fn look_frame(look_seed: Option<u64>) -> Vec<u8> {
    let mut s = Scenario::built_in("single-shot").unwrap();
    if let Some(k) = look_seed {
        s.render.randomise(k);
    }
    let opts = SimOptions {
        seed: 3,
        size: [200, 120],
        ..SimOptions::default()
    };
    let truth = simulate(&s, &opts).unwrap();
    let mut r = Renderer::new(&truth, &s.render, truth.seed).unwrap();
    let img = r
        .render_frame(truth.frames.get(29), &truth.frames[30], truth.video.fps)
        .unwrap();
    img.data_bytes().unwrap().to_vec()
}

#[test]
fn a_look_seed_gives_the_same_frames_and_another_seed_other_frames() {
    let one = look_frame(Some(1));
    assert!(
        one == look_frame(Some(1)),
        "look seed 1 rendered twice differs"
    );
    let two = look_frame(Some(2));
    let differing = one.iter().zip(&two).filter(|(a, b)| a != b).count();
    // Other materials, light and camera: most of the frame changes.
    assert!(
        differing > one.len() / 2,
        "look seeds 1 and 2 differ in only {differing} of {} bytes",
        one.len()
    );
    assert!(one != look_frame(None), "look seed 1 is the original look");
}

/// The hand in the air casts its shadow sideways on the table: with the lamp low
/// at its side, the table where the fist's shadow falls is darker than in the
/// same look without shadows.
#[test]
fn the_hand_casts_a_shadow_on_the_table() {
    let mut s = Scenario::built_in("single-shot").unwrap();
    s.render = RenderSpec {
        hand: true,
        ..quiet()
    };
    let opts = SimOptions {
        seed: 3,
        size: [640, 360],
        ..SimOptions::default()
    };
    let truth = simulate(&s, &opts).unwrap();
    let f = &truth.frames[10];
    let h = f.hand.expect("the hand is over the table at frame 10");
    let side = h.arm_theta + std::f64::consts::FRAC_PI_2;
    let mut look = Look::default();
    look.light.azimuth_deg = side.to_degrees().rem_euclid(360.0);
    look.light.elevation_deg = 35.0;
    look.light.shadow_softness_mm = 3.0;
    let frame = |strength: f64| {
        let mut spec = s.render.clone();
        spec.look = look.clone();
        spec.look.light.shadow_strength = strength;
        let mut r = Renderer::new(&truth, &spec, 3).unwrap();
        r.render_frame(None, f, 30.0).unwrap()
    };
    let (lit, shaded) = (frame(0.0), frame(0.6));
    // The fist's centre, and where its shadow falls.
    let (s0, c0) = h.arm_theta.sin_cos();
    let fist = Point3::new(h.x + c0 * 85.0, h.y + s0 * 85.0, h.z + 28.0);
    let l = look.light_direction();
    let on_table = Point3::new(
        fist.x - l[0] * fist.z / l[2],
        fist.y - l[1] * fist.z / l[2],
        0.0,
    );
    let cam = camera(&truth);
    let grey = |c: [f64; 3]| c.iter().sum::<f64>() / 3.0;
    let (a, b) = (
        grey(pixel(&lit, &cam, on_table)),
        grey(pixel(&shaded, &cam, on_table)),
    );
    assert!(
        b < 0.75 * a,
        "under the fist's shadow {b:.0}, without shadows {a:.0}"
    );
    // Far from hand and shadow, nothing changes.
    let far = Point3::new(150.0, 600.0, 0.0);
    assert_eq!(pixel(&lit, &cam, far), pixel(&shaded, &cam, far));
}

/// A tag falling past the table's right edge, its hole seen just beyond the edge
/// and its body below the top's plane behind it (seen from the camera, projected
/// onto the top): the top hides the body, the end with the hole shows. Drawn
/// whole by its hole's place, the body lay over the top (seed 777's sweep-008:
/// read there as a tag on the table, and its exit put on the near edge).
#[test]
fn a_tag_falling_past_a_side_edge_shows_only_beside_the_table_top() {
    let s = Scenario::built_in("single-shot").unwrap();
    let opts = SimOptions {
        seed: 3,
        size: [640, 360],
        ..SimOptions::default()
    };
    let truth = simulate(&s, &opts).unwrap();
    let mut spec = RenderSpec { ..quiet() };
    spec.look = Look::default();
    spec.look.light.elevation_deg = 50.0;
    assert!(!spec.look.is_original());
    let cam = camera(&truth);
    let (_, hi) = truth.table().unwrap().bounds();
    let c = cam.position();
    // The hole's centre 150 mm below the top, where the camera sees it 8 mm past
    // the right edge; the body toward the table.
    let z = -150.0;
    let k = c.z / (c.z - z);
    let hole = Point3::new(
        c.x + (hi.x + 8.0 - c.x) / k,
        c.y + (hi.y / 2.0 - c.y) / k,
        z,
    );
    let mut empty = truth.frames[0].clone();
    empty.items.remove(&ItemId::fish(0));
    empty.items.remove(&ItemId::coin(0));
    let mut falling = empty.clone();
    falling.items.insert(
        ItemId::fish(0),
        fishtrack::sim::truth::ItemTruth {
            x: hole.x,
            y: hole.y,
            theta: Some(std::f64::consts::PI),
            z,
            on_table: false,
        },
    );
    let mut r = Renderer::new(&truth, &spec, 3).unwrap();
    let without = r.render_frame(None, &empty, 30.0).unwrap();
    let mut r = Renderer::new(&truth, &spec, 3).unwrap();
    let with = r.render_frame(None, &falling, 30.0).unwrap();
    let top_face = z + truth.game.items.fish.thickness;
    // A point of the body 40 mm from the hole: seen over the top, ~25 mm in.
    let body = Point3::new(hole.x - 40.0, hole.y, top_face);
    let seen_at = c + (body.coords - c) * (c.z / (c.z - top_face));
    assert!(seen_at.x < hi.x - 15.0, "the body is seen at {seen_at:?}");
    assert_eq!(
        pixel(&with, &cam, body),
        pixel(&without, &cam, body),
        "the top shows the tag's body that lies behind it"
    );
    // The tag's rim beyond its hole, seen past the edge, shows.
    let rim = Point3::new(hole.x + 12.5, hole.y, top_face);
    let (a, b) = (pixel(&with, &cam, rim), pixel(&without, &cam, rim));
    assert!(
        (0..3).any(|i| (a[i] - b[i]).abs() > 30.0),
        "the rim past the edge is not drawn: {a:?} against {b:?}"
    );
}

/// Hue of a `#rrggbb` colour, degrees.
fn hue(hex: &str) -> f64 {
    let [r, g, b] = fishtrack::config::parse_hex_color(hex)
        .unwrap()
        .map(|v| v as f64 / 255.0);
    let (max, min) = (r.max(g).max(b), r.min(g).min(b));
    let d = max - min;
    if max == r {
        60.0 * ((g - b) / d).rem_euclid(6.0)
    } else if max == g {
        60.0 * ((b - r) / d + 2.0)
    } else {
        60.0 * ((r - g) / d + 4.0)
    }
}

#[test]
fn a_look_outside_its_ranges_is_named() {
    assert_eq!(Look::default().check_ranges(), Ok(()));
    let mut look = Look::random(3);
    look.light.elevation_deg = 10.0;
    let err = look.check_ranges().unwrap_err();
    assert_eq!(err.field, "light.elevation_deg");
    let mut look = Look::random(3);
    look.tags.hue_shift_deg[2] = f64::NAN;
    assert_eq!(look.check_ranges().unwrap_err().field, "tags.hue_shift_deg");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, .. ProptestConfig::default() })]

    /// Every random look: inside the documented ranges, the palette's four tag
    /// hues still at least 50° apart after their shifts, cloth and felt tables
    /// low in saturation (no tag hides in them), the same look after a JSON trip.
    #[test]
    fn a_random_look_stays_in_its_documented_ranges(seed in any::<u64>()) {
        let look = Look::random(seed);
        prop_assert_eq!(look.check_ranges(), Ok(()));
        prop_assert!(!look.is_original());
        let players = fishtrack::sim::scenario::palette_players(4).unwrap();
        let hues: Vec<f64> = players
            .iter()
            .enumerate()
            .map(|(i, p)| hue(&p.color) + look.tags.hue_shift_deg[i])
            .collect();
        for i in 0..hues.len() {
            for j in i + 1..hues.len() {
                let d = (hues[i] - hues[j]).rem_euclid(360.0);
                prop_assert!(d.min(360.0 - d) >= 50.0, "hues {:?}", hues);
            }
        }
        if matches!(look.table.material, TableMaterial::Cloth | TableMaterial::Felt) {
            let [r, g, b] = look.table.colour.map(|v| v as f64);
            let max = r.max(g).max(b);
            prop_assert!((max - r.min(g).min(b)) / max < 0.5, "cloth {:?}", look.table.colour);
        }
        // serde_json reads floats back to within an ulp, not always exactly.
        let text = serde_json::to_string(&look).unwrap();
        let back: Look = serde_json::from_str(&text).unwrap();
        prop_assert_eq!(back.check_ranges(), Ok(()));
        prop_assert_eq!(back.summary(), look.summary());
        prop_assert!((back.light.azimuth_deg - look.light.azimuth_deg).abs() < 1e-9);
    }
}
