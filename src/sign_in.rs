//! Signing in at a table: the link a seat or a judge opens and its QR code.
//!
//! A link is `BASE/games/GAME/table#token=TOKEN`. The token rides in the
//! fragment, which a browser never sends: it reaches no request line, no
//! proxy's or server's log and no `Referer`. The page posts it once to
//! `/api/session`, gets the HttpOnly cookie back and drops the fragment
//! from the address bar (`server::page`).
//!
//! The codes are drawn here, from the link alone: as text in half blocks
//! for a terminal, as SVG for the API's answer and the printed sheet, and
//! the sheet itself (HTML for A4, one card per seat and judge). Nothing
//! here stores anything: a token is shown once, when it is issued, and the
//! store keeps only its hash, so a code cannot be drawn again later.

use qrcode::render::unicode::Dense1x2;
use qrcode::{Color, EcLevel, QrCode};

/// Where the links start: `http://HOST[:PORT][/PATH]` or the same with
/// `https://` (a TLS proxy in front of `arbiter serve`), with no trailing
/// `/`, no user or password, no query and no fragment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Base(String);

impl Base {
    /// Checks `text` as a base. A user or password would be printed on
    /// every sheet; a query or fragment would break the link.
    pub fn parse(text: &str) -> Result<Base, String> {
        let bad = |why: &str| {
            Err(format!(
                "{why}: a base is http://HOST[:PORT][/PATH] or https://..., e.g. http://192.168.1.20:7878, not {text:?}"
            ))
        };
        let Some((scheme, rest)) = text.split_once("://") else {
            return bad("no http:// or https://");
        };
        if scheme != "http" && scheme != "https" {
            return bad("only http and https");
        }
        let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        if authority.contains('@') {
            return bad("no user or password (they would be printed on every sheet)");
        }
        let (host, port) = match authority.rsplit_once(':') {
            // A bracketed IPv6 address has colons of its own.
            Some((h, p)) if !p.contains(']') => (h, Some(p)),
            _ => (authority, None),
        };
        let host_ok = match host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
            Some(v6) => !v6.is_empty() && v6.bytes().all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.'),
            None => {
                !host.is_empty()
                    && !host.starts_with(['.', '-'])
                    && host.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-')
            }
        };
        if !host_ok {
            return bad("no host name or address");
        }
        if let Some(p) = port
            && !(p.bytes().all(|b| b.is_ascii_digit()) && p.parse::<u16>().is_ok_and(|p| p > 0))
        {
            return bad("the port is a number from 1 to 65535");
        }
        let path_ok = path.bytes().all(|b| b.is_ascii_alphanumeric() || b"/-._~%".contains(&b));
        if !path_ok {
            return bad("the path holds a character a link cannot (a query or fragment, a space)");
        }
        Ok(Base(format!("{scheme}://{authority}{}", path.trim_end_matches('/'))))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether only this machine reaches it (a phone at a table does not).
    pub fn is_loopback(&self) -> bool {
        let rest = self.0.split_once("://").map_or("", |(_, r)| r);
        let authority = rest.split('/').next().unwrap_or_default();
        let host = authority.rsplit_once(':').filter(|(_, p)| !p.contains(']')).map_or(authority, |(h, _)| h);
        host == "localhost" || host == "[::1]" || host.starts_with("127.")
    }
}

impl std::fmt::Display for Base {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The link that signs `token` in at `game`'s table page. A game's name is
/// letters, digits, `.`, `-` and `_`, and a token is hex: neither needs
/// escaping.
pub fn table_link(base: &Base, game: &str, token: &str) -> String {
    format!("{base}/games/{game}/table#token={token}")
}

/// Light modules around the code, as the QR specification asks.
const QUIET_ZONE: usize = 4;

/// The code's modules, quiet zone included, row by row (true: dark).
/// Error correction level M: a code on paper survives a crease or a stain
/// on 15% of it, and a link of some 120 characters still fits in a code a
/// phone reads at arm's length from a screen.
pub fn modules(text: &str) -> Vec<Vec<bool>> {
    let code = QrCode::with_error_correction_level(text, EcLevel::M).expect("a link is far below a QR code's capacity");
    let width = code.width();
    let colors = code.to_colors();
    let side = width + 2 * QUIET_ZONE;
    (0..side)
        .map(|y| {
            (0..side)
                .map(|x| {
                    let inside =
                        (QUIET_ZONE..QUIET_ZONE + width).contains(&x) && (QUIET_ZONE..QUIET_ZONE + width).contains(&y);
                    inside && colors[(y - QUIET_ZONE) * width + (x - QUIET_ZONE)] == Color::Dark
                })
                .collect()
        })
        .collect()
}

/// The code in half blocks, two modules to a character cell: a dark module
/// is drawn with the terminal's ink. `colours` wraps each line in black on
/// white (ANSI), so the code reads the same way round on a dark terminal:
/// a scanner expects dark modules on a light ground.
pub fn text_code(text: &str, colours: bool) -> String {
    let code = QrCode::with_error_correction_level(text, EcLevel::M).expect("a link is far below a QR code's capacity");
    let drawn =
        code.render::<Dense1x2>().dark_color(Dense1x2::Dark).light_color(Dense1x2::Light).quiet_zone(true).build();
    if !colours {
        return drawn;
    }
    drawn.lines().map(|line| format!("\x1b[30;107m{line}\x1b[0m")).collect::<Vec<_>>().join("\n")
}

/// The code as SVG: one square per module in a viewBox of modules, so it
/// scales to any size (the sheet draws it 60 mm wide), dark on white.
pub fn svg_code(text: &str) -> String {
    let rows = modules(text);
    let side = rows.len();
    let mut path = String::new();
    for (y, row) in rows.iter().enumerate() {
        // One rectangle per run of dark modules in a row.
        let mut x = 0;
        while x < side {
            if !row[x] {
                x += 1;
                continue;
            }
            let start = x;
            while x < side && row[x] {
                x += 1;
            }
            path.push_str(&format!("M{start} {y}h{}v1H{start}z", x - start));
        }
    }
    format!(
        concat!(
            r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {n} {n}" width="{px}" height="{px}" shape-rendering="crispEdges">"#,
            r##"<rect width="{n}" height="{n}" fill="#fff"/><path fill="#000" d="{path}"/></svg>"##
        ),
        n = side,
        px = side * 8,
        path = path
    )
}

/// One card of a sheet: who it signs in, and where.
#[derive(Debug, Clone)]
pub struct Card {
    /// The player's or the judge's name.
    pub name: String,
    /// "seat p1" or "judge".
    pub role: String,
    pub link: String,
    /// When the token stops working (RFC 3339), if it does.
    pub expires: Option<String>,
}

/// A sheet to print for a round: `title` on top, one card per seat and
/// judge, each with the name, the role, the code 60 mm wide (a phone reads
/// it from across a table) and the link in words; six cards to an A4
/// page, none split across two. Self-contained: it loads nothing.
pub fn sheet_html(title: &str, cards: &[Card]) -> String {
    let mut html = String::from(concat!(
        "<!doctype html>\n<html lang=\"en\">\n<meta charset=\"utf-8\">\n",
        "<meta name=\"referrer\" content=\"no-referrer\">\n",
    ));
    html.push_str(&format!("<title>{}</title>\n", escape(title)));
    html.push_str(concat!(
        "<style>\n",
        "@page { size: A4; margin: 10mm }\n",
        "body { font-family: system-ui, sans-serif; margin: 0; color: #000; background: #fff }\n",
        "h1 { font-size: 12pt; margin: 0 0 4mm }\n",
        ".cards { display: grid; grid-template-columns: 1fr 1fr; gap: 4mm }\n",
        ".card { border: 0.3mm dashed #777; padding: 3mm 4mm; text-align: center; break-inside: avoid }\n",
        ".card h2 { font-size: 16pt; margin: 0 }\n",
        ".card p { margin: 1mm 0 }\n",
        ".card svg { display: block; width: 60mm; height: 60mm; margin: 2mm auto }\n",
        ".link { font: 6.5pt ui-monospace, monospace; overflow-wrap: anywhere; text-align: left }\n",
        ".small { font-size: 8pt; color: #333 }\n",
        "</style>\n",
    ));
    html.push_str(&format!("<h1>{}</h1>\n<div class=\"cards\">\n", escape(title)));
    for card in cards {
        let expires = match &card.expires {
            Some(t) => format!("works until {t}"),
            None => "does not expire".to_string(),
        };
        // A judge rules at the table; a seat records its moves.
        let does = if card.role == "judge" { "rule" } else { "record" };
        html.push_str(&format!(
            concat!(
                "<section class=\"card\">\n<h2>{name}</h2>\n<p>{role} · {title}</p>\n{svg}\n",
                "<p class=\"small\">Scan with the phone's camera to {does} at this table as {name}; {expires}.</p>\n",
                "<p class=\"link\">{link}</p>\n</section>\n"
            ),
            does = does,
            name = escape(&card.name),
            role = escape(&card.role),
            title = escape(title),
            svg = svg_code(&card.link),
            expires = escape(&expires),
            link = escape(&card.link),
        ));
    }
    html.push_str("</div>\n</html>\n");
    html
}

/// Text for HTML: a player's name may hold any character.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bases_are_checked_and_trimmed() {
        for (text, base) in [
            ("http://127.0.0.1:7878", "http://127.0.0.1:7878"),
            ("http://127.0.0.1:7878/", "http://127.0.0.1:7878"),
            ("https://arbiter.example/open-2026/", "https://arbiter.example/open-2026"),
            ("http://[::1]:7878", "http://[::1]:7878"),
            ("http://table-pc.local", "http://table-pc.local"),
        ] {
            assert_eq!(Base::parse(text).unwrap().as_str(), base, "{text}");
        }
        for bad in [
            "",
            "127.0.0.1:7878",
            "ftp://a",
            "http://",
            "http://:7878",
            "http://a:0",
            "http://a:70000",
            "http://a:x",
            "http://user:pw@a",
            "http://a/?x=1",
            "http://a/#t",
            "http://a b",
            "http://a/p q",
            "http://-a",
            "http://[]",
            "javascript://a",
        ] {
            assert!(Base::parse(bad).is_err(), "{bad:?} is refused");
        }
        assert!(Base::parse("http://127.0.0.1:7878").unwrap().is_loopback());
        assert!(Base::parse("http://localhost").unwrap().is_loopback());
        assert!(Base::parse("http://[::1]:1").unwrap().is_loopback());
        assert!(!Base::parse("http://192.168.1.20:7878").unwrap().is_loopback());
    }

    #[test]
    fn a_link_carries_the_token_in_its_fragment() {
        let base = Base::parse("http://10.0.0.5:7878/").unwrap();
        assert_eq!(table_link(&base, "r3t12", "ab12"), "http://10.0.0.5:7878/games/r3t12/table#token=ab12");
    }

    #[test]
    fn the_text_and_the_svg_draw_the_same_modules() {
        let link = "http://10.0.0.5:7878/games/r3t12/table#token=".to_string() + &"0f".repeat(32);
        let rows = modules(&link);
        // Half blocks: each character is two rows, top and bottom.
        let text = text_code(&link, false);
        let mut from_text = Vec::new();
        for line in text.lines() {
            let cells: Vec<(bool, bool)> = line
                .chars()
                .map(|c| match c {
                    ' ' => (false, false),
                    '\u{2580}' => (true, false),
                    '\u{2584}' => (false, true),
                    '\u{2588}' => (true, true),
                    other => panic!("{other:?}"),
                })
                .collect();
            from_text.push(cells.iter().map(|c| c.0).collect::<Vec<_>>());
            from_text.push(cells.iter().map(|c| c.1).collect::<Vec<_>>());
        }
        from_text.truncate(rows.len());
        assert_eq!(from_text, rows);
        let svg = svg_code(&link);
        assert!(svg.starts_with("<svg ") && svg.contains(&format!("viewBox=\"0 0 {0} {0}\"", rows.len())));
        let dark: usize = rows.iter().flatten().filter(|d| **d).count();
        let drawn: usize = svg
            .split('M')
            .skip(1)
            .map(|run| run.split('h').nth(1).unwrap().split('v').next().unwrap().parse::<usize>().unwrap())
            .sum();
        assert_eq!(drawn, dark, "every dark module, and only those, is drawn");
        let coloured = text_code(&link, true);
        assert!(coloured.lines().all(|l| l.starts_with("\x1b[30;107m") && l.ends_with("\x1b[0m")));
    }

    #[test]
    fn a_sheet_escapes_names_and_holds_one_code_per_card() {
        let base = Base::parse("http://10.0.0.5:7878").unwrap();
        let cards = vec![
            Card {
                name: "<b>Ann & Co</b>".into(),
                role: "seat p1".into(),
                link: table_link(&base, "g", "aa"),
                expires: None,
            },
            Card { name: "Dana".into(), role: "judge".into(), link: table_link(&base, "g", "bb"), expires: None },
        ];
        let html = sheet_html("Open, round 3, table 12", &cards);
        assert!(html.contains("&lt;b&gt;Ann &amp; Co&lt;/b&gt;") && !html.contains("<b>Ann"));
        assert_eq!(html.matches("<svg ").count(), 2);
        assert!(html.contains("http://10.0.0.5:7878/games/g/table#token=bb"));
        assert!(!html.contains("src=") && !html.contains("href="), "loads nothing");
    }
}
