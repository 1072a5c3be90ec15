//! Where a trace goes and in which format: kineto's JSON, or Perfetto's
//! protobuf (`.pftrace`), told by `--format` or else by the file's extension.
use clap::ValueEnum;
use std::path::{Path, PathBuf};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Json,
    Pftrace,
}

impl Format {
    /// The tool library's code for it (include/kineto_rocm.h).
    pub fn code(self) -> i32 {
        match self {
            Format::Json => 0,
            Format::Pftrace => 1,
        }
    }

    /// The format a file name implies: `.pftrace` or `.perfetto-trace` is
    /// Perfetto, anything else JSON.
    pub fn of(path: &Path) -> Format {
        let name = path.to_string_lossy();
        if name.ends_with(".pftrace") || name.ends_with(".perfetto-trace") {
            Format::Pftrace
        } else {
            Format::Json
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Output {
    pub path: PathBuf,
    pub format: Format,
}

impl Output {
    /// `--format` when given, else the extension's.
    pub fn new(path: &Path, format: Option<Format>) -> Output {
        Output {
            path: path.to_path_buf(),
            format: format.unwrap_or_else(|| Format::of(path)),
        }
    }

    /// The file of window `index`: `.N` before the extension.
    pub fn window(&self, index: usize) -> Output {
        let stem = self
            .path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("trace");
        let extension =
            self.path
                .extension()
                .and_then(|s| s.to_str())
                .unwrap_or(match self.format {
                    Format::Json => "json",
                    Format::Pftrace => "pftrace",
                });
        Output {
            path: self
                .path
                .with_file_name(format!("{stem}.{index}.{extension}")),
            format: self.format,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_extension_picks_the_format_unless_one_is_given() {
        assert_eq!(
            Output::new(Path::new("t.pftrace"), None).format,
            Format::Pftrace
        );
        assert_eq!(Output::new(Path::new("t.json"), None).format, Format::Json);
        assert_eq!(
            Output::new(Path::new("t"), Some(Format::Pftrace)).format,
            Format::Pftrace
        );
        let window = Output::new(Path::new("d/t.pftrace"), None).window(2);
        assert_eq!(window.path, Path::new("d/t.2.pftrace"));
    }
}
