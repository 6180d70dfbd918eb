//! Shot diagrams: pixels at known table points have the colours the diagram's
//! legend promises (table, margin, rest pose, ghosted start pose, trajectory, lost
//! item's exit cross, R8 verdict ring, R6 put-back outline). Pure: no OpenCV.

use fishtrack::geometry::Point;
use fishtrack::model::{ItemId, Pose};
use fishtrack::record::Record;
use fishtrack::replay::diagram::{
    draw_shot_diagram, DiagramMap, DiagramStyle, GHOST_ALPHA, LOST_RGB, MARGIN_RGB, POSSIBLE_RGB,
    TABLE_RGB,
};
use fishtrack::replay::draw::mix;
use fishtrack::replay::Scene;
use std::path::Path;

fn scene() -> Scene {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/replay/record.json");
    let record = Record::load(&path).expect("fixture record loads");
    Scene::new(record, None, None).expect("fixture record is valid")
}

fn at(img: &image::RgbImage, map: &DiagramMap, p: Point) -> [u8; 3] {
    let (x, y) = map
        .pixel_at(p)
        .unwrap_or_else(|| panic!("{p:?} is off the diagram"));
    img.get_pixel(x, y).0
}

/// A point in a fish's own frame, placed at a pose.
fn on_fish(pose: Pose, fx: f64, fy: f64) -> Point {
    let (s, c) = pose.angle().sin_cos();
    Point::new(pose.x + c * fx - s * fy, pose.y + s * fx + c * fy)
}

#[test]
fn map_round_trips_and_flips_y() {
    let s = scene();
    for scale in [1.0, 0.5, 2.0] {
        let style = DiagramStyle {
            px_per_mm: scale,
            margin_px: 30,
        };
        let map = DiagramMap::for_table(&s.table, style);
        assert_eq!(map.width, (1000.0 * scale) as u32 + 60);
        assert_eq!(map.height, (700.0 * scale) as u32 + 60);
        // Corner 0 (origin) is bottom-left; +y goes up the image.
        assert_eq!(
            map.px_from_table(Point::new(0.0, 0.0)),
            (30.0, 30.0 + 700.0 * scale)
        );
        assert_eq!(map.px_from_table(Point::new(0.0, 700.0)), (30.0, 30.0));
        let p = Point::new(123.4, 567.8);
        assert!((map.table_from_px(map.px_from_table(p)) - p).norm() < 1e-9);
    }
}

#[test]
fn shot_diagram_pixels_match_the_record() {
    let s = scene();
    let style = DiagramStyle::default();
    let map = DiagramMap::for_table(&s.table, style);
    let img = draw_shot_diagram(&s, 0, style);
    assert_eq!((img.width(), img.height()), (map.width, map.height));
    let red = s.player_rgb(0);
    assert_eq!(red, [214, 39, 40]);

    // Bare table (off the 100 mm grid) and the margin outside it.
    assert_eq!(at(&img, &map, Point::new(50.0, 50.0)), TABLE_RGB);
    assert_eq!(at(&img, &map, Point::new(1020.0, 350.0)), MARGIN_RGB);

    // fish:0 rests at (500, 350, 0.5): its tag is solid red, its hole holds coin:0.
    let rest = Pose::fish(500.0, 350.0, 0.5);
    assert_eq!(at(&img, &map, on_fish(rest, 40.0, 0.0)), red);
    assert_eq!(
        at(&img, &map, Point::new(500.0, 350.0)),
        s.item_rgb(ItemId::coin(0))
    );
    // Its start pose (200, 200, 0) is ghosted: the colour faintly over the table
    // (sampled off the y = 200 grid line).
    let start = Pose::fish(200.0, 200.0, 0.0);
    assert_eq!(
        at(&img, &map, on_fish(start, 35.0, 8.0)),
        mix(TABLE_RGB, red, GHOST_ALPHA)
    );
    // coin:1's trajectory, halfway between two tracked frames.
    let mid = Point::new((600.0 + 795.0) / 2.0, (400.0 + 457.5) / 2.0);
    assert_eq!(
        at(&img, &map, mid),
        mix(TABLE_RGB, s.item_rgb(ItemId::coin(1)), 0.9)
    );
    // Nothing drawn a few mm off that line.
    assert_eq!(at(&img, &map, Point::new(mid.x, mid.y + 8.0)), TABLE_RGB);
    // coin:1 was lost at exit (1000, 520): a red cross there.
    assert_eq!(at(&img, &map, Point::new(1000.0, 520.0)), LOST_RGB);
    // coin:1 may go back into fish:1's hole (R8a, possible): a green ring of coin radius.
    let r = s.game.items.coin.radius;
    assert_eq!(at(&img, &map, Point::new(800.0 + r, 150.0)), POSSIBLE_RGB);
    assert_eq!(at(&img, &map, Point::new(800.0 - r, 150.0)), POSSIBLE_RGB);
}

#[test]
fn put_back_pose_is_outlined_and_lost_fish_is_gone_at_rest() {
    let s = scene();
    let style = DiagramStyle::default();
    let map = DiagramMap::for_table(&s.table, style);
    let img = draw_shot_diagram(&s, 1, style);
    let blue = s.player_rgb(1);
    // The R6 put-back pose of fish:1: its outline (dashed, starting at the first
    // vertex) in the owner's colour.
    let pb = s.record.shots[1].put_back[0]
        .pose
        .expect("fixture has a pose");
    let first = s.footprint.placed(&pb).outline[0];
    assert_eq!(at(&img, &map, first), blue);
    // fish:1 was lost: no solid rest pose at its start; only the faint ghost there.
    let start = Pose::fish(800.0, 150.0, std::f64::consts::PI);
    assert_eq!(
        at(&img, &map, on_fish(start, 35.0, 0.0)),
        mix(TABLE_RGB, blue, GHOST_ALPHA)
    );
    // Its exit at (350, 0) on the bottom edge carries the red cross.
    assert_eq!(at(&img, &map, Point::new(350.0, 0.0)), LOST_RGB);
}

#[test]
fn scene_rejects_bad_tracks_and_players() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/replay/record.json");
    let record = Record::load(&path).unwrap();
    let mut bad = record.clone();
    bad.shots[0].tracks.get_mut(&ItemId::fish(0)).unwrap()[2] = vec![5.0, 1.0];
    let err = Scene::new(bad, None, None).unwrap_err().to_string();
    assert!(err.contains("shot 0") && err.contains("fish:0"), "{err}");
    let mut bad = record;
    bad.shots[1].player = 7;
    let err = Scene::new(bad, None, None).unwrap_err().to_string();
    assert!(err.contains("player 7"), "{err}");
}

/// Where `text`, drawn by the diagram's bitmap font at its scale in `fg` on the
/// margin's white, appears pixel for pixel in `img` (only the OpenCV build's test
/// below reads diagrams rendered by the binary).
#[cfg(feature = "opencv")]
fn find_text(img: &image::RgbImage, text: &str, fg: [u8; 3]) -> Option<(u32, u32)> {
    use fishtrack::replay::diagram::TEXT_SCALE;
    use fishtrack::replay::font;
    let (w, h) = font::text_size(text, TEXT_SCALE);
    let mut t = image::RgbImage::from_pixel(w, h, image::Rgb(MARGIN_RGB));
    font::draw_text(&mut t, 0, 0, text, TEXT_SCALE, fg);
    let fits = |x0: u32, y0: u32| {
        t.enumerate_pixels()
            .all(|(x, y, p)| img.get_pixel(x0 + x, y0 + y) == p)
    };
    (0..img.height().saturating_sub(h))
        .flat_map(|y| (0..img.width().saturating_sub(w)).map(move |x| (x, y)))
        .find(|&(x, y)| fits(x, y))
}

/// `fishtrack replay` on the bundled demo: every shot's diagram names its mover
/// and every player (no "MOVER P1"), and its text, the scale's numbers included,
/// is drawn with capitals at least 12 px tall.
#[cfg(feature = "opencv")]
#[test]
fn replay_diagrams_name_the_players_in_legible_text() {
    use fishtrack::replay::diagram::{EDGE_RGB, OUTLINE_RGB, TEXT_SCALE};
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/demo/record.json");
    let record = Record::load(&demo).expect("the demo record");
    let dir = tempfile::tempdir().unwrap();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_fishtrack"))
        .arg("replay")
        .arg(&demo)
        .args(["--no-video", "-o"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for shot in &record.shots {
        let path = dir.path().join(format!("shot_{:03}.png", shot.index));
        let img = image::open(&path).expect("a diagram per shot").to_rgb8();
        let mover = &record.players[shot.player];
        let title = format!("SHOT {}: {mover} MOVES", shot.index);
        let (x0, y0) = find_text(&img, &title, OUTLINE_RGB).unwrap_or_else(|| panic!("{title}"));
        // How tall the title's capitals are, in pixels of the diagram.
        let (w, h) = fishtrack::replay::font::text_size(&title, TEXT_SCALE);
        let inked = (y0..y0 + h)
            .filter(|&y| (x0..x0 + w).any(|x| img.get_pixel(x, y).0 == OUTLINE_RGB))
            .count();
        assert!(inked >= 12, "capitals {inked} px tall");
        for name in &record.players {
            assert!(
                find_text(&img, name, OUTLINE_RGB).is_some(),
                "{}: no {name}",
                path.display()
            );
        }
        assert!(find_text(&img, "MOVER", OUTLINE_RGB).is_none());
        assert!(find_text(&img, "700", EDGE_RGB).is_some(), "the scale");
    }
}
