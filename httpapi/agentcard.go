package httpapi

import (
	"net/http"

	"github.com/skilld/skilld/interop/a2acard"
	"github.com/skilld/skilld/service"
)

// agentCardReply writes an agent card description (agents.card) as its A2A card,
// whose url needs the origin of the request.
func agentCardReply(_ *Server, p *service.AgentCard) Responder {
	return responderFunc(func(w http.ResponseWriter, r *http.Request) error {
		writeJSON(w, http.StatusOK, agentCard(r, p))
		return nil
	})
}

// agentCard is the A2A agent card of service.AgentCard. The card's url is
// the agent's task endpoint on the origin the request came to.
func agentCard(r *http.Request, p *service.AgentCard) any {
	ag := a2acard.Agent{Name: p.Name, Description: p.Description, URL: origin(r) + p.TaskPath, Version: p.Version,
		Skills: make([]a2acard.Skill, len(p.Skills))}
	for i, sk := range p.Skills {
		ag.Skills[i] = a2acard.Skill{ID: sk.ID, Name: sk.Name, Description: sk.Description, Tags: sk.Tags}
	}
	return a2acard.Build(ag)
}

// origin is the scheme and host a request was sent to: https when it came
// over TLS or through a proxy that says so (X-Forwarded-Proto).
func origin(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https" {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}
