//! The renderer's look: the light (direction, softness, colour, cast shadows),
//! the table's and the floor's materials, the finish of tags and coins, the
//! camera's response over time (auto-exposure, white-balance drift, vignetting,
//! defocus) and the video's compression — one serde struct, [`Look`], that
//! `vision::render` draws with. Pure.
//!
//! [`Look::default`] is the simulator's original look: every effect it did not
//! have is off, and every one it had in a fixed form (plank wood, grey-green
//! tiles, brass coins with a highlight toward table −x +y) takes its original
//! numbers, so a scenario without a `look` renders byte for byte as before.
//! [`Look::random`] draws a look from a seed, every field inside the range its
//! doc gives ([`Look::check_ranges`] says which field is outside). Domain
//! randomisation: the tracker must not depend on one table, one lamp, one camera.
//!
//! Colours are `[r, g, b]`, 0–255.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// How a scene looks (see the module docs). Every field has a default: a JSON
/// `{}` is the original look.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct Look {
    pub light: Light,
    pub table: TableLook,
    pub floor: FloorLook,
    pub tags: TagLook,
    pub coins: CoinLook,
    pub camera: CameraLook,
    pub compression: Compression,
}

/// The lamp.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Light {
    /// Where the light comes from, table frame, degrees CCW from +x, [0, 360).
    /// Sets the shadows' direction, the coins' highlight and the tags' shading.
    /// Default 135 (from table −x +y, where the original coin highlight sits).
    pub azimuth_deg: f64,
    /// The light's height above the table plane, degrees, [30, 85]: low light
    /// casts long shadows. Default 60.
    pub elevation_deg: f64,
    /// Fraction of the light an item's (or the arm's) shadow takes away, [0, 0.6].
    /// Default 0: no cast shadows.
    pub shadow_strength: f64,
    /// Width of the shadows' soft edge (a large lamp's penumbra), mm, [1, 15].
    pub shadow_softness_mm: f64,
    /// Colour temperature, kelvin, [2700, 7500]: below 5500 warmer (redder), above
    /// cooler (bluer), in what the camera records. Default 5500: neutral.
    pub kelvin: f64,
    /// Overall brightness, [0.75, 1.2]. Default 1.
    pub intensity: f64,
    /// How much darker the table's far side from the lamp is than the near one,
    /// [0, 0.3]. Default 0: evenly lit.
    pub falloff: f64,
}

impl Default for Light {
    fn default() -> Self {
        Light {
            azimuth_deg: 135.0,
            elevation_deg: 60.0,
            shadow_strength: 0.0,
            shadow_softness_mm: 4.0,
            kelvin: NEUTRAL_KELVIN,
            intensity: 1.0,
            falloff: 0.0,
        }
    }
}

/// The colour temperature that leaves colours as they are.
pub const NEUTRAL_KELVIN: f64 = 5500.0;

/// What the table top is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum TableMaterial {
    /// Wooden planks with grain and dark seams (the original).
    #[default]
    Planks,
    /// Smooth laminate: an even colour with a faint print of wood.
    Laminate,
    /// Woven cloth: a fine weave and soft folds.
    Cloth,
    /// Felt: matte, fine fibres, slow mottling.
    Felt,
}

/// The table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TableLook {
    pub material: TableMaterial,
    /// Base colour. Default `[190, 140, 88]`, the original honey wood. Random
    /// looks keep it low in saturation for cloth and felt, so no tag's hue hides
    /// in it.
    pub colour: [u8; 3],
    /// Plank width (planks, laminate), mm, [70, 220]. Default 140.
    pub plank_mm: f64,
    /// Planks run along table x (the original) or along y.
    pub planks_along_x: bool,
    /// Grain contrast, ×, [0.3, 2]. Default 1.
    pub grain: f64,
    /// Grain frequency, ×, [0.5, 2]. Default 1.
    pub grain_scale: f64,
    /// Height of the table's visible side (its edge band seen from the camera),
    /// mm, [0, 45]. Default 0: none (the original draws the floor right there).
    pub side_mm: f64,
}

impl Default for TableLook {
    fn default() -> Self {
        TableLook {
            material: TableMaterial::Planks,
            colour: [190, 140, 88],
            plank_mm: 140.0,
            planks_along_x: true,
            grain: 1.0,
            grain_scale: 1.0,
            side_mm: 0.0,
        }
    }
}

/// What the floor beyond the table's edge is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum FloorMaterial {
    /// Square tiles with grout (the original).
    #[default]
    Tiles,
    /// Carpet: fibre noise and slow mottling.
    Carpet,
    /// Floorboards.
    Wood,
}

/// The floor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FloorLook {
    pub material: FloorMaterial,
    /// Base colour. Default `[80, 88, 75]`, the original grey-green.
    pub colour: [u8; 3],
    /// Grout (tiles) or seam (wood) colour. Default `[45, 45, 40]`.
    pub grout: [u8; 3],
    /// Tile or board size, mm, [150, 600]. Default 300.
    pub tile_mm: f64,
    /// Brightness difference of neighbouring tiles, [0, 0.2]. Default 0.06.
    pub checker: f64,
    /// How far below the table top the floor lies, mm, [600, 800]. Default 750.
    pub depth_mm: f64,
}

impl Default for FloorLook {
    fn default() -> Self {
        FloorLook {
            material: FloorMaterial::Tiles,
            colour: [80, 88, 75],
            grout: [45, 45, 40],
            tile_mm: 300.0,
            checker: 0.06,
            depth_mm: 750.0,
        }
    }
}

/// The printed tags (fish).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TagLook {
    /// Hue shift of each player's colour (player 1 to 4), degrees, [−7, 7]:
    /// printers differ, yet the four palette hues stay at least 50° apart (blue
    /// and purple, the nearest pair, are 66° apart).
    pub hue_shift_deg: [f64; 4],
    /// Saturation, ×, [0.75, 1.1]. Default 1.
    pub saturation: f64,
    /// Brightness, ×, [0.8, 1.1]. Default 1.
    pub value: f64,
    /// How much a tag's brightness follows its tilt toward the light, [0, 0.35]
    /// (tags are never quite flat). Default 0.
    pub diffuse: f64,
    /// Glossy highlight, [0, 0.45]: where the lamp's reflection meets the camera a
    /// tag washes out toward white. Default 0.
    pub specular: f64,
    /// Sharpness of that highlight (Phong exponent), [8, 60]. Default 20.
    pub shininess: f64,
    /// Brightness of a tag's side face relative to its top, [0.4, 0.7]. Default 0.55.
    pub side_shade: f64,
    /// Stroke width of the printed number, ×, [0.7, 1.4]. Default 1.
    pub ink_weight: f64,
}

impl Default for TagLook {
    fn default() -> Self {
        TagLook {
            hue_shift_deg: [0.0; 4],
            saturation: 1.0,
            value: 1.0,
            diffuse: 0.0,
            specular: 0.0,
            shininess: 20.0,
            side_shade: 0.55,
            ink_weight: 1.0,
        }
    }
}

/// The coins.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CoinLook {
    /// From brass (0, the original) to copper (1), [0, 1].
    pub copper: f64,
    /// Tarnish: the face darkened toward brown-green, [0, 0.5]. Default 0.
    pub tarnish: f64,
    /// Brightness of the highlight toward the light, ×, [1, 1.4]. Default 1.08.
    pub highlight: f64,
}

impl Default for CoinLook {
    fn default() -> Self {
        CoinLook {
            copper: 0.0,
            tarnish: 0.0,
            highlight: 1.08,
        }
    }
}

/// The camera's response over time and its optics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct CameraLook {
    /// Auto-exposure: the fraction of the way to a mid-grey frame mean the gain
    /// moves each frame, [0, 0.25] (an arm coming in darkens the table). Default 0: off.
    pub auto_exposure: f64,
    /// Auto white balance drift: relative amplitude of slow per-channel gain
    /// swings, [0, 0.06]. Default 0.
    pub white_balance_drift: f64,
    /// Darkening of the image corners, [0, 0.45]. Default 0.
    pub vignetting: f64,
    /// Defocus blur, Gaussian sigma in pixels at 1280 wide, [0, 1.4]. Default 0.
    pub defocus_px: f64,
}

/// Video codecs the renderer writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Codec {
    /// Motion JPEG (OpenCV's own AVI writer).
    Mjpg,
    /// MPEG-4 part 2 (FFmpeg).
    Mp4v,
    /// H.264 (FFmpeg, libx264 or OpenH264), what phones and webcams record.
    H264,
}

impl Codec {
    pub fn name(self) -> &'static str {
        match self {
            Codec::Mjpg => "mjpg",
            Codec::Mp4v => "mp4v",
            Codec::H264 => "h264",
        }
    }
}

/// How the video is compressed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct Compression {
    /// The codec; default: as the video's extension or `--codec` says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub codec: Option<Codec>,
    /// MJPG's JPEG quality, [30, 95] (higher is better); default 80. The FFmpeg
    /// codecs (mp4v, H.264) run at OpenCV's own rate (H.264: CRF 23), which
    /// Debian's OpenCV 4.6 gives no way to change, so a random look gives them none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quality: Option<f64>,
}

/// A field outside its documented range.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("look: {field} = {value} is outside [{lo}, {hi}]")]
pub struct LookRangeError {
    pub field: &'static str,
    pub value: f64,
    pub lo: f64,
    pub hi: f64,
}

/// Colour hues of cloth and felt tables a random look picks from (RGB), all low
/// in saturation: grey linen, beige, sage, slate, dark green baize, burgundy.
const CLOTH_COLOURS: &[[u8; 3]] = &[
    [178, 172, 160],
    [196, 180, 150],
    [150, 160, 135],
    [110, 118, 128],
    [60, 96, 70],
    [112, 62, 66],
];
/// Woods from pale birch to walnut (RGB).
const WOOD_COLOURS: &[[u8; 3]] = &[
    [214, 178, 128],
    [190, 140, 88],
    [168, 112, 66],
    [128, 84, 52],
    [96, 64, 44],
];
/// Laminate prints (RGB): light grey, white oak, beech, wenge.
const LAMINATE_COLOURS: &[[u8; 3]] = &[
    [200, 198, 192],
    [206, 186, 150],
    [196, 150, 108],
    [92, 74, 62],
];
/// Floors (RGB): grey tiles, terracotta, beige carpet, blue-grey carpet, oak boards.
const FLOOR_COLOURS: &[[u8; 3]] = &[
    [80, 88, 75],
    [150, 150, 146],
    [160, 92, 64],
    [170, 156, 130],
    [84, 92, 110],
    [150, 108, 70],
];

fn pick<T: Copy>(rng: &mut ChaCha8Rng, from: &[T]) -> T {
    from[rng.random_range(0..from.len())]
}

/// A colour varied by up to ±`k` of each channel.
fn vary(rng: &mut ChaCha8Rng, c: [u8; 3], k: f64) -> [u8; 3] {
    let f = rng.random_range(1.0 - k..1.0 + k);
    c.map(|v| (v as f64 * f).round().clamp(0.0, 255.0) as u8)
}

impl Look {
    /// A look drawn from `seed`: every field inside its documented range.
    pub fn random(seed: u64) -> Look {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x100C_0FF5);
        let r = &mut rng;
        let light = Light {
            azimuth_deg: r.random_range(0.0..360.0),
            elevation_deg: r.random_range(30.0..=85.0),
            shadow_strength: r.random_range(0.15..=0.6),
            shadow_softness_mm: r.random_range(1.0..=15.0),
            kelvin: r.random_range(2700.0..=7500.0),
            intensity: r.random_range(0.75..=1.2),
            falloff: r.random_range(0.0..=0.3),
        };
        let material = pick(
            r,
            &[
                TableMaterial::Planks,
                TableMaterial::Planks,
                TableMaterial::Laminate,
                TableMaterial::Cloth,
                TableMaterial::Felt,
            ],
        );
        let base = match material {
            TableMaterial::Planks => pick(r, WOOD_COLOURS),
            TableMaterial::Laminate => pick(r, LAMINATE_COLOURS),
            TableMaterial::Cloth | TableMaterial::Felt => pick(r, CLOTH_COLOURS),
        };
        let table = TableLook {
            material,
            colour: vary(r, base, 0.08),
            plank_mm: r.random_range(70.0..=220.0),
            planks_along_x: r.random_bool(0.5),
            grain: r.random_range(0.3..=2.0),
            grain_scale: r.random_range(0.5..=2.0),
            side_mm: r.random_range(0.0..=45.0),
        };
        let floor_material = pick(
            r,
            &[
                FloorMaterial::Tiles,
                FloorMaterial::Carpet,
                FloorMaterial::Wood,
            ],
        );
        let floor_colour = pick(r, FLOOR_COLOURS);
        let floor = FloorLook {
            material: floor_material,
            colour: vary(r, floor_colour, 0.1),
            grout: vary(r, [45, 45, 40], 0.3),
            tile_mm: r.random_range(150.0..=600.0),
            checker: r.random_range(0.0..=0.2),
            depth_mm: r.random_range(600.0..=800.0),
        };
        let tags = TagLook {
            hue_shift_deg: [(); 4].map(|_| r.random_range(-7.0..=7.0)),
            saturation: r.random_range(0.75..=1.1),
            value: r.random_range(0.8..=1.1),
            diffuse: r.random_range(0.0..=0.35),
            specular: r.random_range(0.0..=0.45),
            shininess: r.random_range(8.0..=60.0),
            side_shade: r.random_range(0.4..=0.7),
            ink_weight: r.random_range(0.7..=1.4),
        };
        let coins = CoinLook {
            copper: r.random_range(0.0..=1.0),
            tarnish: r.random_range(0.0..=0.5),
            highlight: r.random_range(1.0..=1.4),
        };
        let camera = CameraLook {
            auto_exposure: if r.random_bool(0.6) {
                r.random_range(0.02..=0.25)
            } else {
                0.0
            },
            white_balance_drift: r.random_range(0.0..=0.06),
            vignetting: r.random_range(0.0..=0.45),
            defocus_px: r.random_range(0.0..=1.4),
        };
        let codec = pick(r, &[Codec::H264, Codec::H264, Codec::Mjpg, Codec::Mp4v]);
        let compression = Compression {
            codec: Some(codec),
            quality: (codec == Codec::Mjpg).then(|| r.random_range(30.0..=95.0)),
        };
        Look {
            light,
            table,
            floor,
            tags,
            coins,
            camera,
            compression,
        }
    }

    /// Whether this is the original look (nothing to write into a scenario).
    pub fn is_original(&self) -> bool {
        *self == Look::default()
    }

    /// Checks every number against its documented range.
    pub fn check_ranges(&self) -> Result<(), LookRangeError> {
        let l = &self.light;
        let t = &self.table;
        let f = &self.floor;
        let g = &self.tags;
        let c = &self.coins;
        let k = &self.camera;
        let mut checks: Vec<(&'static str, f64, f64, f64)> = vec![
            ("light.azimuth_deg", l.azimuth_deg, 0.0, 360.0),
            ("light.elevation_deg", l.elevation_deg, 30.0, 85.0),
            ("light.shadow_strength", l.shadow_strength, 0.0, 0.6),
            ("light.shadow_softness_mm", l.shadow_softness_mm, 1.0, 15.0),
            ("light.kelvin", l.kelvin, 2700.0, 7500.0),
            ("light.intensity", l.intensity, 0.75, 1.2),
            ("light.falloff", l.falloff, 0.0, 0.3),
            ("table.plank_mm", t.plank_mm, 70.0, 220.0),
            ("table.grain", t.grain, 0.3, 2.0),
            ("table.grain_scale", t.grain_scale, 0.5, 2.0),
            ("table.side_mm", t.side_mm, 0.0, 45.0),
            ("floor.tile_mm", f.tile_mm, 150.0, 600.0),
            ("floor.checker", f.checker, 0.0, 0.2),
            ("floor.depth_mm", f.depth_mm, 600.0, 800.0),
            ("tags.saturation", g.saturation, 0.75, 1.1),
            ("tags.value", g.value, 0.8, 1.1),
            ("tags.diffuse", g.diffuse, 0.0, 0.35),
            ("tags.specular", g.specular, 0.0, 0.45),
            ("tags.shininess", g.shininess, 8.0, 60.0),
            ("tags.side_shade", g.side_shade, 0.4, 0.7),
            ("tags.ink_weight", g.ink_weight, 0.7, 1.4),
            ("coins.copper", c.copper, 0.0, 1.0),
            ("coins.tarnish", c.tarnish, 0.0, 0.5),
            ("coins.highlight", c.highlight, 1.0, 1.4),
            ("camera.auto_exposure", k.auto_exposure, 0.0, 0.25),
            (
                "camera.white_balance_drift",
                k.white_balance_drift,
                0.0,
                0.06,
            ),
            ("camera.vignetting", k.vignetting, 0.0, 0.45),
            ("camera.defocus_px", k.defocus_px, 0.0, 1.4),
        ];
        for h in g.hue_shift_deg {
            checks.push(("tags.hue_shift_deg", h, -7.0, 7.0));
        }
        if let Some(q) = self.compression.quality {
            checks.push(("compression.quality", q, 30.0, 95.0));
        }
        for (field, value, lo, hi) in checks {
            // NaN fails too.
            if !(lo..=hi).contains(&value) {
                return Err(LookRangeError {
                    field,
                    value,
                    lo,
                    hi,
                });
            }
        }
        Ok(())
    }

    /// A few words for a table row: materials, light colour, shadow, codec.
    pub fn summary(&self) -> String {
        if self.is_original() {
            return "original".into();
        }
        let table = match self.table.material {
            TableMaterial::Planks => "planks",
            TableMaterial::Laminate => "laminate",
            TableMaterial::Cloth => "cloth",
            TableMaterial::Felt => "felt",
        };
        let floor = match self.floor.material {
            FloorMaterial::Tiles => "tiles",
            FloorMaterial::Carpet => "carpet",
            FloorMaterial::Wood => "boards",
        };
        let codec = match (self.compression.codec, self.compression.quality) {
            (Some(c), Some(q)) => format!("{}q{q:.0}", c.name()),
            (Some(c), None) => c.name().to_string(),
            (None, _) => "-".into(),
        };
        format!(
            "{table}/{floor} {:.0}K sh{:.0}%@{:.0}° {codec}",
            self.light.kelvin,
            100.0 * self.light.shadow_strength,
            self.light.elevation_deg
        )
    }

    /// The light's colour as camera channel gains (B, G, R): 1, 1, 1 at
    /// [`NEUTRAL_KELVIN`]; warmer light lifts red and lowers blue.
    pub fn light_gains_bgr(&self) -> [f64; 3] {
        // A linear fit of the blackbody's sRGB tint over 2700–7500 K, scaled so
        // that green stays near 1 and the neutral point is exact.
        let t = ((self.light.kelvin - NEUTRAL_KELVIN) / 2800.0).clamp(-1.0, 1.0);
        let i = self.light.intensity;
        [
            i * (1.0 + 0.22 * t),
            i * (1.0 + 0.03 * t),
            i * (1.0 - 0.18 * t),
        ]
    }

    /// The unit vector toward the light, table frame (z up).
    pub fn light_direction(&self) -> [f64; 3] {
        let (a, e) = (
            self.light.azimuth_deg.to_radians(),
            self.light.elevation_deg.to_radians(),
        );
        [e.cos() * a.cos(), e.cos() * a.sin(), e.sin()]
    }
}
