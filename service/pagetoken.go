package service

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/skilld/skilld/store"
)

// A page token is where a keyset page starts: the sort key of the last
// row the previous page showed, with which list and which filters it
// belongs to. It is opaque to clients, and validated rather than signed:
// it only names a position in a list the caller may read anyway, so a
// forged one can do no more than start a page elsewhere; one from another
// list or other filters is refused as invalid.
type pageToken struct {
	V     int      `json:"v"`
	List  string   `json:"l"`
	Query string   `json:"q"`
	Key   []string `json:"k"`
}

// filterDigest identifies a list's filters inside its tokens.
func filterDigest(filters ...any) string {
	b, _ := json.Marshal(filters)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:6])
}

func encodePageToken(list, query string, key ...string) string {
	b, _ := json.Marshal(pageToken{V: 1, List: list, Query: query, Key: key})
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodePageToken returns the key a token holds, checking that it was made
// for this list with these filters and holds keys keys.
func decodePageToken(tok, list, query string, keys int) ([]string, error) {
	bad := func(why string) error {
		return invalidField("page_token", "page_token is not valid for this list: %s; start again without it", why)
	}
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil || len(b) > 4096 {
		return nil, bad("it is not a token skilld made")
	}
	var pt pageToken
	if err := json.Unmarshal(b, &pt); err != nil || pt.V != 1 || len(pt.Key) != keys {
		return nil, bad("it is not a token skilld made")
	}
	if pt.List != list {
		return nil, bad(fmt.Sprintf("it belongs to the %s list", pt.List))
	}
	if pt.Query != query {
		return nil, bad("it was made with other filters")
	}
	return pt.Key, nil
}

// keyed resolves a list's page and page token: the store page (starting
// after the token's key when there is one) and the page number to report
// (0 for a page reached by token).
func keyed(p Page, token, list, query string) (store.Page, Page, error) {
	pg, norm, err := p.normalize()
	if err != nil || token == "" {
		return pg, norm, err
	}
	if p.Page > 1 {
		return pg, norm, invalidField("page_token", "give page or page_token, not both")
	}
	key, err := decodePageToken(token, list, query, 1)
	if err != nil {
		return pg, norm, err
	}
	pg.After, pg.Offset, norm.Page = key[0], 0, 0
	return pg, norm, nil
}

// nextToken is the token of the page after one of n rows ending at key,
// or "" when that was the last page.
func nextToken(pg store.Page, n, total int, list, query, key string) string {
	if n == 0 || n < pg.Limit || pg.After == "" && pg.Offset+n >= total {
		return ""
	}
	return encodePageToken(list, query, key)
}
