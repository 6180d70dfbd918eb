//! Coins seated in holes: a coin read in a tag's hole is held to the place it can
//! physically take there.
//!
//! A coin in a hole shows its rim only where the table shows beside it, a crescent a
//! few millimetres wide at most, and the hole's own rim draws a larger circle around
//! it: the rim fit ([`super::coin`]) can slide between the two. On another
//! renderer's clips it read coins up to 5 mm from their holes' centres, where no coin
//! can lie more than `hole − coin` radius from it (3.5 mm with a kopeck in an 11 mm
//! hole); such a reading also failed the "in that hole" test that names a coin after
//! the hole it is seen in. A reading beyond that play is brought back to its edge,
//! along the line from the hole's centre (the side the rim fit saw the coin on).
//!
//! Seen obliquely, what stands above the table appears pushed away from the camera
//! (the tag's outline is fitted at half its thickness, a coin at half its own; see
//! [`super::Sightings::seen_from`]), so the comparison is made where both stand, when
//! the camera's position is known ([`super::Detector::looked_at_from`]).
//!
//! Within that play the rim fit still wanders: at the foreign clips' last frames 25
//! coins in holes were read a median 1.5 mm from where they lay, 5 of them at the
//! play's edge, some on the side opposite the coin. Beside a seated coin the hole's
//! floor is a strip a few millimetres wide, often in the tag's shadow, and seen
//! obliquely the hole's near wall hides the floor's near side and the far wall shows
//! inside the opening. So the seated coin is placed by what the hole shows as a whole
//! ([`fit_in_hole`]): the picture seen through the tag's top opening, over the hole's
//! foot, explained as a coin-sized disc of one colour over a floor whose light may fall
//! off across the hole. The rim reading stays where the hole shows too little (a hand
//! over it).

use super::view::Parallax;
use super::{CoinSighting, Detector, FishSighting, TopView};
use crate::geometry::{Point, Vector};
use nalgebra::{Matrix4, Matrix4x3, Vector4};

impl Detector {
    /// Holds each coin read in or just beyond a tag's hole (by up to the width an
    /// edge shows in, [`Detector::edge_band_mm`]) to the place it can take in that
    /// hole. A coin read farther off is no coin seated there (one lying across the
    /// tag, or beside it) and keeps its reading; each hole takes its nearest coin.
    pub(super) fn seat_coins(
        &self,
        view: &TopView,
        fish: &[FishSighting],
        coins: &mut [CoinSighting],
    ) {
        let g = &view.grid;
        let play = self.footprint.hole_radius() - self.coin_radius;
        if play <= 0.0 {
            return;
        }
        let parallax = self.parallax();
        let mut seated = vec![false; coins.len()];
        for f in fish {
            let seen = f.pose.point();
            let band = self.edge_band_mm(g, seen);
            let Some(ci) = coins
                .iter()
                .enumerate()
                .filter(|(i, c)| c.streak.is_none() && !seated[*i])
                .map(|(i, c)| ((c.pt_in_table - seen).norm(), i))
                .filter(|(d, _)| *d <= play + band)
                .min_by(|a, b| a.0.total_cmp(&b.0))
                .map(|(_, i)| i)
            else {
                continue;
            };
            seated[ci] = true;
            let hole = parallax.lower(seen, 0.5 * self.fish_thickness);
            let coin_h = 0.5 * self.coin_thickness;
            if let Some(lies) = self.seated_where(view, hole, play, &parallax) {
                coins[ci].pt_in_table = parallax.appear(lies, coin_h);
            } else if let Some(held) =
                held_in_hole(parallax.lower(coins[ci].pt_in_table, coin_h), hole, play)
            {
                coins[ci].pt_in_table = parallax.appear(held, coin_h);
            }
        }
    }

    /// Where a coin seated in the hole standing at `hole` lies, from the pixels the
    /// hole shows (those of the floor seen through the tag's top opening, none a hand
    /// hides); `None` when too few show it to tell.
    fn seated_where(
        &self,
        view: &TopView,
        hole: Point,
        play: f64,
        parallax: &Parallax,
    ) -> Option<Point> {
        let g = &view.grid;
        let n = g.width * g.height;
        if view.rgb.len() < 3 * n {
            return None;
        }
        let hole_r = self.footprint.hole_radius();
        // Pixel centres wholly inside both the hole's foot and its top opening: the
        // rim's own pixels blend the tag in.
        let inner = hole_r - g.mm_per_px;
        let opening = parallax.appear(hole, self.fish_thickness);
        let (cu, cv) = g.px_from_table(hole);
        let reach = ((hole_r + (opening - hole).norm()) / g.mm_per_px).ceil() + 1.0;
        let hidden = |i: usize| self.any_hidden && self.hidden.get(i).is_some_and(|&h| h > 0.5);
        let mut pixels = Vec::new();
        let (u0, u1) = (
            (cu - reach).max(0.0) as usize,
            (cu + reach).max(0.0) as usize,
        );
        let (v0, v1) = (
            (cv - reach).max(0.0) as usize,
            (cv + reach).max(0.0) as usize,
        );
        for v in v0..=v1.min(g.height.saturating_sub(1)) {
            for u in u0..=u1.min(g.width.saturating_sub(1)) {
                let p = g.table_from_px(u as f64, v as f64);
                let i = v * g.width + u;
                if (p - hole).norm() <= inner && (p - opening).norm() <= inner && !hidden(i) {
                    let c = &view.rgb[3 * i..3 * i + 3];
                    pixels.push((p, [c[0] as f64, c[1] as f64, c[2] as f64]));
                }
            }
        }
        // Half the hole's floor at least: less is a hand's or a tag's business.
        let floor_px = std::f64::consts::PI * inner * inner / (g.mm_per_px * g.mm_per_px);
        if (pixels.len() as f64) < 0.5 * floor_px {
            return None;
        }
        let edge = self.edge_band_mm(g, hole);
        let coin_top = |c: Point| parallax.appear(c, self.coin_thickness);
        fit_in_hole(&pixels, hole, play, self.coin_radius, edge, coin_top)
    }

    /// The camera's foot point and height, as far as known.
    pub(super) fn parallax(&self) -> Parallax {
        match self
            .camera
            .filter(|c| c.z > 10.0 * (self.fish_thickness + self.coin_thickness))
        {
            Some(c) => Parallax {
                foot: Point::new(c.x, c.y),
                height: c.z,
            },
            None => Parallax {
                foot: Point::origin(),
                height: f64::INFINITY,
            },
        }
    }
}

/// Where in the hole centred at `hole` a coin of radius `coin_r` lies, `play` mm at
/// most from its centre, given the hole's floor pixels (table point, colour): the
/// place whose disc, its edge spread over `edge` mm as the camera blurs it and drawn
/// where the coin's top appears (`coin_top`), best explains the pixels as one colour
/// inside and the floor outside, the floor's light allowed to fall off linearly across
/// the hole (the tag's shadow). Least squares: per channel, colour = w·coin +
/// (1 − w)·(floor + slope · offset), with w the disc's share of the pixel; the place
/// by a grid over the play, then refined. `None` when no place gives a solvable fit.
fn fit_in_hole(
    pixels: &[(Point, [f64; 3])],
    hole: Point,
    play: f64,
    coin_r: f64,
    edge: f64,
    coin_top: impl Fn(Point) -> Point,
) -> Option<Point> {
    let edge = edge.max(1e-6);
    let residual = |c: Point| -> Option<f64> {
        let top = coin_top(c);
        let mut ata = Matrix4::<f64>::zeros();
        let mut atx = Matrix4x3::<f64>::zeros();
        let mut xx = 0.0;
        for (p, x) in pixels {
            let w = ((coin_r - (p - top).norm()) / edge + 0.5).clamp(0.0, 1.0);
            let d = p - hole;
            let a = Vector4::new(w, 1.0 - w, (1.0 - w) * d.x, (1.0 - w) * d.y);
            ata += a * a.transpose();
            for (k, xk) in x.iter().enumerate() {
                for r in 0..4 {
                    atx[(r, k)] += a[r] * xk;
                }
                xx += xk * xk;
            }
        }
        let beta = ata.cholesky()?.solve(&atx);
        // The least-squares residual: |x|² less what the fit explains.
        Some(xx - beta.component_mul(&atx).sum())
    };
    let mut best: Option<(f64, Point)> = None;
    let coarse = 0.5f64.min(play.max(1e-3));
    let steps = (play / coarse).floor() as i64;
    for i in -steps..=steps {
        for j in -steps..=steps {
            let c = hole + Vector::new(i as f64, j as f64) * coarse;
            if (c - hole).norm() > play + 1e-9 {
                continue;
            }
            if let Some(r) = residual(c) {
                if best.is_none_or(|(b, _)| r < b) {
                    best = Some((r, c));
                }
            }
        }
    }
    let (mut best_r, mut at) = best?;
    // Refined by steps of a half and a fifth of the grid's, each until no neighbour
    // does better (a handful of moves: the grid point lies within a step).
    for step in [0.5 * coarse, 0.2 * coarse] {
        for _ in 0..8 {
            let mut moved = false;
            for (di, dj) in [
                (1, 0),
                (-1, 0),
                (0, 1),
                (0, -1),
                (1, 1),
                (1, -1),
                (-1, 1),
                (-1, -1),
            ] {
                let c = at + Vector::new(di as f64, dj as f64) * step;
                if (c - hole).norm() > play + 1e-9 {
                    continue;
                }
                if let Some(r) = residual(c) {
                    if r < best_r {
                        (best_r, at, moved) = (r, c, true);
                    }
                }
            }
            if !moved {
                break;
            }
        }
    }
    Some(at)
}

/// Where a coin read standing at `coin` lies if it sits in the hole centred at
/// `hole` with `play` mm to move: brought back to the edge of that play if read
/// beyond it, `None` if the reading is one it can take.
fn held_in_hole(coin: Point, hole: Point, play: f64) -> Option<Point> {
    let off = coin - hole;
    let d = off.norm();
    (d > play).then(|| hole + off * (play / d))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_coin_read_beyond_its_holes_play_is_held_at_its_edge_on_the_side_it_was_read() {
        let hole = Point::new(100.0, 50.0);
        // Read 5 mm off along +x, in an 11 mm hole with a 7.5 mm coin.
        let held = held_in_hole(Point::new(105.0, 50.0), hole, 3.5).expect("held");
        assert!((held - Point::new(103.5, 50.0)).norm() < 1e-12);
        // A reading the coin can take is kept.
        assert!(held_in_hole(Point::new(102.0, 51.0), hole, 3.5).is_none());
    }

    /// The hole's floor pixels at 1 mm a pixel, as a camera blurring edges over
    /// `edge` mm draws them: a coin of one colour lying at `coin`, its top appearing
    /// at `top(coin)`, over a floor lit brighter toward +x, seen through the opening
    /// at `opening` (the wall hides what lies outside it); a little fixed noise.
    fn hole_pixels(
        hole: Point,
        coin: Point,
        opening: Point,
        edge: f64,
        top: impl Fn(Point) -> Point,
    ) -> Vec<(Point, [f64; 3])> {
        let (hole_r, coin_r) = (11.0, 7.5);
        let mut out = Vec::new();
        let mut noise = 0x2545_f491_u32;
        for v in -12..=12 {
            for u in -12..=12 {
                let p = hole + Vector::new(u as f64, v as f64);
                if (p - hole).norm() > hole_r - 1.0 || (p - opening).norm() > hole_r - 1.0 {
                    continue;
                }
                let w = ((coin_r - (p - top(coin)).norm()) / edge + 0.5).clamp(0.0, 1.0);
                let light = 1.0 + 0.03 * (p.x - hole.x);
                let mut c = [0.0; 3];
                for (k, (coin_c, floor_c)) in [(170.0, 90.0), (115.0, 80.0), (60.0, 70.0)]
                    .into_iter()
                    .enumerate()
                {
                    noise ^= noise << 13;
                    noise ^= noise >> 17;
                    noise ^= noise << 5;
                    let jitter = (noise % 7) as f64 - 3.0;
                    c[k] = w * coin_c + (1.0 - w) * floor_c * light + jitter;
                }
                out.push((p, c));
            }
        }
        out
    }

    #[test]
    fn a_coin_seated_off_centre_is_placed_where_the_hole_shows_it() {
        let hole = Point::new(300.0, 200.0);
        for coin in [
            Point::new(302.0, 198.5),
            Point::new(297.2, 201.0),
            Point::new(300.3, 200.0),
        ] {
            let got = fit_in_hole(
                &hole_pixels(hole, coin, hole, 1.5, |c| c),
                hole,
                3.5,
                7.5,
                1.5,
                |c| c,
            )
            .expect("a fit");
            assert!((got - coin).norm() < 0.3, "coin at {coin}, placed at {got}");
        }
    }

    #[test]
    fn a_coin_seen_obliquely_through_the_opening_is_placed_where_it_stands() {
        // The camera stands far off along -y: the tag's top opening appears 1.6 mm
        // toward +y, the wall hiding the floor's near crescent, and the coin's top
        // 0.8 mm toward +y. The coin lies 2.5 mm toward the camera.
        let hole = Point::new(300.0, 600.0);
        let coin = Point::new(300.0, 597.5);
        let opening = hole + Vector::new(0.0, 1.6);
        let top = |c: Point| c + Vector::new(0.0, 0.8);
        let pixels = hole_pixels(hole, coin, opening, 2.0, top);
        let got = fit_in_hole(&pixels, hole, 3.5, 7.5, 2.0, top).expect("a fit");
        assert!((got - coin).norm() < 0.3, "placed at {got}");
        // Read as it appears (its top, the part the wall leaves), it would be off.
        let as_seen = fit_in_hole(&pixels, hole, 3.5, 7.5, 2.0, |c| c).expect("a fit");
        assert!((as_seen - coin).norm() > 0.6, "as seen {as_seen}");
    }

    #[test]
    fn no_pixels_no_place() {
        let hole = Point::new(0.0, 0.0);
        assert!(fit_in_hole(&[], hole, 3.5, 7.5, 1.5, |c| c).is_none());
    }

    #[test]
    fn what_appears_pushed_away_from_the_camera_is_lowered_back_where_it_stands() {
        let p = Parallax {
            foot: Point::new(400.0, -500.0),
            height: 1300.0,
        };
        let stands = Point::new(600.0, 300.0);
        let seen = p.appear(stands, 2.5);
        // Pushed away from the foot point, by about 2.5 mm per 1.3 m of height per
        // metre off the foot.
        assert!((seen - p.foot).norm() > (stands - p.foot).norm() + 1.0);
        assert!((p.lower(seen, 2.5) - stands).norm() < 1e-9);
    }
}
