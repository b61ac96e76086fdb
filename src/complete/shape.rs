//! What a raw model answer becomes before the editor sees it: one line when the cursor is
//! inside a line, no trailing blank lines, and never text that already follows the cursor
//! (FIM models — chat models more so — often repeat the closing line or the rest of the line).

/// Shape `raw` for insertion at the cursor. `line_rest` is what follows the cursor on its
/// line, `suffix` everything after the cursor in the window.
pub fn shape(raw: &str, line_rest: &str, suffix: &str, single_line: bool) -> String {
    let mut s = raw.replace("\r\n", "\n");
    if single_line {
        if let Some(nl) = s.find('\n') {
            s.truncate(nl);
        }
        return strip_rest(s, line_rest);
    }
    let s = strip_rest_of_first_line(s, line_rest);
    strip_suffix_lines(s.trim_end_matches([' ', '\t', '\n']), suffix)
        .trim_end_matches([' ', '\t', '\n'])
        .to_string()
}

/// The rest of the line repeated at the end of a one-line answer (`foo(a, b);` before `);`).
/// A single repeated closer is kept: FIM models see the suffix and usually mean a nested
/// one (`bar()` inside `foo(…)`).
fn strip_rest(mut s: String, line_rest: &str) -> String {
    let rest = line_rest.trim();
    if rest.chars().count() >= 2 && s.trim_end().ends_with(rest) {
        let keep = s.trim_end().len() - rest.len();
        s.truncate(keep);
    }
    s
}

fn strip_rest_of_first_line(s: String, line_rest: &str) -> String {
    match s.split_once('\n') {
        None => strip_rest(s, line_rest),
        Some((first, more)) if line_rest.trim().chars().count() >= 2 => {
            let first = strip_rest(first.to_string(), line_rest);
            format!("{first}\n{more}")
        }
        Some(_) => s,
    }
}

/// Trailing lines of the answer that equal the first non-blank lines after the cursor.
fn strip_suffix_lines<'a>(s: &'a str, suffix: &str) -> &'a str {
    let after: Vec<&str> = suffix
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .take(8)
        .collect();
    if after.is_empty() {
        return s;
    }
    let lines: Vec<&str> = s.split('\n').collect();
    // The longest tail of the answer that is a head of what follows.
    for k in (1..=after.len().min(lines.len())).rev() {
        let tail = &lines[lines.len() - k..];
        let matches = tail.iter().map(|l| l.trim()).eq(after[..k].iter().copied());
        let non_blank = tail.iter().any(|l| !l.trim().is_empty());
        if matches && non_blank {
            let cut: usize = lines[..lines.len() - k].iter().map(|l| l.len() + 1).sum();
            return &s[..cut.saturating_sub(1).min(s.len())];
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_line_keeps_one_line_and_drops_the_repeated_rest() {
        assert_eq!(shape("a, b);\nmore", ");", ");\n}", true), "a, b");
        assert_eq!(shape("bar()", ")", ")\n", true), "bar()");
        assert_eq!(shape("x + 1", "", "\n", true), "x + 1");
    }

    #[test]
    fn multi_line_drops_the_repeated_closing_lines() {
        let raw = "    let x = 1;\n    x + 1\n}\n";
        assert_eq!(
            shape(raw, "", "\n}\n\nfn next() {}\n", false),
            "    let x = 1;\n    x + 1"
        );
        let raw = "    a();\n    b();\n";
        assert_eq!(shape(raw, "", "\n}\n", false), "    a();\n    b();");
    }

    #[test]
    fn crlf_answers_become_lf() {
        assert_eq!(shape("a\r\nb", "", "", false), "a\nb");
    }
}
