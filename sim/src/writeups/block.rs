//! The generated blocks of a page: `<!-- generated: NAME -->` ... `<!-- end generated -->`.
//! Only the lines between the two markers are rewritten; everything else on the page is
//! prose and stays as written.

use std::path::{Path, PathBuf};

/// The blocks every finding page has, in page order.
pub const BLOCKS: &[&str] = &["timeline", "reproduce", "measured"];

pub const END: &str = "<!-- end generated -->";

pub fn begin(name: &str) -> String {
    format!("<!-- generated: {} -->", name)
}

/// A page whose markers are missing or out of shape; the message names `file:line`.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum BlockError {
    #[error("{}: no `{marker}` line (every finding page needs the blocks {})", path.display(), BLOCKS.join(", "))]
    Missing { path: PathBuf, marker: String },
    #[error("{}:{line}: `{marker}` appears a second time", path.display())]
    Duplicate { path: PathBuf, line: usize, marker: String },
    #[error("{}:{line}: `{marker}` has no `{END}` after it", path.display())]
    Unclosed { path: PathBuf, line: usize, marker: String },
}

/// Line index range (begin marker, end marker) of block `name`.
fn locate(path: &Path, lines: &[&str], name: &str) -> Result<(usize, usize), BlockError> {
    let marker = begin(name);
    let mut found = lines.iter().enumerate().filter(|(_, l)| l.trim_end() == marker).map(|(i, _)| i);
    let start = found.next().ok_or_else(|| BlockError::Missing { path: path.to_path_buf(), marker: marker.clone() })?;
    if let Some(again) = found.next() {
        return Err(BlockError::Duplicate { path: path.to_path_buf(), line: again + 1, marker });
    }
    let end = lines[start + 1..]
        .iter()
        .position(|l| l.trim_end() == END || l.trim_start().starts_with("<!-- generated: "))
        .map(|i| start + 1 + i)
        .filter(|&i| lines[i].trim_end() == END)
        .ok_or(BlockError::Unclosed { path: path.to_path_buf(), line: start + 1, marker })?;
    Ok((start, end))
}

/// Check that `text` has every block of [`BLOCKS`], each once and closed.
pub fn check(path: &Path, text: &str) -> Result<(), BlockError> {
    let lines: Vec<&str> = text.lines().collect();
    BLOCKS.iter().try_for_each(|b| locate(path, &lines, b).map(|_| ()))
}

/// The current body of block `name` (the lines between its markers).
pub fn body(path: &Path, text: &str, name: &str) -> Result<String, BlockError> {
    let lines: Vec<&str> = text.lines().collect();
    let (s, e) = locate(path, &lines, name)?;
    Ok(lines[s + 1..e].iter().map(|l| format!("{}\n", l)).collect())
}

/// `text` with block `name` replaced by `content` (lines ending in `\n`).
pub fn splice(path: &Path, text: &str, name: &str, content: &str) -> Result<String, BlockError> {
    let lines: Vec<&str> = text.lines().collect();
    let (s, e) = locate(path, &lines, name)?;
    let mut out = String::new();
    for l in &lines[..=s] {
        out.push_str(l);
        out.push('\n');
    }
    out.push_str(content);
    if !content.is_empty() && !content.ends_with('\n') {
        out.push('\n');
    }
    for l in &lines[e..] {
        out.push_str(l);
        out.push('\n');
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page() -> String {
        let mut t = String::from("# Title\n\nprose\n");
        for b in BLOCKS {
            t.push_str(&format!("{}\nold {}\n{}\nmore prose\n", begin(b), b, END));
        }
        t
    }

    #[test]
    fn splice_replaces_only_the_block_and_is_idempotent() {
        let p = Path::new("p.md");
        let once = splice(p, &page(), "reproduce", "new line 1\nnew line 2\n").unwrap();
        let twice = splice(p, &once, "reproduce", "new line 1\nnew line 2\n").unwrap();
        assert_eq!(once, twice);
        assert!(once.contains("old timeline") && once.contains("old measured") && !once.contains("old reproduce"));
        assert_eq!(body(p, &once, "reproduce").unwrap(), "new line 1\nnew line 2\n");
        assert_eq!(once.matches("more prose").count(), BLOCKS.len());
        check(p, &once).unwrap();
    }

    #[test]
    fn bad_markers_are_named_with_their_line() {
        let p = Path::new("p.md");
        let missing = page().replace(&begin("measured"), "");
        assert!(matches!(check(p, &missing), Err(BlockError::Missing { .. })));
        let unclosed = format!("{}\n{}\nx\n", page(), begin("timeline"));
        let e = check(p, &unclosed).unwrap_err();
        assert!(matches!(e, BlockError::Duplicate { line: 17, .. }), "{e}");
        // A block whose end marker is missing runs into the next block: unclosed.
        let t = page().replacen(END, "", 1);
        let e = check(p, &t).unwrap_err();
        assert_eq!(e.to_string(), "p.md:4: `<!-- generated: timeline -->` has no `<!-- end generated -->` after it");
    }
}
