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

use super::view::Parallax;
use super::{CoinSighting, Detector, FishSighting, TopGrid};
use crate::geometry::Point;

impl Detector {
    /// Holds each coin read in or just beyond a tag's hole (by up to the width an
    /// edge shows in, [`Detector::edge_band_mm`]) to the place it can take in that
    /// hole. A coin read farther off is no coin seated there (one lying across the
    /// tag, or beside it) and keeps its reading; each hole takes its nearest coin.
    pub(super) fn seat_coins(
        &self,
        g: &TopGrid,
        fish: &[FishSighting],
        coins: &mut [CoinSighting],
    ) {
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
            if let Some(held) =
                held_in_hole(parallax.lower(coins[ci].pt_in_table, coin_h), hole, play)
            {
                coins[ci].pt_in_table = parallax.appear(held, coin_h);
            }
        }
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
