//! Raster primitives for the diagrams on an `image::RgbImage`, in continuous pixel
//! coordinates (pixel `(i, j)` covers `[i, i+1) x [j, j+1)`; a pixel is painted when
//! its centre is inside the shape). Each shape is blended once, so a translucent
//! polyline does not darken where its segments meet. Uses: image.

use image::{Rgb, RgbImage};

/// An RGB colour.
pub type Color = [u8; 3];

/// A point in image pixels (x right, y down).
pub type Px = (f64, f64);

/// `a` moved toward `b` by `t` (0 = a, 1 = b).
pub fn mix(a: Color, b: Color, t: f64) -> Color {
    let t = t.clamp(0.0, 1.0);
    let m = |x: u8, y: u8| (x as f64 + (y as f64 - x as f64) * t).round() as u8;
    [m(a[0], b[0]), m(a[1], b[1]), m(a[2], b[2])]
}

/// Blends `c` over the pixel at `(x, y)` with opacity `alpha`; outside the image: nothing.
pub fn blend(img: &mut RgbImage, x: i64, y: i64, c: Color, alpha: f64) {
    if x < 0 || y < 0 || x >= img.width() as i64 || y >= img.height() as i64 {
        return;
    }
    let p = img.get_pixel_mut(x as u32, y as u32);
    *p = Rgb(mix(p.0, c, alpha));
}

/// Paints every pixel in the box `[x0, x1] x [y0, y1]` whose centre satisfies `inside`.
pub fn fill_where(
    img: &mut RgbImage,
    (x0, y0): Px,
    (x1, y1): Px,
    c: Color,
    alpha: f64,
    inside: impl Fn(f64, f64) -> bool,
) {
    let (w, h) = (img.width() as f64, img.height() as f64);
    let xa = x0.floor().max(0.0) as i64;
    let ya = y0.floor().max(0.0) as i64;
    let xb = x1.ceil().min(w - 1.0) as i64;
    let yb = y1.ceil().min(h - 1.0) as i64;
    for y in ya..=yb {
        for x in xa..=xb {
            if inside(x as f64 + 0.5, y as f64 + 0.5) {
                blend(img, x, y, c, alpha);
            }
        }
    }
}

fn bbox(pts: &[Px], pad: f64) -> (Px, Px) {
    let mut lo = (f64::INFINITY, f64::INFINITY);
    let mut hi = (f64::NEG_INFINITY, f64::NEG_INFINITY);
    for &(x, y) in pts {
        lo = (lo.0.min(x), lo.1.min(y));
        hi = (hi.0.max(x), hi.1.max(y));
    }
    ((lo.0 - pad, lo.1 - pad), (hi.0 + pad, hi.1 + pad))
}

fn seg_dist2((px, py): Px, (ax, ay): Px, (bx, by): Px) -> f64 {
    let (dx, dy) = (bx - ax, by - ay);
    let len2 = dx * dx + dy * dy;
    let t = if len2 > 0.0 {
        (((px - ax) * dx + (py - ay) * dy) / len2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let (cx, cy) = (ax + t * dx - px, ay + t * dy - py);
    cx * cx + cy * cy
}

/// Even–odd test of a point against a polygon in pixels.
pub fn inside_polygon((x, y): Px, poly: &[Px]) -> bool {
    let n = poly.len();
    let mut inside = false;
    let mut j = n.wrapping_sub(1);
    for i in 0..n {
        let (a, b) = (poly[i], poly[j]);
        if (a.1 > y) != (b.1 > y) {
            let xc = a.0 + (y - a.1) * (b.0 - a.0) / (b.1 - a.1);
            if x < xc {
                inside = !inside;
            }
        }
        j = i;
    }
    inside
}

/// Fills a polygon (even–odd).
pub fn fill_polygon(img: &mut RgbImage, poly: &[Px], c: Color, alpha: f64) {
    if poly.len() < 3 {
        return;
    }
    let (lo, hi) = bbox(poly, 1.0);
    fill_where(img, lo, hi, c, alpha, |x, y| inside_polygon((x, y), poly));
}

/// Strokes a polyline `width` px wide (round joins and caps), closed or open.
pub fn stroke(img: &mut RgbImage, pts: &[Px], width: f64, c: Color, alpha: f64, closed: bool) {
    if pts.is_empty() {
        return;
    }
    let r2 = (width / 2.0).powi(2);
    let segs = segments(pts, closed);
    let (lo, hi) = bbox(pts, width);
    fill_where(img, lo, hi, c, alpha, |x, y| {
        segs.iter().any(|&(a, b)| seg_dist2((x, y), a, b) <= r2)
    });
}

fn segments(pts: &[Px], closed: bool) -> Vec<(Px, Px)> {
    if pts.len() == 1 {
        return vec![(pts[0], pts[0])];
    }
    let mut segs: Vec<(Px, Px)> = pts.windows(2).map(|w| (w[0], w[1])).collect();
    if closed && pts.len() > 2 {
        segs.push((pts[pts.len() - 1], pts[0]));
    }
    segs
}

/// Strokes a dashed polyline: `(dash, gap)`: `dash` px drawn, `gap` px skipped, along its length.
pub fn stroke_dashed(
    img: &mut RgbImage,
    pts: &[Px],
    width: f64,
    (dash, gap): (f64, f64),
    c: Color,
    alpha: f64,
    closed: bool,
) {
    let mut pieces: Vec<(Px, Px)> = Vec::new();
    let period = (dash + gap).max(1.0);
    let mut s0 = 0.0;
    for (a, b) in segments(pts, closed) {
        let len = ((b.0 - a.0).powi(2) + (b.1 - a.1).powi(2)).sqrt();
        let at = |s: f64| {
            let t = if len > 0.0 {
                (s / len).clamp(0.0, 1.0)
            } else {
                0.0
            };
            (a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t)
        };
        // Walk the dash pattern in arc length, continuing it across segments.
        let mut s = 0.0;
        while s < len {
            let phase = (s0 + s) % period;
            if phase < dash {
                let end = (s + dash - phase).min(len);
                pieces.push((at(s), at(end)));
                s = end;
            } else {
                s += period - phase;
            }
        }
        s0 += len;
    }
    if pieces.is_empty() {
        return;
    }
    let r2 = (width / 2.0).powi(2);
    let (lo, hi) = bbox(pts, width);
    fill_where(img, lo, hi, c, alpha, |x, y| {
        pieces.iter().any(|&(a, b)| seg_dist2((x, y), a, b) <= r2)
    });
}

/// A filled disc.
pub fn disc(img: &mut RgbImage, (cx, cy): Px, r: f64, c: Color, alpha: f64) {
    let r2 = r * r;
    fill_where(img, (cx - r, cy - r), (cx + r, cy + r), c, alpha, |x, y| {
        (x - cx).powi(2) + (y - cy).powi(2) <= r2
    });
}

/// A ring of radius `r` (its centre line), `width` px wide.
pub fn ring(img: &mut RgbImage, (cx, cy): Px, r: f64, width: f64, c: Color, alpha: f64) {
    let (ri, ro) = ((r - width / 2.0).max(0.0), r + width / 2.0);
    fill_where(
        img,
        (cx - ro, cy - ro),
        (cx + ro, cy + ro),
        c,
        alpha,
        |x, y| {
            let d2 = (x - cx).powi(2) + (y - cy).powi(2);
            d2 >= ri * ri && d2 <= ro * ro
        },
    );
}

/// An arrow from `a` to `b` with a head of `head` px at `b`.
pub fn arrow(img: &mut RgbImage, a: Px, b: Px, width: f64, head: f64, c: Color) {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let len = (dx * dx + dy * dy).sqrt();
    if len < 1e-9 {
        return;
    }
    let (ux, uy) = (dx / len, dy / len);
    let base = (b.0 - ux * head, b.1 - uy * head);
    stroke(img, &[a, base], width, c, 1.0, false);
    let half = head * 0.5;
    let tri = [
        b,
        (base.0 - uy * half, base.1 + ux * half),
        (base.0 + uy * half, base.1 - ux * half),
    ];
    fill_polygon(img, &tri, c, 1.0);
}

/// A cross (×) centred at `p`, `size` px from centre to each arm's end.
pub fn cross(img: &mut RgbImage, (x, y): Px, size: f64, width: f64, c: Color) {
    stroke(
        img,
        &[(x - size, y - size), (x + size, y + size)],
        width,
        c,
        1.0,
        false,
    );
    stroke(
        img,
        &[(x - size, y + size), (x + size, y - size)],
        width,
        c,
        1.0,
        false,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_paint_inside_and_leave_outside() {
        let mut img = RgbImage::from_pixel(50, 50, Rgb([255, 255, 255]));
        disc(&mut img, (25.0, 25.0), 5.0, [255, 0, 0], 1.0);
        assert_eq!(img.get_pixel(25, 25).0, [255, 0, 0]);
        assert_eq!(img.get_pixel(25, 33).0, [255, 255, 255]);
        ring(&mut img, (25.0, 25.0), 15.0, 2.0, [0, 0, 255], 1.0);
        assert_eq!(img.get_pixel(40, 25).0, [0, 0, 255]);
        assert_eq!(img.get_pixel(36, 25).0, [255, 255, 255]);
        let mut img = RgbImage::from_pixel(50, 50, Rgb([0, 0, 0]));
        // A translucent polyline is blended once, even where segments overlap.
        stroke(
            &mut img,
            &[(5.0, 5.0), (45.0, 5.0), (5.0, 5.5)],
            3.0,
            [200, 200, 200],
            0.5,
            false,
        );
        assert_eq!(img.get_pixel(20, 5).0, [100, 100, 100]);
        stroke_dashed(
            &mut img,
            &[(0.0, 30.0), (50.0, 30.0)],
            2.0,
            (5.0, 5.0),
            [255, 0, 0],
            1.0,
            false,
        );
        assert_eq!(img.get_pixel(2, 30).0, [255, 0, 0]);
        assert_eq!(img.get_pixel(7, 30).0, [0, 0, 0]);
    }
}
