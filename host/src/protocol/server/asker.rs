//! Who answers a plugin's questions during one request: a 2025-11-25
//! session's client, asked directly, or (2026-07-28) the answers the request
//! carries, with an `input_required` result when some are missing. Every
//! request that runs a plugin that may ask goes through the same steps:
//! [`Server::asker`] for the request, [`Asker::client`] for the run, and
//! [`Asker::settle`] for what the run ended with.

use std::sync::Arc;

use rmcp::model::{InputRequiredResult, InputResponses, ProtocolVersion};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::Value;

use super::Server;
use crate::protocol::relay::{self, PeerClient, StateKey, StatelessClient};
use crate::runtime::call::{ClientAsk, Interruption};

impl Server {
    /// Who answers a plugin's questions during the request of `cx`: a
    /// 2025-11-25 session's client, or (2026-07-28) the answers the request
    /// carries, checked against the binding of `method`, `name` and the
    /// `arguments` (made only for a 2026-07-28 request).
    pub(super) fn asker(
        &self,
        cx: &RequestContext<RoleServer>,
        (method, name): (&str, &str),
        arguments: impl FnOnce() -> Value,
        state: Option<&str>,
        responses: Option<InputResponses>,
    ) -> Result<Asker, ErrorData> {
        let stateless = cx
            .protocol_version()
            .is_some_and(|version| version >= ProtocolVersion::V_2026_07_28);
        Ok(if stateless {
            let binding = relay::binding(method, name, &arguments());
            let client = StatelessClient::of(cx, &self.state_key, &binding, state, responses)?;
            Asker::Stateless(Arc::new(client), binding)
        } else {
            Asker::Session(Arc::new(PeerClient::of(cx)))
        })
    }
}

/// Who answers a plugin's questions during one request.
pub(super) enum Asker {
    /// A 2025-11-25 session's client, asked directly.
    Session(Arc<PeerClient>),
    /// A 2026-07-28 request's answers, and the request's binding.
    Stateless(Arc<StatelessClient>, Vec<u8>),
}

impl Asker {
    /// The run's view of the client.
    pub(super) fn client(&self) -> Arc<dyn ClientAsk> {
        match self {
            Asker::Session(client) => client.clone(),
            Asker::Stateless(client, _) => client.clone(),
        }
    }

    /// What the client is sent for a run that ended with `outcome`: its
    /// result, or, when it stopped for the client, an `input_required`
    /// result (2026-07-28) or the error that says why it cannot go on.
    pub(super) fn settle<T, R>(
        &self,
        key: &StateKey,
        outcome: Result<Result<T, ErrorData>, Interruption>,
    ) -> Result<R, ErrorData>
    where
        R: From<T> + From<InputRequiredResult>,
    {
        match outcome {
            Ok(result) => result.map(R::from),
            Err(interruption) => self.answer(key, interruption).map(R::from),
        }
    }

    /// What the client is sent when the run stopped for `interruption`.
    fn answer(
        &self,
        key: &StateKey,
        interruption: Interruption,
    ) -> Result<InputRequiredResult, ErrorData> {
        match self {
            Asker::Stateless(client, binding) => client.answer(key, binding, interruption),
            // A session's client is asked directly: nothing stops a run.
            Asker::Session(_) => Err(ErrorData::internal_error(
                format!("the run stopped: {interruption}"),
                None,
            )),
        }
    }
}
