//! The plugins: components compiled once, run per call in a sandbox with
//! their limits, and the union of what they offer.

pub mod builtin;
pub mod contract;
pub mod engine;
pub mod features;
pub mod files;
pub mod lookups;
pub mod plugin;
pub mod sandbox;
pub mod toolbox;
