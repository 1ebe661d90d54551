//! `git_log`: commits reachable from a revision.

use toolcell_sdk::schemars::JsonSchema;
use toolcell_sdk::serde::Deserialize;
use toolcell_sdk::{Error, Output};

use crate::repo::{self, fail};

/// Arguments of `git_log`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde", deny_unknown_fields)]
#[schemars(crate = "toolcell_sdk::schemars")]
pub struct LogArgs {
    /// The repository: a working tree or bare repository inside a mount. Default: the first mount.
    repo: Option<String>,
    /// Where the history starts: a branch, tag, commit id or expression such as `HEAD~3`.
    /// Default `HEAD`.
    rev: Option<String>,
    /// The most commits to return. Default 20.
    #[schemars(range(min = 1, max = 10000))]
    max_count: Option<u64>,
}

/// Runs `git_log`.
pub fn git_log(args: LogArgs) -> Result<Output, Error> {
    let repo = repo::open(args.repo.as_deref())?;
    let rev = args.rev.as_deref().unwrap_or("HEAD");
    let tip = repo
        .rev_parse_single(rev)
        .map_err(|e| fail(&format!("unknown revision `{rev}`"), e))?;
    let walk = repo
        .rev_walk([tip.detach()])
        .sorting(gix::revision::walk::Sorting::ByCommitTime(
            gix::traverse::commit::simple::CommitTimeOrder::NewestFirst,
        ))
        .all()
        .map_err(|e| fail("cannot walk the history", e))?;
    let max = args.max_count.unwrap_or(20);
    let mut text = String::new();
    for info in walk.take(usize::try_from(max).unwrap_or(usize::MAX)) {
        let info = info.map_err(|e| fail("cannot walk the history", e))?;
        let commit = info.object().map_err(|e| fail("cannot read a commit", e))?;
        let message = commit
            .message()
            .map_err(|e| fail("cannot read a commit", e))?;
        text.push_str(&format!("{} {}\n", info.id, message.summary()));
    }
    Ok(Output::text(text))
}
