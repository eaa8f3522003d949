package skilld

import "time"

// Trust is how far a catalog registry is trusted. Levels are ordered:
// official > verified > community.
type Trust string

const (
	TrustCommunity Trust = "community"
	TrustVerified  Trust = "verified"
	TrustOfficial  Trust = "official"
)

// Rank orders trust levels (community 1, verified 2, official 3; 0 when
// invalid).
func (t Trust) Rank() int {
	switch t {
	case TrustCommunity:
		return 1
	case TrustVerified:
		return 2
	case TrustOfficial:
		return 3
	}
	return 0
}

// Valid reports whether t is a known trust level.
func (t Trust) Valid() bool { return t.Rank() > 0 }

// Registry is a named source of catalog items with a trust level.
type Registry struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Trust Trust  `json:"trust"`
	// PublicKey is the PEM public key that keyed signatures on this
	// registry's items must verify against; empty when it has none.
	PublicKey string    `json:"public_key,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// CatalogItem is a skill published in a registry, visible to every
// workspace. Its versions are immutable.
type CatalogItem struct {
	ID            string    `json:"id"`
	RegistryID    string    `json:"registry_id"`
	Registry      string    `json:"registry"`
	Trust         Trust     `json:"trust"`
	Name          string    `json:"name"`
	Description   string    `json:"description"`
	LatestVersion int       `json:"latest_version"`
	CreatedAt     time.Time `json:"created_at"`
	UpdatedAt     time.Time `json:"updated_at"`
}

// CatalogItemVersion is one immutable published state of a catalog item.
type CatalogItemVersion struct {
	ItemID      string    `json:"item_id"`
	Number      int       `json:"number"`
	Digest      string    `json:"digest"`
	Description string    `json:"description"`
	CreatedBy   string    `json:"created_by,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
	// Bundle is the Sigstore bundle (JSON) the publisher signed Digest
	// with; nil when unsigned. Served as Signature, not whole.
	Bundle []byte `json:"-"`
	// Signature is what verifying Bundle found; the service fills it.
	Signature *SignatureStatus `json:"signature,omitempty"`
}

// SignatureStatus is who signed a package and whether that checks out:
// the OIDC issuer and subject of a Sigstore certificate, or the ID of the
// registry key that verified it. Verified false comes with Error.
type SignatureStatus struct {
	Verified bool   `json:"verified"`
	Issuer   string `json:"issuer,omitempty"`
	Subject  string `json:"subject,omitempty"`
	KeyID    string `json:"key_id,omitempty"`
	Error    string `json:"error,omitempty"`
}
