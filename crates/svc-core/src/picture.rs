//! A screenshot with its annotations drawn on it, for readers that only see pixels (the tool
//! endpoint's `get_report`): the stored picture is decoded (PNG, JPEG or WebP, the decoders that
//! already check uploads), each shape of the block's `annotations` is drawn the way the widget draws
//! it (blurs first, then rectangles, arrows and pen strokes in their colour, with the same line
//! width), and the result is encoded as a JPEG. The stored blob is never changed.
//!
//! The widget burns its own annotations into the pixels it uploads; drawing them again at the same
//! places with the same width changes nothing a reader can see, while shapes sent by other clients
//! (the ingest API takes any) become visible.

use std::io::Cursor;

use crate::block::{Annotation, AnnotationKind};

/// Pictures larger than this (in pixels) are not decoded again: they are passed on as stored.
pub const DRAW_PIXELS_MAX: u64 = 16_000_000;
/// JPEG quality of an annotated picture.
pub const JPEG_QUALITY: u8 = 85;
/// The widget's annotation colour, for shapes without a colour of their own.
pub const DEFAULT_COLOR: [u8; 3] = [0xe5, 0x39, 0x35];

/// An RGB picture, 8 bits per channel, row after row.
#[derive(Debug, Clone, PartialEq)]
pub struct Picture {
    pub width: u32,
    pub height: u32,
    pub rgb: Vec<u8>,
}

/// One annotation: `{kind, points, color?}` as ingest validated it (decisions §3), in image pixels.
#[derive(Debug, Clone, PartialEq)]
pub struct Shape {
    pub kind: ShapeKind,
    pub points: Vec<(f64, f64)>,
    pub color: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShapeKind {
    Rect,
    Arrow,
    Pen,
    Blur,
}

impl ShapeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ShapeKind::Rect => "rect",
            ShapeKind::Arrow => "arrow",
            ShapeKind::Pen => "pen",
            ShapeKind::Blur => "blur",
        }
    }
}

/// The shapes of a screenshot block's `annotations` that can be drawn (a rectangle, arrow or blur
/// needs two points, a pen stroke one).
pub fn shapes(annotations: &[Annotation]) -> Vec<Shape> {
    annotations
        .iter()
        .filter_map(|shape| {
            let kind = match shape.kind {
                AnnotationKind::Rect => ShapeKind::Rect,
                AnnotationKind::Arrow => ShapeKind::Arrow,
                AnnotationKind::Pen => ShapeKind::Pen,
                AnnotationKind::Blur => ShapeKind::Blur,
            };
            let points = shape.xy().filter(|(x, y)| x.is_finite() && y.is_finite()).collect::<Vec<_>>();
            let enough = if kind == ShapeKind::Pen { !points.is_empty() } else { points.len() >= 2 };
            enough.then(|| Shape { kind, points, color: shape.color.clone() })
        })
        .collect()
}

/// `#rgb` or `#rrggbb`; anything else is `None`.
pub fn parse_color(text: &str) -> Option<[u8; 3]> {
    let hex = text.trim().strip_prefix('#')?;
    let digit = |i: usize| u8::from_str_radix(hex.get(i..i + 1)?, 16).ok();
    match hex.len() {
        3 => Some([digit(0)? * 17, digit(1)? * 17, digit(2)? * 17]),
        6 => Some([digit(0)? * 16 + digit(1)?, digit(2)? * 16 + digit(3)?, digit(4)? * 16 + digit(5)?]),
        _ => None,
    }
}

/// Decodes a stored screenshot (`image/png`, `image/jpeg` or `image/webp`) into RGB, over white
/// where it is transparent. `None` when it does not decode or is larger than [`DRAW_PIXELS_MAX`].
pub fn decode(mime: &str, data: &[u8]) -> Option<Picture> {
    let (width, height) = crate::media::image_dimensions(data).map(|(w, h)| (w as u32, h as u32))?;
    if u64::from(width) * u64::from(height) > DRAW_PIXELS_MAX {
        return None;
    }
    let pixels = (width * height) as usize;
    let (channels, raw) = match mime.split(';').next().unwrap_or_default().trim() {
        "image/png" => {
            let mut decoder = png::Decoder::new(Cursor::new(data));
            decoder.set_transformations(png::Transformations::normalize_to_color8());
            let mut reader = decoder.read_info().ok()?;
            let mut buf = vec![0; reader.output_buffer_size()?];
            let info = reader.next_frame(&mut buf).ok()?;
            buf.truncate(info.buffer_size());
            let channels = match info.color_type {
                png::ColorType::Grayscale => 1,
                png::ColorType::GrayscaleAlpha => 2,
                png::ColorType::Rgb => 3,
                png::ColorType::Rgba => 4,
                png::ColorType::Indexed => return None,
            };
            (channels, buf)
        }
        "image/jpeg" => {
            use zune_jpeg::zune_core::colorspace::ColorSpace;
            use zune_jpeg::zune_core::options::DecoderOptions;
            let options = DecoderOptions::default().jpeg_set_out_colorspace(ColorSpace::RGB);
            let mut decoder = zune_jpeg::JpegDecoder::new_with_options(Cursor::new(data), options);
            let buf = decoder.decode().ok()?;
            (decoder.output_colorspace()?.num_components(), buf)
        }
        "image/webp" => {
            let mut decoder = image_webp::WebPDecoder::new(Cursor::new(data)).ok()?;
            let channels = if decoder.has_alpha() { 4 } else { 3 };
            let mut buf = vec![0; decoder.output_buffer_size()?];
            decoder.read_image(&mut buf).ok()?;
            (channels, buf)
        }
        _ => return None,
    };
    if raw.len() < pixels * channels {
        return None;
    }
    let mut rgb = Vec::with_capacity(pixels * 3);
    for px in raw.chunks_exact(channels).take(pixels) {
        let (color, alpha) = match channels {
            1 => ([px[0]; 3], 255),
            2 => ([px[0]; 3], px[1]),
            3 => ([px[0], px[1], px[2]], 255),
            _ => ([px[0], px[1], px[2]], px[3]),
        };
        let a = u32::from(alpha);
        rgb.extend(color.map(|c| ((u32::from(c) * a + 255 * (255 - a) + 127) / 255) as u8));
    }
    Some(Picture { width, height, rgb })
}

impl Picture {
    /// The widget's line width for a picture this wide.
    pub fn line_width(&self) -> f64 {
        (f64::from(self.width) / 400.0).round().max(3.0)
    }

    /// Draws every shape: blurs first (they hide what is under them), then the marks on top.
    pub fn draw(&mut self, shapes: &[Shape]) {
        for shape in shapes.iter().filter(|s| s.kind == ShapeKind::Blur) {
            let (x, y, w, h) = bounds(&shape.points[..2]);
            self.blur(x, y, w, h);
        }
        let width = self.line_width();
        for shape in shapes.iter().filter(|s| s.kind != ShapeKind::Blur) {
            let color = shape.color.as_deref().and_then(parse_color).unwrap_or(DEFAULT_COLOR);
            let p = &shape.points;
            match shape.kind {
                ShapeKind::Rect => {
                    let (x, y, w, h) = bounds(&p[..2]);
                    let corners = [(x, y), (x + w, y), (x + w, y + h), (x, y + h), (x, y)];
                    for pair in corners.windows(2) {
                        self.segment(pair[0], pair[1], width, color);
                    }
                }
                ShapeKind::Arrow => {
                    let ((x1, y1), (x2, y2)) = (p[0], p[1]);
                    let angle = (y2 - y1).atan2(x2 - x1);
                    let head = width * 5.0;
                    self.segment((x1, y1), (x2, y2), width, color);
                    for side in [-0.45f64, 0.45] {
                        let tip = (x2 - head * (angle + side).cos(), y2 - head * (angle + side).sin());
                        self.segment(tip, (x2, y2), width, color);
                    }
                }
                ShapeKind::Pen if p.len() == 1 => self.segment(p[0], p[0], width, color),
                ShapeKind::Pen => {
                    for pair in p.windows(2) {
                        self.segment(pair[0], pair[1], width, color);
                    }
                }
                ShapeKind::Blur => {}
            }
        }
    }

    /// A line of `width` pixels with round ends, its edge smoothed over one pixel.
    fn segment(&mut self, a: (f64, f64), b: (f64, f64), width: f64, color: [u8; 3]) {
        let half = width / 2.0;
        let reach = half + 1.0;
        let (Some((x0, x1)), Some((y0, y1))) = (
            self.span(a.0.min(b.0) - reach, a.0.max(b.0) + reach, self.width),
            self.span(a.1.min(b.1) - reach, a.1.max(b.1) + reach, self.height),
        ) else {
            return;
        };
        let (dx, dy) = (b.0 - a.0, b.1 - a.1);
        let length2 = dx * dx + dy * dy;
        for y in y0..y1 {
            for x in x0..x1 {
                // The distance from the pixel's centre to the segment.
                let (px, py) = (f64::from(x) + 0.5, f64::from(y) + 0.5);
                let t =
                    if length2 > 0.0 { (((px - a.0) * dx + (py - a.1) * dy) / length2).clamp(0.0, 1.0) } else { 0.0 };
                let (cx, cy) = (a.0 + t * dx - px, a.1 + t * dy - py);
                let coverage = (half + 0.5 - (cx * cx + cy * cy).sqrt()).clamp(0.0, 1.0);
                if coverage > 0.0 {
                    self.blend(x, y, color, coverage);
                }
            }
        }
    }

    /// The whole pixels from `from` to `to` within `0..size`, or `None` when none are.
    fn span(&self, from: f64, to: f64, size: u32) -> Option<(u32, u32)> {
        let start = from.floor().max(0.0);
        let end = to.ceil().min(f64::from(size));
        (start < end).then_some((start as u32, end as u32))
    }

    fn blend(&mut self, x: u32, y: u32, color: [u8; 3], coverage: f64) {
        let at = ((y * self.width + x) * 3) as usize;
        for (i, c) in color.iter().enumerate() {
            let old = f64::from(self.rgb[at + i]);
            self.rgb[at + i] = (old + (f64::from(*c) - old) * coverage).round() as u8;
        }
    }

    /// Blurs a region for good: each cell of about a fortieth of the picture's shorter side (at
    /// least 16 pixels) becomes its average colour, as the widget's blur leaves no detail either.
    fn blur(&mut self, x: f64, y: f64, w: f64, h: f64) {
        let (Some((x0, x1)), Some((y0, y1))) = (self.span(x, x + w, self.width), self.span(y, y + h, self.height))
        else {
            return;
        };
        let cell = ((f64::from(self.width.min(self.height)) / 40.0).round() as u32).max(16);
        for cy in (y0..y1).step_by(cell as usize) {
            for cx in (x0..x1).step_by(cell as usize) {
                let (ex, ey) = ((cx + cell).min(x1), (cy + cell).min(y1));
                let mut sum = [0u64; 3];
                for yy in cy..ey {
                    for xx in cx..ex {
                        let at = ((yy * self.width + xx) * 3) as usize;
                        for (i, s) in sum.iter_mut().enumerate() {
                            *s += u64::from(self.rgb[at + i]);
                        }
                    }
                }
                let n = u64::from((ex - cx) * (ey - cy));
                let mean = sum.map(|s| (s / n) as u8);
                for yy in cy..ey {
                    for xx in cx..ex {
                        let at = ((yy * self.width + xx) * 3) as usize;
                        self.rgb[at..at + 3].copy_from_slice(&mean);
                    }
                }
            }
        }
    }

    /// The picture as a baseline JPEG.
    pub fn to_jpeg(&self) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        let (width, height) = (u16::try_from(self.width).ok()?, u16::try_from(self.height).ok()?);
        jpeg_encoder::Encoder::new(&mut out, JPEG_QUALITY)
            .encode(&self.rgb, width, height, jpeg_encoder::ColorType::Rgb)
            .ok()?;
        Some(out)
    }
}

/// `(x, y, width, height)` of the box two corner points span, as the widget reads them.
fn bounds(points: &[(f64, f64)]) -> (f64, f64, f64, f64) {
    let ((x1, y1), (x2, y2)) = (points[0], points[1]);
    (x1.min(x2), y1.min(y2), (x2 - x1).abs(), (y2 - y1).abs())
}

/// The stored screenshot with `shapes` drawn on it, as a JPEG; `None` when there is nothing to
/// draw or the picture cannot be decoded (the caller then sends it as stored).
pub fn annotated(mime: &str, data: &[u8], shapes: &[Shape]) -> Option<Vec<u8>> {
    if shapes.is_empty() {
        return None;
    }
    let mut picture = decode(mime, data)?;
    picture.draw(shapes);
    picture.to_jpeg()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn png(width: u32, height: u32, color_type: png::ColorType, pixels: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut encoder = png::Encoder::new(&mut out, width, height);
        encoder.set_color(color_type);
        let mut writer = encoder.write_header().unwrap();
        writer.write_image_data(pixels).unwrap();
        writer.finish().unwrap();
        out
    }

    fn white(width: u32, height: u32) -> Picture {
        Picture { width, height, rgb: vec![255; (width * height * 3) as usize] }
    }

    fn at(p: &Picture, x: u32, y: u32) -> [u8; 3] {
        let i = ((y * p.width + x) * 3) as usize;
        [p.rgb[i], p.rgb[i + 1], p.rgb[i + 2]]
    }

    #[test]
    fn shapes_are_read_from_the_annotations_and_colors_parsed() {
        let list: Vec<Annotation> = serde_json::from_value(json!([
            {"kind": "rect", "points": [[1, 2], [30, 40]], "color": "#00ff00"},
            {"kind": "pen", "points": [[5, 5]]},
            {"kind": "arrow", "points": [[5, 5]]},
            {"kind": "blur", "points": [[0, 0], [10.5, 10]]}
        ]))
        .unwrap();
        let read = shapes(&list);
        assert_eq!(read.iter().map(|s| s.kind).collect::<Vec<_>>(), [ShapeKind::Rect, ShapeKind::Pen, ShapeKind::Blur]);
        assert_eq!(read[0].points, [(1.0, 2.0), (30.0, 40.0)]);
        assert_eq!(read[0].color.as_deref(), Some("#00ff00"));
        assert!(shapes(&[]).is_empty());
        assert_eq!(parse_color("#00ff00"), Some([0, 255, 0]));
        assert_eq!(parse_color("#f0a"), Some([255, 0, 170]));
        for bad in ["red", "#12345", "#gggggg", "", "#"] {
            assert_eq!(parse_color(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_rectangle_is_drawn_as_its_outline_in_its_color() {
        let mut p = white(100, 80);
        p.draw(&[Shape {
            kind: ShapeKind::Rect,
            points: vec![(60.0, 50.0), (20.0, 10.0)],
            color: Some("#0000ff".into()),
        }]);
        assert_eq!(p.line_width(), 3.0);
        assert_eq!(at(&p, 20, 30), [0, 0, 255], "the left side");
        assert_eq!(at(&p, 40, 10), [0, 0, 255], "the top side");
        assert_eq!(at(&p, 60, 30), [0, 0, 255], "the right side");
        assert_eq!(at(&p, 40, 30), [255, 255, 255], "inside stays");
        assert_eq!(at(&p, 5, 5), [255, 255, 255], "outside stays");
    }

    #[test]
    fn arrows_pens_and_shapes_off_the_picture() {
        let mut p = white(200, 100);
        p.draw(&[
            Shape { kind: ShapeKind::Arrow, points: vec![(10.0, 50.0), (150.0, 50.0)], color: None },
            Shape {
                kind: ShapeKind::Pen,
                points: vec![(10.0, 90.0), (50.0, 90.0), (90.0, 90.0)],
                color: Some("nope".into()),
            },
            Shape { kind: ShapeKind::Rect, points: vec![(-500.0, -500.0), (1e6, 1e6)], color: None },
        ]);
        assert_eq!(at(&p, 80, 50), DEFAULT_COLOR, "the arrow's shaft");
        assert_eq!(at(&p, 142, 46), DEFAULT_COLOR, "its head");
        assert_eq!(at(&p, 70, 90), DEFAULT_COLOR, "the pen stroke, in the default colour");
        assert_eq!(at(&p, 80, 70), [255, 255, 255]);
    }

    #[test]
    fn a_blur_leaves_no_detail() {
        // A checkerboard of one-pixel squares: blurred, every pixel is the same grey.
        let mut p = white(64, 64);
        for y in 0..64 {
            for x in 0..64 {
                if (x + y) % 2 == 0 {
                    let i = ((y * 64 + x) * 3) as usize;
                    p.rgb[i..i + 3].copy_from_slice(&[0, 0, 0]);
                }
            }
        }
        let before = p.clone();
        p.draw(&[Shape { kind: ShapeKind::Blur, points: vec![(32.0, 32.0), (0.0, 0.0)], color: None }]);
        for y in 0..32 {
            for x in 0..32 {
                assert_eq!(at(&p, x, y), [127, 127, 127], "({x}, {y})");
            }
        }
        assert_eq!(at(&p, 40, 40), at(&before, 40, 40), "outside the box nothing changes");
    }

    #[test]
    fn every_stored_format_decodes_and_the_result_is_a_jpeg() {
        // A 2x1 RGBA PNG: an opaque red pixel and a transparent one (over white).
        let rgba = png(2, 1, png::ColorType::Rgba, &[255, 0, 0, 255, 0, 0, 0, 0]);
        let decoded = decode("image/png", &rgba).unwrap();
        assert_eq!(decoded.rgb, [255, 0, 0, 255, 255, 255]);
        let gray = png(1, 1, png::ColorType::Grayscale, &[10]);
        assert_eq!(decode("image/png", &gray).unwrap().rgb, [10, 10, 10]);

        let mut webp = Vec::new();
        image_webp::WebPEncoder::new(&mut webp)
            .encode(&[0, 128, 255, 0, 128, 255], 2, 1, image_webp::ColorType::Rgb8)
            .unwrap();
        assert_eq!(decode("image/webp", &webp).unwrap().rgb, [0, 128, 255, 0, 128, 255]);

        let shapes = [Shape { kind: ShapeKind::Rect, points: vec![(4.0, 4.0), (40.0, 30.0)], color: None }];
        let source = png(64, 48, png::ColorType::Rgb, &[200; 64 * 48 * 3]);
        let jpeg = annotated("image/png", &source, &shapes).expect("annotated");
        assert!(jpeg.starts_with(&[0xFF, 0xD8, 0xFF]));
        let again = decode("image/jpeg", &jpeg).unwrap();
        assert_eq!((again.width, again.height), (64, 48));
        let red = at(&again, 4, 20);
        assert!(red[0] > 180 && red[1] < 110 && red[2] < 110, "the rectangle survives JPEG: {red:?}");
        let grey = at(&again, 20, 20);
        assert!(grey.iter().all(|c| c.abs_diff(200) < 12), "{grey:?}");

        assert_eq!(annotated("image/png", &source, &[]), None, "nothing to draw: sent as stored");
        assert_eq!(annotated("image/png", b"not a png", &shapes), None);
        assert_eq!(decode("image/gif", &source), None);
    }
}
