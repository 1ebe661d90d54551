//! `resources/list` and `resources/read`: each plugin that offers resources
//! lists its own with its mounts; a read goes to the plugin most likely to
//! serve the URI first.

use std::sync::Arc;

use rmcp::model::{
    ListResourcesResult, ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, Resource,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::Value;

use super::Server;
use crate::protocol::mcp;
use crate::runtime::call::{CallContext, CallError};
use crate::runtime::offerings::Failure;
use crate::runtime::plugin::Plugin;
use crate::runtime::toolbox::Toolbox;

impl Server {
    /// Answers `resources/list`.
    pub(super) async fn resources_now(
        &self,
        cx: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let served = self
            .offering("resources/list", "resources", Toolbox::serves_resources)
            .await?;
        let plugins = served.toolbox.resource_plugins();
        // Each plugin lists its resources now, with its mounts; one that
        // fails is logged and left out, and the others are listed.
        let lists = plugins.iter().map(|plugin| {
            let what = format!("resources of plugin `{}`", plugin.name());
            let ct = cx.ct.clone();
            async move {
                let listed = self
                    .feature(plugin, &what, ct, None, async |plugin, cx| {
                        plugin.list_resources(&cx).await
                    })
                    .await;
                let why = match listed {
                    Ok(Ok(listed)) => return listed,
                    Ok(Err(interruption)) => interruption.to_string(),
                    Err(error) => error.message.into_owned(),
                };
                tracing::warn!(plugin = plugin.name(), "cannot list resources: {why}");
                Vec::new()
            }
        });
        let mut resources: Vec<Resource> = Vec::new();
        for listed in futures_util::future::join_all(lists).await {
            for resource in &listed {
                if !resources.iter().any(|r| r.uri == resource.uri) {
                    resources.push(mcp::resource(resource));
                }
            }
        }
        Ok(ListResourcesResult::with_all_items(resources))
    }

    /// Answers `resources/read`.
    pub(super) async fn read_now(
        &self,
        request: ReadResourceRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let served = self
            .offering("resources/read", "resources", Toolbox::serves_resources)
            .await?;
        let uri = request.uri;
        let version = cx.protocol_version();
        let asker = self.asker(
            &cx,
            ("resources/read", &uri),
            || Value::Null,
            request.request_state.as_deref(),
            request.input_responses,
        )?;
        for plugin in served.toolbox.readers(&uri) {
            let what = format!("resource `{uri}`");
            let asked = uri.clone();
            let read = self
                .feature(
                    &plugin,
                    &what,
                    cx.ct.clone(),
                    Some(asker.client()),
                    async move |plugin, cx| read(plugin, asked, cx).await,
                )
                .await?;
            if let Ok(Err(Failure::NotFound(_))) = read {
                continue;
            }
            let read = read.map(|read| read.map_err(|f| failure_error(f, Some((&uri, &version)))));
            return asker.settle(&self.state_key, read);
        }
        let message = format!(
            "no resource `{uri}`; resources/list and resources/templates/list show what this server offers"
        );
        Err(failure_error(
            Failure::NotFound(message),
            Some((&uri, &version)),
        ))
    }
}

/// Reads `uri` from `plugin` and converts what it returns, within the
/// plugin's output cap.
pub(super) async fn read(
    plugin: Arc<Plugin>,
    uri: String,
    cx: CallContext,
) -> Result<Result<ReadResourceResult, Failure>, CallError> {
    let read = plugin.read_resource(&uri, &cx).await?;
    let max = plugin.limits().max_output_bytes;
    match read {
        Ok(contents) => {
            mcp::contents(contents, max)
                .map(Ok)
                .map_err(|reason| CallError::InvalidResult {
                    tool: format!("resources/read {uri}"),
                    reason,
                })
        }
        Err(failure) => Ok(Err(failure)),
    }
}

/// The JSON-RPC error for a plugin's [`Failure`]. A resource that is not
/// found is -32602 with `data.uri` from revision 2026-07-28 on, and -32002
/// (with the same data) before it, as each revision asks.
pub(super) fn failure_error(
    failure: Failure,
    resource: Option<(&str, &Option<ProtocolVersion>)>,
) -> ErrorData {
    match failure {
        Failure::NotFound(message) => match resource {
            Some((uri, version)) => {
                let data = Some(serde_json::json!({ "uri": uri }));
                let current = version
                    .as_ref()
                    .is_none_or(|version| *version >= ProtocolVersion::V_2026_07_28);
                if current {
                    ErrorData::invalid_params(message, data)
                } else {
                    ErrorData::resource_not_found(message, data)
                }
            }
            None => ErrorData::invalid_params(message, None),
        },
        Failure::Invalid(message) => ErrorData::invalid_params(message, None),
        Failure::Failed(message) => ErrorData::internal_error(message, None),
    }
}
