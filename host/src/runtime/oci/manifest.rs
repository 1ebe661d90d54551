//! Reading a manifest: which layer holds the component, for the layouts Toolcell loads (the wasm
//! OCI artifact, and a single-layer image whose layer is `application/wasm`).

use anyhow::{Context, Result, bail};

use super::store::digest_hex;

/// What `GET /v2/.../manifests/...` asks for: OCI and Docker v2 manifests and indexes (an index
/// is refused with what it lists).
pub(super) const ACCEPT: &str = "application/vnd.oci.image.manifest.v1+json, \
     application/vnd.docker.distribution.manifest.v2+json, \
     application/vnd.oci.image.index.v1+json, \
     application/vnd.docker.distribution.manifest.list.v2+json";

/// The media type of the one layer Toolcell loads.
pub(super) const WASM_LAYER: &str = "application/wasm";

/// A layer: its digest (checked `sha256:HEX`), size and annotations.
#[derive(Debug)]
pub(super) struct Layer {
    pub digest: String,
    pub size: u64,
    pub media_type: String,
    pub annotations: serde_json::Map<String, serde_json::Value>,
}

/// The layers of a manifest and the media types found, for messages.
pub(super) struct Manifest {
    pub media_type: String,
    pub config_media_type: String,
    pub layers: Vec<Layer>,
}

impl Manifest {
    /// Parses a manifest; `content_type` is the response's, used when the JSON has no
    /// `mediaType`. An index is refused.
    pub(super) fn parse(bytes: &[u8], content_type: Option<&str>) -> Result<Manifest> {
        let json: serde_json::Value =
            serde_json::from_slice(bytes).context("the manifest is not JSON")?;
        let media_type = json["mediaType"]
            .as_str()
            .or(content_type)
            .unwrap_or("(none)")
            .to_owned();
        if media_type.contains("index")
            || media_type.contains("manifest.list")
            || json["manifests"].is_array()
        {
            let listed: Vec<String> = json["manifests"]
                .as_array()
                .map(|list| {
                    list.iter()
                        .map(|m| {
                            let platform = &m["platform"];
                            format!(
                                "{} ({}/{})",
                                m["digest"].as_str().unwrap_or("?"),
                                platform["os"].as_str().unwrap_or("?"),
                                platform["architecture"].as_str().unwrap_or("?")
                            )
                        })
                        .collect()
                })
                .unwrap_or_default();
            bail!(
                "the reference is an image index ({media_type}), not a manifest: pin the digest of \
                 one manifest it lists: {}",
                listed.join(", ")
            );
        }
        let config_media_type = json["config"]["mediaType"]
            .as_str()
            .unwrap_or("(none)")
            .to_owned();
        let mut layers = Vec::new();
        for layer in json["layers"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
        {
            let digest = layer["digest"]
                .as_str()
                .context("a layer without a digest")?;
            digest_hex(digest).context("a layer's digest")?;
            layers.push(Layer {
                digest: digest.to_owned(),
                size: layer["size"].as_u64().context("a layer without a size")?,
                media_type: layer["mediaType"].as_str().unwrap_or("(none)").to_owned(),
                annotations: layer["annotations"]
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            });
        }
        Ok(Manifest {
            media_type,
            config_media_type,
            layers,
        })
    }

    /// The layer holding the component: the only layer, of media type `application/wasm`.
    pub(super) fn wasm_layer(&self) -> Result<&Layer> {
        match self.layers.as_slice() {
            [layer] if layer.media_type == WASM_LAYER => Ok(layer),
            layers => {
                let found: Vec<&str> = layers.iter().map(|l| l.media_type.as_str()).collect();
                bail!(
                    "not a WebAssembly component artifact: expected one layer of media type \
                     {WASM_LAYER} (the wasm OCI artifact, config application/vnd.wasm.config.v0+json, \
                     as `wkg oci push` and `oras push` write it), found a {} with config {} and {} \
                     layer{}{}{}",
                    self.media_type,
                    self.config_media_type,
                    layers.len(),
                    if layers.len() == 1 { "" } else { "s" },
                    if found.is_empty() { "" } else { ": " },
                    found.join(", ")
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts() {
        let digest = format!("sha256:{}", "d".repeat(64));
        let artifact = format!(
            r#"{{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json",
            "config":{{"mediaType":"application/vnd.wasm.config.v0+json","digest":"{digest}","size":2}},
            "layers":[{{"mediaType":"application/wasm","digest":"{digest}","size":42}}]}}"#
        );
        let manifest = Manifest::parse(artifact.as_bytes(), None).unwrap();
        assert_eq!(manifest.wasm_layer().unwrap().size, 42);

        let tarball = artifact.replace(
            "application/wasm",
            "application/vnd.oci.image.layer.v1.tar+gzip",
        );
        let error = Manifest::parse(tarball.as_bytes(), None)
            .unwrap()
            .wasm_layer()
            .unwrap_err();
        assert!(error.to_string().contains("found a application/vnd.oci.image.manifest.v1+json with config application/vnd.wasm.config.v0+json and 1 layer: application/vnd.oci.image.layer.v1.tar+gzip"), "{error}");

        let index = r#"{"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[{"digest":"sha256:1","platform":{"os":"linux","architecture":"amd64"}}]}"#;
        let error = Manifest::parse(index.as_bytes(), None).err().unwrap();
        assert!(error.to_string().contains("image index"), "{error}");

        let sneaky = artifact.replace(
            &format!("\"digest\":\"{digest}\",\"size\":42"),
            "\"digest\":\"sha256:../x\",\"size\":42",
        );
        assert!(Manifest::parse(sneaky.as_bytes(), None).is_err());
    }
}
