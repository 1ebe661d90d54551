//! `plugins.toml`: parsing and validation. (Being written.)
