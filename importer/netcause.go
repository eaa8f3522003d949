package importer

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"os"
	"syscall"
)

// netCause names why a request could not reach its server, in the words
// an operator fixing it needs: the DNS lookup failed, the connection was
// refused or reset, it timed out, or TLS failed (and how). "" when err is
// none of those.
func netCause(err error) string {
	var dns *net.DNSError
	var unknownCA x509.UnknownAuthorityError
	var badHost x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	var record tls.RecordHeaderError
	var alert tls.AlertError
	var ne net.Error
	switch {
	case errors.As(err, &dns):
		if dns.IsNotFound {
			return "DNS: no such host " + dns.Name
		}
		if dns.IsTimeout {
			return "DNS: looking up " + dns.Name + " timed out"
		}
		return "DNS: looking up " + dns.Name + " failed: " + dns.Err
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused" + addrOf(err)
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset" + addrOf(err)
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "no route to the host" + addrOf(err)
	case errors.As(err, &unknownCA):
		return "TLS: the server's certificate is signed by an unknown authority"
	case errors.As(err, &badHost):
		return "TLS: the server's certificate is not valid for " + badHost.Host
	case errors.As(err, &invalid):
		return "TLS: the server's certificate is invalid (" + invalid.Error() + ")"
	case errors.As(err, &verify):
		return "TLS: the server's certificate could not be verified"
	case errors.Is(err, http.ErrSchemeMismatch):
		return "TLS: the server answered in plain HTTP, not TLS"
	case errors.As(err, &record):
		return "TLS: the server did not answer in TLS (a plain HTTP server or a proxy?)"
	case errors.As(err, &alert):
		return "TLS: the handshake failed (" + alert.Error() + ")"
	case errors.Is(err, os.ErrDeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "timed out"
	}
	return ""
}

// addrOf names the address a dial failed on, when err says it.
func addrOf(err error) string {
	var op *net.OpError
	if errors.As(err, &op) && op.Addr != nil {
		return " by " + op.Addr.String()
	}
	return ""
}
