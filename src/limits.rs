//! The bounds every loaded file and every command-line number is checked against,
//! in one place, each with why it is what it is. They follow from the game (a
//! table game played on furniture, with cloakroom tags and coins) and from what a
//! camera can film, with a wide margin: a value past them is a typo, a damaged
//! file or a hostile one, and would otherwise size an allocation or a search loop
//! (the put-back search over a 1e155 mm table, a 68 GB detector mask from a 53 m
//! outline vertex). Also the small helpers that say, in one line, which field is
//! out of which range, and the edit distance that suggests a misspelt key.
//! Uses: nothing.

/// The longest side of a table (mm): a large dining table is 3 m; 10 m is a hall.
pub const MAX_TABLE_SIDE_MM: f64 = 10_000.0;
/// The shortest side of a table (mm): a fish is 75 mm long, a table must hold one.
pub const MIN_TABLE_SIDE_MM: f64 = 50.0;
/// The most corners a table polygon may have: tables are rectangles, octagons at most;
/// 64 leaves room for a rounded outline traced by hand.
pub const MAX_TABLE_CORNERS: usize = 64;
/// How far a pose, an exit point or a track row may lie from the table origin (mm):
/// the table's own size again beyond its largest side (an item seen falling past the
/// edge, a pose of an item on the floor), no further.
pub const MAX_POSE_MM: f64 = 2.0 * MAX_TABLE_SIDE_MM;
/// The largest |theta| (radians) a pose or track row may carry: angles are normally
/// within ±π, a track may unwrap them over a spinning shot; a thousand turns is no shot.
pub const MAX_THETA_RAD: f64 = 2000.0 * std::f64::consts::PI;
/// The largest item dimension (mm): an outline vertex's distance from the hole, a
/// radius, a thickness. A tag is 75 mm, a coin 15 mm; half a metre is no tag.
pub const MAX_ITEM_MM: f64 = 500.0;
/// The most vertices a fish outline may have (a traced tag has tens).
pub const MAX_OUTLINE_POINTS: usize = 1024;
/// The most players of a match: every player's fish needs a colour told apart from
/// every other's on camera; 16 is already more than one table seats.
pub const MAX_PLAYERS: usize = 16;
/// The most moves per player in a match (the game has 3 to 10; a simulated match
/// allocates its shots up front).
pub const MAX_MOVES_PER_PLAYER: u32 = 1000;
/// The most shots a record may hold: every player's every move, twice over for the
/// out-of-turn shots a referee may have to flag.
pub const MAX_SHOTS: usize = 2 * MAX_PLAYERS * MAX_MOVES_PER_PLAYER as usize;
/// Frame rates a video may have (frames per second): below 1 nothing moves between
/// frames as the tracker assumes; high-speed cameras stop near 1000.
pub const MIN_FPS: f64 = 1.0;
pub const MAX_FPS: f64 = 1000.0;
/// The most frames a video may have: a day filmed at the highest frame rate.
pub const MAX_FRAMES: u64 = 24 * 3600 * MAX_FPS as u64;
/// The longest image side (pixels): 8K video is 7680; twice that for a still camera.
pub const MAX_IMAGE_SIDE_PX: u32 = 16_384;
/// The largest focal length (pixels): a long lens on an 8K sensor is some 1e5.
pub const MAX_FOCAL_PX: f64 = 1e6;
/// The largest distortion coefficient in magnitude: real lenses stay within ±10.
pub const MAX_DISTORTION: f64 = 1e3;
/// The largest chessboard square (mm) `calibrate camera --square` accepts: a printed
/// board on A0 has squares of some 100 mm.
pub const MAX_SQUARE_MM: f64 = 1000.0;
/// Physics steps per second a scenario may ask for: 1200 is the default; more than
/// 100 000 only makes a simulation run for hours.
pub const MAX_PHYSICS_STEPS_PER_S: f64 = 100_000.0;
/// The longest a simulated shot may run (seconds).
pub const MAX_SHOT_S: f64 = 600.0;
/// The largest flick speed (mm/s) a scenario may script: a hard flick is 4 m/s.
pub const MAX_FLICK_MM_S: f64 = 100_000.0;

/// A one-line reason when `value` is not a finite number within `lo..=hi`.
pub fn check_range(field: &str, value: f64, lo: f64, hi: f64, unit: &str) -> Result<(), String> {
    let unit = if unit.is_empty() {
        String::new()
    } else {
        format!(" {unit}")
    };
    if !value.is_finite() {
        return Err(format!(
            "{field} is {value}, not a finite number (allowed {lo} to {hi}{unit})"
        ));
    }
    if value < lo || value > hi {
        return Err(format!(
            "{field} is {value}, outside the allowed {lo} to {hi}{unit}"
        ));
    }
    Ok(())
}

/// A one-line reason when `count` exceeds `max`.
pub fn check_count(field: &str, count: usize, max: usize) -> Result<(), String> {
    if count > max {
        return Err(format!(
            "{field} has {count} entries, at most {max} allowed"
        ));
    }
    Ok(())
}

/// A one-line reason when a pose (x, y, and theta when given) leaves the sane range.
pub fn check_pose(field: &str, x: f64, y: f64, theta: Option<f64>) -> Result<(), String> {
    check_range(&format!("{field}.x"), x, -MAX_POSE_MM, MAX_POSE_MM, "mm")?;
    check_range(&format!("{field}.y"), y, -MAX_POSE_MM, MAX_POSE_MM, "mm")?;
    if let Some(t) = theta {
        check_range(
            &format!("{field}.theta"),
            t,
            -MAX_THETA_RAD,
            MAX_THETA_RAD,
            "rad",
        )?;
    }
    Ok(())
}

/// A one-line reason when a table polygon (mm) is out of bounds: its corner count,
/// every corner within [`MAX_POSE_MM`] of the origin, each side of its bounding box
/// within [`MIN_TABLE_SIDE_MM`]..=[`MAX_TABLE_SIDE_MM`].
pub fn check_table_corners(field: &str, corners: &[[f64; 2]]) -> Result<(), String> {
    check_count(field, corners.len(), MAX_TABLE_CORNERS)?;
    for (i, [x, y]) in corners.iter().enumerate() {
        check_pose(&format!("{field}[{i}]"), *x, *y, None)?;
    }
    if corners.len() < 3 {
        return Ok(()); // the polygon check says what is wrong with fewer
    }
    let (mut lo, mut hi) = ([f64::MAX; 2], [f64::MIN; 2]);
    for c in corners {
        for k in 0..2 {
            lo[k] = lo[k].min(c[k]);
            hi[k] = hi[k].max(c[k]);
        }
    }
    for (k, axis) in ["width (x)", "height (y)"].iter().enumerate() {
        check_range(
            &format!("{field}: the table's {axis}"),
            hi[k] - lo[k],
            MIN_TABLE_SIDE_MM,
            MAX_TABLE_SIDE_MM,
            "mm",
        )?;
    }
    Ok(())
}

/// The Levenshtein distance between two short strings (keys), in characters.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let here = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb))
                .min(row[j] + 1)
                .min(here + 1);
            prev = here;
        }
    }
    row[b.len()]
}

/// The known key `key` is most likely a misspelling of: within two edits (one for
/// keys of up to four characters), the nearest, else none.
pub fn nearest_key<'a>(key: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let allowed = if key.chars().count() <= 4 { 1 } else { 2 };
    known
        .into_iter()
        .filter(|k| *k != key)
        .map(|k| (edit_distance(key, k), k))
        .filter(|(d, _)| *d <= allowed)
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_misspelt_key_finds_its_neighbour() {
        assert_eq!(edit_distance("fine_polcy", "fine_policy"), 1);
        assert_eq!(
            nearest_key("fine_polcy", ["players", "fine_policy", "items"]),
            Some("fine_policy")
        );
        assert_eq!(nearest_key("comment", ["players", "items"]), None);
        assert_eq!(
            nearest_key("fps", ["fps"]),
            None,
            "a known key is no misspelling"
        );
    }

    #[test]
    fn ranges_name_the_field_and_the_bounds() {
        let e = check_range("video.fps", 1e308, MIN_FPS, MAX_FPS, "frames/s").unwrap_err();
        assert!(e.contains("video.fps") && e.contains("1 to 1000"), "{e}");
        assert!(check_range("x", f64::NAN, 0.0, 1.0, "")
            .unwrap_err()
            .contains("finite"));
        assert!(check_range("x", 0.5, 0.0, 1.0, "").is_ok());
    }

    #[test]
    fn a_huge_table_is_refused() {
        let ok = [[0.0, 0.0], [1000.0, 0.0], [1000.0, 700.0], [0.0, 700.0]];
        assert!(check_table_corners("corners_mm", &ok).is_ok());
        let huge = [[0.0, 0.0], [1e155, 0.0], [1e155, 700.0], [0.0, 700.0]];
        let e = check_table_corners("corners_mm", &huge).unwrap_err();
        assert!(e.contains("corners_mm[1].x"), "{e}");
        let wide = [[0.0, 0.0], [15_000.0, 0.0], [15_000.0, 700.0], [0.0, 700.0]];
        let e = check_table_corners("corners_mm", &wide).unwrap_err();
        assert!(e.contains("width") && e.contains("10000"), "{e}");
    }
}
