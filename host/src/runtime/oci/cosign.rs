//! Key-based cosign signatures, checked offline: an ECDSA P-256 (SHA-256) signature, from the
//! `dev.cosignproject.cosign/signature` annotation of a layer of the `sha256-DIGEST.sig` tag,
//! over that layer's simple-signing payload, whose `critical.image.docker-manifest-digest` must
//! be the plugin's manifest digest. Verified with `ring` against the one public key the
//! configuration names; no other key is ever accepted.

use std::path::Path;

use anyhow::{Context, Result, bail};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use ring::signature::{ECDSA_P256_SHA256_ASN1, UnparsedPublicKey};

/// The media type of a cosign simple-signing payload layer.
pub(super) const PAYLOAD_MEDIA_TYPE: &str = "application/vnd.dev.cosign.simplesigning.v1+json";
/// The layer annotation holding the base64 signature.
pub(super) const SIGNATURE_ANNOTATION: &str = "dev.cosignproject.cosign/signature";

/// The DER of a P-256 SubjectPublicKeyInfo up to its 65-byte uncompressed point: SEQUENCE {
/// SEQUENCE { OID id-ecPublicKey, OID prime256v1 }, BIT STRING (0 unused bits) }. DER is
/// canonical, so every P-256 key starts with exactly these bytes.
const P256_SPKI_PREFIX: [u8; 26] = [
    0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a,
    0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
];

/// A cosign public key: the uncompressed P-256 point.
pub(super) struct PublicKey(Vec<u8>);

impl PublicKey {
    /// Reads a PEM `PUBLIC KEY` file as `cosign generate-key-pair` writes `cosign.pub`.
    pub(super) fn read(path: &Path) -> Result<PublicKey> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the cosign key {}", path.display()))?;
        PublicKey::parse(&text).with_context(|| format!("the cosign key {}", path.display()))
    }

    fn parse(pem: &str) -> Result<PublicKey> {
        let body = pem
            .split("-----BEGIN PUBLIC KEY-----")
            .nth(1)
            .and_then(|rest| rest.split("-----END PUBLIC KEY-----").next())
            .context(
                "not a PEM public key (expected -----BEGIN PUBLIC KEY-----, as in cosign.pub)",
            )?;
        let compact: String = body.chars().filter(|c| !c.is_whitespace()).collect();
        let der = BASE64
            .decode(compact)
            .context("the PEM body is not base64")?;
        match der.strip_prefix(&P256_SPKI_PREFIX[..]) {
            Some(point) if point.len() == 65 && point[0] == 0x04 => Ok(PublicKey(point.to_vec())),
            _ => bail!(
                "not an ECDSA P-256 public key (the only kind cosign key pairs use): other \
                 algorithms and curves are not supported"
            ),
        }
    }

    /// Checks `signature` (base64 ASN.1 DER) over `payload`, and that the payload names
    /// `manifest_digest`.
    pub(super) fn verify(
        &self,
        payload: &[u8],
        signature_b64: &str,
        manifest_digest: &str,
    ) -> Result<()> {
        let signature = BASE64
            .decode(signature_b64.trim())
            .context("the signature annotation is not base64")?;
        UnparsedPublicKey::new(&ECDSA_P256_SHA256_ASN1, &self.0)
            .verify(payload, &signature)
            .map_err(|_| {
                anyhow::anyhow!("the signature does not verify with the configured key")
            })?;
        let json: serde_json::Value =
            serde_json::from_slice(payload).context("the signed payload is not JSON")?;
        let critical = &json["critical"];
        let signed = critical["image"]["docker-manifest-digest"]
            .as_str()
            .context("the signed payload names no critical.image.docker-manifest-digest")?;
        if signed != manifest_digest {
            bail!(
                "the signature is for manifest {signed}, not for {manifest_digest}: it signs \
                 another artifact"
            );
        }
        if critical["type"].as_str() != Some("cosign container image signature") {
            bail!("the signed payload is not a cosign container image signature");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use ring::rand::SystemRandom;
    use ring::signature::{ECDSA_P256_SHA256_ASN1_SIGNING, EcdsaKeyPair, KeyPair};

    use super::*;

    fn pem(point: &[u8]) -> String {
        let mut der = P256_SPKI_PREFIX.to_vec();
        der.extend_from_slice(point);
        format!(
            "-----BEGIN PUBLIC KEY-----\n{}\n-----END PUBLIC KEY-----\n",
            BASE64.encode(der)
        )
    }

    #[test]
    fn signatures_verify_only_with_their_key_and_digest() {
        let rng = SystemRandom::new();
        let pair = |rng: &SystemRandom| {
            let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, rng).unwrap();
            EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, pkcs8.as_ref(), rng).unwrap()
        };
        let signer = pair(&rng);
        let other = pair(&rng);
        let digest = format!("sha256:{}", "b".repeat(64));
        let payload = format!(
            r#"{{"critical":{{"identity":{{"docker-reference":"r/p"}},"image":{{"docker-manifest-digest":"{digest}"}},"type":"cosign container image signature"}},"optional":null}}"#
        );
        let signature = BASE64.encode(signer.sign(&rng, payload.as_bytes()).unwrap());
        let key = PublicKey::parse(&pem(signer.public_key().as_ref())).unwrap();
        key.verify(payload.as_bytes(), &signature, &digest).unwrap();

        let wrong_key = PublicKey::parse(&pem(other.public_key().as_ref())).unwrap();
        let error = wrong_key
            .verify(payload.as_bytes(), &signature, &digest)
            .unwrap_err();
        assert!(error.to_string().contains("does not verify"));

        let elsewhere = format!("sha256:{}", "c".repeat(64));
        let error = key
            .verify(payload.as_bytes(), &signature, &elsewhere)
            .unwrap_err();
        assert!(error.to_string().contains("another artifact"));

        assert!(PublicKey::parse("not a key").is_err());
    }
}
