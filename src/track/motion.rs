//! The motion model (pure): an item slides in a straight line and friction
//! (Coulomb: a constant deceleration) stops it; equal discs that meet exchange the
//! normal parts of their velocities (restitution `e`). Coins are twins, so this is
//! what tells them apart through a collision: the prediction already has them
//! swapped. Uses: geometry.

use crate::geometry::{Point, Vector};

/// Where a sliding item is after `dt` seconds, and its velocity then.
pub fn advance(pos: Point, vel: Vector, dt: f64, decel: f64) -> (Point, Vector) {
    let speed = vel.norm();
    if speed <= 0.0 || dt <= 0.0 {
        return (pos, vel);
    }
    let dir = vel / speed;
    if decel <= 0.0 {
        return (pos + vel * dt, vel);
    }
    let t_stop = speed / decel;
    if dt >= t_stop {
        (pos + dir * (speed * t_stop / 2.0), Vector::zeros())
    } else {
        let s = speed * dt - decel * dt * dt / 2.0;
        (pos + dir * s, dir * (speed - decel * dt))
    }
}

/// How far an item sliding at `speed` (mm/s) goes before friction stops it.
pub fn stopping_distance(speed: f64, decel: f64) -> f64 {
    if decel <= 0.0 {
        f64::INFINITY
    } else {
        speed * speed / (2.0 * decel)
    }
}

/// The time (s) a slider starting at `speed` needs to cover `dist` mm, if it gets there.
pub fn time_to_cover(speed: f64, dist: f64, decel: f64) -> Option<f64> {
    if dist <= 0.0 {
        return Some(0.0);
    }
    if decel <= 0.0 {
        return (speed > 0.0).then(|| dist / speed);
    }
    let disc = speed * speed - 2.0 * decel * dist;
    (disc >= 0.0).then(|| (speed - disc.sqrt()) / decel)
}

/// The time (s) since a slider left a point `dist` mm behind it, given its speed now:
/// it was faster then, `dist = v t + a t² / 2`.
pub fn time_since_start(speed_now: f64, dist: f64, decel: f64) -> f64 {
    if dist <= 0.0 {
        return 0.0;
    }
    if decel <= 0.0 {
        return if speed_now > 0.0 {
            dist / speed_now
        } else {
            0.0
        };
    }
    (-speed_now + (speed_now * speed_now + 2.0 * decel * dist).sqrt()) / decel
}

/// A disc for the collision-aware prediction.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Body {
    pub pos: Point,
    pub vel: Vector,
    pub radius: f64,
    /// Bodies that take part in collisions; a held (hidden) body is frozen in place
    /// and neither pushes nor gets pushed.
    pub free: bool,
}

/// Advances equal-mass discs by `dt` seconds in sub-steps short enough that no
/// disc moves more than a quarter of the smallest radius per step, resolving
/// contacts as elastic-with-restitution impacts. Returns whether any two collided.
pub fn predict_bodies(bodies: &mut [Body], dt: f64, decel: f64, restitution: f64) -> bool {
    let vmax = bodies
        .iter()
        .filter(|b| b.free)
        .map(|b| b.vel.norm())
        .fold(0.0, f64::max);
    let rmin = bodies
        .iter()
        .map(|b| b.radius)
        .fold(f64::INFINITY, f64::min);
    if vmax <= 0.0 || dt <= 0.0 || !rmin.is_finite() {
        return false;
    }
    let steps = ((vmax * dt) / (rmin / 4.0)).ceil().clamp(1.0, 64.0) as usize;
    let h = dt / steps as f64;
    let mut any = false;
    for _ in 0..steps {
        for b in bodies.iter_mut().filter(|b| b.free) {
            let (p, v) = advance(b.pos, b.vel, h, decel);
            b.pos = p;
            b.vel = v;
        }
        for i in 0..bodies.len() {
            for j in i + 1..bodies.len() {
                if !(bodies[i].free && bodies[j].free) {
                    continue;
                }
                let d = bodies[j].pos - bodies[i].pos;
                let dist = d.norm();
                let contact = bodies[i].radius + bodies[j].radius;
                if dist >= contact || dist <= 1e-9 {
                    continue;
                }
                let n = d / dist;
                let approach = (bodies[i].vel - bodies[j].vel).dot(&n);
                if approach <= 0.0 {
                    continue;
                }
                // Equal masses: each gets back (1+e)/2 of the relative normal speed.
                let dv = n * (approach * (1.0 + restitution) / 2.0);
                bodies[i].vel -= dv;
                bodies[j].vel += dv;
                // Separate the overlap so the pair does not collide again next step.
                let push = n * ((contact - dist) / 2.0);
                bodies[i].pos -= push;
                bodies[j].pos += push;
                any = true;
            }
        }
    }
    any
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn friction_stops_a_slider_at_v2_over_2a() {
        let (p, v) = advance(Point::origin(), Vector::new(1000.0, 0.0), 10.0, 2000.0);
        assert!((p.x - 250.0).abs() < 1e-9 && v.norm() == 0.0);
        let t = time_to_cover(1000.0, 200.0, 2000.0).unwrap();
        let (p, _) = advance(Point::origin(), Vector::new(1000.0, 0.0), t, 2000.0);
        assert!((p.x - 200.0).abs() < 1e-9);
        assert!(time_to_cover(1000.0, 300.0, 2000.0).is_none());
        // Backwards: 0.1 s after starting at 1000 mm/s, it is at 90 mm, 800 mm/s.
        assert!((time_since_start(800.0, 90.0, 2000.0) - 0.1).abs() < 1e-9);
    }

    #[test]
    fn head_on_equal_discs_swap_velocities() {
        let mut b = [
            Body {
                pos: Point::new(0.0, 0.0),
                vel: Vector::new(1000.0, 0.0),
                radius: 7.5,
                free: true,
            },
            Body {
                pos: Point::new(30.0, 0.0),
                vel: Vector::zeros(),
                radius: 7.5,
                free: true,
            },
        ];
        assert!(predict_bodies(&mut b, 1.0 / 30.0, 0.0, 1.0));
        assert!(b[0].vel.norm() < 1e-6, "striker stops: {:?}", b[0].vel);
        assert!((b[1].vel.x - 1000.0).abs() < 1e-6);
        assert!(b[1].pos.x > 40.0 && b[0].pos.x < 20.0);
    }
}
