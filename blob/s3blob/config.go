package s3blob

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/skilld/skilld"
)

// Defaults for the Config fields left empty.
const (
	DefaultEndpoint   = "https://s3.amazonaws.com"
	DefaultRegion     = "us-east-1"
	DefaultRetryLimit = time.Minute
)

// ResponseTimeout bounds the wait for the headers of the answer to one
// request.
const ResponseTimeout = 10 * time.Second

// Config says where the blobs live and how to reach them.
type Config struct {
	// Bucket must exist; the store does not create it.
	Bucket string
	// Prefix is prepended to every key ("team-a/blobs"); "" uses the bucket
	// root. Leading and trailing slashes are ignored.
	Prefix string
	// Endpoint is the server's base URL, http or https with an optional
	// port and nothing after it (default DefaultEndpoint). Buckets are
	// addressed path-style ("host/bucket/key") on any endpoint but AWS,
	// because local and self-hosted servers rarely have the wildcard DNS
	// that virtual-host style needs.
	Endpoint string
	// Region signs requests (default DefaultRegion). Setting it also spares
	// a bucket-location lookup before the first request.
	Region string
	// AccessKey and SecretKey are required; SessionToken goes with
	// temporary credentials.
	AccessKey, SecretKey, SessionToken string
	// TempDir holds the local copy Put uploads from (default os.TempDir()).
	// It needs room for the largest blob times the concurrent Puts.
	TempDir string
	// RetryLimit bounds how long transient failures are retried when the
	// caller's context has no deadline (default DefaultRetryLimit). With a
	// deadline, retries go on until it.
	RetryLimit time.Duration
}

// ParseURL reads a Config from a URL of the form
//
//	s3://BUCKET/PREFIX?endpoint=http://127.0.0.1:7070&region=us-east-1
//
// and credentials from the environment through getenv (pass os.Getenv):
// SKILLD_S3_ACCESS_KEY and SKILLD_S3_SECRET_KEY when both are set, else
// AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, plus AWS_SESSION_TOKEN.
// Credentials in the URL itself are refused so they never land in logs or
// config files. Errors are EINVALID and name the URL (without secrets).
func ParseURL(rawURL string, getenv func(string) string) (Config, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return Config{}, skilld.Errorf(skilld.EINVALID, "blob store URL is not a URL: %v", err)
	}
	shown := u.Redacted()
	bad := func(format string, args ...any) (Config, error) {
		return Config{}, skilld.Errorf(skilld.EINVALID, "blob store URL %q: "+format, append([]any{shown}, args...)...)
	}
	switch {
	case u.Scheme != "s3":
		return bad("scheme must be s3")
	case u.User != nil:
		return bad("credentials do not belong in the URL; set SKILLD_S3_ACCESS_KEY and SKILLD_S3_SECRET_KEY (or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)")
	case u.Opaque != "":
		return bad("want s3://BUCKET/PREFIX")
	case u.Fragment != "":
		return bad("a #fragment has no meaning here")
	}
	cfg := Config{Bucket: u.Host, Prefix: u.Path}
	for key, vals := range u.Query() {
		if len(vals) != 1 {
			return bad("query parameter %q is given %d times", key, len(vals))
		}
		switch key {
		case "endpoint":
			cfg.Endpoint = vals[0]
		case "region":
			cfg.Region = vals[0]
		default:
			return bad("unknown query parameter %q (known: endpoint, region)", key)
		}
	}
	if ak, sk := getenv("SKILLD_S3_ACCESS_KEY"), getenv("SKILLD_S3_SECRET_KEY"); ak != "" && sk != "" {
		cfg.AccessKey, cfg.SecretKey = ak, sk
	} else {
		cfg.AccessKey, cfg.SecretKey = getenv("AWS_ACCESS_KEY_ID"), getenv("AWS_SECRET_ACCESS_KEY")
		cfg.SessionToken = getenv("AWS_SESSION_TOKEN")
	}
	if err := cfg.normalize(); err != nil {
		return bad("%v", err)
	}
	return cfg, nil
}

// normalize fills in defaults and checks every field, so that New fails
// with a clear message instead of the first request failing obscurely.
func (c *Config) normalize() error {
	c.Prefix = strings.Trim(c.Prefix, "/")
	if c.Endpoint == "" {
		c.Endpoint = DefaultEndpoint
	}
	if c.Region == "" {
		c.Region = DefaultRegion
	}
	if c.TempDir == "" {
		c.TempDir = os.TempDir()
	}
	if c.RetryLimit <= 0 {
		c.RetryLimit = DefaultRetryLimit
	}
	if err := checkBucket(c.Bucket); err != nil {
		return err
	}
	if c.Prefix != "" {
		for _, seg := range strings.Split(c.Prefix, "/") {
			if seg == "" || seg == "." || seg == ".." {
				return fmt.Errorf("prefix %q has an empty, \".\" or \"..\" segment", c.Prefix)
			}
		}
	}
	if _, _, err := c.endpoint(); err != nil {
		return err
	}
	if c.AccessKey == "" || c.SecretKey == "" {
		return errors.New("no credentials: set SKILLD_S3_ACCESS_KEY and SKILLD_S3_SECRET_KEY (or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)")
	}
	return nil
}

// endpoint splits Endpoint into the host[:port] and TLS flag minio wants.
func (c *Config) endpoint() (host string, secure bool, err error) {
	if !strings.HasPrefix(c.Endpoint, "http://") && !strings.HasPrefix(c.Endpoint, "https://") {
		return "", false, fmt.Errorf("endpoint %q must start with http:// or https://", c.Endpoint)
	}
	u, err := url.Parse(c.Endpoint)
	if err != nil {
		return "", false, fmt.Errorf("endpoint %q is not a URL: %v", c.Endpoint, err)
	}
	switch {
	case u.Host == "":
		return "", false, fmt.Errorf("endpoint %q has no host", c.Endpoint)
	case u.User != nil:
		return "", false, fmt.Errorf("endpoint %q must not carry credentials", u.Redacted())
	case strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.Fragment != "":
		return "", false, fmt.Errorf("endpoint %q must be only scheme, host and port", c.Endpoint)
	}
	return u.Host, u.Scheme == "https", nil
}

// checkBucket applies the S3 bucket naming rules that matter for building
// URLs: 3 to 63 lowercase letters, digits, dots and hyphens.
func checkBucket(b string) error {
	if len(b) < 3 || len(b) > 63 {
		return fmt.Errorf("bucket name %q must be 3 to 63 characters", b)
	}
	for _, r := range b {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '.' && r != '-' {
			return fmt.Errorf("bucket name %q may hold only lowercase letters, digits, '.' and '-'", b)
		}
	}
	return nil
}
