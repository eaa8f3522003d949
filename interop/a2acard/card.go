// Package a2acard describes a skilld agent as an A2A agent card
// (https://a2a-protocol.org), built with the a2a-go SDK's types. It is the
// only package that knows the SDK: the service describes agents in its own
// words (service.AgentProfile), and the HTTP layer turns that description
// into a card here, so no vendor type reaches the service's API.
package a2acard

import (
	"strings"

	"github.com/a2aproject/a2a-go/a2a"
)

// ProtocolVersion is the A2A protocol version of the cards Build makes:
// the one a2a-go v0.3 implements.
const ProtocolVersion = "0.3.0"

// BearerScheme is the name of the card's one security scheme: skilld API
// tokens sent as "Authorization: Bearer skd_…".
const BearerScheme a2a.SecuritySchemeName = "bearer"

// Agent is what a card says about an agent.
type Agent struct {
	// Name is the agent's name; Description what it is for (Name is used
	// when empty, since the card requires one).
	Name        string
	Description string
	// URL is the absolute URL of the agent's task endpoint.
	URL string
	// Version changes whenever the agent does.
	Version string
	// Skills are the skills the agent discloses.
	Skills []Skill
}

// Skill is one skill on a card.
type Skill struct {
	ID          string
	Name        string
	Description string
	Tags        []string
}

// Build returns the agent's card. Every field the A2A schema requires is
// set: skills and tags are empty lists rather than absent, input and
// output are plain text (a task takes a text input and answers in text),
// and no optional capability (streaming over A2A, push notifications) is
// claimed, because skilld's task endpoint is its own REST API, not an A2A
// binding.
func Build(ag Agent) *a2a.AgentCard {
	desc := strings.TrimSpace(ag.Description)
	if desc == "" {
		desc = ag.Name
	}
	card := &a2a.AgentCard{
		Name:               ag.Name,
		Description:        desc,
		URL:                ag.URL,
		PreferredTransport: a2a.TransportProtocolHTTPJSON,
		Version:            ag.Version,
		ProtocolVersion:    ProtocolVersion,
		Capabilities:       a2a.AgentCapabilities{},
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain"},
		SecuritySchemes: a2a.NamedSecuritySchemes{
			BearerScheme: a2a.HTTPAuthSecurityScheme{Scheme: "bearer", Description: "a skilld API token (skd_…) of the agent's workspace"},
		},
		Security: []a2a.SecurityRequirements{{BearerScheme: a2a.SecuritySchemeScopes{}}},
		Skills:   make([]a2a.AgentSkill, 0, len(ag.Skills)),
	}
	for _, s := range ag.Skills {
		tags := s.Tags
		if tags == nil {
			tags = []string{}
		}
		card.Skills = append(card.Skills, a2a.AgentSkill{ID: s.ID, Name: s.Name, Description: s.Description, Tags: tags})
	}
	return card
}
