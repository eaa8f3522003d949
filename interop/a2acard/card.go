// Package a2acard describes a skilld agent as an A2A agent card
// (https://a2a-protocol.org). It is the only package that knows the card's
// format: the service describes agents in its own words
// (service.AgentCard), and the HTTP layer turns that description into a
// card here. The card is a handful of fields, so they are declared here
// rather than taken from an A2A SDK whose module would weigh far more than
// the struct it gives.
package a2acard

import "strings"

// ProtocolVersion is the A2A protocol version of the cards Build makes.
const ProtocolVersion = "0.3.0"

// BearerScheme is the name of the card's one security scheme: skilld API
// tokens sent as "Authorization: Bearer skd_…".
const BearerScheme = "bearer"

// Card is the part of the A2A AgentCard that skilld fills in, with the
// specification's JSON names. Fields are in the alphabetical order the
// JSON has always had, so the bytes a client reads stay the same; every
// field the specification requires is always present.
type Card struct {
	Capabilities       Capabilities              `json:"capabilities"`
	DefaultInputModes  []string                  `json:"defaultInputModes"`
	DefaultOutputModes []string                  `json:"defaultOutputModes"`
	Description        string                    `json:"description"`
	Name               string                    `json:"name"`
	PreferredTransport string                    `json:"preferredTransport,omitempty"`
	ProtocolVersion    string                    `json:"protocolVersion"`
	Security           []map[string][]string     `json:"security,omitempty"`
	SecuritySchemes    map[string]SecurityScheme `json:"securitySchemes,omitempty"`
	Skills             []CardSkill               `json:"skills"`
	URL                string                    `json:"url"`
	Version            string                    `json:"version"`
}

// Capabilities are the optional A2A features an agent claims; skilld
// claims none (see Build), so the object is empty.
type Capabilities struct{}

// SecurityScheme is an HTTP authentication scheme (type "http"), the one
// kind of the specification's security schemes skilld uses.
type SecurityScheme struct {
	Type        string `json:"type"`
	Description string `json:"description,omitempty"`
	Scheme      string `json:"scheme"`
}

// CardSkill is a skill as a card lists it.
type CardSkill struct {
	Description string   `json:"description"`
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Tags        []string `json:"tags"`
}

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
func Build(ag Agent) *Card {
	desc := strings.TrimSpace(ag.Description)
	if desc == "" {
		desc = ag.Name
	}
	card := &Card{
		Name:               ag.Name,
		Description:        desc,
		URL:                ag.URL,
		PreferredTransport: "HTTP+JSON",
		Version:            ag.Version,
		ProtocolVersion:    ProtocolVersion,
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain"},
		SecuritySchemes: map[string]SecurityScheme{
			BearerScheme: {Type: "http", Scheme: "bearer", Description: "a skilld API token (skd_…) of the agent's workspace"},
		},
		// A requirement lists the scopes it needs; a bearer scheme has none.
		Security: []map[string][]string{{BearerScheme: {}}},
		Skills:   make([]CardSkill, 0, len(ag.Skills)),
	}
	for _, s := range ag.Skills {
		tags := s.Tags
		if tags == nil {
			tags = []string{}
		}
		card.Skills = append(card.Skills, CardSkill{ID: s.ID, Name: s.Name, Description: s.Description, Tags: tags})
	}
	return card
}
