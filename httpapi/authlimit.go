package httpapi

import (
	"net/http"

	"github.com/skilld/skilld/internal/authlimit"
	"github.com/skilld/skilld/service"
)

// Defaults of the failed-authentication limit (Server fields override them).
const (
	DefaultAuthFailuresPerAddress = authlimit.DefaultFailuresPerAddress
	DefaultAuthFailureWindow      = authlimit.DefaultWindow
)

// authLimit returns the server's limiter: AuthLimit, or one made on first
// use from its fields.
func (s *Server) authLimit() *authlimit.Limiter {
	s.authOnce.Do(func() {
		if s.AuthLimit == nil {
			s.AuthLimit = authlimit.New(s.AuthFailuresPerAddress, s.AuthFailureWindow)
		}
	})
	return s.AuthLimit
}

// authenticate checks a bearer token through the failure limit.
func (s *Server) authenticate(r *http.Request, token string) (service.Actor, error) {
	return s.authLimit().Authenticate(r, token, s.Service.Authenticate)
}
