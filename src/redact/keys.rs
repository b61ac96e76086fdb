//! Private key blocks, which span lines: PEM (`-----BEGIN … PRIVATE KEY-----`, OpenSSH, PGP),
//! raw or inside a JSON string with `\n` escapes (GCP service-account files), and PuTTY `.ppk`.
//! Only the key material is replaced; the BEGIN/END lines stay so the reader knows what was there.

/// How far to look for the END line: real keys are a few KB.
const MAX_BLOCK: usize = 64 * 1024;

/// The key material of the PEM block whose `-----BEGIN` is found at or just after `from`
/// (the prefilter's keyword match, which may be a keyword that runs into the marker).
pub(super) fn pem_block(text: &str, from: usize) -> Option<(usize, usize)> {
    let at = marker_near(text, from, "-----BEGIN")?;
    let rest = &text[at..];
    let header_len = rest["-----BEGIN".len()..]
        .get(..60)
        .unwrap_or(&rest["-----BEGIN".len()..])
        .find("-----")?;
    let header = &rest["-----BEGIN".len().."-----BEGIN".len() + header_len];
    let header = header.trim();
    if !(header.ends_with("PRIVATE KEY") || header.ends_with("PRIVATE KEY BLOCK")) {
        return None;
    }
    let body_start = at + "-----BEGIN".len() + header_len + "-----".len();
    let window_end = floor_char_boundary(text, body_start + MAX_BLOCK);
    let window = &text[body_start..window_end];
    let (body_end, min_b64) = match window.find("-----END") {
        Some(e) => (body_start + e, 32),
        // Cut off (a truncated paste or tool output): take the run of key material there is.
        None => (body_start + base64_run(window), 64),
    };
    let (s, e) = trim_block(text, body_start, body_end);
    is_key_material(&text[s..e], min_b64).then_some((s, e))
}

/// The `Private-Lines: N` lines of a PuTTY key file whose header is at or just after `from`.
pub(super) fn putty_private_lines(text: &str, from: usize) -> Option<(usize, usize)> {
    let at = marker_near(text, from, "Private-Lines:")?;
    let line_end = text[at..].find('\n').map_or(text.len(), |i| at + i);
    let n: usize = text[at + "Private-Lines:".len()..line_end]
        .trim()
        .parse()
        .ok()?;
    let start = (line_end + 1).min(text.len());
    let mut end = start;
    for _ in 0..n.min(256) {
        end = text[end..].find('\n').map_or(text.len(), |i| end + i + 1);
    }
    let (s, e) = trim_block(text, start, end);
    is_key_material(&text[s..e], 32).then_some((s, e))
}

/// Length of the leading run of base64 text, whitespace and `\n` escapes.
fn base64_run(s: &str) -> usize {
    s.bytes()
        .position(|b| !(b.is_ascii_alphanumeric() || b"+/=\\ \t\r\n".contains(&b)))
        .unwrap_or(s.len())
}

/// The block without surrounding whitespace and `\n` escapes, so the marker lines stay intact.
fn trim_block(text: &str, mut s: usize, mut e: usize) -> (usize, usize) {
    loop {
        let t = &text[s..e];
        if t.as_bytes().first().is_some_and(u8::is_ascii_whitespace) {
            s += 1;
        } else if t.starts_with("\\n") || t.starts_with("\\r") {
            s += 2;
        } else {
            break;
        }
    }
    loop {
        let t = &text[s..e];
        if t.as_bytes().last().is_some_and(u8::is_ascii_whitespace) {
            e -= 1;
        } else if (t.ends_with("\\n") || t.ends_with("\\r")) && e >= s + 2 {
            e -= 2;
        } else {
            break;
        }
    }
    (s, e)
}

/// Mostly base64: real key material, not code that happens to sit between two marker strings.
fn is_key_material(body: &str, min_b64: usize) -> bool {
    let cleaned = body.replace("\\n", "").replace("\\r", "");
    let visible = cleaned.bytes().filter(|b| !b.is_ascii_whitespace()).count();
    let b64 = cleaned
        .bytes()
        .filter(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='))
        .count();
    b64 >= min_b64 && b64 * 100 >= visible * 90
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Where `marker` starts, if it does within a keyword's length of `from`.
fn marker_near(text: &str, from: usize, marker: &str) -> Option<usize> {
    let end = floor_char_boundary(text, from + 32 + marker.len());
    text[from..end].find(marker).map(|i| from + i)
}
