//! Errors that name the file, the job and the field, so a user can fix the
//! file without guessing which of its jobs is meant.
use std::fmt;

/// One problem with a job file or the command line next to it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobError {
    /// The job file, or `command line`.
    pub file: String,
    /// Where: `jobs[1].pmc`, `job_replay_mode`, `--pmc`, or `jobs`; empty
    /// for the file as a whole (it cannot be read, or is not JSON/YAML).
    pub path: String,
    pub message: String,
}

impl fmt::Display for JobError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}: {}", self.file, self.message)
        } else {
            write!(f, "{}: at `{}`: {}", self.file, self.path, self.message)
        }
    }
}

/// Every problem found, in the order of the file: a user fixes them all at
/// once instead of one per attempt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobErrors(pub Vec<JobError>);

impl JobErrors {
    pub fn single(file: &str, path: impl Into<String>, message: impl Into<String>) -> JobErrors {
        JobErrors(vec![JobError {
            file: file.to_string(),
            path: path.into(),
            message: message.into(),
        }])
    }

    /// The paths named, in order (what tests compare).
    pub fn paths(&self) -> Vec<&str> {
        self.0.iter().map(|e| e.path.as_str()).collect()
    }
}

impl fmt::Display for JobErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for JobErrors {}

/// Gathers the problems of one file; each names it.
pub(crate) struct Collector {
    file: String,
    list: Vec<JobError>,
}

/// What the command line's options are named by in errors.
pub(crate) const COMMAND_LINE: &str = "command line";

impl Collector {
    pub(crate) fn new(file: &str) -> Collector {
        Collector {
            file: file.to_string(),
            list: Vec::new(),
        }
    }

    /// A problem at `path` of the file.
    pub(crate) fn at(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.list.push(JobError {
            file: self.file.clone(),
            path: path.into(),
            message: message.into(),
        });
    }

    /// A problem with a command-line option (`--pmc`).
    pub(crate) fn at_command_line(&mut self, option: &str, message: impl Into<String>) {
        self.list.push(JobError {
            file: COMMAND_LINE.to_string(),
            path: option.to_string(),
            message: message.into(),
        });
    }

    /// How many problems so far.
    pub(crate) fn len(&self) -> usize {
        self.list.len()
    }

    pub(crate) fn finish<T>(self, value: T) -> Result<T, JobErrors> {
        if self.list.is_empty() {
            Ok(value)
        } else {
            Err(JobErrors(self.list))
        }
    }
}
