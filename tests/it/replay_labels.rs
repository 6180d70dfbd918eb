//! Annotated-video labels (issue 14 item 4): on every frame of the bundled demo, as
//! the annotator places them, no two label boxes overlap, none leaves the frame or
//! covers the banner, and every label finds room.
#![cfg(feature = "opencv")]

use fishtrack::calibration::TableCalibration;
use fishtrack::record::Record;
use fishtrack::replay::labels::LabelBox;
use fishtrack::replay::Scene;
use fishtrack::vision::annotate::Annotator;
use std::path::Path;

#[test]
fn annotated_demo_labels_never_overlap_or_leave_the_frame() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let record = Record::load(&root.join("samples/demo/record.json")).expect("the demo record");
    let calib =
        TableCalibration::load(&root.join("samples/demo/table.json")).expect("the demo table");
    let size = (record.video.width as i32, record.video.height as i32);
    let frames = record.video.frames;
    assert!(frames > 0 && size.0 > 0, "the demo record names its video");
    let scene = Scene::new(record, None, Some(calib.table.clone())).expect("a valid record");
    let annotator = Annotator::new(&scene, &calib);
    // The banner's backdrop, top left (360 x 78 px).
    let banner = LabelBox::new(0.0, 0.0, 360.0, 78.0);
    let (mut labels, mut left_out, mut busiest) = (0usize, 0usize, 0usize);
    for f in 0..frames {
        let l = annotator.labels_at(f, size).expect("labels");
        for (i, a) in l.placed.iter().enumerate() {
            assert!(
                a.bbox.inside(size.0 as f64, size.1 as f64),
                "frame {f}: `{}` leaves the frame: {:?}",
                a.text,
                a.bbox
            );
            assert!(
                !a.bbox.overlaps(&banner),
                "frame {f}: `{}` covers the banner",
                a.text
            );
            for b in &l.placed[i + 1..] {
                assert!(
                    !a.bbox.overlaps(&b.bbox),
                    "frame {f}: `{}` {:?} overlaps `{}` {:?}",
                    a.text,
                    a.bbox,
                    b.text,
                    b.bbox
                );
            }
        }
        labels += l.placed.len();
        left_out += l.left_out;
        busiest = busiest.max(l.placed.len());
    }
    eprintln!(
        "{frames} frames, {labels} labels, at most {busiest} in a frame, {left_out} left out"
    );
    assert!(
        labels > frames as usize,
        "{labels} labels in {frames} frames"
    );
    assert!(busiest > 4, "some frames label lost items or put-backs too");
    assert_eq!(left_out, 0, "every label found room");
}
