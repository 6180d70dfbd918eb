//! Shot diagrams: one PNG per shot, drawn to scale in table mm, seen from above
//! (table +x right, +y up): the table with a 100 mm grid, the start poses ghosted,
//! every trajectory (a dot per tracked frame, so spacing shows speed), the rest
//! poses, lost items with an arrow through the exit point, the legal put-back poses
//! the rules engine computed (R6, dashed) and the coin put-back verdicts (R8, rings:
//! green possible, amber optional, red crossed impossible). A heading names the
//! shot's mover and every player with their colour, their items' labels (`F0`,
//! `C0`) and the shot's points; all text is 14 px tall, and item labels are placed
//! by `labels` so that none covers another. [`DiagramMap`] is the
//! one mapping between table mm and diagram pixels, exposed for tests and the HTML
//! replay. Uses: geometry (footprints), record, draw, font, labels.

use super::draw::{self, Color, Px};
use super::font;
use super::labels::{place_labels, LabelBox, LabelItem};
use super::timeline::{row_frame, row_pose};
use super::{short_label, ReplayError, Scene};
use crate::geometry::{Point, Table};
use crate::model::{ItemId, Pose};
use crate::record::Shot;
use image::{Rgb, RgbImage};

pub const MARGIN_RGB: Color = [255, 255, 255];
pub const TABLE_RGB: Color = [236, 226, 200];
pub const GRID_RGB: Color = [220, 208, 178];
pub const EDGE_RGB: Color = [60, 60, 60];
pub const OUTLINE_RGB: Color = [30, 30, 30];
pub const LOST_RGB: Color = [230, 0, 0];
pub const POSSIBLE_RGB: Color = [0, 170, 0];
pub const OPTIONAL_RGB: Color = [255, 160, 0];
pub const IMPOSSIBLE_RGB: Color = [230, 0, 0];
/// Opacity of the ghosted start poses.
pub const GHOST_ALPHA: f64 = 0.3;

/// Scale and margin of a diagram.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DiagramStyle {
    pub px_per_mm: f64,
    pub margin_px: u32,
}

impl Default for DiagramStyle {
    fn default() -> Self {
        DiagramStyle {
            px_per_mm: 1.0,
            margin_px: 48,
        }
    }
}

/// The map between table mm and diagram pixels: `px = margin + (x - min_x) * scale`,
/// `py = margin + (max_y - y) * scale` (y flipped: the table seen from above).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DiagramMap {
    pub min_x: f64,
    pub max_y: f64,
    pub px_per_mm: f64,
    pub margin_px: f64,
    pub width: u32,
    pub height: u32,
}

impl DiagramMap {
    pub fn for_table(table: &Table, style: DiagramStyle) -> DiagramMap {
        let (lo, hi) = table.bounds();
        let s = if style.px_per_mm.is_finite() && style.px_per_mm > 0.0 {
            style.px_per_mm
        } else {
            1.0
        };
        let m = style.margin_px as f64;
        DiagramMap {
            min_x: lo.x,
            max_y: hi.y,
            px_per_mm: s,
            margin_px: m,
            width: ((hi.x - lo.x) * s + 2.0 * m).ceil().max(1.0) as u32,
            height: ((hi.y - lo.y) * s + 2.0 * m).ceil().max(1.0) as u32,
        }
    }

    /// Table mm to continuous diagram pixels.
    pub fn px_from_table(&self, p: Point) -> Px {
        (
            self.margin_px + (p.x - self.min_x) * self.px_per_mm,
            self.margin_px + (self.max_y - p.y) * self.px_per_mm,
        )
    }

    /// Continuous diagram pixels to table mm.
    pub fn table_from_px(&self, (px, py): Px) -> Point {
        Point::new(
            self.min_x + (px - self.margin_px) / self.px_per_mm,
            self.max_y - (py - self.margin_px) / self.px_per_mm,
        )
    }

    /// The integer pixel holding a table point, if it lies in the image.
    pub fn pixel_at(&self, p: Point) -> Option<(u32, u32)> {
        let (x, y) = self.px_from_table(p);
        (x >= 0.0 && y >= 0.0 && x < self.width as f64 && y < self.height as f64)
            .then(|| (x.floor() as u32, y.floor() as u32))
    }
}

/// Fills a fish at a pose (tag material only: the hole shows what lies below) and
/// optionally outlines it.
fn draw_fish(
    img: &mut RgbImage,
    map: &DiagramMap,
    scene: &Scene,
    pose: &Pose,
    fill: Color,
    alpha: f64,
    outline: Option<Color>,
) {
    let placed = scene.footprint.placed(pose);
    let poly: Vec<Px> = placed
        .outline
        .iter()
        .map(|p| map.px_from_table(*p))
        .collect();
    let r = placed.reach * map.px_per_mm;
    let c = map.px_from_table(placed.hole.center);
    draw::fill_where(
        img,
        (c.0 - r, c.1 - r),
        (c.0 + r, c.1 + r),
        fill,
        alpha,
        |x, y| placed.covers(map.table_from_px((x, y))),
    );
    if let Some(o) = outline {
        draw::stroke(img, &poly, 1.0, o, 1.0, true);
        draw::ring(img, c, placed.hole.radius * map.px_per_mm, 1.0, o, 1.0);
    }
}

fn draw_coin(
    img: &mut RgbImage,
    map: &DiagramMap,
    scene: &Scene,
    p: Point,
    fill: Color,
    alpha: f64,
    outline: Option<Color>,
) {
    let c = map.px_from_table(p);
    let r = scene.game.items.coin.radius * map.px_per_mm;
    draw::disc(img, c, r, fill, alpha);
    if let Some(o) = outline {
        draw::ring(img, c, r, 1.0, o, 1.0);
    }
}

fn draw_item(
    img: &mut RgbImage,
    map: &DiagramMap,
    scene: &Scene,
    item: ItemId,
    pose: &Pose,
    alpha: f64,
    outline: Option<Color>,
) {
    let fill = scene.item_rgb(item);
    if item.is_fish() {
        draw_fish(img, map, scene, pose, fill, alpha, outline);
    } else {
        draw_coin(img, map, scene, pose.point(), fill, alpha, outline);
    }
}

/// Font scale of every text in a diagram: 5x7 glyphs at 2 px per font pixel, so a
/// capital letter is 14 px tall.
pub const TEXT_SCALE: u32 = 2;

/// The box `font::draw_label` fills for `text` drawn at `(x, y)`.
fn label_box(x: f64, y: f64, text: &str) -> LabelBox {
    let (w, h) = font::text_size(text, TEXT_SCALE);
    let pad = TEXT_SCALE as f64;
    LabelBox::new(
        x - pad,
        y - pad,
        w as f64 + 2.0 * pad - pad,
        h as f64 + 2.0 * pad,
    )
}

/// The table, its 100 mm grid and the scale in the margin; returns the boxes of
/// the scale's numbers (item labels keep off them). A number that would touch the
/// one before it (small `--scale`) is left out.
fn draw_table(img: &mut RgbImage, map: &DiagramMap, table: &Table) -> Vec<LabelBox> {
    let poly: Vec<Px> = table
        .corners()
        .iter()
        .map(|p| map.px_from_table(*p))
        .collect();
    draw::fill_polygon(img, &poly, TABLE_RGB, 1.0);
    let (lo, hi) = table.bounds();
    let step = 100.0;
    let mut boxes: Vec<LabelBox> = Vec::new();
    let number = |img: &mut RgbImage, x: i64, y: i64, text: &str, boxes: &mut Vec<LabelBox>| {
        let (w, h) = font::text_size(text, TEXT_SCALE);
        let b = LabelBox::new(
            x as f64 - 2.0,
            y as f64 - 2.0,
            w as f64 + 4.0,
            h as f64 + 4.0,
        );
        if boxes.iter().any(|o| o.overlaps(&b)) {
            return;
        }
        font::draw_text(img, x, y, text, TEXT_SCALE, EDGE_RGB);
        boxes.push(b);
    };
    let mut x = (lo.x / step).ceil() * step;
    while x <= hi.x + 1e-9 {
        let (px, _) = map.px_from_table(Point::new(x, 0.0));
        let (_, top) = map.px_from_table(Point::new(x, hi.y));
        let (_, bottom) = map.px_from_table(Point::new(x, lo.y));
        let xi = px.floor() as i64;
        for y in top.floor() as i64..bottom.ceil() as i64 {
            if table.contains(map.table_from_px((xi as f64 + 0.5, y as f64 + 0.5))) {
                draw::blend(img, xi, y, GRID_RGB, 1.0);
            }
        }
        let text = format!("{}", x.round() as i64);
        let (w, _) = font::text_size(&text, TEXT_SCALE);
        number(img, xi - w as i64 / 2, bottom as i64 + 6, &text, &mut boxes);
        x += step;
    }
    let mut y = (lo.y / step).ceil() * step;
    while y <= hi.y + 1e-9 {
        let (_, py) = map.px_from_table(Point::new(0.0, y));
        let (left, _) = map.px_from_table(Point::new(lo.x, y));
        let (right, _) = map.px_from_table(Point::new(hi.x, y));
        let yi = py.floor() as i64;
        for x in left.floor() as i64..right.ceil() as i64 {
            if table.contains(map.table_from_px((x as f64 + 0.5, yi as f64 + 0.5))) {
                draw::blend(img, x, yi, GRID_RGB, 1.0);
            }
        }
        let text = format!("{}", y.round() as i64);
        let (w, h) = font::text_size(&text, TEXT_SCALE);
        number(
            img,
            left as i64 - w as i64 - 6,
            yi - h as i64 / 2,
            &text,
            &mut boxes,
        );
        y += step;
    }
    draw::stroke(img, &poly, 2.0, EDGE_RGB, 1.0, true);
    boxes
}

/// Where a lost item was last seen before it left: its last track row before the
/// loss, else its start pose.
fn last_seen(shot: &Shot, item: ItemId, frame: u64) -> Option<Point> {
    shot.tracks
        .get(&item)
        .and_then(|rows| {
            rows.iter()
                .rev()
                .find(|r| row_frame(r) <= frame)
                .and_then(|r| row_pose(item, r))
        })
        .or_else(|| shot.start.get(&item).copied())
        .map(|p| p.point())
}

/// The unit normal pointing out of the table across the edge nearest to `p`.
pub fn outward_normal(table: &Table, p: Point) -> crate::geometry::Vector {
    let mut best = (f64::INFINITY, crate::geometry::Vector::new(0.0, -1.0));
    for (a, b) in table.edges() {
        let d = (p - crate::geometry::table::closest_on_segment(p, a, b)).norm();
        let e = b - a;
        if d < best.0 && e.norm() > 0.0 {
            // Counter-clockwise corners: the outside lies to the right of each edge.
            best = (d, crate::geometry::Vector::new(e.y, -e.x).normalize());
        }
    }
    best.1
}

/// The colour of an R8 verdict ring.
pub fn verdict_rgb(verdict: &str) -> Color {
    match verdict {
        "possible" => POSSIBLE_RGB,
        "optional" => OPTIONAL_RGB,
        _ => IMPOSSIBLE_RGB,
    }
}

/// Draws the diagram of the shot at position `pos` in `record.shots`.
pub fn draw_shot_diagram(scene: &Scene, pos: usize, style: DiagramStyle) -> RgbImage {
    let map = DiagramMap::for_table(&scene.table, style);
    let mut img = RgbImage::from_pixel(map.width, map.height, Rgb(MARGIN_RGB));
    let mut keep_out = draw_table(&mut img, &map, &scene.table);
    let Some(shot) = scene.record.shots.get(pos) else {
        return img;
    };
    let s = map.px_per_mm;
    // Labels are placed together at the end, so that none covers another.
    let mut labels: Vec<(LabelItem, String, Color)> = Vec::new();
    let mut marks: Vec<LabelBox> = Vec::new();
    let mut want = |anchor: LabelBox, text: String, fg: Color| {
        let b = label_box(0.0, 0.0, &text);
        labels.push((
            LabelItem {
                anchor,
                size: (b.w, b.h),
            },
            text,
            fg,
        ));
    };

    // Start poses, ghosted: where everything was at the flick.
    for (item, pose) in &shot.start {
        draw_item(&mut img, &map, scene, *item, pose, GHOST_ALPHA, None);
    }
    // Trajectories: a line through the tracked positions, a dot per frame.
    for (item, rows) in &shot.tracks {
        let c = scene.item_rgb(*item);
        let pts: Vec<Px> = rows
            .iter()
            .filter_map(|r| row_pose(*item, r))
            .map(|p| map.px_from_table(p.point()))
            .collect();
        draw::stroke(&mut img, &pts, 2.0, c, 0.9, false);
        for p in &pts {
            draw::disc(&mut img, *p, 2.5, c, 1.0);
        }
    }
    // Rest poses: fish first so that coins in holes and under-lying coins stay visible
    // (a coin under a fish is outlined on top of it).
    for (item, pose) in shot.end.iter().filter(|(i, _)| i.is_fish()) {
        draw_item(&mut img, &map, scene, *item, pose, 1.0, Some(OUTLINE_RGB));
    }
    for (item, pose) in shot.end.iter().filter(|(i, _)| i.is_coin()) {
        let under = shot.stacking.iter().any(|st| st.under == *item);
        let alpha = if under { 0.5 } else { 1.0 };
        draw_item(&mut img, &map, scene, *item, pose, alpha, Some(OUTLINE_RGB));
    }
    // The legal put-back poses (R6) and coin verdicts (R8).
    for pb in &shot.put_back {
        let c = scene.item_rgb(pb.item);
        if pb.item.is_fish() {
            if let Some(pose) = &pb.pose {
                let placed = scene.footprint.placed(pose);
                let poly: Vec<Px> = placed
                    .outline
                    .iter()
                    .map(|p| map.px_from_table(*p))
                    .collect();
                draw::stroke_dashed(&mut img, &poly, 2.0, (6.0, 4.0), c, 1.0, true);
                let hole = map.px_from_table(placed.hole.center);
                draw::stroke_dashed(
                    &mut img,
                    &circle(hole, placed.hole.radius * s),
                    1.0,
                    (4.0, 3.0),
                    c,
                    1.0,
                    true,
                );
                want(bounds(&poly), format!("{} R6", short_label(pb.item)), c);
            }
        } else {
            let at = pb.pose.or_else(|| {
                shot.end
                    .get(&crate::model::ItemId::fish(pb.item.owner))
                    .copied()
            });
            if let Some(pose) = at {
                let verdict = pb.verdict.as_deref().unwrap_or("impossible");
                let vc = verdict_rgb(verdict);
                let p = map.px_from_table(pose.point());
                let r = scene.game.items.coin.radius * s;
                draw::ring(&mut img, p, r, 3.0, vc, 1.0);
                marks.push(LabelBox::around(p.0, p.1, 2.0 * r + 4.0, 2.0 * r + 4.0));
                if vc == IMPOSSIBLE_RGB {
                    let d = r * std::f64::consts::FRAC_1_SQRT_2;
                    draw::stroke(
                        &mut img,
                        &[(p.0 - d, p.1 + d), (p.0 + d, p.1 - d)],
                        3.0,
                        vc,
                        1.0,
                        false,
                    );
                }
            }
        }
    }
    // Lost items: an arrow from where each was last seen through its exit point.
    for lost in &shot.lost {
        let exit = lost.exit.point();
        let e = map.px_from_table(exit);
        let from = last_seen(shot, lost.item, lost.frame).unwrap_or(exit);
        let f = map.px_from_table(from);
        let (dx, dy) = (e.0 - f.0, e.1 - f.1);
        let len = (dx * dx + dy * dy).sqrt();
        // Out of the table: along the path when it leads out, else across the edge.
        let n = outward_normal(&scene.table, exit);
        let (nx, ny) = (n.x, -n.y); // y flips in the diagram
        let (ux, uy) = if len > 1.0 && (dx * nx + dy * ny) / len > 0.2 {
            (dx / len, dy / len)
        } else {
            (nx, ny)
        };
        let tail = if len > 1.0 {
            f
        } else {
            (e.0 - ux * 30.0, e.1 - uy * 30.0)
        };
        let tip = (e.0 + ux * 30.0, e.1 + uy * 30.0);
        draw::stroke_dashed(&mut img, &[tail, e], 2.0, (5.0, 4.0), LOST_RGB, 1.0, false);
        draw::arrow(&mut img, e, tip, 3.0, 10.0, LOST_RGB);
        draw::cross(&mut img, e, 7.0, 3.0, LOST_RGB);
        marks.push(LabelBox::around(e.0, e.1, 18.0, 18.0));
        want(
            LabelBox::around(tip.0, tip.1, 8.0, 8.0),
            short_label(lost.item),
            LOST_RGB,
        );
    }
    for (item, pose) in &shot.end {
        let anchor = if item.is_fish() {
            let placed = scene.footprint.placed(pose);
            let poly: Vec<Px> = placed
                .outline
                .iter()
                .map(|p| map.px_from_table(*p))
                .collect();
            bounds(&poly)
        } else {
            let p = map.px_from_table(pose.point());
            let d = 2.0 * scene.game.items.coin.radius * s;
            LabelBox::around(p.0, p.1, d, d)
        };
        want(anchor, short_label(*item), scene.item_rgb(*item));
    }
    keep_out.extend(draw_heading(&mut img, scene, shot));
    // Labels last, so nothing covers them.
    let items: Vec<LabelItem> = labels.iter().map(|(it, _, _)| *it).collect();
    let frame = (map.width as f64, map.height as f64);
    for (b, (_, text, fg)) in place_labels(&items, frame, &keep_out, &marks)
        .into_iter()
        .zip(&labels)
    {
        if let Some(b) = b {
            let pad = TEXT_SCALE as f64;
            label(&mut img, (b.x + pad, b.y + pad), text, *fg);
        }
    }
    img
}

/// The heading in the top margin: the shot and its mover by name, then each player
/// by name with their colour, their items' labels and this shot's points. Returns
/// the boxes it covers.
fn draw_heading(img: &mut RgbImage, scene: &Scene, shot: &Shot) -> Vec<LabelBox> {
    let title = format!(
        "SHOT {}: {} MOVES",
        shot.index,
        scene.player_name(shot.player)
    );
    let (tw, th) = font::text_size(&title, TEXT_SCALE);
    font::draw_text(img, 8, 8, &title, TEXT_SCALE, OUTLINE_RGB);
    let mut boxes = vec![LabelBox::new(6.0, 6.0, tw as f64 + 4.0, th as f64 + 4.0)];
    let line = th as i64 + 6;
    let (mut x, mut y) = (8 + tw as i64 + 28, 8i64);
    for p in 0..scene.player_count() {
        let pts = shot.score.get(p).copied().unwrap_or(0);
        let text = format!(
            "{} F{p} C{p} {}",
            scene.player_name(p),
            super::html::signed(pts)
        );
        let (w, _) = font::text_size(&text, TEXT_SCALE);
        let entry = th as i64 + 6 + w as i64;
        if x + entry > img.width() as i64 - 8 && x > 8 {
            x = 8;
            y += line;
        }
        let sw = th as f64;
        draw::fill_polygon(
            img,
            &[
                (x as f64, y as f64),
                (x as f64 + sw, y as f64),
                (x as f64 + sw, y as f64 + sw),
                (x as f64, y as f64 + sw),
            ],
            scene.player_rgb(p),
            1.0,
        );
        font::draw_text(img, x + th as i64 + 6, y, &text, TEXT_SCALE, OUTLINE_RGB);
        boxes.push(LabelBox::new(
            x as f64 - 2.0,
            y as f64 - 2.0,
            entry as f64 + 4.0,
            th as f64 + 4.0,
        ));
        x += entry + 24;
    }
    boxes
}

/// The bounding box of a polygon.
fn bounds(poly: &[Px]) -> LabelBox {
    let (mut x0, mut y0, mut x1, mut y1) = (
        f64::INFINITY,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NEG_INFINITY,
    );
    for &(x, y) in poly {
        x0 = x0.min(x);
        y0 = y0.min(y);
        x1 = x1.max(x);
        y1 = y1.max(y);
    }
    if x0 > x1 {
        return LabelBox::new(0.0, 0.0, 0.0, 0.0);
    }
    LabelBox::new(x0, y0, x1 - x0, y1 - y0)
}

fn circle(c: Px, r: f64) -> Vec<Px> {
    (0..48)
        .map(|i| {
            let a = i as f64 / 48.0 * std::f64::consts::TAU;
            (c.0 + r * a.cos(), c.1 + r * a.sin())
        })
        .collect()
}

fn label(img: &mut RgbImage, (x, y): Px, text: &str, fg: Color) {
    font::draw_label(
        img,
        x.round() as i64,
        y.round() as i64,
        text,
        TEXT_SCALE,
        fg,
        [255, 255, 255],
    );
}

/// Encodes an image as PNG bytes.
pub fn png_bytes(img: &RgbImage) -> Result<Vec<u8>, ReplayError> {
    let mut out = std::io::Cursor::new(Vec::new());
    img.write_to(&mut out, image::ImageFormat::Png)
        .map_err(|e| ReplayError::Png(e.to_string()))?;
    Ok(out.into_inner())
}
