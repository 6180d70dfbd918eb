//! The printable chessboard of `fishtrack calibrate board`: the page at true scale
//! (paper, squares, a 100 mm ruler to check that the printer did not scale, and text
//! stating the sizes and the `calibrate camera` arguments that match), and that page
//! drawn as a PDF (vector, exact) and as a PNG at 300 dpi (which says so in its
//! `pHYs` chunk). Pure: reading a board back out of a picture is `vision::calibrate`.
//! Uses: nothing else of the crate (pdf-writer, png, font8x8).

use std::fmt;

/// Millimetres per inch, exactly.
const MM_PER_INCH: f64 = 25.4;
/// PDF user units (points) per inch.
const POINTS_PER_INCH: f64 = 72.0;
/// The PNG's resolution.
pub const PNG_DPI: f64 = 300.0;

/// Blank paper kept around everything: most printers cannot print the outer 4–6 mm.
pub const MARGIN_MM: f64 = 8.0;
/// Space between the board and the text under it.
const GAP_MM: f64 = 4.0;
/// One text line's pitch.
const LINE_MM: f64 = 4.5;
/// The text is monospaced so that both drawings agree on its width: a glyph cell of
/// the 8x8 bitmap font at 3 PNG pixels per font pixel is 24 px = 2.032 mm at 300 dpi;
/// Courier's advance is 0.6 em, so the PDF's font size matching it is 9.6 pt.
const FONT_SCALE_PX: u32 = 3;
const CHAR_MM: f64 = 8.0 * FONT_SCALE_PX as f64 / PNG_DPI * MM_PER_INCH;
const PDF_FONT_PT: f64 = CHAR_MM / MM_PER_INCH * POINTS_PER_INCH / 0.6;
/// The ruler: its length, and the height of its end ticks.
pub const RULER_MM: f64 = 100.0;
const TICK_MM: f64 = 3.0;
const RULE_WIDTH_MM: f64 = 0.3;
/// Three text lines and the ruler under the board.
const TEXT_LINES: usize = 3;
const BELOW_BOARD_MM: f64 = GAP_MM + TEXT_LINES as f64 * LINE_MM + TICK_MM + 1.0;

/// A paper size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Paper {
    A4,
    Letter,
}

impl Paper {
    pub const ALL: [Paper; 2] = [Paper::A4, Paper::Letter];

    /// Portrait width and height, mm.
    pub fn size_mm(self) -> (f64, f64) {
        match self {
            Paper::A4 => (210.0, 297.0),
            Paper::Letter => (215.9, 279.4),
        }
    }

    /// The lower-case name used in file names and on the command line.
    pub fn slug(self) -> &'static str {
        match self {
            Paper::A4 => "a4",
            Paper::Letter => "letter",
        }
    }
}

impl fmt::Display for Paper {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Paper::A4 => "A4",
            Paper::Letter => "Letter",
        })
    }
}

/// Why a board page cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum BoardPageError {
    #[error("a {cols}x{rows} board of {square_mm} mm squares ({board_w} x {board_h} mm) does not fit {paper} with {MARGIN_MM} mm margins and its text: the largest square that fits is {largest_mm} mm (pass --square {largest_mm} or less, or a smaller --board)")]
    TooLarge {
        paper: Paper,
        cols: u32,
        rows: u32,
        square_mm: f64,
        board_w: f64,
        board_h: f64,
        largest_mm: f64,
    },
    #[error("the board needs at least 2x2 inner corners and a square side above 0 mm")]
    Degenerate,
    #[error("writing the PNG: {0}")]
    Png(#[from] png::EncodingError),
}

/// One printed page: a chessboard of `squares_across x squares_down` squares with its
/// top-left corner at `board_origin_mm` (from the page's top-left, y down), the text
/// lines, and the ruler. The top-left square is black.
#[derive(Debug, Clone, PartialEq)]
pub struct BoardPage {
    pub paper: Paper,
    /// As laid out: the paper's portrait size, or turned to landscape.
    pub width_mm: f64,
    pub height_mm: f64,
    pub landscape: bool,
    /// Inner corners per row x per column, as `calibrate camera --board` takes them.
    pub inner_cols: u32,
    pub inner_rows: u32,
    pub square_mm: f64,
    pub squares_across: u32,
    pub squares_down: u32,
    pub board_origin_mm: (f64, f64),
    /// `(x, top y, text)` of each line, mm.
    pub lines: Vec<(f64, f64, String)>,
    /// The ruler's left end and baseline, mm; it is [`RULER_MM`] long.
    pub ruler_origin_mm: (f64, f64),
}

impl BoardPage {
    /// Lays out a board of `inner_cols x inner_rows` inner corners (so one more square
    /// each way) of `square_mm` squares on `paper`: portrait if it fits, else landscape,
    /// the board turned whichever way fits, centred, with the text and ruler beneath.
    pub fn layout(
        paper: Paper,
        inner_cols: u32,
        inner_rows: u32,
        square_mm: f64,
    ) -> Result<BoardPage, BoardPageError> {
        if inner_cols < 2 || inner_rows < 2 || !(square_mm.is_finite() && square_mm > 0.0) {
            return Err(BoardPageError::Degenerate);
        }
        let lines = text_lines(inner_cols, inner_rows, square_mm);
        let widest_mm = lines.iter().map(|l| l.chars().count()).max().unwrap_or(0) as f64 * CHAR_MM
            + 2.0 * CHAR_MM;
        let (pw, ph) = paper.size_mm();
        let (sq_c, sq_r) = (inner_cols + 1, inner_rows + 1);
        // Portrait first (what a printer expects), the board's long side either way.
        let options = [
            (false, sq_c, sq_r),
            (false, sq_r, sq_c),
            (true, sq_c, sq_r),
            (true, sq_r, sq_c),
        ];
        let room = |landscape: bool| {
            let (w, h) = if landscape { (ph, pw) } else { (pw, ph) };
            (w - 2.0 * MARGIN_MM, h - 2.0 * MARGIN_MM - BELOW_BOARD_MM)
        };
        let chosen = options.iter().find(|&&(landscape, across, down)| {
            let (rw, rh) = room(landscape);
            across as f64 * square_mm <= rw + 1e-9
                && down as f64 * square_mm <= rh + 1e-9
                && widest_mm <= rw
        });
        let Some(&(landscape, across, down)) = chosen else {
            let largest = options
                .iter()
                .map(|&(landscape, across, down)| {
                    let (rw, rh) = room(landscape);
                    (rw / across as f64).min(rh / down as f64)
                })
                .fold(0.0, f64::max);
            return Err(BoardPageError::TooLarge {
                paper,
                cols: inner_cols,
                rows: inner_rows,
                square_mm,
                board_w: sq_c as f64 * square_mm,
                board_h: sq_r as f64 * square_mm,
                largest_mm: (largest * 10.0).floor().max(0.0) / 10.0,
            });
        };
        let (w, h) = if landscape { (ph, pw) } else { (pw, ph) };
        let (board_w, board_h) = (across as f64 * square_mm, down as f64 * square_mm);
        let x0 = (w - board_w) / 2.0;
        let y0 = ((h - board_h - BELOW_BOARD_MM) / 2.0).max(MARGIN_MM);
        // Text starts under the board's left edge unless that would push it off the page.
        let text_x = x0.min(w - MARGIN_MM - widest_mm).max(MARGIN_MM);
        let text_y = y0 + board_h + GAP_MM;
        let placed = lines
            .into_iter()
            .enumerate()
            .map(|(i, l)| (text_x, text_y + i as f64 * LINE_MM, l))
            .collect();
        let ruler_y = text_y + TEXT_LINES as f64 * LINE_MM + TICK_MM;
        Ok(BoardPage {
            paper,
            width_mm: w,
            height_mm: h,
            landscape,
            inner_cols,
            inner_rows,
            square_mm,
            squares_across: across,
            squares_down: down,
            board_origin_mm: (x0, y0),
            lines: placed,
            ruler_origin_mm: (text_x, ruler_y),
        })
    }

    /// The squares to fill black, `(x, y, side)` mm from the page's top-left.
    fn black_squares(&self) -> impl Iterator<Item = (f64, f64, f64)> + '_ {
        let (x0, y0) = self.board_origin_mm;
        let s = self.square_mm;
        (0..self.squares_down).flat_map(move |r| {
            (0..self.squares_across)
                .filter(move |c| (r + c) % 2 == 0)
                .map(move |c| (x0 + c as f64 * s, y0 + r as f64 * s, s))
        })
    }

    /// The ruler's strokes as rectangles `(x, y, w, h)` mm: the line, a tick every
    /// 10 mm (taller at 0, 50 and 100).
    fn ruler_bars(&self) -> Vec<(f64, f64, f64, f64)> {
        let (x, y) = self.ruler_origin_mm;
        let half = RULE_WIDTH_MM / 2.0;
        let mut bars = vec![(x - half, y - half, RULER_MM + RULE_WIDTH_MM, RULE_WIDTH_MM)];
        for k in 0..=10 {
            let tall = if k % 5 == 0 { TICK_MM } else { TICK_MM / 2.0 };
            let tx = x + k as f64 * RULER_MM / 10.0;
            bars.push((tx - half, y - tall, RULE_WIDTH_MM, tall));
        }
        bars
    }

    /// Every text as `(x, top y, text)` mm: the lines, then the label after the
    /// ruler's right end.
    fn texts(&self) -> impl Iterator<Item = (f64, f64, &str)> {
        let (x, y) = self.ruler_origin_mm;
        let label = (x + RULER_MM + CHAR_MM, y - CHAR_MM, "100 mm");
        self.lines
            .iter()
            .map(|(x, y, t)| (*x, *y, t.as_str()))
            .chain([label])
    }

    /// The page as a one-page PDF, in points from the bottom-left as PDF wants,
    /// the squares and ruler as filled rectangles, the text in Courier.
    pub fn to_pdf(&self) -> Vec<u8> {
        use pdf_writer::{Content, Finish, Name, Pdf, Rect, Ref, Str, TextStr};
        let pt = |mm: f64| (mm / MM_PER_INCH * POINTS_PER_INCH) as f32;
        let (page_w, page_h) = (pt(self.width_mm), pt(self.height_mm));
        // Rectangles are given top-left in mm with y down; PDF's y is up.
        let rect = |c: &mut Content, (x, y, w, h): (f64, f64, f64, f64)| {
            c.rect(pt(x), page_h - pt(y + h), pt(w), pt(h));
        };
        let (catalog, tree, page_id, font, contents, info) = (
            Ref::new(1),
            Ref::new(2),
            Ref::new(3),
            Ref::new(4),
            Ref::new(5),
            Ref::new(6),
        );
        let font_name = Name(b"F1");
        let mut c = Content::new();
        c.set_fill_gray(0.0);
        for (x, y, s) in self.black_squares() {
            rect(&mut c, (x, y, s, s));
        }
        for bar in self.ruler_bars() {
            rect(&mut c, bar);
        }
        c.fill_nonzero();
        let texts = self.texts();
        for (x, y, text) in texts {
            // The bitmap font's caps fill 7 of its 8 rows: the baseline sits there.
            let baseline = y + CHAR_MM * 7.0 / 8.0;
            c.begin_text();
            c.set_font(font_name, PDF_FONT_PT as f32);
            c.next_line(pt(x), page_h - pt(baseline));
            c.show(Str(text.as_bytes()));
            c.end_text();
        }
        let mut pdf = Pdf::new();
        pdf.catalog(catalog).pages(tree);
        pdf.pages(tree).kids([page_id]).count(1);
        let mut page = pdf.page(page_id);
        page.media_box(Rect::new(0.0, 0.0, page_w, page_h));
        page.parent(tree);
        page.contents(contents);
        page.resources().fonts().pair(font_name, font);
        page.finish();
        pdf.type1_font(font)
            .base_font(Name(b"Courier"))
            .encoding_predefined(Name(b"WinAnsiEncoding"));
        pdf.stream(contents, &c.finish());
        let title = format!(
            "fishtrack chessboard {}x{} inner corners, {} mm squares, {}",
            self.inner_cols, self.inner_rows, self.square_mm, self.paper
        );
        pdf.document_info(info)
            .title(TextStr(&title))
            .creator(TextStr("fishtrack calibrate board"));
        pdf.finish()
    }

    /// The page as a greyscale image at `dpi`, 0 black and 255 white: each square's
    /// edges are the nearest pixel edges to their true place, so a square is its true
    /// size to within one pixel.
    pub fn to_pixels(&self, dpi: f64) -> (u32, u32, Vec<u8>) {
        let px = |mm: f64| (mm / MM_PER_INCH * dpi).round() as i64;
        let (w, h) = (px(self.width_mm).max(1), px(self.height_mm).max(1));
        let mut pixels = vec![255u8; (w * h) as usize];
        let mut fill = |x0: i64, y0: i64, x1: i64, y1: i64| {
            for y in y0.clamp(0, h)..y1.clamp(0, h) {
                let row = (y * w) as usize;
                pixels[row + x0.clamp(0, w) as usize..row + x1.clamp(0, w) as usize].fill(0);
            }
        };
        for (x, y, s) in self.black_squares() {
            fill(px(x), px(y), px(x + s), px(y + s));
        }
        for (x, y, bw, bh) in self.ruler_bars() {
            // At least one pixel, so that a thin stroke never vanishes.
            let (x0, y0) = (px(x), px(y));
            fill(x0, y0, px(x + bw).max(x0 + 1), px(y + bh).max(y0 + 1));
        }
        let texts = self.texts();
        let font_px = (FONT_SCALE_PX as f64 * dpi / PNG_DPI).round().max(1.0) as i64;
        for (x, y, text) in texts {
            for (k, ch) in text.chars().enumerate() {
                let glyph = font8x8::legacy::BASIC_LEGACY
                    .get(ch as usize)
                    .copied()
                    .unwrap_or(font8x8::legacy::BASIC_LEGACY[b'?' as usize]);
                let gx = px(x) + k as i64 * 8 * font_px;
                for (row, bits) in glyph.iter().enumerate() {
                    for col in 0..8 {
                        if bits & (1 << col) != 0 {
                            let (fx, fy) = (gx + col * font_px, px(y) + row as i64 * font_px);
                            fill(fx, fy, fx + font_px, fy + font_px);
                        }
                    }
                }
            }
        }
        (w as u32, h as u32, pixels)
    }

    /// The page as a greyscale PNG at [`PNG_DPI`], its resolution recorded in the file
    /// so that printing software sizes it right.
    pub fn to_png(&self) -> Result<Vec<u8>, BoardPageError> {
        let (w, h, pixels) = self.to_pixels(PNG_DPI);
        let mut out = Vec::new();
        let mut encoder = png::Encoder::new(&mut out, w, h);
        encoder.set_color(png::ColorType::Grayscale);
        encoder.set_depth(png::BitDepth::Eight);
        let per_metre = (PNG_DPI / MM_PER_INCH * 1000.0).round() as u32;
        encoder.set_pixel_dims(Some(png::PixelDimensions {
            xppu: per_metre,
            yppu: per_metre,
            unit: png::Unit::Meter,
        }));
        let mut writer = encoder.write_header()?;
        writer.write_image_data(&pixels)?;
        writer.finish()?;
        Ok(out)
    }

    /// The arguments that tell `calibrate camera` about this board.
    pub fn camera_args(&self) -> String {
        camera_args(self.inner_cols, self.inner_rows, self.square_mm)
    }
}

fn camera_args(inner_cols: u32, inner_rows: u32, square_mm: f64) -> String {
    format!("--board {inner_cols}x{inner_rows} --square {square_mm}")
}

/// What the page says, in ASCII (both fonts have it).
fn text_lines(inner_cols: u32, inner_rows: u32, square_mm: f64) -> Vec<String> {
    let (sq_c, sq_r) = (inner_cols + 1, inner_rows + 1);
    vec![
        format!(
            "Chessboard {sq_c}x{sq_r} squares of {square_mm} mm = {inner_cols}x{inner_rows} inner corners (board {} x {} mm)",
            sq_c as f64 * square_mm,
            sq_r as f64 * square_mm
        ),
        format!(
            "Calibrate with: fishtrack calibrate camera --images DIR {}",
            camera_args(inner_cols, inner_rows, square_mm)
        ),
        "Print at 100 % (actual size, no fit to page); the ruler below must measure 100 mm."
            .to_string(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_board_fits_both_papers_and_says_its_sizes() {
        let a4 = BoardPage::layout(Paper::A4, 9, 6, 25.0).unwrap();
        assert!(!a4.landscape);
        assert_eq!((a4.squares_across, a4.squares_down), (7, 10));
        let letter = BoardPage::layout(Paper::Letter, 9, 6, 25.0).unwrap();
        assert!(
            letter.landscape,
            "250 mm does not fit Letter's 279.4 with text"
        );
        assert_eq!((letter.width_mm, letter.height_mm), (279.4, 215.9));
        for page in [&a4, &letter] {
            let (x0, y0) = page.board_origin_mm;
            let right = x0 + page.squares_across as f64 * 25.0;
            let bottom = page.ruler_origin_mm.1;
            assert!(x0 >= MARGIN_MM && y0 >= MARGIN_MM, "{page:?}");
            assert!(right <= page.width_mm - MARGIN_MM, "{page:?}");
            assert!(bottom <= page.height_mm - MARGIN_MM, "{page:?}");
            assert!(page.lines[0].2.contains("10x7 squares of 25 mm"));
            assert!(page.lines[1].2.contains("--board 9x6 --square 25"));
        }
    }

    #[test]
    fn a_board_too_large_names_the_largest_square_that_fits() {
        let err = BoardPage::layout(Paper::A4, 9, 6, 30.0).unwrap_err();
        let BoardPageError::TooLarge { largest_mm, .. } = err else {
            panic!("{err}");
        };
        assert!(largest_mm < 30.0 && largest_mm > 20.0, "{largest_mm}");
        assert!(BoardPage::layout(Paper::A4, 9, 6, largest_mm).is_ok());
        assert!(BoardPage::layout(Paper::A4, 9, 6, largest_mm + 0.2).is_err());
        assert!(matches!(
            BoardPage::layout(Paper::A4, 1, 6, 25.0),
            Err(BoardPageError::Degenerate)
        ));
    }

    #[test]
    fn pixels_put_each_square_at_its_true_size() {
        let page = BoardPage::layout(Paper::A4, 9, 6, 25.0).unwrap();
        let (w, h, pix) = page.to_pixels(PNG_DPI);
        assert_eq!((w, h), (2480, 3508));
        let (x0, y0) = page.board_origin_mm;
        let to_px = |mm: f64| mm / MM_PER_INCH * PNG_DPI;
        // Along the middle of the first square row: runs of black and white.
        let y = to_px(y0 + 12.5).round() as usize;
        let start = to_px(x0).round() as usize;
        let row = &pix[y * w as usize..(y + 1) * w as usize];
        let mut runs = vec![];
        let mut x = start;
        for _ in 0..7 {
            let v = row[x];
            let from = x;
            while x < row.len() && row[x] == v {
                x += 1;
            }
            runs.push(x - from);
        }
        let want = to_px(25.0);
        for r in runs {
            assert!((r as f64 - want).abs() <= 1.0, "run {r} px, want {want}");
        }
    }
}
