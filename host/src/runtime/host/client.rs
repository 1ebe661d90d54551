//! The contract's `client` interface: a plugin's questions to the MCP
//! client (elicitation, sampling, roots), through the run's
//! [`ClientAsk`](crate::runtime::call::ClientAsk).

use super::CallState;
use crate::runtime::contract::client;

/// Asking the client goes through the run's
/// [`ClientAsk`](crate::runtime::call::ClientAsk); a run without one (a
/// `toolcell call`, a listing) answers `unsupported`. An
/// [`Interruption`](crate::runtime::call::Interruption) traps the guest: the run is over, and the caller turns
/// it into what the client is sent.
impl client::Host for CallState {
    async fn elicit(
        &mut self,
        message: String,
        schema: String,
    ) -> wasmtime::Result<Result<client::ElicitAnswer, client::ClientError>> {
        let key = self.next_key("elicit");
        let reply = self.ask_one(key, client::Question::Elicit((message, schema)));
        Ok(reply.await?.and_then(|reply| match reply {
            client::Reply::Elicit(answer) => Ok(answer),
            _ => Err(mismatched()),
        }))
    }

    async fn sample(
        &mut self,
        request: client::SamplingRequest,
    ) -> wasmtime::Result<Result<client::SamplingResult, client::ClientError>> {
        let key = self.next_key("sample");
        let reply = self.ask_one(key, client::Question::Sample(request));
        Ok(reply.await?.and_then(|reply| match reply {
            client::Reply::Sample(result) => Ok(result),
            _ => Err(mismatched()),
        }))
    }

    async fn list_roots(
        &mut self,
    ) -> wasmtime::Result<Result<Vec<client::Root>, client::ClientError>> {
        let key = self.next_key("list-roots");
        let reply = self.ask_one(key, client::Question::ListRoots);
        Ok(reply.await?.and_then(|reply| match reply {
            client::Reply::ListRoots(roots) => Ok(roots),
            _ => Err(mismatched()),
        }))
    }

    fn capabilities(&mut self) -> client::ClientCapabilities {
        match &self.cx.client {
            Some(client) => client.capabilities(),
            None => client::ClientCapabilities {
                elicitation: false,
                sampling: false,
                roots: false,
            },
        }
    }

    async fn ask(
        &mut self,
        questions: Vec<(String, client::Question)>,
    ) -> wasmtime::Result<Result<Vec<client::Reply>, client::ClientError>> {
        let mut seen = std::collections::HashSet::new();
        if let Some((key, _)) = questions.iter().find(|(key, _)| !seen.insert(key.clone())) {
            return Ok(Err(client::ClientError::Failed(format!(
                "the key `{key}` is asked twice; keys must be unique within a run"
            ))));
        }
        if let Some((key, _)) = questions.iter().find(|(key, _)| self.asked.contains(key)) {
            return Ok(Err(client::ClientError::Failed(format!(
                "the key `{key}` was already asked in this run; keys must be unique within a run"
            ))));
        }
        self.asked
            .extend(questions.iter().map(|(key, _)| key.clone()));
        let Some(client) = self.cx.client.clone() else {
            return Ok(Err(client::ClientError::Unsupported(
                "there is no MCP client to ask in this run".to_string(),
            )));
        };
        Ok(client.ask(questions).await?)
    }
}

impl CallState {
    /// The key of the `n`th question a convenience function asks: `elicit-1`, ...
    fn next_key(&mut self, what: &str) -> String {
        self.questions += 1;
        format!("{what}-{}", self.questions)
    }

    async fn ask_one(
        &mut self,
        key: String,
        question: client::Question,
    ) -> wasmtime::Result<Result<client::Reply, client::ClientError>> {
        let replies = client::Host::ask(self, vec![(key, question)]).await?;
        Ok(replies.and_then(|mut replies| replies.pop().ok_or_else(mismatched)))
    }
}

fn mismatched() -> client::ClientError {
    client::ClientError::Failed("the client's answer does not match the question".to_string())
}
