//! The page: one HTML file with the CSS, the script and the [`Page`] data inline (no
//! external assets, nothing fetched), drawn by the script as an SVG space-time diagram.

use super::page::{build, Page};
use crate::error::CliError;
use crate::result::RunResult;
use std::path::{Path, PathBuf};

const CSS: &str = include_str!("timeline.css");
const JS: &str = include_str!("timeline.js");

/// JSON safe inside a `<script>` element: no `</script>`, no `<!--`, and the two line
/// separators JS string literals once rejected.
fn script_json(page: &Page) -> Result<String, CliError> {
    let j = serde_json::to_string(page).map_err(CliError::serialize("timeline page"))?;
    Ok(j.replace('<', "\\u003c").replace('>', "\\u003e").replace('\u{2028}', "\\u2028").replace('\u{2029}', "\\u2029"))
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// The page of a run as one HTML document.
pub fn render(r: &RunResult, reproduce: &str) -> Result<String, CliError> {
    let page = build(r, r.timeline.as_deref(), reproduce);
    let title = escape(&format!("{} seed {}: {}", page.scenario, page.seed, page.outcome));
    Ok(format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{title}</title>\n\
         <style>\n{CSS}</style>\n</head>\n<body>\n<header id=\"head\"></header>\n\
         <div id=\"lanes-head\"></div>\n<div id=\"timeline\"></div>\n\
         <script type=\"application/json\" id=\"data\">{data}</script>\n<script>\n{JS}</script>\n</body>\n</html>\n",
        data = script_json(&page)?,
    ))
}

/// Write `path` (creating its directory): the page of `r`.
pub fn write_to(path: &Path, r: &RunResult, reproduce: &str) -> Result<(), CliError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(CliError::create_dir("report directory", dir))?;
    }
    crate::error::write_atomic(path, render(r, reproduce)?).map_err(CliError::write_file(path))
}

/// Write `<dir>/<scenario>-<seed>.html`, next to the run's other reports.
pub fn write(dir: &Path, r: &RunResult, reproduce: &str) -> Result<PathBuf, CliError> {
    let path = dir.join(format!("{}-{}.html", r.scenario, r.seed));
    write_to(&path, r, reproduce)?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{TraceRecord, Violation};

    #[test]
    fn the_page_is_self_contained_and_its_data_cannot_close_the_script() {
        let mut r = crate::runner::crash_result(
            &toml::from_str("name = \"x\"\ndescription = \"x\"\n").unwrap(),
            3,
            &Default::default(),
            String::new(),
        );
        r.trace = vec![TraceRecord {
            at_ms: 5,
            node: "8301".into(),
            role: "Maintainer".into(),
            epoch: 1,
            event: "evil".into(),
            fields: vec![("detail".into(), "</script><script>alert(1)</script>".into())],
        }];
        r.violations =
            vec![Violation { invariant: "epoch-fencing".into(), at_ms: 5, detail: "table 104: <b>x</b>".into() }];
        let html = render(&r, "cargo run").unwrap();
        assert_eq!(html.matches("</script>").count(), 2, "the data closed its script element");
        assert!(!html.contains("alert(1)</script>"));
        // Nothing that loads: the SVG namespace is the one URL the page names, and
        // `url(#arrow)` points into the page itself.
        let rest = html.replace("http://www.w3.org/2000/svg", "").replace("url(#", "");
        for external in ["http:", "https:", "src=", "<link", "@import", "url(", "fetch(", "XMLHttpRequest"] {
            assert!(!rest.contains(external), "external reference {}", external);
        }
        assert!(html.contains("\"invariant\":\"epoch-fencing\""));
    }
}
