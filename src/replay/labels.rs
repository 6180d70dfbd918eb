//! Label placement, pure: each item's label goes to one of a few candidate positions
//! around the item (beside it, above, below, at its corners, then one step further
//! out) so that no two labels overlap, none leaves the image and none covers a
//! keep-out area (the annotated video's banner). Candidates that would cover another
//! item are tried last. The search is exact over the candidates while it is small (a
//! depth-first search, most constrained item first, with a step budget): when every
//! label can be placed, every label is. Past the budget, or when no full placement
//! exists, labels are placed greedily and those that find no room are left out
//! (`None`) rather than drawn over another. Used by `diagram` (PNG) and
//! `vision::annotate` (video). Uses: nothing.

/// An axis-aligned box in image pixels: top-left corner and size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LabelBox {
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
}

impl LabelBox {
    pub fn new(x: f64, y: f64, w: f64, h: f64) -> LabelBox {
        LabelBox { x, y, w, h }
    }

    /// The box of `(w, h)` centred on `(cx, cy)`.
    pub fn around(cx: f64, cy: f64, w: f64, h: f64) -> LabelBox {
        LabelBox::new(cx - w / 2.0, cy - h / 2.0, w, h)
    }

    pub fn right(&self) -> f64 {
        self.x + self.w
    }

    pub fn bottom(&self) -> f64 {
        self.y + self.h
    }

    /// Whether the two boxes share area (boxes that only touch do not overlap).
    pub fn overlaps(&self, o: &LabelBox) -> bool {
        self.x < o.right() && o.x < self.right() && self.y < o.bottom() && o.y < self.bottom()
    }

    /// Whether the box lies wholly inside `[0, width] x [0, height]`.
    pub fn inside(&self, width: f64, height: f64) -> bool {
        self.x >= 0.0 && self.y >= 0.0 && self.right() <= width && self.bottom() <= height
    }
}

/// What to label: the box of the thing labelled and the size of its label.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LabelItem {
    pub anchor: LabelBox,
    /// Label width and height, px.
    pub size: (f64, f64),
}

/// Gap between an item's box and its label, px.
pub const LABEL_GAP_PX: f64 = 3.0;
/// Depth-first search steps before falling back to greedy placement.
const SEARCH_BUDGET: usize = 50_000;

/// The positions tried for a label, in order of preference: right, above, left,
/// below, the four corners, then the same one label height further out.
pub fn candidates(item: &LabelItem, gap: f64) -> Vec<LabelBox> {
    let a = item.anchor;
    let (w, h) = item.size;
    let mut out = Vec::with_capacity(16);
    for ring in 0..2 {
        let g = gap + ring as f64 * h;
        let cy = a.y + a.h / 2.0 - h / 2.0;
        let cx = a.x + a.w / 2.0 - w / 2.0;
        out.extend([
            LabelBox::new(a.right() + g, cy, w, h),
            LabelBox::new(cx, a.y - g - h, w, h),
            LabelBox::new(a.x - g - w, cy, w, h),
            LabelBox::new(cx, a.bottom() + g, w, h),
            LabelBox::new(a.right() + g, a.y - g - h, w, h),
            LabelBox::new(a.right() + g, a.bottom() + g, w, h),
            LabelBox::new(a.x - g - w, a.y - g - h, w, h),
            LabelBox::new(a.x - g - w, a.bottom() + g, w, h),
        ]);
    }
    out
}

/// The candidates of each item that lie inside the frame and off the keep-out
/// boxes, those covering another item's anchor or a mark moved to the end.
fn feasible(
    items: &[LabelItem],
    frame: (f64, f64),
    keep_out: &[LabelBox],
    marks: &[LabelBox],
) -> Vec<Vec<LabelBox>> {
    items
        .iter()
        .enumerate()
        .map(|(i, it)| {
            let (mut clear, mut covering): (Vec<_>, Vec<_>) = candidates(it, LABEL_GAP_PX)
                .into_iter()
                .filter(|c| c.inside(frame.0, frame.1) && !keep_out.iter().any(|k| c.overlaps(k)))
                .partition(|c| {
                    !items
                        .iter()
                        .enumerate()
                        .any(|(j, o)| j != i && c.overlaps(&o.anchor))
                        && !marks.iter().any(|m| c.overlaps(m))
                });
            clear.append(&mut covering);
            clear
        })
        .collect()
}

/// Places every item's label (see the module notes): `out[i]` is item `i`'s label
/// box, `None` when it found no room. Placed boxes never overlap each other or a
/// keep-out box and always lie inside `frame` (width, height); they cover other
/// items and the `marks` (drawn things without a label: exit crosses) only when
/// nothing else fits.
pub fn place_labels(
    items: &[LabelItem],
    frame: (f64, f64),
    keep_out: &[LabelBox],
    marks: &[LabelBox],
) -> Vec<Option<LabelBox>> {
    let options = feasible(items, frame, keep_out, marks);
    // Most constrained first: fewest positions, then the order given.
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_by_key(|&i| options[i].len());
    let mut chosen: Vec<usize> = Vec::with_capacity(items.len());
    let mut steps = 0usize;
    if search(&order, &options, &mut chosen, &mut steps) {
        let mut out = vec![None; items.len()];
        for (k, &i) in order.iter().enumerate() {
            out[i] = Some(options[i][chosen[k]]);
        }
        return out;
    }
    // No full placement (or no time to find one): first free position, in order.
    let mut out: Vec<Option<LabelBox>> = vec![None; items.len()];
    let mut placed: Vec<LabelBox> = Vec::new();
    for &i in &order {
        if let Some(b) = options[i]
            .iter()
            .find(|b| !placed.iter().any(|p| p.overlaps(b)))
        {
            placed.push(*b);
            out[i] = Some(*b);
        }
    }
    out
}

/// Depth-first search over the candidates; `chosen[k]` is the candidate of item
/// `order[k]`. False when none exists or the budget ran out.
fn search(
    order: &[usize],
    options: &[Vec<LabelBox>],
    chosen: &mut Vec<usize>,
    steps: &mut usize,
) -> bool {
    let k = chosen.len();
    if k == order.len() {
        return true;
    }
    for (c, b) in options[order[k]].iter().enumerate() {
        *steps += 1;
        if *steps > SEARCH_BUDGET {
            return false;
        }
        let free = chosen
            .iter()
            .enumerate()
            .all(|(j, &cj)| !options[order[j]][cj].overlaps(b));
        if free {
            chosen.push(c);
            if search(order, options, chosen, steps) {
                return true;
            }
            chosen.pop();
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn item(x: f64, y: f64) -> LabelItem {
        LabelItem {
            anchor: LabelBox::around(x, y, 10.0, 10.0),
            size: (30.0, 12.0),
        }
    }

    fn assert_valid(items: &[LabelItem], out: &[Option<LabelBox>], frame: (f64, f64)) {
        let placed: Vec<(usize, LabelBox)> = out
            .iter()
            .enumerate()
            .filter_map(|(i, b)| b.map(|b| (i, b)))
            .collect();
        for (i, b) in &placed {
            assert!(
                b.inside(frame.0, frame.1),
                "label {i} leaves the frame: {b:?}"
            );
            assert!(
                candidates(&items[*i], LABEL_GAP_PX).contains(b),
                "label {i} is not at one of its positions"
            );
            assert_eq!((b.w, b.h), items[*i].size);
        }
        for (k, (i, a)) in placed.iter().enumerate() {
            for (j, b) in &placed[k + 1..] {
                assert!(!a.overlaps(b), "labels {i} and {j} overlap: {a:?} {b:?}");
            }
        }
    }

    #[test]
    fn two_items_side_by_side_get_labels_that_do_not_overlap() {
        // Both would take "right" alone; the first one's right covers the second.
        let items = [item(100.0, 100.0), item(120.0, 100.0)];
        let frame = (400.0, 300.0);
        let out = place_labels(&items, frame, &[], &[]);
        assert!(out.iter().all(Option::is_some), "{out:?}");
        assert_valid(&items, &out, frame);
        // Alone, an item's label goes to its right.
        let alone = place_labels(&items[..1], frame, &[], &[]);
        assert_eq!(alone[0], Some(candidates(&items[0], LABEL_GAP_PX)[0]));
    }

    #[test]
    fn a_label_at_the_frame_edge_or_under_a_keep_out_moves_inside() {
        let items = [item(395.0, 5.0)];
        let frame = (400.0, 300.0);
        let out = place_labels(&items, frame, &[], &[]);
        let b = out[0].expect("placed");
        assert!(b.inside(400.0, 300.0), "{b:?}");
        assert!(
            b.x < 395.0 && b.y > 5.0,
            "left of and below the item: {b:?}"
        );
        let banner = LabelBox::new(0.0, 0.0, 200.0, 60.0);
        let out = place_labels(&[item(100.0, 70.0)], frame, &[banner], &[]);
        let b = out[0].expect("placed");
        assert!(!b.overlaps(&banner), "{b:?}");
    }

    #[test]
    fn no_room_leaves_a_label_out_instead_of_overlapping() {
        // A frame just big enough for one label beside the anchor.
        let items = [
            LabelItem {
                anchor: LabelBox::new(0.0, 0.0, 10.0, 12.0),
                size: (20.0, 12.0),
            },
            LabelItem {
                anchor: LabelBox::new(0.0, 0.0, 10.0, 12.0),
                size: (20.0, 12.0),
            },
        ];
        let frame = (33.0, 12.0);
        let out = place_labels(&items, frame, &[], &[]);
        assert_eq!(out.iter().filter(|b| b.is_some()).count(), 1, "{out:?}");
        assert_valid(&items, &out, frame);
    }

    /// Whether some choice of candidates places every label (brute force).
    fn exists(options: &[Vec<LabelBox>], chosen: &mut Vec<LabelBox>) -> bool {
        let k = chosen.len();
        if k == options.len() {
            return true;
        }
        for b in &options[k] {
            if chosen.iter().all(|c| !c.overlaps(b)) {
                chosen.push(*b);
                if exists(options, chosen) {
                    return true;
                }
                chosen.pop();
            }
        }
        false
    }

    fn arb_items(max: usize) -> impl Strategy<Value = Vec<LabelItem>> {
        prop::collection::vec(
            (
                0.0..240.0f64,
                0.0..160.0f64,
                4.0..30.0f64,
                4.0..30.0f64,
                10.0..60.0f64,
                8.0..16.0f64,
            ),
            0..=max,
        )
        .prop_map(|v| {
            v.into_iter()
                .map(|(x, y, aw, ah, w, h)| LabelItem {
                    anchor: LabelBox::new(x.round(), y.round(), aw.round(), ah.round()),
                    size: (w.round(), h.round()),
                })
                .collect()
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// For any set of up to 6 items in a small frame (crowded on purpose): placed
        /// labels never overlap or leave the frame, and when a placement of every
        /// label exists among the candidates, every label is placed.
        #[test]
        fn placed_labels_never_overlap_and_all_are_placed_when_possible(items in arb_items(6)) {
            let frame = (260.0, 180.0);
            let out = place_labels(&items, frame, &[], &[]);
            assert_valid(&items, &out, frame);
            let options: Vec<Vec<LabelBox>> = items
                .iter()
                .map(|it| {
                    candidates(it, LABEL_GAP_PX)
                        .into_iter()
                        .filter(|c| c.inside(frame.0, frame.1))
                        .collect()
                })
                .collect();
            if exists(&options, &mut Vec::new()) {
                prop_assert!(out.iter().all(Option::is_some), "a placement exists: {out:?}");
            }
        }
    }
}
