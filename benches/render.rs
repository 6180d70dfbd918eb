//! Rendering speed: frames per second at 1280x720 with 4 sub-frames of motion blur,
//! noise and exposure drift, over the moving part of a simulated match (the video
//! encoder is timed separately). Run: `cargo bench --bench render`.

use fishtrack::sim::{simulate, Scenario, SimOptions};
use fishtrack::vision::render::Renderer;
use std::time::Instant;

fn main() {
    let scenario = Scenario::built_in("match").expect("built-in");
    let opts = SimOptions {
        seed: 7,
        size: [1280, 720],
        ..SimOptions::default()
    };
    let truth = simulate(&scenario, &opts).expect("simulate");
    let mut spec = scenario.render.clone();
    spec.subframes = 4;
    let t0 = Instant::now();
    let mut r = Renderer::new(&truth, &spec, 7).expect("renderer");
    let setup = t0.elapsed().as_secs_f64();
    // Every frame of the match: still, hand and moving frames alike.
    let frames = &truth.frames;
    let t1 = Instant::now();
    let mut sink = 0usize;
    for (i, f) in frames.iter().enumerate() {
        let prev = i.checked_sub(1).map(|p| &frames[p]);
        let img = r.render_frame(prev, f, truth.video.fps).expect("render");
        sink += opencv::prelude::MatTraitConst::rows(&img) as usize;
    }
    let dt = t1.elapsed().as_secs_f64();
    let moving: Vec<usize> = truth
        .shots
        .iter()
        .flat_map(|s| s.flick_frame as usize..=s.rest_frame as usize)
        .collect();
    let t2 = Instant::now();
    for &i in &moving {
        let prev = i.checked_sub(1).map(|p| &frames[p]);
        let img = r
            .render_frame(prev, &frames[i], truth.video.fps)
            .expect("render");
        sink += opencv::prelude::MatTraitConst::rows(&img) as usize;
    }
    let dm = t2.elapsed().as_secs_f64();
    println!("render setup (background, noise): {setup:.2} s");
    println!(
        "render 1280x720, 4 sub-frames: {:.1} fps over all {} frames; {:.1} fps over {} moving frames ({sink})",
        frames.len() as f64 / dt,
        frames.len(),
        moving.len() as f64 / dm,
        moving.len()
    );
}
