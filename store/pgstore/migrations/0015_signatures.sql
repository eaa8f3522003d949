-- Signatures on catalog items. A version may carry the Sigstore bundle its
-- publisher signed the package digest with (JSON, empty when unsigned); it
-- is as immutable as the version. A registry may hold one PEM public key
-- for keyed verification, for teams without an OIDC issuer; replacing it
-- is how a key is rotated or revoked.

ALTER TABLE registries ADD COLUMN public_key TEXT NOT NULL DEFAULT '';
ALTER TABLE catalog_item_versions ADD COLUMN signature_bundle TEXT NOT NULL DEFAULT '';
