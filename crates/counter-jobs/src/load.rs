//! Reading a job file: JSON or YAML, by extension (`.json`, `.yaml`,
//! `.yml`), else by its first character. Type errors name the field's path
//! (`jobs[1].pmc`) and what was expected.
use crate::error::JobErrors;
use crate::schema::JobFile;
use std::path::Path;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Json,
    Yaml,
}

impl Format {
    /// By extension; a file without a known one is JSON when it starts with
    /// `{` (after whitespace), YAML otherwise.
    pub fn of(path: &Path, text: &str) -> Format {
        match path.extension().and_then(|e| e.to_str()) {
            Some(e) if e.eq_ignore_ascii_case("json") => Format::Json,
            Some(e) if e.eq_ignore_ascii_case("yaml") || e.eq_ignore_ascii_case("yml") => {
                Format::Yaml
            }
            _ if text.trim_start().starts_with('{') => Format::Json,
            _ => Format::Yaml,
        }
    }
}

/// Reads and parses `path`.
pub fn load_file(path: &Path) -> Result<JobFile, JobErrors> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| JobErrors::single(&name, "", format!("cannot read the job file: {e}")))?;
    parse_str(&text, Format::of(path, &text), &name)
}

/// Parses a job file's text; `name` names it in errors.
pub fn parse_str(text: &str, format: Format, name: &str) -> Result<JobFile, JobErrors> {
    let result = match format {
        Format::Json => {
            let mut de = serde_json::Deserializer::from_str(text);
            serde_path_to_error::deserialize(&mut de).map_err(|e| {
                let path = e.path().to_string();
                (path, e.into_inner().to_string())
            })
        }
        Format::Yaml => serde_path_to_error::deserialize(serde_yaml_ng::Deserializer::from_str(
            text,
        ))
        .map_err(|e| {
            let path = e.path().to_string();
            (path, e.into_inner().to_string())
        }),
    };
    result.map_err(|(path, message)| {
        let path = if path == "." { String::new() } else { path };
        // serde_yaml_ng starts its message with the path (or the path of
        // the map holding the field), which the error already names.
        let message = match message.split_once(": ") {
            Some((head, rest)) if !head.is_empty() && path.starts_with(head) => rest.to_string(),
            _ => message,
        };
        JobErrors::single(name, path, message)
    })
}
